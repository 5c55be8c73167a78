package source

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
	"sync"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/tensor"
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
		return nil, &canon.ReadError{Name: name, Err: fmt.Errorf("index is %d bytes, over the %d stdiff reads", len(b), MaxIndexSize)}
	}
	var raw struct {
		Metadata  map[string]json.RawMessage `json:"metadata"`
		WeightMap map[string]string          `json:"weight_map"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil {
		return nil, &canon.ReadError{Name: name, Err: fmt.Errorf("not a sharded-model index: %v", err),
			Hint: `an index is {"metadata": {"total_size": …}, "weight_map": {"tensor": "model-00001-of-00002.safetensors", …}}`}
	}
	if len(raw.WeightMap) == 0 {
		return nil, &canon.ReadError{Name: name, Err: errors.New("not a sharded-model index: no weight_map")}
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
			return nil, &canon.ReadError{Name: name, Err: fmt.Errorf("%w %q: %v", ErrUnsafeShard, textfmt.Escape(shard), err),
				Hint: "an index may only name files in its own folder; this one may be hostile"}
		}
		seen[shard] = true
		idx.Shards = append(idx.Shards, shard)
		if len(idx.Shards) > MaxShards {
			return nil, &canon.ReadError{Name: name, Err: fmt.Errorf("index names more than %d shards", MaxShards)}
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
var shardPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.safetensors$`) })

// ggufSplitPattern matches the names llama.cpp's gguf-split gives the files of a split model:
// model-00001-of-00003.gguf.
var ggufSplitPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.gguf$`) })

// torchShardPattern matches the names save_pretrained gives the shards of a PyTorch checkpoint:
// pytorch_model-00001-of-00003.bin.
var torchShardPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.bin$`) })

// TorchShardPattern reports whether name (a base name) is a shard's of a sharded PyTorch checkpoint
// (prefix-0000K-of-0000N.bin, its index prefix.bin.index.json), and if so the prefix, K and N.
func TorchShardPattern(name string) (prefix string, k, n int, ok bool) {
	return matchShard(torchShardPattern(), name)
}

// ShardPattern reports whether name (a base name) is a shard's, and if so the prefix and the count.
func ShardPattern(name string) (prefix string, k, n int, ok bool) {
	return matchShard(shardPattern(), name)
}

// GGUFSplitPattern reports whether name (a base name) is a file of a split GGUF model, named as
// llama.cpp names them (prefix-0000K-of-0000N.gguf), and if so the prefix, K and N.
func GGUFSplitPattern(name string) (prefix string, k, n int, ok bool) {
	return matchShard(ggufSplitPattern(), name)
}

func matchShard(re *regexp.Regexp, name string) (prefix string, k, n int, ok bool) {
	g := re.FindStringSubmatch(name)
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
	// data are the readers of PyTorch and NumPy shards' tensor bytes (torch.Data), closed by Close.
	data []io.Closer
}

type setShard struct {
	src    canon.Source
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

// Close releases what the set's PyTorch and NumPy shards hold to read their tensors (inflaters of
// compressed .npz entries); it does not close the shards' sources, which the opener gave.
func (s *SetSource) Close() error {
	for _, c := range s.data {
		c.Close()
	}
	return nil
}

// ShardOpener opens one shard of a set by the name the index gives it. A shard that is not there is
// an error wrapping ErrMissingShard.
type ShardOpener func(shard string) (canon.Source, error)

// ErrMissingShard is wrapped by the error of a ShardOpener for a shard that is not there (a file that
// does not exist, a URL the server does not have).
var ErrMissingShard = errors.New("missing shard")

// ReadSet reads a sharded model: every shard's header, and the index when there is one (idx may be
// nil: the shards then come from their names, in order). The Model it returns is the whole model:
// tensors of all shards (their offsets in the SetSource's space), the shards' metadata, and the set's
// findings (tensors the index and the shards disagree on, a tensor in two shards, a wrong total_size,
// shards of different formats) besides each shard's own, named. Its structure and content IDs equal
// those of the same model in one file. A shard that cannot be opened or read is an error. RefErr is the
// first shard the reference rejects; the set's own defects are error findings (the reference reads
// files, not sets).
//
// A shard the opener says is missing (ErrMissingShard) is not an error: the model is what can be
// known without it. The shard is in Shards with Missing set; with an index, the tensors the index puts
// in it are in Tensors by name only (Tensor.NameOnly: no dtype, shape or bytes), in name order where
// the shard would be; without one nothing is known of them. Each missing shard is an error finding,
// CodeMissingShards (CodeMissingSplit in a split GGUF model). Such a model has no structure or content
// ID (see Model.MissingShards).
//
// A split GGUF model (llama.cpp's gguf-split: prefix-00001-of-0000N.gguf …) is read the same way, its
// files in order. Its Format is FormatGGUF, its GGUF the first file's header, its metadata leaves out
// the split.* keys (they describe the files, as Shards does), and the set is checked as llama.cpp's
// loader checks it (see gguf.RuleSplit): a set the loader rejects, one with a file missing among them,
// has a RefErr of that rule.
//
// A sharded PyTorch checkpoint (pytorch_model.bin.index.json and pytorch_model-0000K-of-0000N.bin, as
// save_pretrained writes them without safetensors) is read the same way: each shard's tensors have
// their bytes in row-major order in the set's source (torch.Data: views gathered), so the set's IDs
// and values equal those of the same tensors in one safetensors file. Close the SetSource when done.
func ReadSet(name string, idx *Index, shards []string, open ShardOpener) (*canon.Model, *SetSource, error) {
	set := &SetSource{name: name}
	m := &canon.Model{Name: name, HeaderParsed: true}
	// Every shard's header first: the tensors of a missing shard are those the present ones lack.
	models, srcs := make([]*canon.Model, len(shards)), make([]canon.Source, len(shards))
	held := map[string]bool{}
	for k, sh := range shards {
		src, err := open(sh)
		if err != nil {
			if errors.Is(err, ErrMissingShard) {
				continue
			}
			return nil, nil, err
		}
		sm, err := canon.Read(src, src.Size(), src.Name())
		if err != nil {
			return nil, nil, err
		}
		models[k], srcs[k] = sm, src
		for i := range sm.Tensors {
			held[sm.Tensors[i].Name] = true
		}
	}
	inShard := map[string]string{}
	var ggufFiles []*gguf.File // per shard, nil for one that is not GGUF
	first := ""                // the first shard read
	var missing map[string][]string
	var unknown []string // missing shards of a set without an index: nothing is known of them
	for k, sh := range shards {
		sm, src := models[k], srcs[k]
		if sm == nil && idx == nil {
			m.Shards = append(m.Shards, canon.ShardInfo{Name: sh, Start: set.size, Missing: true})
			unknown = append(unknown, sh)
			ggufFiles = append(ggufFiles, nil)
			continue
		}
		if sm == nil {
			if missing == nil {
				missing = idx.byShard()
			}
			addMissing(m, sh, missing[sh], held, inShard, set.size)
			ggufFiles = append(ggufFiles, nil)
			continue
		}
		if first == "" {
			first, m.Format = sh, sm.Format
			if g, ok := sm.Detail.(*gguf.File); ok { // the first file's, which holds the model's metadata
				m.Detail = g
			}
		} else if sm.Format != m.Format {
			m.AddFinding(finding.Finding{Code: canon.CodeShardFormat, Severity: finding.SevError, Offset: -1,
				Message: fmt.Sprintf("%s is a %s file, but %s is %s: the shards of one model share a format", sh, sm.Format, first, m.Format)})
		}
		g, _ := sm.Detail.(*gguf.File)
		ggufFiles = append(ggufFiles, g)
		m.Shards = append(m.Shards, canon.ShardInfo{Name: sh, FileSize: sm.FileSize, HeaderLen: sm.HeaderLen, Start: set.size, Valid: sm.Valid(), RawHeader: sm.RawHeader})
		for _, f := range sm.Findings {
			f.Message = sh + ": " + f.Message
			m.AddFinding(f)
		}
		for code, n := range sm.Omitted {
			omit(m, code, n) // the shard kept finding.MaxPerCode of them, and so does the set now
		}
		if !sm.Valid() && m.RefErr == nil {
			m.RefErr = &canon.RefError{Kind: sm.RefErr.Kind, Message: sh + ": " + sm.RefErr.Message, Offset: sm.RefErr.Offset}
		}
		m.HeaderParsed = m.HeaderParsed && sm.HeaderParsed
		for _, e := range sm.Metadata {
			if sm.Format == canon.FormatGGUF && isSplitKey(e.Key) {
				continue
			}
			if v, ok := m.Meta(e.Key); !ok {
				m.Metadata = append(m.Metadata, canon.MetaEntry{Key: e.Key, Value: e.Value, Type: e.Type, Offset: -1, NotString: e.NotString})
				m.HasMetadata = true
			} else if v != e.Value {
				m.AddFinding(finding.Finding{Code: canon.CodeShardMetadata, Severity: finding.SevInfo, Offset: -1,
					Message: fmt.Sprintf("%s: metadata %q is %q here but %q in an earlier shard (the first is kept)", sh, e.Key, e.Value, v)})
			}
		}
		for _, t := range sm.Tensors {
			if other, dup := inShard[t.Name]; dup {
				f := finding.Finding{Code: canon.CodeTensorInTwoShards, Severity: finding.SevError, Offset: -1,
					Message: fmt.Sprintf("tensor %q is in %s and in %s: loaders disagree on which to use", t.Name, other, sh)}
				if m.Format == canon.FormatGGUF { // llama.cpp's loader rejects the set
					f.RefKind = finding.RefKind(gguf.RuleDuplicateTensor)
					setRef(m, f.RefKind, f.Message, -1)
				}
				m.AddFinding(f)
				continue
			}
			inShard[t.Name] = sh
			t.Begin += uint64(set.size)
			t.End += uint64(set.size)
			t.HeaderOffset = -1
			m.Tensors = append(m.Tensors, t)
			m.Shards[len(m.Shards)-1].Tensors++
		}
		data, length := src, max(sm.DataLen(), 0)
		// A checkpoint shard's tensor bytes are in row-major order (views gathered), where its Begin and
		// End point; no file beside a shard is read.
		if d := canon.OpenSpace(sm, src, canon.Where{Remote: true}); d != nil {
			data, length = canon.SourceOf(d, d.Size(), src.Name()), d.Size()
			set.data = append(set.data, d)
		}
		set.shards = append(set.shards, setShard{src: data, data: sm.DataOffset(), start: set.size, length: length})
		set.size += length
	}
	m.FileSize = set.size
	for _, sh := range unknown {
		addUnknown(m, sh, len(shards))
	}
	if m.Format == canon.FormatGGUF && len(shards) > 0 {
		checkSplit(m, shards, ggufFiles)
	}
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
				m.AddFinding(finding.Finding{Code: canon.CodeIndexTensorMissing, Severity: finding.SevError, Offset: -1,
					Message: fmt.Sprintf("the index puts tensor %q in %s, but no shard holds it", t, want)})
			} else if got != want {
				m.AddFinding(finding.Finding{Code: canon.CodeIndexTensorMissing, Severity: finding.SevError, Offset: -1,
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
			m.AddFinding(finding.Finding{Code: canon.CodeTensorNotInIndex, Severity: finding.SevWarning, Offset: -1,
				Message: fmt.Sprintf("tensor %q is in %s but not in the index: loaders that follow the index never load it", t, inShard[t])})
		}
		if idx.TotalSize >= 0 && idx.TotalSize != total && missing == nil {
			m.AddFinding(finding.Finding{Code: canon.CodeIndexTotalSize, Severity: finding.SevWarning, Offset: -1,
				Message: fmt.Sprintf("the index's total_size is %d but the tensors hold %d bytes", idx.TotalSize, total)})
		}
	}
	return m, set, nil
}

// byShard lists the tensors of each shard, from the weight map, in name order.
func (idx *Index) byShard() map[string][]string {
	out := map[string][]string{}
	for t, sh := range idx.WeightMap {
		out[sh] = append(out[sh], t)
	}
	for _, names := range out {
		sort.Strings(names)
	}
	return out
}

// addMissing records a shard that is not there: its tensors (names, those no present shard holds) by
// name only, at offset at of the set, and a finding.
func addMissing(m *canon.Model, shard string, names []string, held map[string]bool, inShard map[string]string, at int64) {
	n := 0
	for _, t := range names {
		if held[t] {
			continue // a present shard holds it: the index checks below say where
		}
		inShard[t] = shard
		m.Tensors = append(m.Tensors, tensor.Tensor{Name: t, Begin: uint64(at), End: uint64(at), HeaderOffset: -1})
		n++
	}
	m.Shards = append(m.Shards, canon.ShardInfo{Name: shard, Start: at, Missing: true, Tensors: n})
	m.AddFinding(finding.Finding{Code: canon.CodeMissingShards, Severity: finding.SevError, Offset: -1,
		Message: fmt.Sprintf("%s is missing: the index puts %s in it, known here by name only (no dtype, shape or bytes)", shard, textfmt.Plural(n, "tensor")),
		Hint:    "every shard the index names must be there to load or hash the model: download the whole set"})
}

// addUnknown records that shard, one of the n of a set read without an index, is not there: an error
// finding naming it. In a split GGUF model llama.cpp's loader fails to open it: the set is rejected
// (gguf.RuleSplit).
func addUnknown(m *canon.Model, shard string, n int) {
	f := finding.Finding{Code: canon.CodeMissingShards, Severity: finding.SevError, Offset: -1,
		Message: fmt.Sprintf("%s is missing: the set's name says it has %d files, and the tensors of this one are unknown", shard, n),
		Hint:    "every file of the set must be there to load or hash the model: download the whole set"}
	if m.Format == canon.FormatGGUF {
		f.Code, f.RefKind = canon.CodeMissingSplit, finding.RefKind(gguf.RuleSplit)
		f.Message = fmt.Sprintf("%s is missing: the split model has %d files, and the tensors of this one are unknown", shard, n)
		setRef(m, f.RefKind, f.Message, -1)
	}
	m.AddFinding(f)
}

// ShardNames lists a set's shard file names from one shard's name (see ShardPattern):
// prefix-00001-of-0000N.safetensors to prefix-0000N-of-0000N.safetensors.
func ShardNames(prefix string, n int) []string { return shardNames(prefix, n, ".safetensors") }

// GGUFSplitNames lists the file names of a split GGUF model (see GGUFSplitPattern):
// prefix-00001-of-0000N.gguf to prefix-0000N-of-0000N.gguf.
func GGUFSplitNames(prefix string, n int) []string { return shardNames(prefix, n, ".gguf") }

func shardNames(prefix string, n int, ext string) []string {
	out := make([]string, n)
	for k := range out {
		out[k] = fmt.Sprintf("%s-%05d-of-%05d%s", prefix, k+1, n, ext)
	}
	return out
}

// isSplitKey reports whether key is one of the keys that say where a file stands in a split GGUF model.
func isSplitKey(key string) bool {
	return key == gguf.SplitNoKey || key == gguf.SplitCountKey || key == gguf.SplitTensorsKey
}

// checkSplit checks a split GGUF model as llama.cpp's loader does: files[k] (named names[k]) must say
// it is file k (split.no), the first must say how many files (split.count) and tensors
// (split.tensors.count) the set has, each key of the type llama.cpp requires. What the loader rejects
// is an error with the rule gguf.RuleSplit (and the set's verdict, unless a file already failed); a
// later file whose split.count disagrees, which the loader does not read, is a warning.
func checkSplit(m *canon.Model, names []string, files []*gguf.File) {
	const hint = "the files do not belong together, or one was renamed or replaced: fetch the set again"
	fail := func(code, msg string) {
		m.AddFinding(finding.Finding{Code: code, Severity: finding.SevError, Offset: -1, Message: msg, Hint: hint, RefKind: finding.RefKind(gguf.RuleSplit)})
		setRef(m, finding.RefKind(gguf.RuleSplit), msg, -1)
	}
	n := int64(len(files))
	for k, f := range files {
		if f == nil { // not a GGUF file: already reported
			continue
		}
		if no, problem := splitValue(f, gguf.SplitNoKey, gguf.ValUint16); problem != "" {
			fail(canon.CodeSplitNumber, names[k]+": "+problem)
		} else if no != int64(k) {
			fail(canon.CodeSplitNumber, fmt.Sprintf("%s: %s is %d, but the file is number %d of the set (counted from 0)", names[k], gguf.SplitNoKey, no, k))
		}
		count, problem := splitValue(f, gguf.SplitCountKey, gguf.ValUint16)
		switch {
		case k == 0 && problem != "":
			fail(canon.CodeSplitCount, names[k]+": "+problem)
		case k == 0 && count != n:
			fail(canon.CodeSplitCount, fmt.Sprintf("%s: %s is %d, but the set has %d files", names[k], gguf.SplitCountKey, count, n))
		case k > 0 && problem == "" && count != n:
			m.AddFinding(finding.Finding{Code: canon.CodeSplitCount, Severity: finding.SevWarning, Offset: -1,
				Message: fmt.Sprintf("%s: %s is %d, but the set has %d files (llama.cpp reads the first file's only)", names[k], gguf.SplitCountKey, count, n)})
		}
	}
	if files[0] == nil || m.MissingShards() != nil { // a missing file's tensors are not counted: already said
		return
	}
	if want, problem := splitValue(files[0], gguf.SplitTensorsKey, gguf.ValInt32); problem != "" {
		fail(canon.CodeSplitTensorCount, names[0]+": "+problem)
	} else if want != int64(len(m.Tensors)) {
		fail(canon.CodeSplitTensorCount, fmt.Sprintf("%s: %s is %d, but the files hold %d tensors", names[0], gguf.SplitTensorsKey, want, len(m.Tensors)))
	}
}

// splitValue is the integer value of key in f; problem says why there is none llama.cpp would read:
// the key is missing or its value is not of type t.
func splitValue(f *gguf.File, key string, t gguf.ValueType) (v int64, problem string) {
	kv := f.KV(key)
	switch {
	case kv == nil:
		return 0, "has no " + key + ", which llama.cpp needs in a split model"
	case kv.Value.Type != t:
		return 0, fmt.Sprintf("%s is a %s, not the %s llama.cpp requires", key, kv.Value.Type, t)
	}
	v, _ = kv.Value.Int()
	return v, ""
}

// setRef records the reference's verdict on m unless an earlier check already failed.
func setRef(m *canon.Model, kind finding.RefKind, msg string, off int64) {
	if m.RefErr == nil {
		m.RefErr = &canon.RefError{Kind: kind, Message: msg, Offset: off}
	}
}

// omit counts n findings of code as made but not kept (a part kept finding.MaxPerCode of them).
func omit(m *canon.Model, code string, n int) {
	if m.Omitted == nil {
		m.Omitted = map[string]int{}
	}
	m.Omitted[code] += n
}
