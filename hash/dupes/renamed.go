package dupes

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/hash/dupes/derived"
)

// Copies under other names (LevelRenamed): the same tensor bytes, dtypes and shapes under other
// names, as when a kohya LoRA is re-keyed to diffusers' or PEFT's names, or a checkpoint is saved with
// a prefix. Candidates are models with the same multiset of (dtype, shape) of their tensors of more
// than one element (keys.shapes) but other names; their names are mapped to a form the schemes share
// (lora.NormalName, then the prefix all of a model's names share dropped), and models whose mapped
// names, dtypes and shapes agree are sampled and compared along their tensors in mapped-name order.
// Tensors of one element (kohya's .alpha scalars) are left out of the comparison and listed as on one
// side only.

// renamedInfo is what the search for renamed copies learnt of a model.
type renamedInfo struct {
	// key hashes the model's mapped names, dtypes and shapes (tensors of more than one element);
	// hasKey is false when its names do not map one to one.
	key    pair
	hasKey bool
	sample uint64
	// hasSample is set once sample is known.
	hasSample bool
	cs        crcState
	class     int
	// fromCache is set when the cache told the key.
	fromCache bool
}

// mapped are a model's tensors of more than one element by mapped name, and the others.
type mapped struct {
	names   map[string]int // mapped name → tensor index
	order   []int          // tensors in mapped-name order
	mapped  []string       // mapped names, in order
	scalars []int
	ok      bool
	// of is the model mapped.
	of *canon.Model
}

// mapNames maps a model's tensor names (see the comment above).
func mapNames(m *canon.Model) mapped {
	mp := mapped{names: map[string]int{}, ok: true, of: m}
	var names []string
	var idx []int
	for i := range m.Tensors {
		t := &m.Tensors[i]
		if numel(t.Shape) <= 1 {
			mp.scalars = append(mp.scalars, i)
			continue
		}
		names = append(names, lora.NormalName(t.Name))
		idx = append(idx, i)
	}
	if len(names) == 0 {
		mp.ok = false
		return mp
	}
	prefix := names[0]
	for _, n := range names[1:] {
		k := 0
		for k < len(prefix) && k < len(n) && prefix[k] == n[k] {
			k++
		}
		prefix = prefix[:k]
	}
	cut := strings.LastIndexAny(prefix, "/_") + 1
	if len(names) == 1 {
		cut = strings.LastIndexByte(prefix, '/') + 1
	}
	for k, n := range names {
		n = n[cut:]
		if _, dup := mp.names[n]; dup {
			mp.ok = false
		}
		mp.names[n] = idx[k]
	}
	for n := range mp.names {
		mp.mapped = append(mp.mapped, n)
	}
	sort.Strings(mp.mapped)
	for _, n := range mp.mapped {
		mp.order = append(mp.order, mp.names[n])
	}
	return mp
}

// renamedKey hashes mapped names, dtypes and shapes.
func renamedKey(m *canon.Model, mp mapped) pair {
	var p pair
	for _, n := range mp.mapped {
		t := &m.Tensors[mp.names[n]]
		p.add(mix(hashString(n) ^ mix(shapeHash(hashString(string(t.DType)), t.Shape))))
	}
	return p
}

// mapNames maps the names of m, the model's header: worked out once for the model a comparison
// kept (f.model).
func (f *scanned) mapNames(m *canon.Model) *mapped {
	if f.names != nil && f.names.of == m {
		return f.names
	}
	mp := mapNames(m)
	if m == f.model {
		f.names = &mp
	}
	return &mp
}

// renamedPicks are the ranges of a renamed sample of m (names mapped as mp): the same tensors in a
// model and its renamed copy.
func renamedPicks(m *canon.Model, mp *mapped) [][2]uint64 {
	var pk picks
	for _, n := range mp.mapped {
		t := &m.Tensors[mp.names[n]]
		pk.offer(hashString(n), t.Begin, t.End)
	}
	return pk.ranges()
}

// layoutKey groups models of one structure and layout: their renamed samples read the same ranges.
func layoutKey(f *scanned) string { return fmt.Sprintf("%s/%x", structureKey(f), f.k.layout) }

// renamedStream is a model's tensors of more than one element in mapped-name order.
func renamedStream(f *scanned, m *canon.Model) ([]int, []string, bool) {
	mp := f.mapNames(m)
	return mp.order, mp.mapped, mp.ok
}

// renamedSearch is a search for renamed copies under way: prepareRenamed starts it, find ends it.
type renamedSearch struct {
	done    chan struct{}
	sampled []*scanned
	// errs are the models that could not be read while preparing (f.err is the content comparison's
	// meanwhile).
	mu   sync.Mutex
	errs map[*scanned]error
}

// prepareRenamed starts the search for renamed copies among live: the candidates, their mapped keys
// and their samples, from their headers and tensor bytes alone. It touches no field of a model that
// comparing contents does (its keys but the picks are the headers', fixed), so it runs while the
// contents are compared; find waits for it.
func prepareRenamed(ctx context.Context, live []*scanned, workers int, read *atomic.Int64) *renamedSearch {
	r := &renamedSearch{done: make(chan struct{}), errs: map[*scanned]error{}}
	// Candidates: shape groups with more than one structure.
	var cands []*scanned
	for _, g := range groupBy(live, func(f *scanned) string {
		if f.err != nil || f.k.shapes == (pair{}) {
			return "\x00" + f.path
		}
		return fmt.Sprintf("%x", f.k.shapes)
	}) {
		if len(g) > 1 && !oneStructure(g) {
			cands = append(cands, g...)
		}
	}
	go func() {
		defer close(r.done)
		if len(cands) > 0 {
			r.prepare(ctx, cands, workers, read)
		}
	}()
	return r
}

// fail records that f could not be read.
func (r *renamedSearch) fail(f *scanned, err error) {
	r.mu.Lock()
	r.errs[f] = err
	r.mu.Unlock()
}

func (r *renamedSearch) failed(f *scanned) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs[f] != nil
}

// prepare works out the candidates' mapped keys and the samples of those whose keys meet another
// structure's (r.sampled).
func (r *renamedSearch) prepare(ctx context.Context, cands []*scanned, workers int, read *atomic.Int64) {
	// The mapped key, once per structure, from one model of it (the cache may know it); with it the
	// ranges of that model's layout's renamed samples.
	byStructure := groupBy(cands, structureKey)
	type layoutRanges struct {
		layout string
		ranges [][2]uint64
	}
	ranges := make([]layoutRanges, len(byStructure))
	pool.Run(ctx, workers, len(byStructure), func(ctx context.Context, i int) error {
		g := byStructure[i]
		var known *renamedInfo
		for _, f := range g {
			if f.renamed != nil && f.renamed.fromCache {
				known = f.renamed
				break
			}
		}
		if known == nil {
			known = &renamedInfo{}
			for _, f := range g {
				m, err := f.readTensors(ctx)
				if err != nil {
					r.fail(f, err)
					continue
				}
				if mp := mapNames(m); mp.ok {
					known.key, known.hasKey = renamedKey(m, mp), true
					ranges[i] = layoutRanges{layoutKey(f), renamedPicks(m, &mp)}
				}
				break
			}
		}
		for _, f := range g {
			if f.renamed == nil || f.renamed.key != known.key || f.renamed.hasKey != known.hasKey {
				f.renamed = &renamedInfo{key: known.key, hasKey: known.hasKey}
			}
		}
		return nil
	})
	// Samples of the models whose mapped keys meet another structure's.
	for _, g := range groupBy(cands, renamedGroupKey) {
		if len(g) > 1 && !oneStructure(g) && g[0].renamed != nil && g[0].renamed.hasKey {
			r.sampled = append(r.sampled, g...)
		}
	}
	rangesOf := map[string][][2]uint64{}
	for _, lr := range ranges {
		if lr.ranges != nil {
			rangesOf[lr.layout] = lr.ranges
		}
	}
	r.takeSamples(ctx, workers, read, rangesOf)
}

// find waits for the preparation and returns the sets of models that hold the same tensor bytes
// under other names: each set holds models of two or more name sets (structures), all of its models
// of one structure among them. What could not be read while preparing becomes the models' errors.
func (r *renamedSearch) find(ctx context.Context, workers int, crcs bool, read *atomic.Int64, progress func(n, total int)) [][]*scanned {
	<-r.done
	for f, err := range r.errs {
		if f.err == nil {
			f.err = err
		}
	}
	// Comparisons of those whose samples agree.
	var groups [][]*scanned
	for _, g := range groupBy(r.sampled, func(f *scanned) string {
		if f.err != nil || !f.renamed.hasSample {
			return "\x00" + f.path
		}
		return fmt.Sprintf("%s/%x", renamedGroupKey(f), f.renamed.sample)
	}) {
		if len(g) > 1 && !oneStructure(g) {
			groups = append(groups, g)
		}
	}
	var next, done atomic.Int64
	state := func(f *scanned) *crcState { return &f.renamed.cs }
	pool.Run(ctx, workers, len(groups), func(ctx context.Context, i int) error {
		g := groups[i]
		set := func(f *scanned, c int) { f.renamed.class = c }
		if decided(g, state) {
			numberClasses(g, func(a, b *scanned) bool { return knownSame(&a.renamed.cs, &b.renamed.cs) }, set, &next)
		} else {
			c := comparer{ctx: ctx, order: renamedStream, state: state, crcs: crcs, read: read}
			for _, cl := range c.compare(g) {
				n := int(next.Add(1))
				for _, f := range cl {
					set(f, n)
				}
			}
		}
		progress(int(done.Add(1)), len(groups))
		return nil
	})
	var out [][]*scanned
	for _, g := range groupBy(r.sampled, func(f *scanned) string {
		if f.err != nil || f.renamed.class == 0 {
			return "\x00" + f.path
		}
		return fmt.Sprint(f.renamed.class)
	}) {
		if len(g) > 1 && !oneStructure(g) {
			out = append(out, g)
		}
	}
	return out
}

func renamedGroupKey(f *scanned) string {
	if f.renamed == nil {
		return "\x00" + f.path
	}
	return fmt.Sprintf("%x/%x/%v", f.k.shapes, f.renamed.key, f.renamed.hasKey)
}

// oneStructure reports whether the models of g all have one structure.
func oneStructure(g []*scanned) bool {
	for _, f := range g[1:] {
		if f.k.structure != g[0].k.structure {
			return false
		}
	}
	return true
}

// takeSamples hashes a sample of each sampled model's tensors chosen by mapped name (the same tensors
// in a model and its renamed copy): the picks come from one model of each structure and layout (known,
// by layoutKey, else its header read again), the bytes from each model.
func (r *renamedSearch) takeSamples(ctx context.Context, workers int, read *atomic.Int64, known map[string][][2]uint64) {
	var todo []*scanned
	for _, f := range r.sampled {
		if !r.failed(f) && !f.renamed.hasSample {
			todo = append(todo, f)
		}
	}
	byLayout := groupBy(todo, layoutKey)
	ranges := make([][][2]uint64, len(byLayout))
	pool.Run(ctx, workers, len(byLayout), func(ctx context.Context, i int) error {
		if ranges[i] = known[layoutKey(byLayout[i][0])]; ranges[i] != nil {
			return nil
		}
		for _, f := range byLayout[i] {
			m, err := f.readTensors(ctx)
			if err != nil {
				r.fail(f, err)
				continue
			}
			mp := mapNames(m)
			ranges[i] = renamedPicks(m, &mp)
			return nil
		}
		return nil
	})
	var jobs []*scanned
	rangesOf := map[*scanned][][2]uint64{}
	for i, g := range byLayout {
		for _, f := range g {
			if !r.failed(f) && ranges[i] != nil {
				jobs = append(jobs, f)
				rangesOf[f] = ranges[i]
			}
		}
	}
	pool.Run(ctx, workers, len(jobs), func(ctx context.Context, i int) error {
		f := jobs[i]
		err := f.sampleRanges(ctx, rangesOf[f], &f.renamed.sample, read, nil)
		if f.renamed.hasSample = err == nil; err != nil {
			r.fail(f, err)
		}
		return nil
	})
}

// sampleRanges hashes the model's bytes in ranges (relative to its data section) into h, and has
// also, when not nil, take its sample for package derived from the bytes read (the tensors it
// samples are among those the ranges read; what is not is read from the open file).
func (f *scanned) sampleRanges(ctx context.Context, ranges [][2]uint64, h *uint64, read *atomic.Int64, also *derived.Sink) error {
	src, off, closer, err := f.dataSource(ctx)
	if err != nil {
		return err
	}
	defer closer()
	buf := sampleBufs.Get().(*[]byte)
	defer sampleBufs.Put(buf)
	if *h = sampleHash(src, off, ranges, f.path, read, buf, &err); err == nil && also != nil {
		also.Sample(src, off, ranges, *buf)
	}
	return err
}

// sampleBufs are buffers that hold the bytes of one sample's ranges.
var sampleBufs = sync.Pool{New: func() any { return new([]byte) }}

// sampleHash hashes the bytes of src in ranges (from off), adding what it reads to read; a read error
// goes to *err. *buf is left holding the bytes of all the ranges, one after another.
func sampleHash(src io.ReaderAt, off int64, ranges [][2]uint64, path string, read *atomic.Int64, buf *[]byte, err *error) uint64 {
	h, total := uint64(0x51ed270b27a4e2d1), uint64(0)
	for _, r := range ranges {
		total += r[1]
	}
	if uint64(cap(*buf)) < total {
		*buf = make([]byte, total)
	}
	*buf = (*buf)[:total]
	at := uint64(0)
	for _, r := range ranges {
		b := (*buf)[at : at+r[1]]
		at += r[1]
		if _, e := src.ReadAt(b, off+int64(r[0])); e != nil {
			*err = canon.PathError("read", path, e)
			return 0
		}
		h = mix(h ^ uint64(crc32.Checksum(b, crc32c())) ^ r[1]<<32)
		read.Add(int64(r[1]))
	}
	return h
}

// Renaming is how the tensor names of a renamed copy map to the keeper's.
type Renaming struct {
	// Mapping pairs each tensor of the keeper (From) with the copy's tensor of the same bytes (To), in
	// the keeper's name order; tensors whose names are the same are left out.
	Mapping []RenamePair `json:"mapping"`
	// OnlyInKeeper and OnlyHere are the tensors that have no counterpart (kohya's .alpha scalars; a
	// tensor of one element counts as a counterpart only under its very name).
	OnlyInKeeper []string `json:"only_in_keeper"`
	OnlyHere     []string `json:"only_here"`
	// Reshaped are the tensors of one element paired by their very name whose shapes differ (a
	// PyTorch checkpoint's [] against its safetensors conversion's [1]), in name order.
	Reshaped []Reshape `json:"reshaped"`
}

// Reshape is a tensor whose shape in the keeper (Keeper) and in the copy (Here) differ.
type Reshape struct {
	Name   string   `json:"name"`
	Keeper []uint64 `json:"keeper"`
	Here   []uint64 `json:"here"`
}

// RenamePair is a tensor's name in the keeper and in the copy.
type RenamePair struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// renaming says how the copy m names the keeper k's tensors (km, mm: their names mapped).
func renaming(k, m *canon.Model, km, mm *mapped) *Renaming {
	r := &Renaming{Mapping: []RenamePair{}, OnlyInKeeper: []string{}, OnlyHere: []string{}, Reshaped: []Reshape{}}
	matched := map[int]bool{}
	for _, n := range km.mapped {
		from := k.Tensors[km.names[n]].Name
		j, ok := mm.names[n]
		if !ok {
			r.OnlyInKeeper = append(r.OnlyInKeeper, from)
			continue
		}
		matched[j] = true
		if to := m.Tensors[j].Name; to != from {
			r.Mapping = append(r.Mapping, RenamePair{From: from, To: to})
		}
	}
	mine := map[string]int{}
	for _, j := range mm.scalars {
		mine[m.Tensors[j].Name] = j
	}
	for _, i := range km.scalars { // one element: matched by its very name, or listed
		if j, ok := mine[k.Tensors[i].Name]; ok {
			matched[j] = true
			if a, b := k.Tensors[i].Shape, m.Tensors[j].Shape; !slices.Equal(a, b) {
				r.Reshaped = append(r.Reshaped, Reshape{Name: k.Tensors[i].Name, Keeper: a, Here: b})
			}
			continue
		}
		r.OnlyInKeeper = append(r.OnlyInKeeper, k.Tensors[i].Name)
	}
	for j := range m.Tensors {
		if !matched[j] {
			r.OnlyHere = append(r.OnlyHere, m.Tensors[j].Name)
		}
	}
	sort.Slice(r.Reshaped, func(x, y int) bool { return r.Reshaped[x].Name < r.Reshaped[y].Name })
	sort.Strings(r.OnlyInKeeper)
	sort.Strings(r.OnlyHere)
	return r
}

// renamedGroup makes the group of renamed copies g (ordered by keepSafe): how each copy names the
// keeper's tensors. Its Reclaimable is what deleting the copies would free, but Act leaves renamed
// copies alone (tools load one naming or the other), and the report's total leaves it out.
func renamedGroup(ctx context.Context, g []*scanned, why KeepReason) Group {
	grp := makeGroup(LevelRenamed, g, why)
	if err := g[0].structureID(ctx); err == nil {
		grp.StructureID = g[0].structure
	}
	km, err := g[0].tensors(ctx)
	if err != nil {
		return grp
	}
	for i := 1; i < len(g); i++ {
		if m, err := g[i].tensors(ctx); err == nil {
			d := noDifferences()
			d.Renamed = renaming(km, m, g[0].mapNames(km), g[i].mapNames(m))
			grp.Members[i].Differences = d
		}
	}
	return grp
}
