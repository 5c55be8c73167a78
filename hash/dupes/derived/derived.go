// Package derived finds the models derived from others among many: a copy whose every tensor is the
// exact round-to-nearest-even conversion of the original's to a narrower float dtype (F16, BF16, FP8:
// rounded), one that holds some of the original's tensors and leaves the others out (a checkpoint with
// its model_ema.* pruned: subset, possibly rounded too), or one that holds the same tensors in another
// container or with other metadata (same-tensors). The original is the side with more information:
// the wider dtypes, the more tensors.
//
// It is staged so that a large collection stays fast. Models are compared by their headers first:
// tensor names and shapes, whatever the dtypes (a model derived from another has the other's names
// and shapes, or some of them). Only models whose names and shapes match, or are a part of another's,
// have values read: a few elements of up to four tensors, rounded to the narrower side's dtypes and
// hashed, so that the models of one architecture with other weights (a thousand LoRAs of one base and
// rank) are told apart without comparing each with each. Only pairs whose samples agree are read in
// full, tensor by tensor, and a pair is derived only when every tensor is the exact conversion. Unrelated
// models of the same shapes are never grouped.
//
// A derived group is a report: package dupes puts it beside its duplicate groups, and package act
// deletes across it only when asked by name (its Options.Derived), keeping the original, after Check
// has proved the relation again.
package derived

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/bits"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/values"
)

// Relation is how a member of a derived group comes from its original.
type Relation string

// Relations.
const (
	// Original is the group's original: the model the others are derived from.
	Original Relation = "original"
	// Rounded: every tensor is the original's, or its exact round-to-nearest-even conversion to a
	// narrower float dtype (Member.RoundedTo says which).
	Rounded Relation = "rounded"
	// Subset: the original's tensors minus some (Member.LeftOut says which), each the same or its
	// exact conversion to a narrower dtype.
	Subset Relation = "subset"
	// SameTensors: the same tensors (names, dtypes, shapes, values) in another container or with
	// other metadata.
	SameTensors Relation = "same-tensors"
)

// Model is one model as Find sees it.
type Model struct {
	// Path names the model.
	Path string
	// Header reads the model's header for its tensors (names, dtypes, shapes, offsets in its data
	// section).
	Header func(ctx context.Context) (*canon.Model, error)
	// Open opens the model's tensor bytes: a reader, the offset of its data section in it, and a
	// function that closes it.
	Open func(ctx context.Context) (io.ReaderAt, int64, func(), error)
	// Safetensors says that Path is a local safetensors file: its header is skimmed (canon.Skim)
	// for names, shapes and offsets, without building its tensors (Header is the fallback).
	Safetensors bool
	// Summary, when not nil, holds the model's header entries, received as its header was skimmed.
	Summary *Sink
	// Same, when not 0, says that the models of the same Same hold the same tensors (names, dtypes,
	// shapes, bytes), as the caller proved: Find compares the first of them alone and gives the others
	// its relations, so that a thousand copies of one model cost one.
	Same int
}

// LeftOut is what a subset leaves out of its original.
type LeftOut struct {
	// Count is how many of the original's tensors it leaves out.
	Count int `json:"count"`
	// Names are a few of them, as prefixes where a whole prefix is left out ("model_ema.*").
	Names []string `json:"names"`
}

// Member is one model of a derived group.
type Member struct {
	// Index is the model's index in the slice given to Find.
	Index int
	// Relation is how it comes from the group's original (Original for the original itself).
	Relation Relation
	// RoundedTo is the narrower dtype its tensors were rounded to ("" when none was); where tensors
	// were rounded to several, the one of the most tensors.
	RoundedTo tensor.DType
	// LeftOut is what a subset leaves out (nil for others).
	LeftOut *LeftOut
}

// Group is an original and the models derived from it, the original first, the others in the order
// they were given.
type Group struct {
	Members []Member
}

// sampleTensors and sampleElements bound the values read of a candidate: a few elements at the
// start and the middle of up to sampleTensors tensors.
const (
	sampleTensors  = 4
	sampleElements = 16
)

// info is what Find keeps of a model after its header: the hashes of its tensors' (name, shape).
type info struct {
	hashes []uint64 // sorted where the model stands for its structure (Find), else as read
	key    uint64   // their multiset hash with the count
	err    error
	// bottom are the tensors with elements of the smallest name hashes (up to keptEntries), where
	// their bytes are: a sample needs no second reading of the header where the picks are among them.
	bottom []entry
	// meta is where the metadata is in the safetensors header skimmed ([0 0]: none), when skimmed
	// says it was: load finds the header's layout by it (layouts).
	meta    [2]int
	skimmed bool
}

// entry is a tensor as a sample reads it: its name's hash (HashBytes: the tensors package dupes
// samples are those of the smallest, so a sample reads what dupes read), dtype and bytes.
type entry struct {
	h          uint64
	dtype      tensor.DType
	begin, end uint64
	seq        uint32 // its place in the header (Sink: of equal hashes the later comes first)
}

// after reports whether e comes after f in a Sink's bottom: the larger hash, or of equal hashes the
// earlier in the header.
func (e *entry) after(f *entry) bool { return e.h > f.h || (e.h == f.h && e.seq < f.seq) }

// keptEntries is how many entries info keeps: the picks of a subset are among its original's
// smallest unless the subset leaves out most of them.
const keptEntries = 16

// Sink receives a model's header entries (it is a canon.SkimSink) and keeps what Find needs of
// them: a caller that skims headers anyway gives them to it (Model.Summary), and Find reads none again.
type Sink struct {
	hs []uint64
	// bottom are the entries of the smallest name hashes, in no order until info or Sample sorts
	// them; last is the index of the one that comes last (the next to go when a smaller comes).
	bottom []entry
	last   int
	seq    uint32
	// sampled is what Sample read, nil when it read nothing.
	sampled *presample
	// meta is where the skim said the metadata is ([0 0]: nowhere).
	meta [2]int
	// dtype is the last dtype keep saw, supported whether its values can be read.
	dtype     tensor.DType
	supported bool
}

// presample is a model's sample at its own picks, read by Sink.Sample.
type presample struct {
	picks  []uint64
	vals   [][]float64
	dtypes []tensor.DType
}

// Sample reads the model's sample at its own picks (the tensors of the smallest name hashes its
// header holds: the picks Find samples it at unless a subset of it is a candidate too) from r, whose
// data section starts at off, so that a caller that has the model's bytes open anyway (package
// dupes, sampling its candidates for copies) spares Find opening it again. read holds the bytes the
// caller read already, at ranges of the data section (offset, length), one after another: a sample
// within them is taken from them. It reads nothing before the header's entries are all received, nor
// where two picks share a hash.
func (s *Sink) Sample(r io.ReaderAt, off int64, ranges [][2]uint64, read []byte) {
	if len(s.hs) == 0 || len(s.bottom) == 0 {
		return
	}
	slices.SortFunc(s.bottom, byHash) // in place, as info sorts it: the last is the largest
	s.last = len(s.bottom) - 1
	es := s.bottom[:min(len(s.bottom), presampleTensors)]
	p := &presample{picks: make([]uint64, len(es)), dtypes: make([]tensor.DType, len(es))}
	for k, e := range es {
		if k > 0 && e.h == es[k-1].h {
			return
		}
		p.picks[k], p.dtypes[k] = e.h, e.dtype
	}
	var ok bool
	if len(ranges) > 0 {
		r = &readRanges{src: r, off: off, ranges: ranges, data: read}
	}
	if p.vals, ok = sample(r, off, es); ok {
		s.sampled = p
	}
}

// readRanges reads what was read already (ranges, relative to the data section at off, their bytes
// one after another in data) from memory, and anything else from src.
type readRanges struct {
	src    io.ReaderAt
	off    int64
	ranges [][2]uint64
	data   []byte
}

// ReadAt reads len(p) bytes at at.
func (r *readRanges) ReadAt(p []byte, at int64) (int, error) {
	if rel := at - r.off; rel >= 0 {
		k := uint64(0)
		for _, rg := range r.ranges {
			if uint64(rel) >= rg[0] && uint64(rel)+uint64(len(p)) <= rg[0]+rg[1] {
				return copy(p, r.data[k+uint64(rel)-rg[0]:]), nil
			}
			k += rg[1]
		}
	}
	return r.src.ReadAt(p, at)
}

// Sampled is how many tensors Sample read the sample of (0: none).
func (s *Sink) Sampled() int {
	if s.sampled == nil {
		return 0
	}
	return len(s.sampled.vals)
}

// presampleTensors is how many tensors Sample reads: a structure's picks are its own smallest, or
// those of a subset of it that is a candidate too, which leaves few of them out.
const presampleTensors = 2 * sampleTensors

// presampled is the part of the sample Sample read at picks; false when one of them was not read.
func (s *Sink) presampled(picks []uint64) (vals [][]float64, dtypes []tensor.DType, ok bool) {
	if s == nil || s.sampled == nil {
		return nil, nil, false
	}
	p := s.sampled
	for _, h := range picks {
		k, found := slices.BinarySearch(p.picks, h)
		if !found {
			return nil, nil, false
		}
		vals, dtypes = append(vals, p.vals[k]), append(dtypes, p.dtypes[k])
	}
	return vals, dtypes, len(picks) > 0
}

// byHash orders a Sink's entries: the smallest hash first, of equal hashes the later in the header.
func byHash(a, b entry) int {
	if a.after(&b) {
		return 1
	}
	if b.after(&a) {
		return -1
	}
	return 0
}

// add counts one tensor of (name, shape) hash h and name hash name.
func (s *Sink) add(h, name uint64, dtype tensor.DType, begin, end uint64) {
	if s.count(h, name, begin, end) {
		s.keep(name, dtype, begin, end)
	}
}

// count counts one tensor of (name, shape) hash h, and reports whether its name hash may be one of
// the bottom's (keep decides).
func (s *Sink) count(h, name, begin, end uint64) bool {
	if cap(s.hs) == 0 {
		s.hs = make([]uint64, 0, firstHashes) // a LoRA has hundreds: not eleven doublings from one
	}
	s.hs = append(s.hs, h)
	s.seq++
	return end > begin && (len(s.bottom) < keptEntries || name < s.bottom[s.last].h)
}

// keep puts a tensor that count let through among the bottom, unless its dtype's values cannot be read.
func (s *Sink) keep(name uint64, dtype tensor.DType, begin, end uint64) {
	if dtype != s.dtype { // most entries have the last one's
		s.dtype, s.supported = dtype, values.Supported(dtype)
	}
	if !s.supported {
		return
	}
	e := entry{h: name, dtype: dtype, begin: begin, end: end, seq: s.seq}
	if len(s.bottom) < keptEntries {
		if s.bottom == nil {
			s.bottom = make([]entry, 0, keptEntries)
		}
		if s.bottom = append(s.bottom, e); len(s.bottom) < keptEntries {
			return // last matters once the bottom is full
		}
	} else {
		s.bottom[s.last] = e
	}
	s.last = 0
	for i := range s.bottom {
		if s.bottom[i].after(&s.bottom[s.last]) {
			s.last = i
		}
	}
}

// firstHashes is the capacity a Sink's first entry allocates.
const firstHashes = 256

// Entry adds one header entry.
func (s *Sink) Entry(name, dtype []byte, shape []uint64, begin, end uint64) {
	s.EntryHashed(HashBytes(name), dtype, shape, begin, end)
}

// EntryHashed adds one header entry whose name's HashBytes is name: a caller that hashes names
// anyway (package dupes) hashes each once.
func (s *Sink) EntryHashed(name uint64, dtype []byte, shape []uint64, begin, end uint64) {
	if s.count(structHash(name, shape), name, begin, end) { // most entries stop here: their dtype is not needed
		s.keep(name, internDType(dtype), begin, end)
	}
}

// internDType is dtype as a tensor.DType: a constant string for the dtypes the reference knows (no
// allocation per entry: a header has hundreds), a string of its own for others.
func internDType(dtype []byte) tensor.DType {
	switch string(dtype) {
	case "F16":
		return "F16"
	case "BF16":
		return "BF16"
	case "F32":
		return "F32"
	case "F64":
		return "F64"
	case "F8_E4M3":
		return "F8_E4M3"
	case "F8_E5M2":
		return "F8_E5M2"
	case "F8_E4M3FNUZ":
		return "F8_E4M3FNUZ"
	case "F8_E5M2FNUZ":
		return "F8_E5M2FNUZ"
	case "F8_E8M0":
		return "F8_E8M0"
	case "F6_E2M3":
		return "F6_E2M3"
	case "F6_E3M2":
		return "F6_E3M2"
	case "F4":
		return "F4"
	case "BOOL":
		return "BOOL"
	case "U8":
		return "U8"
	case "I8":
		return "I8"
	case "I16":
		return "I16"
	case "U16":
		return "U16"
	case "I32":
		return "I32"
	case "U32":
		return "U32"
	case "I64":
		return "I64"
	case "U64":
		return "U64"
	case "C64":
		return "C64"
	}
	return tensor.DType(dtype)
}

// Reset forgets the entries.
func (s *Sink) Reset() {
	s.hs, s.bottom, s.last, s.seq, s.sampled, s.meta = s.hs[:0], s.bottom[:0], 0, 0, nil, [2]int{}
}

// MetadataSpan notes where the header's metadata is (canon.SkimSink).
func (s *Sink) MetadataSpan(begin, end int) { s.meta = [2]int{begin, end} }

// info is the info of the tensors received.
func (s *Sink) info() info {
	if len(s.hs) == 0 {
		return info{err: io.EOF}
	}
	var sum uint64
	for _, h := range s.hs { // a multiset hash: the hashes are mixed already
		sum += h
	}
	slices.SortFunc(s.bottom, byHash)
	s.last = len(s.bottom) - 1
	return info{hashes: s.hs, key: mix(sum ^ uint64(len(s.hs))), bottom: s.bottom, meta: s.meta}
}

// summarize is m's info: its header skimmed, for a safetensors file, else its tensors.
func summarize(ctx context.Context, m Model) info {
	if m.Summary != nil && len(m.Summary.hs) > 0 {
		in := m.Summary.info()
		in.skimmed = m.Safetensors // a safetensors file's Summary is its skim's
		return in
	}
	if m.Safetensors {
		if in, ok := skimFile(m.Path); ok {
			return in
		}
	}
	ts, err := tensorsOf(ctx, m)
	if err != nil {
		return info{err: err}
	}
	var s Sink
	for i := range ts {
		s.add(tensorHash(&ts[i]), nameHash(&ts[i]), ts[i].DType, ts[i].Begin, ts[i].End)
	}
	return s.info()
}

// skimFile skims the header of the safetensors file at path; false when it cannot.
func skimFile(path string) (info, bool) {
	f, err := os.Open(path)
	if err != nil {
		return info{}, false
	}
	defer f.Close()
	st, err := f.Stat()
	var n [8]byte
	if err != nil || st.Size() < 8 {
		return info{}, false
	}
	if _, err := f.ReadAt(n[:], 0); err != nil {
		return info{}, false
	}
	hl := binary.LittleEndian.Uint64(n[:])
	if hl > uint64(st.Size()-8) || hl > finding.MaxHeaderLen {
		return info{}, false
	}
	h := make([]byte, hl)
	if _, err := f.ReadAt(h, 8); err != nil {
		return info{}, false
	}
	var s Sink
	var spans [][2]uint64
	if _, ok := canon.Skim(canon.FormatSafetensors, h, st.Size()-8-int64(hl), &spans, &s, true); !ok {
		return info{}, false
	}
	in := s.info()
	in.skimmed = true
	return in, true
}

// mix is SplitMix64's finaliser.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// HashBytes is a fast 64-bit hash of b (package dupes hashes names with it too): a multiply-rotate
// step per eight bytes, then mix.
func HashBytes(b []byte) uint64 {
	h := uint64(len(b)) ^ 0x9e3779b97f4a7c15
	for len(b) >= 8 {
		h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(b))*0xff51afd7ed558ccd, 31)
		b = b[8:]
	}
	var tail uint64
	for i, c := range b {
		tail |= uint64(c) << (8 * i)
	}
	return mix(h ^ tail*0xc4ceb9fe1a85ec53)
}

// nameHash hashes a tensor's name.
func nameHash(t *tensor.Tensor) uint64 {
	return HashBytes(unsafe.Slice(unsafe.StringData(t.Name), len(t.Name)))
}

// tensorHash hashes a tensor's name and shape (not its dtype).
func tensorHash(t *tensor.Tensor) uint64 { return structHash(nameHash(t), t.Shape) }

// structHash hashes a tensor's name (its HashBytes) and shape: a multiply-rotate step a dimension,
// then mix.
func structHash(name uint64, shape []uint64) uint64 {
	h := name ^ uint64(len(shape))*0x9e3779b97f4a7c15
	for _, d := range shape {
		h = bits.RotateLeft64((h^d)*0xff51afd7ed558ccd, 29)
	}
	return mix(h)
}

// Find finds the derived groups among models, using up to workers goroutines. A model that cannot be
// read is left out. The error is ctx's.
func Find(ctx context.Context, models []Model, workers int) ([]Group, error) {
	infos := make([]info, len(models))
	twins := map[int][]int{} // the first model of a Same → the others
	firstOf := map[int]int{}
	for i, m := range models { // the first of a Same stands for it: a safetensors file first
		if f, ok := firstOf[m.Same]; m.Same != 0 && (!ok || m.Safetensors && !models[f].Safetensors) {
			firstOf[m.Same] = i
		}
	}
	for i, m := range models {
		if f := firstOf[m.Same]; m.Same != 0 && f != i {
			twins[f] = append(twins[f], i)
			infos[i].err = errTwin
		}
	}
	pool.Run(ctx, workers, len(models), func(ctx context.Context, i int) error {
		if infos[i].err != nil {
			return nil
		}
		infos[i] = summarize(ctx, models[i])
		return nil
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Structures: models of the same names and shapes.
	byKey := map[uint64][]int{}
	var keys []uint64
	for i := range infos {
		if infos[i].err != nil {
			continue
		}
		k := infos[i].key
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], i)
	}
	for _, k := range keys { // only the first of a structure's models is compared by its hashes
		slices.Sort(infos[byKey[k][0]].hashes)
	}
	// Supersets: the structures whose tensors include all of another's, found through the tensor of
	// the smallest hash (every superset holds it).
	holding := map[uint64][]uint64{} // tensor hash → structures holding it
	for _, k := range keys {
		for _, h := range dedup(infos[byKey[k][0]].hashes) {
			holding[h] = append(holding[h], k)
		}
	}
	var jobs []job
	cache := &sampleCache{m: map[[2]uint64]*cachedSample{}}
	lays := &layouts{}
	picksOf := map[uint64][]uint64{} // a structure → the picks of its job
	bySize := slices.Clone(keys)     // subsets first: a superset samples at its subset's picks, the two jobs sharing its samples
	slices.SortStableFunc(bySize, func(a, b uint64) int {
		return cmp.Compare(len(infos[byKey[a][0]].hashes), len(infos[byKey[b][0]].hashes))
	})
	for _, k := range bySize {
		rep := infos[byKey[k][0]].hashes
		if picksOf[k] == nil {
			picksOf[k] = smallest(infos[byKey[k][0]])
		}
		for _, o := range holding[rep[0]] {
			if _, ok := picksOf[o]; !ok && o != k && len(infos[byKey[o][0]].hashes) > len(rep) && contains(infos[byKey[o][0]].hashes, rep) {
				picksOf[o] = picksOf[k]
			}
		}
	}
	for _, k := range keys {
		rep := infos[byKey[k][0]].hashes
		pool := slices.Clone(byKey[k])
		for _, o := range holding[rep[0]] {
			if o != k && len(infos[byKey[o][0]].hashes) > len(rep) && contains(infos[byKey[o][0]].hashes, rep) {
				pool = append(pool, byKey[o]...)
			}
		}
		if len(pool) > 1 {
			jobs = append(jobs, job{targets: byKey[k], pool: pool, key: k, cache: cache, layouts: lays})
		}
	}
	for i := range jobs {
		jobs[i].picks = picksOf[jobs[i].key]
	}
	holding = nil
	links := make([][]link, len(jobs))
	pool.Run(ctx, workers, len(jobs), func(ctx context.Context, i int) error {
		links[i] = jobs[i].run(ctx, models, infos, workers)
		return nil
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var all []link
	for _, l := range links {
		all = append(all, l...)
	}
	return expand(groups(all, models), twins), nil
}

// tensorsOf is the tensors of m's header.
func tensorsOf(ctx context.Context, m Model) ([]tensor.Tensor, error) {
	h, err := m.Header(ctx)
	if err != nil {
		return nil, err
	}
	return h.Tensors, nil
}

// errTwin marks a model that holds the same tensors as an earlier one (Model.Same).
var errTwin = errors.New("the same tensors as another")

// expand gives each member's twins (Model.Same) its relation; the original's are the same tensors.
func expand(gs []Group, twins map[int][]int) []Group {
	for i := range gs {
		var more []Member
		for j, m := range gs[i].Members {
			for _, t := range twins[m.Index] {
				x := m
				x.Index = t
				if j == 0 {
					x = Member{Index: t, Relation: SameTensors}
				}
				more = append(more, x)
			}
		}
		gs[i].Members = append(gs[i].Members, more...)
		rest := gs[i].Members[1:]
		sort.SliceStable(rest, func(a, b int) bool { return rest[a].Index < rest[b].Index })
	}
	return gs
}

// dedup is sorted hs without repeats.
func dedup(hs []uint64) []uint64 { return slices.Compact(slices.Clone(hs)) }

// contains reports whether the sorted multiset big holds every element of the sorted sub.
func contains(big, sub []uint64) bool {
	i := 0
	for _, h := range sub {
		for i < len(big) && big[i] < h {
			i++
		}
		if i == len(big) || big[i] != h {
			return false
		}
		i++
	}
	return true
}

// job compares the models of one structure (targets: the candidates to be derived) with the models of
// the pool (targets and those of supersets: the candidates to be originals).
type job struct {
	targets, pool []int
	key           uint64
	// picks are the name hashes of the tensors sampled: the smallest of a subset's, where the
	// structure has subsets that are candidates too (they hold them all), so that its models are
	// sampled once for both; else its own.
	picks   []uint64
	cache   *sampleCache
	layouts *layouts // the layouts of the headers loaded, for all jobs
}

// sampleCache keeps each model's sample at some picks, read once whichever job asks first.
type sampleCache struct {
	mu sync.Mutex
	m  map[[2]uint64]*cachedSample
}

// cachedSample is a model's sample at some picks, and their dtypes (vals nil: none could be read).
type cachedSample struct {
	once   sync.Once
	vals   [][]float64
	dtypes []tensor.DType
}

// smallest are the hashes of the first sampleTensors entries of in's bottom.
func smallest(in info) []uint64 {
	var out []uint64
	for _, e := range in.bottom[:min(len(in.bottom), sampleTensors)] {
		out = append(out, e.h)
	}
	return out
}

// link says that model d is derived from model o.
type link struct {
	o, d int
	m    Member
}

// loaded is a model's tensors, by name, and its open bytes.
type loaded struct {
	ts []tensor.Tensor
	// byName is ts by name; nil where ts are in strictly increasing order of name (as most writers
	// put them): then a name is found beside the last one found, else by binary search.
	byName map[string]*tensor.Tensor
	r      io.ReaderAt
	off    int64
	close  func()
	// data is the data section, when held whole (mapped, or read at once); nil: r is read.
	data []byte
}

// tensor is l's tensor of that name, nil when none; next is where the next one is looked for first
// (a cursor kept by the caller, 0 at the start).
func (l *loaded) tensor(name string, next *int) *tensor.Tensor {
	if l.byName != nil {
		return l.byName[name]
	}
	k := *next
	if k >= len(l.ts) || l.ts[k].Name != name {
		var ok bool
		if k, ok = slices.BinarySearchFunc(l.ts, name, func(t tensor.Tensor, n string) int { return strings.Compare(t.Name, n) }); !ok {
			return nil
		}
	}
	*next = k + 1
	return &l.ts[k]
}

// load opens m and reads its tensors: those of a layout ls keeps when its header has one (in says
// where its metadata is), else its header's; in's hashes say how many it has.
func load(ctx context.Context, m Model, in *info, ls *layouts) (*loaded, error) {
	r, off, closer, err := m.Open(ctx)
	if err != nil {
		return nil, err
	}
	l := &loaded{r: r, off: off, close: closer}
	sorted := false
	if f, ok := r.(*os.File); ok { // mapped: no copy of what is compared, no read per tensor
		if data, unmap := mapFile(f); data != nil && off >= 0 && off <= int64(len(data)) {
			l.data, l.close = data[off:], func() { unmap(); closer() }
			h, dataLen := data[min(8, off):off], int64(len(data))-off
			split := m.Safetensors && off >= 8 && in.skimmed && in.meta[0] <= in.meta[1] && in.meta[1] <= len(h)
			if split {
				if lay := ls.find(h, in.meta, dataLen); lay != nil {
					l.ts, sorted = lay.ts, lay.sorted
				}
			}
			if m.Safetensors && off >= 8 && l.ts == nil { // the header from the mapping too, not read again
				c := collectors.Get().(*collector)
				c.reset(len(in.hashes))
				var keep func(ts []tensor.Tensor, sorted bool)
				if split {
					keep = func(ts []tensor.Tensor, sorted bool) { ls.missedHeader(h, c.meta, dataLen, ts, sorted) }
				}
				if l.ts, sorted = skimMapped(h, dataLen, c, keep); l.ts != nil {
					l.close = func() { unmap(); closer(); c.put() }
				} else {
					c.put()
				}
			}
		}
	}
	if l.ts == nil {
		if l.ts, err = tensorsOf(ctx, m); err != nil {
			l.close()
			return nil, err
		}
	}
	if !sorted {
		l.byName = make(map[string]*tensor.Tensor, len(l.ts))
		for i := range l.ts {
			l.byName[l.ts[i].Name] = &l.ts[i]
		}
	}
	var end uint64
	for i := range l.ts {
		end = max(end, l.ts[i].End)
	}
	if l.data == nil && end > 0 && end <= wholeRead { // one read, not two per tensor (a LoRA has thousands)
		buf := make([]byte, end)
		if _, err := r.ReadAt(buf, off); err == nil {
			l.data = buf
		}
	}
	return l, nil
}

// skimMapped is the tensors of the safetensors header h, mapped, as c collects them, and whether
// their names are in strictly increasing order; nil when Skim cannot read it or the mapping faults
// (a file cut short). Their names are parts of the mapping, read only under verify's guard, and
// copied where they outlive it (leftOut). keep, when not nil, is given them under the same guard.
func skimMapped(h []byte, dataLen int64, c *collector, keep func([]tensor.Tensor, bool)) (ts []tensor.Tensor, sorted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			ts, sorted = nil, false
		}
	}()
	if _, ok := canon.Skim(canon.FormatSafetensors, h, dataLen, &c.spans, c, false); !ok || len(c.ts) == 0 {
		return nil, false
	}
	if keep != nil {
		keep(c.ts, !c.unsorted)
	}
	return c.ts, !c.unsorted
}

// collector is a canon.SkimSink that keeps the tensors: names are parts of the header, shapes
// parts of one slice, dtypes constant strings (internDType: dtypes outlive the mapping, roundTable
// keeps them). A collector is reused (collectors) once the model it read is closed.
type collector struct {
	ts     []tensor.Tensor
	shapes []uint64
	spans  [][2]uint64 // Skim's scratch
	used   int         // shape dimensions since reset
	// unsorted says that a name is not after the one before it.
	unsorted bool
	// meta is where the skim said the header's metadata is ([0 0]: nowhere): layouts split the header
	// there, not at the span the scan had (the file may have been rewritten since).
	meta [2]int
}

// collectors are collectors not in use.
var collectors = sync.Pool{New: func() any { return &collector{} }}

// reset readies c for a header of n tensors (0: not known), its shapes in one slice as large as the
// last header's.
func (c *collector) reset(n int) {
	if cap(c.ts) < n {
		c.ts = make([]tensor.Tensor, 0, n)
	}
	if cap(c.shapes) < c.used {
		c.shapes = make([]uint64, 0, c.used)
	}
	c.ts, c.shapes, c.used, c.unsorted, c.meta = c.ts[:0], c.shapes[:0], 0, false, [2]int{}
}

// put gives c back to collectors, its tensors cleared (their names are parts of an unmapped header).
func (c *collector) put() {
	clear(c.ts)
	c.ts = c.ts[:0]
	collectors.Put(c)
}

// Entry adds one tensor.
func (c *collector) Entry(name, dtype []byte, shape []uint64, begin, end uint64) {
	if cap(c.shapes)-len(c.shapes) < len(shape) {
		c.shapes = make([]uint64, 0, max(1024, 2*len(shape)))
	}
	c.used += len(shape)
	k := len(c.shapes)
	c.shapes = append(c.shapes, shape...)
	n := unsafe.String(unsafe.SliceData(name), len(name))
	if len(c.ts) > 0 && n <= c.ts[len(c.ts)-1].Name {
		c.unsorted = true
	}
	c.ts = append(c.ts, tensor.Tensor{Name: n, DType: internDType(dtype), Shape: c.shapes[k:len(c.shapes):len(c.shapes)], Begin: begin, End: end})
}

// Reset forgets the tensors.
func (c *collector) Reset() { c.ts, c.unsorted, c.meta = c.ts[:0], false, [2]int{} }

// MetadataSpan notes where the header's metadata is (canon.SkimSink).
func (c *collector) MetadataSpan(begin, end int) { c.meta = [2]int{begin, end} }

// wholeRead is the largest data section load reads at once (each verification holds two).
const wholeRead = 32 << 20

// at is n bytes of l's data section from off: a part of it where l holds it, else read into *buf
// (grown as needed).
func (l *loaded) at(buf *[]byte, n, off int64) ([]byte, error) {
	if l.data != nil {
		if off < 0 || n < 0 || off > int64(len(l.data))-n {
			return nil, io.ErrUnexpectedEOF
		}
		return l.data[off : off+n], nil
	}
	b := grow(buf, int(n))
	_, err := l.r.ReadAt(b, l.off+off)
	return b, err
}

// run finds the links of the job: samples of every model at the targets' picks (each model opened
// once, then closed), bucketed by their values rounded to each target's dtypes, then the candidates
// verified in full, two models open at a time.
func (j job) run(ctx context.Context, models []Model, infos []info, workers int) []link {
	// The picks: tensors every model of the pool holds (j.picks).
	picks := j.picks
	if len(picks) == 0 {
		return nil
	}
	picked := mix(uint64(len(picks)))
	for _, h := range picks {
		picked = mix(picked ^ h)
	}
	got := make([]*cachedSample, len(j.pool)) // read on all workers: a serial phase is slow on a busy machine
	pool.Run(ctx, workers, len(j.pool), func(ctx context.Context, x int) error {
		i := j.pool[x]
		j.cache.mu.Lock()
		c := j.cache.m[[2]uint64{uint64(i), picked}]
		if c == nil {
			c = &cachedSample{}
			j.cache.m[[2]uint64{uint64(i), picked}] = c
		}
		j.cache.mu.Unlock()
		c.once.Do(func() {
			var ok bool
			if c.vals, c.dtypes, ok = models[i].Summary.presampled(picks); ok {
				return
			}
			c.vals, c.dtypes = j.sampleOf(ctx, models, infos, i, picks)
		})
		got[x] = c
		return nil
	})
	if ctx.Err() != nil {
		return nil
	}
	samples := make(map[int][][]float64, len(j.pool))
	dtypes := make(map[int][]tensor.DType, len(j.pool))
	for x, c := range got {
		if c != nil && c.vals != nil {
			samples[j.pool[x]], dtypes[j.pool[x]] = c.vals, c.dtypes
		}
	}
	type bucketKey struct {
		dts string
		h   uint64
	}
	buckets := map[bucketKey][]int{}
	done := map[string]bool{}
	for _, d := range j.targets {
		dts := dtypes[d]
		key := joinDTypes(dts)
		if samples[d] == nil || done[key] {
			continue
		}
		done[key] = true
		for _, o := range j.pool {
			if samples[o] == nil || !narrowerAll(dts, dtypes[o]) {
				continue
			}
			h := roundedHash(samples[o], dtypes[o], dts)
			buckets[bucketKey{key, h}] = append(buckets[bucketKey{key, h}], o)
		}
	}
	found := make([][]link, len(j.targets))
	pool.Run(ctx, workers, len(j.targets), func(ctx context.Context, k int) error {
		d := j.targets[k]
		if samples[d] == nil {
			return nil
		}
		h := roundedHash(samples[d], dtypes[d], dtypes[d])
		var ld *loaded
		for _, o := range buckets[bucketKey{joinDTypes(dtypes[d]), h}] {
			if o == d || ctx.Err() != nil {
				continue
			}
			if ld == nil {
				if ld, _ = load(ctx, models[d], &infos[d], j.layouts); ld == nil {
					break
				}
			}
			lo, err := load(ctx, models[o], &infos[o], j.layouts)
			if err != nil {
				continue
			}
			if m, ok := verify(ctx, lo, ld); ok {
				m.Index = d
				found[k] = append(found[k], link{o: o, d: d, m: m})
			}
			lo.close()
		}
		if ld != nil {
			ld.close()
		}
		return nil
	})
	var out []link
	for _, f := range found {
		out = append(out, f...)
	}
	return out
}

// pickEntries are the entries of es with the hashes picks, in their order; false when one is not there.
func pickEntries(es []entry, picks []uint64) ([]entry, bool) {
	out := make([]entry, 0, len(picks))
	for _, h := range picks {
		k := slices.IndexFunc(es, func(e entry) bool { return e.h == h })
		if k < 0 {
			return nil, false
		}
		out = append(out, es[k])
	}
	return out, len(picks) > 0
}

func joinDTypes(dts []tensor.DType) string {
	var b strings.Builder
	for _, d := range dts {
		b.WriteString(string(d))
		b.WriteByte(',')
	}
	return b.String()
}

// sample reads a few elements at the start and the middle of each tensor of es (in r, whose data
// section starts at off), as float64 values: one read for a small tensor, else two. Each read lies
// within the bytes package dupes samples of the tensor (the whole of a small one; else the start
// and from half its bytes on), so that a reader of what dupes read serves them all (Sink.Sample):
// the middle elements start one past the middle element, which is never before half the bytes.
func sample(r io.ReaderAt, off int64, es []entry) ([][]float64, bool) {
	out := make([][]float64, len(es))
	var buf []byte
	for i, e := range es {
		bits, ok := e.dtype.Bits()
		if !ok || bits%8 != 0 || !values.Supported(e.dtype) {
			return nil, false
		}
		size := int64(bits / 8)
		count := int64(e.end-e.begin) / size
		starts := [2]int64{0, count/2 + 1}
		var ks [2]int64
		for s, start := range starts {
			ks[s] = max(0, min(int64(sampleElements), count-start))
		}
		vals := make([]float64, ks[0]+ks[1])
		if ks[0]+ks[1] == 0 {
			out[i] = vals[:0:0]
			continue
		}
		if span := (starts[1] + ks[1]) * size; int64(e.end-e.begin) <= sampleSpan { // both in one read
			buf = grow(&buf, int(span))
			if _, err := r.ReadAt(buf, off+int64(e.begin)); err != nil {
				return nil, false
			}
			if _, err := values.Decode(e.dtype, vals[:ks[0]], buf[:ks[0]*size]); err != nil {
				return nil, false
			}
			if _, err := values.Decode(e.dtype, vals[ks[0]:], buf[starts[1]*size:span]); err != nil {
				return nil, false
			}
			out[i] = vals
			continue
		}
		n := int64(0)
		for s, start := range starts {
			if ks[s] == 0 {
				continue
			}
			buf = grow(&buf, int(ks[s]*size))
			if _, err := r.ReadAt(buf, off+int64(e.begin)+start*size); err != nil {
				return nil, false
			}
			if _, err := values.Decode(e.dtype, vals[n:n+ks[s]], buf); err != nil {
				return nil, false
			}
			n += ks[s]
		}
		out[i] = vals
	}
	return out, true
}

// sampleSpan is the largest tensor sample reads in one read (package dupes reads a tensor of up to
// this many bytes whole).
const sampleSpan = 8 << 10

// narrowerAll reports whether each of from has to's dtype or a wider float one.
func narrowerAll(to, from []tensor.DType) bool {
	if len(to) != len(from) {
		return false
	}
	for i := range to {
		if !narrowerOrSame(to[i], from[i]) {
			return false
		}
	}
	return true
}

// narrowerOrSame reports whether a tensor of dtype to can be derived from one of dtype from: the same
// dtype, or both floats with to the narrower.
func narrowerOrSame(to, from tensor.DType) bool {
	if to == from {
		return true
	}
	if !values.IsFloat(to) || !values.IsFloat(from) || strings.HasPrefix(string(to), "C") || strings.HasPrefix(string(from), "C") {
		return false
	}
	bt, ok1 := to.Bits()
	bf, ok2 := from.Bits()
	return ok1 && ok2 && bt < bf
}

// roundedHash hashes sample s, of dtypes from, rounded to dts (one per tensor): values already of
// their dtype are as they are (a value rounds to itself in its own dtype, values.Round).
func roundedHash(s [][]float64, from, dts []tensor.DType) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for i, vals := range s {
		var round func(float64) float64 // nil: not a float, or already of the dtype
		if from[i] != dts[i] {
			round = values.Rounder(dts[i])
		}
		for _, v := range vals {
			if round != nil {
				v = round(v)
			}
			bits := math.Float64bits(v)
			if math.IsNaN(v) {
				bits = 0x7ff8000000000000
			}
			h = mix(h ^ bits)
		}
		h = mix(h ^ uint64(i+1))
	}
	return h
}

// verify reads every tensor of d beside o's of the same name and says how d comes from o: ok only
// when each is the same bytes or the exact conversion to a narrower float dtype.
func verify(ctx context.Context, o, d *loaded) (_ Member, ok bool) {
	if o.data != nil || d.data != nil { // a mapped file cut short while it is read faults: not derived
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				if _, fault := r.(interface{ Addr() uintptr }); !fault {
					panic(r)
				}
				ok = false
			}
		}()
	}
	if len(d.ts) > len(o.ts) {
		return Member{}, false
	}
	rounded := map[tensor.DType]int{}
	var sc scratch
	next := 0
	for i := range d.ts {
		if ctx.Err() != nil {
			return Member{}, false
		}
		td := &d.ts[i]
		to := o.tensor(td.Name, &next)
		if to == nil || !slices.Equal(to.Shape, td.Shape) || !sc.narrowerOrSame(td.DType, to.DType) {
			return Member{}, false
		}
		if td.DType == to.DType {
			if !sc.sameBytes(o, to, d, td) {
				return Member{}, false
			}
			continue
		}
		if !sc.exactRounding(o, to, d, td) {
			return Member{}, false
		}
		rounded[td.DType]++
	}
	m := Member{Relation: SameTensors}
	best := 0
	for dt, n := range rounded {
		if n > best || (n == best && dt < m.RoundedTo) {
			m.RoundedTo, best = dt, n
		}
	}
	if best > 0 {
		m.Relation = Rounded
	}
	if len(d.ts) < len(o.ts) {
		m.Relation, m.LeftOut = Subset, leftOut(o, d)
	}
	return m, true
}

// scratch holds verify's buffers, reused from tensor to tensor, and the last round table.
type scratch struct {
	a, b     []byte
	va, vb   []float64
	from, to tensor.DType
	table    []uint32
	// nTo and nFrom are the dtypes of the last narrowerOrSame, narrower its answer.
	nTo, nFrom tensor.DType
	narrower   bool
}

// narrowerOrSame is narrowerOrSame(to, from), kept for the next tensor.
func (sc *scratch) narrowerOrSame(to, from tensor.DType) bool {
	if to == from {
		return true
	}
	if to != sc.nTo || from != sc.nFrom {
		sc.nTo, sc.nFrom, sc.narrower = to, from, narrowerOrSame(to, from)
	}
	return sc.narrower
}

// roundTable is roundTable(from, to), kept for the next tensor (most have the dtypes of the last).
func (sc *scratch) roundTable(from, to tensor.DType) []uint32 {
	if sc.table == nil || from != sc.from || to != sc.to {
		sc.from, sc.to, sc.table = from, to, roundTable(from, to)
	}
	return sc.table
}

// grow is (*p)[:n], grown when it is shorter.
func grow(p *[]byte, n int) []byte {
	if cap(*p) < n {
		*p = make([]byte, n)
	}
	return (*p)[:n]
}

// growF is grow for float64s.
func growF(p *[]float64, n int) []float64 {
	if cap(*p) < n {
		*p = make([]float64, n)
	}
	return (*p)[:n]
}

// roundChunk is how many elements exactRounding reads at once.
const roundChunk = 1 << 16

// exactRounding reports whether every element of td (in d) is the round-to-nearest-even conversion
// of to's (in o) to td's dtype, as PyTorch converts (values.Round: overflow to Inf or NaN as it
// does); NaN matches NaN, −0 and +0 differ.
func (sc *scratch) exactRounding(o *loaded, to *tensor.Tensor, d *loaded, td *tensor.Tensor) bool {
	bo, ok1 := to.DType.Bits()
	bd, ok2 := td.DType.Bits()
	if !ok1 || !ok2 || bo%8 != 0 || bd%8 != 0 {
		return false
	}
	so, sd := int64(bo/8), int64(bd/8)
	n := int64(to.Len()) / so
	if n != int64(td.Len())/sd {
		return false
	}
	for off := int64(0); off < n; off += roundChunk {
		m := min(roundChunk, n-off)
		ra, err1 := o.at(&sc.a, m*so, int64(to.Begin)+off*so)
		rb, err2 := d.at(&sc.b, m*sd, int64(td.Begin)+off*sd)
		if err1 != nil || err2 != nil {
			return false
		}
		if table := sc.roundTable(to.DType, td.DType); table != nil && sd <= 2 { // by codes: the expected one, or both NaN
			for i := int64(0); i < m; {
				k := mismatch(table, ra[i*so:m*so], rb[i*sd:m*sd], so, sd)
				if k < 0 {
					break
				}
				i += k
				c := uint32(ra[i*so])
				if so == 2 {
					c = uint32(binary.LittleEndian.Uint16(ra[i*2:]))
				}
				if !bothNaN(td.DType, rb[i*sd:(i+1)*sd], table[c], sd) {
					return false
				}
				i++
			}
			continue
		}
		va, vb := growF(&sc.va, int(m)), growF(&sc.vb, int(m))
		if _, err := values.Decode(td.DType, vb[:m], rb[:m*sd]); err != nil {
			return false
		}
		if _, err := values.Decode(to.DType, va[:m], ra[:m*so]); err != nil {
			return false
		}
		round := values.Rounder(td.DType)
		if round == nil {
			return false
		}
		for i := range m {
			if !sameValue(round(va[i]), vb[i]) {
				return false
			}
		}
	}
	return true
}

// mismatch is the index of the first element of b (codes of sd bytes) that is not table's code for
// a's element (of so bytes) at the same index, -1 when there is none: a loop of its own for each size,
// the commonest without bounds checks.
func mismatch(table []uint32, a, b []byte, so, sd int64) int64 {
	switch {
	case so == 2 && sd == 1 && len(table) == 1<<16:
		t := (*[1 << 16]uint32)(table)
		a = a[:2*len(b)]
		i := 0
		for ; i+8 <= len(b); i += 8 { // eight at a time, one branch: a mismatch is rare
			x, y := a[2*i:2*i+16:2*i+16], b[i:i+8:i+8]
			d := (t[uint16(x[0])|uint16(x[1])<<8] ^ uint32(y[0])) | (t[uint16(x[2])|uint16(x[3])<<8] ^ uint32(y[1])) |
				(t[uint16(x[4])|uint16(x[5])<<8] ^ uint32(y[2])) | (t[uint16(x[6])|uint16(x[7])<<8] ^ uint32(y[3])) |
				(t[uint16(x[8])|uint16(x[9])<<8] ^ uint32(y[4])) | (t[uint16(x[10])|uint16(x[11])<<8] ^ uint32(y[5])) |
				(t[uint16(x[12])|uint16(x[13])<<8] ^ uint32(y[6])) | (t[uint16(x[14])|uint16(x[15])<<8] ^ uint32(y[7]))
			if d != 0 {
				break
			}
		}
		for ; i < len(b); i++ {
			if t[binary.LittleEndian.Uint16(a[2*i:])] != uint32(b[i]) {
				return int64(i)
			}
		}
	case so == 2 && sd == 2 && len(table) == 1<<16:
		t := (*[1 << 16]uint32)(table)
		n := len(b) / 2
		a = a[:2*n]
		for i := range n {
			if t[binary.LittleEndian.Uint16(a[2*i:])] != uint32(binary.LittleEndian.Uint16(b[2*i:])) {
				return int64(i)
			}
		}
	default:
		for i := int64(0); i*sd < int64(len(b)); i++ {
			c := uint32(a[i*so])
			if so == 2 {
				c = uint32(binary.LittleEndian.Uint16(a[i*2:]))
			}
			got := uint32(b[i*sd])
			if sd == 2 {
				got = uint32(binary.LittleEndian.Uint16(b[i*2:]))
			}
			if got != table[c] {
				return i
			}
		}
	}
	return -1
}

// sameValue reports whether a and b are the same value: the same bits, or both NaN.
func sameValue(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// roundTables caches roundTable's tables by their two dtypes.
var roundTables sync.Map

// roundTable is, for a source dtype of 8 or 16 bits, the code in dtype to of each of its codes' value
// rounded (values.Encode: PyTorch's conversion), indexed by the code; nil for wider sources or a
// value without a code.
func roundTable(from, to tensor.DType) []uint32 {
	bits, ok := from.Bits()
	if !ok || (bits != 8 && bits != 16) {
		return nil
	}
	key := [2]tensor.DType{from, to}
	if t, ok := roundTables.Load(key); ok {
		return t.([]uint32)
	}
	n := 1 << bits
	raw := make([]byte, n*int(bits/8))
	for c := range n {
		if bits == 8 {
			raw[c] = byte(c)
		} else {
			binary.LittleEndian.PutUint16(raw[2*c:], uint16(c))
		}
	}
	v := make([]float64, n)
	if _, err := values.Decode(from, v, raw); err != nil {
		return nil
	}
	t := make([]uint32, n)
	for c := range v {
		code, ok := values.Encode(to, v[c])
		if !ok {
			return nil
		}
		t[c] = code
	}
	roundTables.Store(key, t)
	return t
}

// bothNaN reports whether the element b (of dtype dt, size bytes) and the code want are both NaN.
func bothNaN(dt tensor.DType, b []byte, want uint32, size int64) bool {
	var x, y [1]float64
	w := []byte{byte(want), byte(want >> 8)}[:size]
	if _, err := values.Decode(dt, x[:], b); err != nil {
		return false
	}
	if _, err := values.Decode(dt, y[:], w); err != nil {
		return false
	}
	return math.IsNaN(x[0]) && math.IsNaN(y[0])
}

// sameBytes reports whether two tensors hold the same bytes.
func (sc *scratch) sameBytes(o *loaded, to *tensor.Tensor, d *loaded, td *tensor.Tensor) bool {
	n := int64(to.Len())
	if n != int64(td.Len()) {
		return false
	}
	const chunk = 1 << 20
	for off := int64(0); off < n; off += chunk {
		k := min(chunk, n-off)
		x, err1 := o.at(&sc.a, k, int64(to.Begin)+off)
		y, err2 := d.at(&sc.b, k, int64(td.Begin)+off)
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}

// maxNames is how many names (or prefixes) a LeftOut lists.
const maxNames = 5

// leftOut is what d leaves out of o: whole prefixes (up to the first dot) where none of a prefix's
// tensors is in d, else names.
func leftOut(o, d *loaded) *LeftOut {
	kept := map[string]bool{}
	for i := range d.ts {
		kept[prefix(d.ts[i].Name)] = true
	}
	lo := &LeftOut{Names: []string{}}
	seen := map[string]bool{}
	var names []string
	next := 0
	for i := range o.ts {
		n := o.ts[i].Name
		if d.tensor(n, &next) != nil {
			continue
		}
		lo.Count++
		p := prefix(n)
		switch {
		case p != n && !kept[p]:
			n = p + ".*"
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, strings.Clone(n)) // a name may be a part of a mapped header
		}
	}
	sort.Strings(names)
	lo.Names = append(lo.Names, names[:min(len(names), maxNames)]...)
	return lo
}

// prefix is a name up to its first dot (the name itself without one).
func prefix(name string) string {
	if i := strings.IndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return name
}

// groups puts links into groups: the models linked together, each group's original the one derived
// from nothing else (a same-tensors link goes both ways), the most tensors and widest dtypes first,
// then the first given; its members are those linked to it.
func groups(links []link, models []Model) []Group {
	from := map[int][]link{} // original → links
	derivedOf := map[int]bool{}
	parent := map[int]int{}
	var find func(int) int
	find = func(x int) int {
		if p, ok := parent[x]; ok && p != x {
			r := find(p)
			parent[x] = r
			return r
		}
		parent[x] = x
		return x
	}
	for _, l := range links {
		from[l.o] = append(from[l.o], l)
		if l.m.Relation != SameTensors {
			derivedOf[l.d] = true
		}
		a, b := find(l.o), find(l.d)
		if a != b {
			parent[max(a, b)] = min(a, b)
		}
	}
	comps := map[int][]int{}
	for x := range parent {
		comps[find(x)] = append(comps[find(x)], x)
	}
	var out []Group
	for _, c := range comps {
		slices.Sort(c)
		root := -1 // of models holding the same tensors, a safetensors file first, then the first given
		for _, x := range c {
			if !derivedOf[x] && len(from[x]) > 0 && (root < 0 || models[x].Safetensors && !models[root].Safetensors) {
				root = x
			}
		}
		if root < 0 || !slices.ContainsFunc(from[root], func(l link) bool { return l.m.Relation != SameTensors }) {
			continue // nothing derived: the same tensors alone are a content group's
		}
		g := Group{Members: []Member{{Index: root, Relation: Original}}}
		ms := from[root]
		sort.Slice(ms, func(i, j int) bool { return ms[i].d < ms[j].d })
		for _, l := range ms {
			g.Members = append(g.Members, l.m)
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Members[0].Index < out[j].Members[0].Index })
	return out
}

// Check says how the model d comes from the model o, reading every tensor of both (r and dr hold their
// bytes, as the models' DataOffset places them): ok only when d is derived from o by Find's rules
// (each of its tensors one of o's, the same bytes or their exact conversion to a narrower float dtype).
// Package act calls it just before it deletes a derived copy, so that the relation a scan found is
// proved again on the files as they are then.
func Check(ctx context.Context, o *canon.Model, r io.ReaderAt, d *canon.Model, dr io.ReaderAt) (Member, bool) {
	lo := &loaded{ts: o.Tensors, byName: make(map[string]*tensor.Tensor, len(o.Tensors)), r: r, off: o.DataOffset()}
	ld := &loaded{ts: d.Tensors, byName: make(map[string]*tensor.Tensor, len(d.Tensors)), r: dr, off: d.DataOffset()}
	for _, l := range []*loaded{lo, ld} {
		for i := range l.ts {
			if l.byName[l.ts[i].Name] != nil { // a name twice: no relation by name
				return Member{}, false
			}
			l.byName[l.ts[i].Name] = &l.ts[i]
		}
	}
	if len(ld.ts) == 0 || ctx.Err() != nil {
		return Member{}, false
	}
	return verify(ctx, lo, ld)
}

// sampleOf reads model i's sample at picks (the entries of those hashes), and their dtypes; nil when
// it cannot.
func (j job) sampleOf(ctx context.Context, models []Model, infos []info, i int, picks []uint64) ([][]float64, []tensor.DType) {
	es, ok := pickEntries(infos[i].bottom, picks)
	if !ok { // a subset's picks beyond its original's smallest: read the header again
		ts, err := tensorsOf(ctx, models[i])
		if err != nil {
			return nil, nil
		}
		all := make([]entry, len(ts))
		for k := range ts {
			all[k] = entry{h: nameHash(&ts[k]), dtype: ts[k].DType, begin: ts[k].Begin, end: ts[k].End}
		}
		if es, ok = pickEntries(all, picks); !ok {
			return nil, nil
		}
	}
	r, off, closer, err := models[i].Open(ctx)
	if err != nil {
		return nil, nil
	}
	defer closer()
	s, ok := sample(r, off, es)
	if !ok {
		return nil, nil
	}
	dts := make([]tensor.DType, len(es))
	for k, e := range es {
		dts[k] = e.dtype
	}
	return s, dts
}
