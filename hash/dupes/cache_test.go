package dupes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestCacheNotACache: whatever is in the cache's place, the scan goes on with an empty cache, the
// problem is one error naming the file, and Save replaces it with a cache (a folder is left alone).
func TestCacheNotACache(t *testing.T) {
	coll := t.TempDir()
	os.WriteFile(filepath.Join(coll, "a.safetensors"), loraFile(1, "a").Build(), 0o644)
	os.WriteFile(filepath.Join(coll, "b.safetensors"), loraFile(1, "a").Build(), 0o644)
	garbage := make([]byte, 300)
	for i := range garbage {
		garbage[i] = byte(i * 7)
	}
	for _, tc := range []struct {
		name, content string
		problem       CacheProblem
		reason        string
	}{
		{"null", "null", CacheForeign, `no "stdiff.dupes-cache/v2" schema`},
		{"array", "[]", CacheForeign, `no "stdiff.dupes-cache/v2" schema`},
		{"object", `{"x": 5}`, CacheForeign, `no "stdiff.dupes-cache/v2" schema`},
		{"old map", `{"/a.safetensors": {"size": 1}}`, CacheForeign, `no "stdiff.dupes-cache/v2" schema`},
		{"schema", `{"schema": "stdiff.dupes-cache/v9", "entries": {}}`, CacheForeign, `schema "stdiff.dupes-cache/v9", not "stdiff.dupes-cache/v2"`},
		{"entries", `{"schema": "stdiff.dupes-cache/v2", "entries": {"x": 5}}`, CacheForeign, "its entries are not stdiff's"},
		{"garbage", string(garbage), CacheForeign, "not JSON"},
		{"empty", "", CacheForeign, "not JSON"},
		{"folder", "", CacheNotFile, "is a folder, not a file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), CacheFile)
			if tc.problem == CacheNotFile {
				os.MkdirAll(filepath.Join(path, "keep"), 0o755)
			} else {
				os.WriteFile(path, []byte(tc.content), 0o644)
			}
			c, err := OpenCache(path)
			var ce *CacheError
			if !errors.As(err, &ce) || ce.Problem != tc.problem || ce.Reason != tc.reason || ce.Path != path ||
				strings.Contains(err.Error(), "\n") {
				t.Fatalf("OpenCache: %v (%#v)", err, ce)
			}
			rep, err := Find(context.Background(), modelsIn(t, coll), Options{Cache: c})
			if err != nil || len(rep.Groups) != 1 {
				t.Fatalf("scan with the cache: %v %+v", err, rep)
			}
			if err := c.Save(context.Background()); err != nil {
				t.Fatal(err)
			}
			c, err = OpenCache(path)
			if tc.problem == CacheNotFile {
				if _, serr := os.Stat(filepath.Join(path, "keep")); !errors.As(err, &ce) || serr != nil {
					t.Errorf("a folder in the cache's place: %v, its contents: %v", err, serr)
				}
				return
			}
			if err != nil || len(c.entries) != 2 {
				t.Errorf("after saving: %v, %d entries", err, len(c.entries))
			}
		})
	}
}

// TestCacheTooLarge: a file over MaxCacheBytes is not read, and is replaced.
func TestCacheTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), CacheFile)
	f, _ := os.Create(path)
	f.Truncate(MaxCacheBytes + 1) // sparse
	f.Close()
	_, err := OpenCache(path)
	var ce *CacheError
	if !errors.As(err, &ce) || ce.Problem != CacheForeign || !strings.Contains(ce.Reason, "over the") {
		t.Errorf("OpenCache: %v", err)
	}
}

// cacheFiles writes n small files and returns their paths.
func cacheFiles(t *testing.T, dir, prefix string, n int) []string {
	t.Helper()
	var paths []string
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("%s%03d.safetensors", prefix, i))
		if err := os.WriteFile(p, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func putPath(c *Cache, p string) {
	c.put(&scanned{path: p, size: int64(len(p)), structure: "st1:test"})
}

func cachedNames(t *testing.T, path string) []string {
	t.Helper()
	c, err := OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for k := range c.entries {
		names = append(names, filepath.Base(k))
	}
	sort.Strings(names)
	return names
}

// TestCacheConcurrentSaves: runs that opened the cache before any of them saved each keep what they
// learnt: every save merges what is on disk by then, under the lock.
func TestCacheConcurrentSaves(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, CacheFile)
	const runs, each = 4, 30
	caches := make([]*Cache, runs)
	for r := range caches {
		c, err := OpenCache(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range cacheFiles(t, dir, fmt.Sprintf("run%d-", r), each) {
			putPath(c, p)
		}
		caches[r] = c
	}
	errs := make(chan error, runs)
	start := make(chan struct{})
	for _, c := range caches {
		go func() {
			<-start
			errs <- c.Save(context.Background())
		}()
	}
	close(start)
	for range caches {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if got := cachedNames(t, path); len(got) != runs*each {
		t.Errorf("%d entries after %d runs saved %d each", len(got), runs, each)
	}
}

// TestCacheMerge: an entry another run refreshed since this one opened the cache is not overwritten
// by this run's stale copy.
func TestCacheMerge(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, CacheFile)
	files := cacheFiles(t, dir, "f", 2)
	first, _ := OpenCache(path)
	putPath(first, files[0])
	first.Save(context.Background())
	a, _ := OpenCache(path)
	b, _ := OpenCache(path)
	b.now = func() time.Time { return time.Now().Add(48 * time.Hour) }
	b.put(&scanned{path: files[0], size: 99, structure: "st1:new"})
	if err := b.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	putPath(a, files[1])
	if err := a.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, _ := OpenCache(path)
	if e := c.entries[cacheKey(files[0])]; e.Structure != "st1:new" || len(c.entries) != 2 {
		t.Errorf("entries %+v", c.entries)
	}
}

// TestCacheBounds: beyond the bounds, the least recently used entries go.
func TestCacheBounds(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, CacheFile)
	files := cacheFiles(t, dir, "f", 6)
	clock := time.Unix(1_700_000_000, 0)
	c, _ := OpenCache(path)
	c.now = func() time.Time { return clock }
	c.maxEntries = 4
	for _, p := range files { // f000 is the least recently used, f005 the most
		clock = clock.Add(time.Hour)
		putPath(c, p)
	}
	if err := c.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(cachedNames(t, path)); got != "[f002.safetensors f003.safetensors f004.safetensors f005.safetensors]" {
		t.Errorf("by count: kept %s", got)
	}
	c, _ = OpenCache(path)
	c.dirty = true
	c.maxBytes = 400
	if err := c.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	got := cachedNames(t, path)
	if st.Size() > 400 || len(got) == 0 || len(got) == 4 || got[len(got)-1] != "f005.safetensors" {
		t.Errorf("by size: %d bytes, kept %v", st.Size(), got)
	}
}

// TestCachePrune: entries of files that no longer exist are dropped when the cache is saved.
func TestCachePrune(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, CacheFile)
	files := cacheFiles(t, dir, "f", 3)
	c, _ := OpenCache(path)
	putPath(c, files[0])
	putPath(c, files[1])
	c.Save(context.Background())
	os.Remove(files[1])
	c, _ = OpenCache(path)
	putPath(c, files[2])
	if err := c.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(cachedNames(t, path)); got != "[f000.safetensors f002.safetensors]" {
		t.Errorf("kept %s", got)
	}
}

// fullCache writes a cache of n entries shaped like real ones (16 sampled tensors) and returns its path.
func fullCache(b *testing.B, n int) string {
	dir := b.TempDir()
	path := filepath.Join(dir, CacheFile)
	c, _ := OpenCache(path)
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, "loras", fmt.Sprintf("character-%06d-v2.safetensors", i))
		f := &scanned{path: p, size: 151_109_876, mtime: 1_700_000_000_123_456_789, ino: uint64(i), dataLen: 151_000_000,
			structure:     "st1:2214b9a31a162d668bd115a90d5485a33e3fbcd3838c341d69c8ac453b7c1f3e",
			hasHeaderHash: true, hasSample: true, cs: crcState{crcs: make([]uint32, 150), complete: true}}
		c.put(f)
	}
	if err := c.Save(context.Background()); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkCacheOpen loads a cache at MaxCacheEntries, as every `stdiff dupes` run does.
func BenchmarkCacheOpen(b *testing.B) {
	path := fullCache(b, MaxCacheEntries)
	for b.Loop() {
		if c, err := OpenCache(path); err != nil || len(c.entries) == 0 {
			b.Fatal(err)
		}
	}
	st, _ := os.Stat(path)
	b.ReportMetric(float64(st.Size())/MaxCacheEntries, "B/entry")
}

// BenchmarkCacheSave writes a cache at MaxCacheEntries that this run saw whole (nothing to check).
func BenchmarkCacheSave(b *testing.B) {
	path := fullCache(b, MaxCacheEntries)
	c, _ := OpenCache(path)
	for k := range c.entries {
		c.touched[k] = true
	}
	for b.Loop() {
		c.dirty = true
		if err := c.Save(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCachePrune checks MaxCacheEntries entries that this run did not see (does the file still
// exist?), what Save adds at worst.
func BenchmarkCachePrune(b *testing.B) {
	path := fullCache(b, MaxCacheEntries)
	for b.Loop() {
		b.StopTimer()
		c, _ := OpenCache(path)
		b.StartTimer()
		c.prune()
	}
}
