package canon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/textfmt"
)

// Index is a parsed sharded-model index (model.safetensors.index.json), as transformers and
// huggingface_hub write it: {"metadata": {"total_size": N, …}, "weight_map": {tensor: shard file}}.
type Index struct {
	// TotalSize is metadata.total_size: the sum of the tensors' byte lengths (-1 when absent).
	TotalSize int64
	// WeightMap maps each tensor name to the shard file that holds it.
	WeightMap map[string]string
	// Shards are the distinct shard files, sorted.
	Shards []string
}

// Limits on what an index may ask for.
const (
	MaxIndexSize = 100 << 20
	MaxShards    = 10_000
)

// ErrUnsafeShard is wrapped when an index names a shard outside the index's folder (an absolute path,
// "..", a URL) or a name with control characters.
var ErrUnsafeShard = errors.New("unsafe shard name")

// ParseIndex parses an index file's bytes. name is used in errors.
func ParseIndex(name string, b []byte) (*Index, error) {
	if len(b) > MaxIndexSize {
		return nil, &ReadError{Name: name, Err: fmt.Errorf("index is %d bytes, over the %d stdiff reads", len(b), MaxIndexSize)}
	}
	var raw struct {
		Metadata  map[string]json.RawMessage `json:"metadata"`
		WeightMap map[string]string          `json:"weight_map"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil {
		return nil, &ReadError{Name: name, Err: fmt.Errorf("not a sharded-model index: %v", err),
			Hint: `an index is {"metadata": {"total_size": …}, "weight_map": {"tensor": "model-00001-of-00002.safetensors", …}}`}
	}
	if len(raw.WeightMap) == 0 {
		return nil, &ReadError{Name: name, Err: errors.New("not a sharded-model index: no weight_map")}
	}
	idx := &Index{TotalSize: -1, WeightMap: raw.WeightMap}
	if ts, ok := raw.Metadata["total_size"]; ok {
		var n json.Number
		if json.Unmarshal(ts, &n) == nil {
			if v, err := strconv.ParseInt(n.String(), 10, 64); err == nil && v >= 0 {
				idx.TotalSize = v
			} else if f, err := n.Float64(); err == nil && f >= 0 && f < math.MaxInt64 && f == math.Trunc(f) {
				idx.TotalSize = int64(f)
			}
		}
	}
	seen := map[string]bool{}
	for _, shard := range raw.WeightMap {
		if seen[shard] {
			continue
		}
		if err := checkShardName(shard); err != nil {
			return nil, &ReadError{Name: name, Err: fmt.Errorf("%w %q: %v", ErrUnsafeShard, textfmt.Escape(shard), err),
				Hint: "an index may only name files in its own folder; this one may be hostile"}
		}
		seen[shard] = true
		idx.Shards = append(idx.Shards, shard)
		if len(idx.Shards) > MaxShards {
			return nil, &ReadError{Name: name, Err: fmt.Errorf("index names more than %d shards", MaxShards)}
		}
	}
	sort.Strings(idx.Shards)
	return idx, nil
}

// checkShardName refuses shard names that could reach outside the index's folder.
func checkShardName(s string) error {
	switch {
	case s == "":
		return errors.New("empty")
	case strings.Contains(s, "://"):
		return errors.New("a URL")
	case strings.HasPrefix(s, "/") || strings.HasPrefix(s, "\\") || (len(s) > 1 && s[1] == ':'):
		return errors.New("an absolute path")
	case strings.ContainsAny(s, "\\"):
		return errors.New("a backslash")
	}
	for _, part := range strings.Split(s, "/") {
		if part == ".." || part == "." || part == "" {
			return errors.New("a path with . or .. or an empty part")
		}
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return errors.New("control characters")
		}
	}
	return nil
}

// shardPattern matches the names sharded files get: model-00001-of-00003.safetensors.
var shardPattern = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.safetensors$`)

// ShardPattern reports whether name (a base name) is a shard's, and if so the prefix and the count.
func ShardPattern(name string) (prefix string, k, n int, ok bool) {
	g := shardPattern.FindStringSubmatch(name)
	if g == nil {
		return "", 0, 0, false
	}
	k, _ = strconv.Atoi(g[2])
	n, _ = strconv.Atoi(g[3])
	return g[1], k, n, n > 0 && k >= 1 && k <= n
}

// SetSource reads a shard set as one Source: the data sections of its shards, one after another.
type SetSource struct {
	name   string
	shards []setShard
	size   int64
}

type setShard struct {
	src    Source
	data   int64 // file offset of the shard's data section
	start  int64 // offset of the data section in the set
	length int64
}

// ReadAt reads from the concatenated data sections.
func (s *SetSource) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		i := sort.Search(len(s.shards), func(i int) bool { return s.shards[i].start+s.shards[i].length > pos })
		if i == len(s.shards) {
			return n, io.EOF
		}
		sh := &s.shards[i]
		want := min(int64(len(p)-n), sh.start+sh.length-pos)
		k, err := sh.src.ReadAt(p[n:n+int(want)], sh.data+pos-sh.start)
		n += k
		if err != nil && !(err == io.EOF && int64(k) == want) {
			return n, err
		}
	}
	return n, nil
}

// Size is the total length of the data sections.
func (s *SetSource) Size() int64 { return s.size }

// Name is the set's name (its index or first shard).
func (s *SetSource) Name() string { return s.name }

// ShardOpener opens one shard of a set by the name the index gives it.
type ShardOpener func(shard string) (Source, error)

// ReadSet reads a sharded model: every shard's header, and the index when there is one (idx may be
// nil: the shards then come from their names). The Model it returns is the whole model: tensors of all
// shards (their offsets in the SetSource's space), the shards' metadata, and the set's findings
// (tensors the index and the shards disagree on, a tensor in two shards, a wrong total_size) besides
// each shard's own, named. Its structure and content IDs equal those of the same model in one file.
// A shard that cannot be opened or read is an error. RefErr is the first shard the reference rejects;
// the set's own defects are error findings (the reference reads files, not sets).
func ReadSet(name string, idx *Index, shards []string, open ShardOpener) (*Model, *SetSource, error) {
	set := &SetSource{name: name}
	m := &Model{Name: name, HeaderParsed: true}
	inShard := map[string]string{}
	var valid = true
	for _, sh := range shards {
		src, err := open(sh)
		if err != nil {
			return nil, nil, err
		}
		sm, err := Read(src, src.Size(), src.Name())
		if err != nil {
			return nil, nil, err
		}
		m.Shards = append(m.Shards, ShardInfo{Name: sh, FileSize: sm.FileSize, HeaderLen: sm.HeaderLen, Start: set.size, Valid: sm.Valid(), RawHeader: sm.RawHeader})
		for _, f := range sm.Findings {
			f.Message = sh + ": " + f.Message
			m.add(f)
		}
		for code, n := range sm.Omitted {
			m.omit(code, n) // the shard kept MaxFindingsPerCode of them, and so does the set now
		}
		if !sm.Valid() && valid {
			valid = false
			m.RefErr = &RefError{Kind: sm.RefErr.Kind, Message: sh + ": " + sm.RefErr.Message, Offset: sm.RefErr.Offset}
		}
		m.HeaderParsed = m.HeaderParsed && sm.HeaderParsed
		for _, e := range sm.Metadata {
			if v, ok := m.Meta(e.Key); !ok {
				m.Metadata = append(m.Metadata, MetaEntry{Key: e.Key, Value: e.Value, Offset: -1, NotString: e.NotString})
				m.HasMetadata = true
			} else if v != e.Value {
				m.add(Finding{Code: CodeShardMetadata, Severity: SevInfo, Offset: -1,
					Message: fmt.Sprintf("%s: metadata %q is %q here but %q in an earlier shard (the first is kept)", sh, e.Key, e.Value, v)})
			}
		}
		for _, t := range sm.Tensors {
			if other, dup := inShard[t.Name]; dup {
				m.add(Finding{Code: CodeTensorInTwoShards, Severity: SevError, Offset: -1,
					Message: fmt.Sprintf("tensor %q is in %s and in %s: loaders disagree on which to use", t.Name, other, sh)})
				continue
			}
			inShard[t.Name] = sh
			t.Begin += uint64(set.size)
			t.End += uint64(set.size)
			t.HeaderOffset = -1
			m.Tensors = append(m.Tensors, t)
		}
		set.shards = append(set.shards, setShard{src: src, data: sm.DataOffset(), start: set.size, length: max(sm.DataLen(), 0)})
		set.size += max(sm.DataLen(), 0)
	}
	m.FileSize = set.size
	if idx != nil {
		var total int64
		for _, t := range m.Tensors {
			total += int64(t.Len())
		}
		names := make([]string, 0, len(idx.WeightMap))
		for t := range idx.WeightMap {
			names = append(names, t)
		}
		sort.Strings(names)
		for _, t := range names {
			want := idx.WeightMap[t]
			if got, ok := inShard[t]; !ok {
				m.add(Finding{Code: CodeIndexTensorMissing, Severity: SevError, Offset: -1,
					Message: fmt.Sprintf("the index puts tensor %q in %s, but no shard holds it", t, want)})
			} else if got != want {
				m.add(Finding{Code: CodeIndexTensorMissing, Severity: SevError, Offset: -1,
					Message: fmt.Sprintf("the index puts tensor %q in %s, but it is in %s", t, want, got)})
			}
		}
		var extra []string
		for t := range inShard {
			if _, ok := idx.WeightMap[t]; !ok {
				extra = append(extra, t)
			}
		}
		sort.Strings(extra)
		for _, t := range extra {
			m.add(Finding{Code: CodeTensorNotInIndex, Severity: SevWarning, Offset: -1,
				Message: fmt.Sprintf("tensor %q is in %s but not in the index: loaders that follow the index never load it", t, inShard[t])})
		}
		if idx.TotalSize >= 0 && idx.TotalSize != total {
			m.add(Finding{Code: CodeIndexTotalSize, Severity: SevWarning, Offset: -1,
				Message: fmt.Sprintf("the index's total_size is %d but the tensors hold %d bytes", idx.TotalSize, total)})
		}
	}
	return m, set, nil
}

// ShardInfo describes one shard of a set.
type ShardInfo struct {
	Name      string
	FileSize  int64
	HeaderLen uint64
	// Start is where the shard's data section begins in the set's SetSource.
	Start int64
	Valid bool
	// RawHeader is the shard's header bytes (shared with the set's names: do not modify).
	RawHeader []byte
}

// ShardNames lists a set's shard file names from one shard's name (see ShardPattern):
// prefix-00001-of-0000N.safetensors to prefix-0000N-of-0000N.safetensors.
func ShardNames(prefix string, n int) []string {
	out := make([]string, n)
	for k := range out {
		out[k] = fmt.Sprintf("%s-%05d-of-%05d.safetensors", prefix, k+1, n)
	}
	return out
}
