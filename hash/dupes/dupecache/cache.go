// Package dupecache is the cache of dupes: what scans learnt of files (keys, samples, header hashes,
// structure IDs, what comparisons proved), kept in one JSON file between runs so that a scan of an
// unchanged collection reads no tensor byte. It stores entries; package dupes decides what they mean.
package dupecache

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/hash/dupes/internal/diskfile"
)

// Cache remembers what reading a file found (its keys, sample, header hash, structure ID, and the
// checksums by which comparisons told it the same as or other than other files),
// keyed by the file's absolute path, size, modification time, change time and inode: a file that
// changed in any of these is read again (an edit in place that puts the modification time back
// changes the change time). A second `stdiff dupes` over an unchanged collection reads no tensor bytes, and
// headers only of the models it reports in groups (to say how they differ).
//
// It lives where the caller says (the CLI: $STDIFF_CACHE_DIR, else the user cache folder, as CacheFile,
// ~/.cache/stdiff/dupes-v3.json on Linux); deleting that file (or `stdiff dupes --clear-cache`) clears
// it. Save writes it
// atomically, under a lock that concurrent runs share (merging what each learnt), keeps at most
// MaxCacheEntries entries and MaxCacheBytes bytes (the most recently used), and drops entries of files
// that no longer exist.
type Cache struct {
	path    string
	mu      sync.Mutex
	entries map[string]Entry
	// touched are the keys put in this run: theirs is the newest word.
	touched map[string]bool
	dirty   bool
	// off: the path is something stdiff does not replace (a folder): nothing is saved.
	off bool
	// loaded is the file as it was read or last written (nil: none): unless another run replaced it
	// since, Save has nothing to merge.
	loaded fs.FileInfo

	now        func() time.Time
	lockWait   time.Duration
	maxEntries int
	maxBytes   int64
}

// Entry is what the cache keeps of one file: the file as it was (Size, Mtime, Ctime, Ino: a file that
// differs in any is read again) and what scans learnt of it, in the forms package dupes writes.
type Entry struct {
	Size    int64  `json:"size"`
	Mtime   int64  `json:"mtime_ns"`
	Ctime   int64  `json:"ctime_ns"`
	Ino     uint64 `json:"ino"`
	DataLen int64  `json:"data_len"`
	// Keys are the scan's keys (structure, shapes, layout) in hex.
	Keys      string `json:"keys"`
	MetaKeys  int    `json:"meta_keys"`
	Structure string `json:"structure_id,omitempty"`
	// Ident is what besides its tensors makes the model what it is (package dupes); "" in entries
	// written before it was kept: the header is read again then.
	Ident  string `json:"ident,omitempty"`
	Header string `json:"header_blake3,omitempty"`
	Sample string `json:"sample,omitempty"`
	// CRCs are the CRC-32C of each MiB of the tensor bytes in name order as far as a comparison read
	// them (hex, 8 digits each), to the end when Complete.
	CRCs     string `json:"crcs,omitempty"`
	Complete bool   `json:"complete,omitempty"`
	// Renamed is what the search for renamed copies learnt, when the model was a candidate.
	Renamed *Renamed `json:"renamed,omitempty"`
	// Used is when a scan last saw the file (Unix seconds, refreshed at most daily): the least recently
	// used entries go first when the cache is full.
	Used int64 `json:"used"`
}

// Renamed is what the search for renamed copies learnt of a file, as the cache keeps it.
type Renamed struct {
	Key      string `json:"key"` // hex; "" when the names do not map one to one
	Sample   string `json:"sample,omitempty"`
	CRCs     string `json:"crcs,omitempty"`
	Complete bool   `json:"complete,omitempty"`
}

// equal reports whether two entries say the same (Used aside).
func (e Entry) equal(o Entry) bool {
	r1, r2 := e.Renamed, o.Renamed
	e.Renamed, o.Renamed, e.Used, o.Used = nil, nil, 0, 0
	return e == o && (r1 == r2 || (r1 != nil && r2 != nil && *r1 == *r2))
}

// CacheFile is the cache's file name inside the cache folder. (v3: a v2 cache may hold entries for
// files the reference rejects, whose header only the key skim had read; v3 holds none.)
const CacheFile = "dupes-v3.json"

// CachePath is where the cache lives: CacheFile in dir when dir is not "" (the CLI passes
// $STDIFF_CACHE_DIR), else in the user cache folder's stdiff folder (os.UserCacheDir).
func CachePath(dir string) (string, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "stdiff")
	}
	return filepath.Join(dir, CacheFile), nil
}

// ClearCache deletes the cache file at path; there being none is no error.
func ClearCache(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// cacheSchema is the first thing in a cache file: anything else is not a stdiff cache.
const cacheSchema = "stdiff.dupes-cache/v3"

// Bounds of the cache: beyond them the least recently used entries are dropped. An entry takes about
// 500 bytes (BenchmarkCacheOpen), so the entry count binds first; each run loads the whole cache.
const (
	MaxCacheEntries = 50_000
	MaxCacheBytes   = 32 << 20
)

// CacheLockWait is how long Save waits for another run that is saving the cache.
const CacheLockWait = 10 * time.Second

// usedEvery is how stale an entry's Used may grow before a scan that sees the file rewrites it (so
// that runs over an unchanged collection do not rewrite the cache).
const usedEvery = 24 * 60 * 60

// ErrCacheLocked is returned by Save when another run held the cache's lock for CacheLockWait.
var ErrCacheLocked = fmt.Errorf("another stdiff run held its lock for over %s", CacheLockWait)

// CacheProblem is what is wrong with a cache file that could not be used.
type CacheProblem int

const (
	// CacheForeign is a file that is not a stdiff cache (not JSON, another schema, too large): Save
	// replaces it.
	CacheForeign CacheProblem = iota
	// CacheUnreadable is a file that cannot be read (permissions): Save replaces it.
	CacheUnreadable
	// CacheNotFile is a folder or another non-file at the cache's path: it is left alone and nothing
	// is saved.
	CacheNotFile
)

// CacheError is a cache file that could not be used. The Cache OpenCache returns with it works, empty.
type CacheError struct {
	Path    string
	Problem CacheProblem
	// Reason says what is wrong, for people.
	Reason string
}

// Error says what is wrong with the cache and what stdiff does about it.
func (e *CacheError) Error() string {
	switch e.Problem {
	case CacheNotFile:
		return fmt.Sprintf("cache %s %s; going on without one", e.Path, e.Reason)
	case CacheUnreadable:
		return fmt.Sprintf("cache %s cannot be read (%s); starting a new one", e.Path, e.Reason)
	}
	return fmt.Sprintf("cache %s is not a stdiff cache (%s); starting a new one", e.Path, e.Reason)
}

// Hint says what to do about the cache (nil: nothing): for a folder in its place, to remove it or to
// choose another cache folder (the CLI's STDIFF_CACHE_DIR).
func (e *CacheError) Hint() string {
	if e == nil || e.Problem != CacheNotFile {
		return ""
	}
	return "remove it, or set STDIFF_CACHE_DIR to another folder"
}

// OpenCache loads the cache at path; a missing file is an empty cache. It always returns a working
// Cache: when the file cannot be used, an empty one and a *CacheError saying why.
func OpenCache(path string) (*Cache, error) {
	c := &Cache{path: path, entries: map[string]Entry{}, touched: map[string]bool{}, now: time.Now,
		lockWait: CacheLockWait, maxEntries: MaxCacheEntries, maxBytes: MaxCacheBytes}
	entries, st, err := readCache(path, c.maxBytes)
	c.loaded = st
	if err != nil {
		var ce *CacheError
		if errors.As(err, &ce) {
			c.off = ce.Problem == CacheNotFile
			c.dirty = !c.off
		}
		return c, err
	}
	if entries != nil {
		c.entries = entries
	}
	return c, nil
}

// readCache reads and checks a cache file: nil entries when there is none, a *CacheError when it
// cannot be used; and the file read. It never blocks on a FIFO, nor reads more than max bytes.
func readCache(path string, max int64) (map[string]Entry, fs.FileInfo, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil
	case err != nil:
		return nil, nil, &CacheError{path, CacheUnreadable, causeOf(err)}
	case st.IsDir():
		return nil, nil, &CacheError{path, CacheNotFile, "is a folder, not a file"}
	case !st.Mode().IsRegular():
		return nil, nil, &CacheError{path, CacheNotFile, "is not a regular file"}
	case st.Size() > max:
		return nil, nil, &CacheError{path, CacheForeign, fmt.Sprintf("%d bytes, over the %d a cache may hold", st.Size(), max)}
	}
	src, err := source.OpenFile(path)
	if err != nil {
		return nil, nil, &CacheError{path, CacheUnreadable, causeOf(err)}
	}
	defer src.Close()
	if st, err = src.File().Stat(); err != nil {
		return nil, nil, &CacheError{path, CacheUnreadable, causeOf(err)}
	}
	b, err := io.ReadAll(io.LimitReader(src.File(), max+1))
	if err != nil {
		return nil, nil, &CacheError{path, CacheUnreadable, causeOf(err)}
	}
	if int64(len(b)) > max {
		return nil, nil, &CacheError{path, CacheForeign, fmt.Sprintf("over the %d bytes a cache may hold", max)}
	}
	entries, reason := parseCache(b)
	if reason != "" {
		return nil, st, &CacheError{path, CacheForeign, reason}
	}
	return entries, st, nil
}

// causeOf is what went wrong, without the path (which the CacheError names).
func causeOf(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return diskfile.Reason(err)
}

// parseCache parses a cache file's bytes (in one pass: every run does it), or says why they are not
// a cache.
func parseCache(b []byte) (map[string]Entry, string) {
	var f struct {
		Schema  *string          `json:"schema"`
		Entries map[string]Entry `json:"entries"`
	}
	err := json.Unmarshal(b, &f)
	var te *json.UnmarshalTypeError
	switch {
	case err != nil && !errors.As(err, &te):
		return nil, "not JSON"
	case err != nil && strings.HasPrefix(te.Field, "entries"):
		return nil, "its entries are not stdiff's"
	case err != nil || f.Schema == nil:
		return nil, fmt.Sprintf("no %q schema", cacheSchema)
	case *f.Schema != cacheSchema:
		s := *f.Schema
		if len(s) > 60 {
			s = s[:60] + "…"
		}
		return nil, fmt.Sprintf("schema %q, not %q", s, cacheSchema)
	case f.Entries == nil: // "entries": null, or none
		f.Entries = map[string]Entry{}
	}
	return f.Entries, ""
}

// Path is where the cache is saved.
func (c *Cache) Path() string { return c.path }

// Save writes the cache if it changed. Under a lock shared with other runs (waiting at most
// CacheLockWait, then returning ErrCacheLocked), it merges what the file on disk holds by now, drops
// entries of files that no longer exist and the least recently used beyond the bounds, and writes a
// temporary file renamed over the old one, so the cache is never seen half-written. Once ctx is done it
// stops waiting for the lock and returns ctx.Err().
func (c *Cache) Save(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty || c.off {
		return nil
	}
	dir := filepath.Dir(c.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(ctx, c.path+".lock", c.lockWait)
	if err != nil {
		return err
	}
	defer unlock()
	if st, err := os.Stat(c.path); err == nil && !sameFile(st, c.loaded) {
		if disk, _, err := readCache(c.path, c.maxBytes); err == nil {
			c.merge(disk)
		}
	}
	c.prune()
	b := c.encode()
	tmp, err := os.CreateTemp(dir, ".dupes-*.tmp")
	if err != nil {
		return err
	}
	// No fsync: after a crash a cache may be lost or torn, which the next run reports and replaces.
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	c.dirty = false
	c.loaded, _ = os.Stat(c.path)
	return nil
}

// sameFile reports whether the file st is the one read or written, unchanged.
func sameFile(st, loaded fs.FileInfo) bool {
	return loaded != nil && os.SameFile(st, loaded) && st.Size() == loaded.Size() && st.ModTime().Equal(loaded.ModTime())
}

// merge takes what another run saved meanwhile: entries this run did not see, or saw less recently.
func (c *Cache) merge(disk map[string]Entry) {
	for k, e := range disk {
		if c.touched[k] {
			continue
		}
		if old, ok := c.entries[k]; !ok || e.Used > old.Used {
			c.entries[k] = e
		}
	}
}

// prune drops the entries of files that no longer exist (those this run saw exist).
func (c *Cache) prune() {
	for k := range c.entries {
		if c.touched[k] {
			continue
		}
		if _, err := os.Stat(k); errors.Is(err, fs.ErrNotExist) {
			delete(c.entries, k)
		}
	}
}

// encode is the cache file: the most recently used entries that fit the bounds; the others are dropped.
func (c *Cache) encode() []byte {
	type kv struct {
		k    string
		used int64
	}
	keys := make([]kv, 0, len(c.entries))
	for k, e := range c.entries {
		keys = append(keys, kv{k, e.Used})
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].used != keys[j].used {
			return keys[i].used > keys[j].used
		}
		return keys[i].k < keys[j].k
	})
	var buf bytes.Buffer
	head, _ := json.Marshal(cacheSchema)
	buf.WriteString(`{"schema":` + string(head) + `,"entries":{`)
	const tail = "}}\n"
	for n, k := range keys {
		kb, _ := json.Marshal(k.k)
		eb, _ := json.Marshal(c.entries[k.k])
		if n >= c.maxEntries || int64(buf.Len()+len(kb)+len(eb)+2+len(tail)) > c.maxBytes {
			for _, k := range keys[n:] {
				delete(c.entries, k.k)
			}
			break
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(eb)
	}
	buf.WriteString(tail)
	return buf.Bytes()
}

func cacheKey(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// Get is the entry of the file at path, if the cache has one; the caller checks that the file is
// as the entry says.
func (c *Cache) Get(path string) (Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[cacheKey(path)]
	return e, ok
}

// Len is the number of entries.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Put records e as what is known of the file at path, and that a scan saw it now.
func (c *Cache) Put(path string, e Entry) {
	key := cacheKey(path)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.touched[key] = true
	now := c.now().Unix()
	old, ok := c.entries[key]
	e.Used = old.Used
	if ok && old.equal(e) && now-old.Used < usedEvery {
		return
	}
	e.Used = now
	c.entries[key] = e
	c.dirty = true
}
