//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package dupes

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

// TestCacheEditedInPlace: a file rewritten in place (same size and inode) with its modification time
// put back is read again, not taken from the cache: the change time is part of the key.
func TestCacheEditedInPlace(t *testing.T) {
	coll := t.TempDir()
	a, b := filepath.Join(coll, "a.safetensors"), filepath.Join(coll, "b.safetensors")
	mtime := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{a, b} {
		os.WriteFile(p, loraFile(1, "a").Build(), 0o644)
		os.Chtimes(p, mtime, mtime)
	}
	path := filepath.Join(t.TempDir(), CacheFile)
	for run, want := range []int{1, 0, 0} {
		if run == 1 {
			before, _ := os.Stat(b)
			time.Sleep(10 * time.Millisecond) // a change time the cache has not seen
			if err := os.WriteFile(b, loraFile(2, "a").Build(), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(b, mtime, mtime)
			if after, _ := os.Stat(b); !os.SameFile(before, after) || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
				t.Fatal("not an edit in place")
			}
		}
		c, err := OpenCache(path)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Find(t.Context(), []string{coll}, Options{Cache: c})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Groups) != want {
			t.Errorf("run %d: %d groups, want %d: %+v", run, len(rep.Groups), want, rep.Groups)
		}
		if err := c.Save(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}
