package hash

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Cache remembers what reading a file found (its structure ID, sample, content ID and header hash),
// keyed by the file's absolute path, size, modification time and inode: a file that changed in any of
// these is read again. A second `stdiff dupes` over an unchanged collection reads no tensor bytes, nor
// any header.
//
// It lives in $STDIFF_CACHE_DIR, else the user cache folder (~/.cache/stdiff on Linux), as
// dupes-v1.json; deleting that file (or `stdiff dupes --clear-cache`) clears it.
type Cache struct {
	path    string
	mu      sync.Mutex
	entries map[string]cacheEntry
	dirty   bool
}

type cacheEntry struct {
	Size      int64  `json:"size"`
	Mtime     int64  `json:"mtime_ns"`
	Ino       uint64 `json:"ino"`
	DataLen   int64  `json:"data_len"`
	Structure string `json:"structure_id"`
	Samples   string `json:"sample_ranges"`
	Header    string `json:"header_blake3,omitempty"`
	Sample    string `json:"sample,omitempty"`
	Content   string `json:"content_id,omitempty"`
}

// CacheFile is the cache's file name inside the cache folder.
const CacheFile = "dupes-v1.json"

// DefaultCachePath is where the cache lives: $STDIFF_CACHE_DIR/dupes-v1.json, else the user cache
// folder's stdiff/dupes-v1.json.
func DefaultCachePath() (string, error) {
	if dir := os.Getenv("STDIFF_CACHE_DIR"); dir != "" {
		return filepath.Join(dir, CacheFile), nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder: %w (set STDIFF_CACHE_DIR)", err)
	}
	return filepath.Join(dir, "stdiff", CacheFile), nil
}

// OpenCache loads the cache at path; a missing file is an empty cache. A file that is not a cache is
// reported, and the cache starts empty (it will be rewritten).
func OpenCache(path string) (*Cache, error) {
	c := &Cache{path: path, entries: map[string]cacheEntry{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c.entries); err != nil {
		c.entries = map[string]cacheEntry{}
		c.dirty = true
		return c, fmt.Errorf("%s is not a stdiff cache (%v); starting afresh", path, err)
	}
	return c, nil
}

// Path is where the cache is saved.
func (c *Cache) Path() string { return c.path }

// Save writes the cache if it changed, atomically (a temporary file renamed over the old one).
func (c *Cache) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(c.entries)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".dupes-*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), c.path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	c.dirty = false
	return nil
}

func cacheKey(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// fill copies what the cache knows of an unchanged file into it, and reports whether it knew the file.
func (c *Cache) fill(f *scanned) bool {
	c.mu.Lock()
	e, ok := c.entries[cacheKey(f.path)]
	c.mu.Unlock()
	if !ok || e.Size != f.size || e.Mtime != f.mtime || e.Ino != f.ino || e.Structure == "" {
		return false
	}
	var ranges [][2]int64
	if json.Unmarshal([]byte(e.Samples), &ranges) != nil {
		return false
	}
	f.dataLen, f.structure, f.samples = e.DataLen, e.Structure, ranges
	if b, err := hex.DecodeString(e.Header); err == nil && len(b) == 32 {
		copy(f.headerHash[:], b)
		f.hasHeaderHash = true
	}
	if b, err := hex.DecodeString(e.Sample); err == nil && len(b) == 32 {
		copy(f.sample[:], b)
		f.hasSample = true
	}
	f.content = e.Content
	return true
}

// put records what is known of a file.
func (c *Cache) put(f *scanned) {
	ranges, _ := json.Marshal(f.samples)
	e := cacheEntry{Size: f.size, Mtime: f.mtime, Ino: f.ino, DataLen: f.dataLen, Structure: f.structure, Samples: string(ranges)}
	if f.hasHeaderHash {
		e.Header = hex.EncodeToString(f.headerHash[:])
	}
	if f.hasSample {
		e.Sample = hex.EncodeToString(f.sample[:])
	}
	if strings.HasPrefix(f.content, ContentPrefix) {
		e.Content = f.content
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entries[cacheKey(f.path)]; !ok || old != e {
		c.entries[cacheKey(f.path)] = e
		c.dirty = true
	}
}
