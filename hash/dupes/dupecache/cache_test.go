package dupecache

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

// putPath puts an entry for p as dupes does for a small file.
func putPath(c *Cache, p string) {
	c.Put(p, Entry{Size: int64(len(p)), Structure: "st1:test", Keys: strings.Repeat("0", 80)})
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
	b.Put(files[0], Entry{Size: 99, Structure: "st1:new", Keys: strings.Repeat("0", 80)})
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
		c.Put(p, Entry{Size: 151_109_876, Mtime: 1_700_000_000_123_456_789, Ino: uint64(i), DataLen: 151_000_000,
			Structure: "st1:2214b9a31a162d668bd115a90d5485a33e3fbcd3838c341d69c8ac453b7c1f3e",
			Keys:      strings.Repeat("0", 80), Header: strings.Repeat("0", 64), Sample: strings.Repeat("0", 16),
			CRCs: strings.Repeat("0", 8*150), Complete: true})
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
