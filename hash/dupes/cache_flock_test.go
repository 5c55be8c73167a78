//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package dupes

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stdiff/stdiff/hash/dupes/dupecache"
)

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
	path := filepath.Join(t.TempDir(), dupecache.CacheFile)
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
		c, err := dupecache.OpenCache(path)
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
