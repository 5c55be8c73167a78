package dupes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/hash/dupes/dupecache"
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
		problem       dupecache.CacheProblem
		reason        string
	}{
		{"null", "null", dupecache.CacheForeign, `no "stdiff.dupes-cache/v3" schema`},
		{"array", "[]", dupecache.CacheForeign, `no "stdiff.dupes-cache/v3" schema`},
		{"object", `{"x": 5}`, dupecache.CacheForeign, `no "stdiff.dupes-cache/v3" schema`},
		{"old map", `{"/a.safetensors": {"size": 1}}`, dupecache.CacheForeign, `no "stdiff.dupes-cache/v3" schema`},
		{"schema", `{"schema": "stdiff.dupes-cache/v9", "entries": {}}`, dupecache.CacheForeign, `schema "stdiff.dupes-cache/v9", not "stdiff.dupes-cache/v3"`},
		{"entries", `{"schema": "stdiff.dupes-cache/v3", "entries": {"x": 5}}`, dupecache.CacheForeign, "its entries are not stdiff's"},
		{"garbage", string(garbage), dupecache.CacheForeign, "not JSON"},
		{"empty", "", dupecache.CacheForeign, "not JSON"},
		{"folder", "", dupecache.CacheNotFile, "is a folder, not a file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), dupecache.CacheFile)
			if tc.problem == dupecache.CacheNotFile {
				os.MkdirAll(filepath.Join(path, "keep"), 0o755)
			} else {
				os.WriteFile(path, []byte(tc.content), 0o644)
			}
			c, err := dupecache.OpenCache(path)
			var ce *dupecache.CacheError
			if !errors.As(err, &ce) || ce.Problem != tc.problem || ce.Reason != tc.reason || ce.Path != path ||
				strings.Contains(err.Error(), "\n") {
				t.Fatalf("dupecache.OpenCache: %v (%#v)", err, ce)
			}
			rep, err := Find(context.Background(), modelsIn(t, coll), Options{Cache: c})
			if err != nil || len(rep.Groups) != 1 {
				t.Fatalf("scan with the cache: %v %+v", err, rep)
			}
			if err := c.Save(context.Background()); err != nil {
				t.Fatal(err)
			}
			c, err = dupecache.OpenCache(path)
			if tc.problem == dupecache.CacheNotFile {
				if _, serr := os.Stat(filepath.Join(path, "keep")); !errors.As(err, &ce) || serr != nil {
					t.Errorf("a folder in the cache's place: %v, its contents: %v", err, serr)
				}
				return
			}
			if err != nil || c.Len() != 2 {
				t.Errorf("after saving: %v, %d entries", err, c.Len())
			}
		})
	}
}
