//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package dupecache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestCacheLockBounded: a run that cannot get the lock gives up after its wait, writing nothing, and
// saves once the lock is free.
func TestCacheLockBounded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, CacheFile)
	unlock, err := lockFile(t.Context(), path+".lock", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := OpenCache(path)
	c.lockWait = 50 * time.Millisecond
	putPath(c, cacheFiles(t, dir, "f", 1)[0])
	if err := c.Save(context.Background()); !errors.Is(err, ErrCacheLocked) {
		t.Errorf("saving while another holds the lock: %v", err)
	}
	// Waiting for the lock ends with the caller's context.
	c.lockWait = CacheLockWait
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(30*time.Millisecond, cancel)
	if err := c.Save(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("saving, cancelled while waiting for the lock: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("written without the lock: %v", err)
	}
	unlock()
	if err := c.Save(context.Background()); err != nil || len(cachedNames(t, path)) != 1 {
		t.Errorf("saving once the lock is free: %v", err)
	}
}

// TestCacheFIFO: a named pipe in the cache's place is reported at once, not waited on.
func TestCacheFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), CacheFile)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip(err)
	}
	c, err := OpenCache(path)
	var ce *CacheError
	if !errors.As(err, &ce) || ce.Problem != CacheNotFile {
		t.Fatalf("OpenCache: %v", err)
	}
	putPath(c, path)
	if err := c.Save(context.Background()); err != nil {
		t.Errorf("Save: %v", err)
	}
}

// TestCacheUnreadable: a cache that cannot be read is reported and replaced.
func TestCacheUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("permissions do not stop root")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, CacheFile)
	os.WriteFile(path, []byte(`{}`), 0)
	c, err := OpenCache(path)
	var ce *CacheError
	if !errors.As(err, &ce) || ce.Problem != CacheUnreadable || ce.Reason != "permission denied" {
		t.Fatalf("OpenCache: %v", err)
	}
	putPath(c, cacheFiles(t, dir, "f", 1)[0])
	if err := c.Save(context.Background()); err != nil || len(cachedNames(t, path)) != 1 {
		t.Errorf("Save: %v", err)
	}
}
