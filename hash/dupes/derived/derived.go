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
// never deletes across it.
package derived

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/pool"
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
	// Tensors reads the model's tensors (names, dtypes, shapes, offsets in its data section).
	Tensors func(ctx context.Context) ([]canon.Tensor, error)
	// Open opens the model's tensor bytes: a reader, the offset of its data section in it, and a
	// function that closes it.
	Open func(ctx context.Context) (io.ReaderAt, int64, func(), error)
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
	RoundedTo canon.DType
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
	hashes []uint64 // sorted
	key    uint64   // their multiset hash with the count
	err    error
}

// mix is SplitMix64's finaliser.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// fnv hashes s.
func fnv(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// tensorHash hashes a tensor's name and shape (not its dtype).
func tensorHash(t *canon.Tensor) uint64 {
	h := fnv(t.Name) ^ uint64(len(t.Shape))*0x9e3779b97f4a7c15
	for _, d := range t.Shape {
		h = mix(h ^ d)
	}
	return mix(h)
}

// Find finds the derived groups among models, using up to workers goroutines. A model that cannot be
// read is left out. The error is ctx's.
func Find(ctx context.Context, models []Model, workers int) ([]Group, error) {
	infos := make([]info, len(models))
	pool.Run(ctx, workers, len(models), func(ctx context.Context, i int) error {
		ts, err := models[i].Tensors(ctx)
		if err != nil || len(ts) == 0 {
			infos[i].err = err
			if err == nil {
				infos[i].err = io.EOF
			}
			return nil
		}
		hs := make([]uint64, len(ts))
		var sum uint64
		for j := range ts {
			hs[j] = tensorHash(&ts[j])
			sum += mix(hs[j] ^ 0x2545f4914f6cdd1d)
		}
		slices.Sort(hs)
		infos[i] = info{hashes: hs, key: mix(sum ^ uint64(len(hs)))}
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
	// Supersets: the structures whose tensors include all of another's, found through the tensor of
	// the smallest hash (every superset holds it).
	holding := map[uint64][]uint64{} // tensor hash → structures holding it
	for _, k := range keys {
		for _, h := range dedup(infos[byKey[k][0]].hashes) {
			holding[h] = append(holding[h], k)
		}
	}
	var jobs []job
	for _, k := range keys {
		rep := infos[byKey[k][0]].hashes
		pool := slices.Clone(byKey[k])
		for _, o := range holding[rep[0]] {
			if o != k && len(infos[byKey[o][0]].hashes) > len(rep) && contains(infos[byKey[o][0]].hashes, rep) {
				pool = append(pool, byKey[o]...)
			}
		}
		if len(pool) > 1 {
			jobs = append(jobs, job{targets: byKey[k], pool: pool})
		}
	}
	holding = nil
	links := make([][]link, len(jobs))
	pool.Run(ctx, workers, len(jobs), func(ctx context.Context, i int) error {
		links[i] = jobs[i].run(ctx, models, infos)
		return nil
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var all []link
	for _, l := range links {
		all = append(all, l...)
	}
	return groups(all), nil
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
type job struct{ targets, pool []int }

// link says that model d is derived from model o.
type link struct {
	o, d int
	m    Member
}

// loaded is a model's tensors, by name, and its open bytes.
type loaded struct {
	ts     []canon.Tensor
	byName map[string]*canon.Tensor
	r      io.ReaderAt
	off    int64
	close  func()
}

func load(ctx context.Context, m Model) (*loaded, error) {
	ts, err := m.Tensors(ctx)
	if err != nil {
		return nil, err
	}
	r, off, closer, err := m.Open(ctx)
	if err != nil {
		return nil, err
	}
	l := &loaded{ts: ts, byName: make(map[string]*canon.Tensor, len(ts)), r: r, off: off, close: closer}
	for i := range ts {
		l.byName[ts[i].Name] = &ts[i]
	}
	return l, nil
}

// run finds the links of the job: samples of every model at the targets' picks (each model opened
// once, then closed), bucketed by their values rounded to each target's dtypes, then the candidates
// verified in full, two models open at a time.
func (j job) run(ctx context.Context, models []Model, infos []info) []link {
	var picks []string
	samples := map[int][][]float64{}
	dtypes := map[int][]canon.DType{}
	for _, i := range j.pool {
		if _, ok := samples[i]; ok || ctx.Err() != nil {
			continue
		}
		l, err := load(ctx, models[i])
		if err != nil {
			continue
		}
		if picks == nil {
			picks = pickNames(l.ts) // the pool starts with a target
			if len(picks) == 0 {
				l.close()
				return nil
			}
		}
		if s, ok := l.sample(picks); ok {
			samples[i] = s
			for _, n := range picks {
				dtypes[i] = append(dtypes[i], l.byName[n].DType)
			}
		}
		l.close()
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
			if h, ok := roundedHash(samples[o], dts); ok {
				buckets[bucketKey{key, h}] = append(buckets[bucketKey{key, h}], o)
			}
		}
	}
	var out []link
	for _, d := range j.targets {
		if samples[d] == nil {
			continue
		}
		h, ok := roundedHash(samples[d], dtypes[d])
		if !ok {
			continue
		}
		var ld *loaded
		for _, o := range buckets[bucketKey{joinDTypes(dtypes[d]), h}] {
			if o == d || ctx.Err() != nil {
				continue
			}
			if ld == nil {
				if ld, _ = load(ctx, models[d]); ld == nil {
					break
				}
			}
			lo, err := load(ctx, models[o])
			if err != nil {
				continue
			}
			if m, ok := verify(ctx, lo, ld); ok {
				m.Index = d
				out = append(out, link{o: o, d: d, m: m})
			}
			lo.close()
		}
		if ld != nil {
			ld.close()
		}
	}
	return out
}

// pickNames are the names of up to sampleTensors tensors with elements, the smallest by their hash.
func pickNames(ts []canon.Tensor) []string {
	idx := make([]int, 0, len(ts))
	for i := range ts {
		if ts[i].Len() > 0 && values.Supported(ts[i].DType) {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool {
		ha, hb := fnv(ts[idx[a]].Name), fnv(ts[idx[b]].Name)
		if ha != hb {
			return ha < hb
		}
		return ts[idx[a]].Name < ts[idx[b]].Name
	})
	var out []string
	for _, i := range idx[:min(len(idx), sampleTensors)] {
		out = append(out, ts[i].Name)
	}
	return out
}

func joinDTypes(dts []canon.DType) string {
	var b strings.Builder
	for _, d := range dts {
		b.WriteString(string(d))
		b.WriteByte(',')
	}
	return b.String()
}

// sample reads a few elements at the start and the middle of each picked tensor, as float64 values.
func (l *loaded) sample(picks []string) ([][]float64, bool) {
	out := make([][]float64, len(picks))
	for i, n := range picks {
		t := l.byName[n]
		if t == nil || !values.Supported(t.DType) {
			return nil, false
		}
		bits, ok := t.DType.Bits()
		if !ok || bits%8 != 0 {
			return nil, false
		}
		size := int64(bits / 8)
		count := int64(t.Len()) / size
		var vals []float64
		for _, start := range []int64{0, count / 2} {
			k := min(int64(sampleElements), count-start)
			if k <= 0 {
				continue
			}
			buf := make([]byte, k*size)
			if _, err := l.r.ReadAt(buf, l.off+int64(t.Begin)+start*size); err != nil {
				return nil, false
			}
			v := make([]float64, k)
			if _, err := values.Decode(t.DType, v, buf); err != nil {
				return nil, false
			}
			vals = append(vals, v...)
		}
		out[i] = vals
	}
	return out, true
}

// narrowerAll reports whether each of from has to's dtype or a wider float one.
func narrowerAll(to, from []canon.DType) bool {
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
func narrowerOrSame(to, from canon.DType) bool {
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

// roundedHash hashes sample s rounded to dts (one per tensor).
func roundedHash(s [][]float64, dts []canon.DType) (uint64, bool) {
	h := uint64(0x9e3779b97f4a7c15)
	var b [8]byte
	for i, vals := range s {
		for _, v := range vals {
			if values.IsFloat(dts[i]) {
				r, ok := values.Round(dts[i], v)
				if !ok {
					return 0, false
				}
				v = r
			}
			bits := math.Float64bits(v)
			if math.IsNaN(v) {
				bits = 0x7ff8000000000000
			}
			binary.LittleEndian.PutUint64(b[:], bits)
			h = mix(h ^ binary.LittleEndian.Uint64(b[:]))
		}
		h = mix(h ^ uint64(i+1))
	}
	return h, true
}

// verify reads every tensor of d beside o's of the same name and says how d comes from o: ok only
// when each is the same bytes or the exact conversion to a narrower float dtype.
func verify(ctx context.Context, o, d *loaded) (Member, bool) {
	if len(d.ts) > len(o.ts) {
		return Member{}, false
	}
	rounded := map[canon.DType]int{}
	for i := range d.ts {
		td := &d.ts[i]
		to := o.byName[td.Name]
		if to == nil || !slices.Equal(to.Shape, td.Shape) || !narrowerOrSame(td.DType, to.DType) {
			return Member{}, false
		}
		if td.DType == to.DType {
			if !sameBytes(o, to, d, td) {
				return Member{}, false
			}
			continue
		}
		diff, err := values.CompareTensors(ctx, values.Tensor{DType: td.DType, R: d.r, Off: d.off + int64(td.Begin), Len: int64(td.Len())},
			values.Tensor{DType: to.DType, R: o.r, Off: o.off + int64(to.Begin), Len: int64(to.Len())}, values.Options{Workers: 1})
		if err != nil || diff.ExactRounding == nil || !*diff.ExactRounding || diff.Rounding == nil || diff.Rounding.Narrow != "a" ||
			diff.Rounding.Saturated > 0 {
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

// sameBytes reports whether two tensors hold the same bytes.
func sameBytes(o *loaded, to *canon.Tensor, d *loaded, td *canon.Tensor) bool {
	n := int64(to.Len())
	if n != int64(td.Len()) {
		return false
	}
	const chunk = 1 << 20
	a, b := make([]byte, min(n, chunk)), make([]byte, min(n, chunk))
	for off := int64(0); off < n; off += chunk {
		k := min(chunk, n-off)
		if _, err := o.r.ReadAt(a[:k], o.off+int64(to.Begin)+off); err != nil {
			return false
		}
		if _, err := d.r.ReadAt(b[:k], d.off+int64(td.Begin)+off); err != nil {
			return false
		}
		if !bytes.Equal(a[:k], b[:k]) {
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
	for i := range o.ts {
		n := o.ts[i].Name
		if d.byName[n] != nil {
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
			names = append(names, n)
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
func groups(links []link) []Group {
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
		root := -1
		for _, x := range c {
			if !derivedOf[x] && len(from[x]) > 0 {
				root = x
				break
			}
		}
		if root < 0 {
			continue
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
