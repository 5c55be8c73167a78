package ggufsrc

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/gguf/dequant"
	"github.com/stdiff/stdiff/canon/gguf/hfmap"
	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/values"
)

// Options are what Compare compares, and how.
type Options struct {
	// Keep reports whether a pair, a skipped or a generated tensor is reported, by any of its names;
	// nil keeps every one.
	Keep func(names ...string) bool
	// ReadValues says whether values are read and compared (else pairs and shapes only).
	ReadValues bool
	// Config says whether the GGUF keys that restate config.json are compared with it.
	Config bool
	// Tolerance is how far values may differ and still count as equal.
	Tolerance values.Tolerance
	// Values bounds the goroutines and the memory of the comparison (Workers, Memory).
	Values values.Options
	// Progress, when set, is told how many bytes were read.
	Progress func(int64)
}

// Result is a GGUF file compared with its Hugging Face source.
type Result struct {
	// Report summarises the comparison.
	Report *Report
	// Pairs are the pairs Options.Keep keeps, in the order of Report.Pairs.
	Pairs []PairResult
	// UnpairedGGUF and UnpairedSource are the indexes of the tensors of either side that pair with
	// none (Options.Keep not applied).
	UnpairedGGUF, UnpairedSource []int
}

// PairResult is how one pair compares, beside its Report.Pairs entry.
type PairResult struct {
	// GGUF is the index of the GGUF tensor; Source those of its source tensors (one, or one per
	// expert in order).
	GGUF   int
	Source []int
	// SourceName is the source's name for the pair: for stacked experts the first expert's name, its
	// number a *.
	SourceName string
	// Values are the statistics of a pair whose values differ (PairDiffers) or whose dtypes differ
	// (an exact rounding among them), with their RMSE, the sides as the models were given; nil
	// otherwise.
	Values *values.Diff
	// MatchesUnder is the transform under which the values of a differing pair match, when one does.
	MatchesUnder *Alternative
	// BytesMissing says why a pair with values to read was not compared: a tensor's bytes lie past
	// the end of its file (else a type that cannot be read).
	BytesMissing bool
}

// Compare compares the GGUF file on side side of a and b (0 or 1, as Side says) with its Hugging Face
// source on the other: tensors paired through llama.cpp's name map for the GGUF's architecture, the
// converter's transforms undone, the GGUF side dequantised and compared by value with the source, the
// GGUF keys that restate config.json compared with it. The error of a GGUF whose architecture the name
// map does not know wraps ErrUnknownArchitecture.
//
// The comparison runs in its own orientation (the GGUF file and its source, values compared with
// the source as side a); orient turns what it found to a and b as the models were given, in one place.
func Compare(ctx context.Context, a, b *source.Opened, side int, opt Options) (*Result, error) {
	g, h := Sides(side, a, b)
	c, err := newComparison(g, h, opt)
	if err != nil {
		return nil, err
	}
	pairs := c.pairTensors()
	if err := c.compareValues(ctx, pairs); err != nil {
		return nil, err
	}
	if opt.ReadValues { // the files read are still the files opened
		for _, o := range [2]*source.Opened{a, b} {
			if err := o.Unchanged(); err != nil {
				return nil, err
			}
		}
	}
	if err := c.tryAlternatives(ctx, pairs); err != nil {
		return nil, err
	}
	c.reportPairs(pairs)
	c.summariseTypes()
	if opt.Config {
		c.sr.ConfigKeys = compareConfig(c.gm, c.arch.Name, c.cfg)
	}
	c.orient(side)
	return c.res, nil
}

// Sides turns a pair in a comparison's own orientation (the GGUF's, then its source's) into the
// models' (a's, then b's) for a GGUF on side side, and back: the one place a and b are chosen.
func Sides[T any](side int, gguf, src T) (T, T) {
	if side == 1 {
		return src, gguf
	}
	return gguf, src
}

// comparison is a GGUF file (g) being compared with its Hugging Face source (h), and what it found
// so far.
type comparison struct {
	g, h   *source.Opened
	gm, hm *canon.Model
	arch   *hfmap.Arch
	cfg    hfConfig
	opt    Options
	keep   func(names ...string) bool
	sr     *Report
	res    *Result
}

// newComparison looks up the GGUF's name map and reads the source's config.json.
func newComparison(g, h *source.Opened, opt Options) (*comparison, error) {
	arch, err := archOf(g.Model)
	if err != nil {
		return nil, err
	}
	cfg, cfgPath := readConfig(h)
	src, commit, _ := hfmap.Source()
	sr := &Report{Arch: arch.Name, NameMap: src + " (" + commit + ")", Config: cfgPath,
		Pairs: []Pair{}, Types: []TypeSummary{}, ConfigKeys: []ConfigKey{}, Skipped: []string{}, Generated: []string{}}
	keep := opt.Keep
	if keep == nil {
		keep = func(...string) bool { return true }
	}
	return &comparison{g: g, h: h, gm: g.Model, hm: h.Model, arch: arch, cfg: cfg, opt: opt, keep: keep,
		sr: sr, res: &Result{Report: sr}}, nil
}

// mapped is a source tensor (index hf) mapped to a GGUF name: expert is its expert's number in a
// stacked tensor, -1 for none.
type mapped struct {
	hf     int
	expert int
}

// mapSource maps every source tensor to its GGUF name through the name map; experts gather under
// the stacked tensor. Tensors the converter leaves out are Skipped; those that map to no GGUF tensor
// are unpaired.
func (c *comparison) mapSource() map[string][]mapped {
	byGGUF := map[string][]mapped{}
	for i := range c.hm.Tensors {
		name := c.hm.Tensors[i].Name
		if skippedByConverter(c.arch.Name, name) {
			if c.keep(name) {
				c.sr.Skipped = append(c.sr.Skipped, name)
			}
			continue
		}
		n, ok := c.arch.ToGGUF(name)
		for _, prefix := range []string{"language_model.", "model.language_model.", "model.text_model."} {
			if !ok && strings.HasPrefix(name, prefix) { // multimodal wrappers the converter strips
				n, ok = c.arch.ToGGUF("model." + strings.TrimPrefix(strings.TrimPrefix(name, prefix), "model."))
			}
		}
		if !ok || c.gm.Tensor(n.GGUF) == nil {
			c.res.UnpairedSource = append(c.res.UnpairedSource, i)
			continue
		}
		byGGUF[n.GGUF] = append(byGGUF[n.GGUF], mapped{i, n.Expert})
	}
	return byGGUF
}

// pairTensors pairs each GGUF tensor with the source tensors mapped to its name, in the GGUF's order,
// with the transform the converter applies. A GGUF tensor with no source is Generated by the
// converter or unpaired.
func (c *comparison) pairTensors() []srcPair {
	byGGUF := c.mapSource()
	var pairs []srcPair
	for j := range c.gm.Tensors {
		name := c.gm.Tensors[j].Name
		ms := byGGUF[name]
		if len(ms) == 0 {
			if generatedByConverter(name) {
				if c.keep(name) {
					c.sr.Generated = append(c.sr.Generated, name)
				}
			} else {
				c.res.UnpairedGGUF = append(c.res.UnpairedGGUF, j)
			}
			continue
		}
		if p, ok := c.pairOf(j, ms); ok {
			pairs = append(pairs, p)
		}
	}
	return pairs
}

// pairOf is GGUF tensor j and its source tensors ms: every expert of a stacked tensor, else the
// first of them (the others unpaired). A stacked tensor that misses an expert pairs with none.
func (c *comparison) pairOf(j int, ms []mapped) (srcPair, bool) {
	p := srcPair{g: j}
	if ms[0].expert >= 0 {
		slices.SortFunc(ms, func(x, y mapped) int { return x.expert - y.expert })
		whole := true
		for k, m := range ms {
			whole = whole && m.expert == k
		}
		if !whole {
			for _, m := range ms {
				c.res.UnpairedSource = append(c.res.UnpairedSource, m.hf)
			}
			c.res.UnpairedGGUF = append(c.res.UnpairedGGUF, j)
			return p, false
		}
		p.transform = TransformStackExperts
	} else if len(ms) > 1 { // two source names for one GGUF tensor: the first pairs
		for _, m := range ms[1:] {
			c.res.UnpairedSource = append(c.res.UnpairedSource, m.hf)
		}
		ms = ms[:1]
	}
	for _, m := range ms {
		p.hf = append(p.hf, m.hf)
	}
	if p.transform == "" {
		p.transform, p.heads = expectedTransform(c.arch.Name, c.hm.Tensors[p.hf[0]].Name, c.gm.Tensors[j].Name, c.cfg, c.gm)
	}
	return p, true
}

// compareValues compares the shapes of the pairs Keep keeps, then, with ReadValues, the values of
// those whose shapes correspond and whose types can be read.
func (c *comparison) compareValues(ctx context.Context, pairs []srcPair) error {
	var jobs []*srcJob
	var jobPair []int
	for k := range pairs {
		p := &pairs[k]
		gt, ht := &c.gm.Tensors[p.g], &c.hm.Tensors[p.hf[0]]
		if !c.keep(gt.Name, ht.Name) {
			continue
		}
		experts := 0
		if p.transform == TransformStackExperts {
			experts = len(p.hf)
		}
		p.shapeOK = slices.Equal(expectedShape(ht.Shape, p.transform, experts), gt.Shape)
		if !p.shapeOK && p.transform == TransformNone && trimmed(c.arch.Name, gt, ht) {
			p.transform, p.shapeOK = TransformTrimRows, true
		}
		if p.shapeOK && c.opt.ReadValues && supportedGGUF(gt.DType) && values.Supported(ht.DType) && !ht.NameOnly() {
			if j := newSrcJob(c.g, c.h, p, p.transform, p.heads); j != nil {
				jobs, jobPair = append(jobs, j), append(jobPair, k)
			}
		}
	}
	results, err := runSrcJobs(ctx, jobs, c.opt)
	if err != nil {
		return err
	}
	for i, k := range jobPair {
		pairs[k].result = &results[i]
	}
	return nil
}

// tryAlternatives compares the pairs whose values differ badly under another transform, in case the
// converter that wrote the GGUF did something else: the first that matches well is kept.
func (c *comparison) tryAlternatives(ctx context.Context, pairs []srcPair) error {
	for k := range pairs {
		p := &pairs[k]
		rs := p.result
		if rs == nil || matchesWell(&rs.diff) {
			continue
		}
		for _, alt := range alternatives(p, c.arch.Name, c.gm, c.hm) {
			j := newSrcJob(c.g, c.h, p, alt.Transform, alt.Heads)
			if j == nil {
				continue
			}
			ra, err := runSrcJobs(ctx, []*srcJob{j}, c.opt)
			if err != nil {
				return err
			}
			if matchesWell(&ra[0].diff) {
				d := ra[0].diff
				alt.Values = &d
				rs.alt = &alt
				break
			}
		}
	}
	return nil
}

// reportPairs reports each pair Keep keeps: its status, its values where they differ or the dtypes
// do, and its share of its GGUF type's summary. Names and values are the comparison's own way round
// (GGUF first, the source as the values' side a) until orient.
func (c *comparison) reportPairs(pairs []srcPair) {
	typeIndex := map[string]int{}
	for k := range pairs {
		p := &pairs[k]
		gt, ht := &c.gm.Tensors[p.g], &c.hm.Tensors[p.hf[0]]
		if !c.keep(gt.Name, ht.Name) {
			continue
		}
		hName := ht.Name
		if len(p.hf) > 1 {
			hName = stackedName(hName)
		}
		sp := Pair{Name: gt.Name, NameB: hName, Transform: p.transform, Heads: p.heads, Type: string(gt.DType)}
		pr := PairResult{GGUF: p.g, Source: p.hf, SourceName: hName}
		ti, ok := typeIndex[sp.Type]
		if !ok {
			ti = len(c.sr.Types)
			typeIndex[sp.Type] = ti
			c.sr.Types = append(c.sr.Types, TypeSummary{Type: sp.Type})
		}
		ts := &c.sr.Types[ti]
		ts.Tensors++
		if n, ok := gt.Elements(); ok {
			ts.Parameters += n
		}
		ts.bytes += gt.Len()
		switch {
		case !p.shapeOK:
			sp.Status = PairShape
		case p.result == nil:
			sp.Status = PairNotCompared
			pr.BytesMissing = c.opt.ReadValues && (!c.gm.InFile(gt, c.g.Source.Size()) || !c.hm.InFile(ht, c.h.Source.Size()))
		default:
			sp.Status = c.pairValues(p, ts, &pr)
		}
		c.sr.Pairs = append(c.sr.Pairs, sp)
		c.res.Pairs = append(c.res.Pairs, pr)
	}
}

// pairValues is the status of a pair compared by value; it adds the pair's errors to its type's
// summary ts and keeps its statistics in pr where the values or the dtypes differ.
func (c *comparison) pairValues(p *srcPair, ts *TypeSummary, pr *PairResult) PairStatus {
	rs := p.result
	d := rs.diff
	d.RMSE = rmse(rs.sumSq, d.Count)
	ts.sumSq += rs.sumSq
	ts.count += d.Count
	if d.Count > 0 && !math.IsNaN(d.MaxAbsDiff) {
		ts.maxErr = max(ts.maxErr, d.MaxAbsDiff)
	}
	status := equalOrRounded(&d)
	gt := &c.gm.Tensors[p.g]
	if !supportedRaw(gt.DType) { // dequantised: the rounding of float32 values says nothing
		d.ExactRounding, d.Rounding = nil, nil
	}
	if status == PairDiffers || gt.DType != c.hm.Tensors[p.hf[0]].DType {
		pr.Values = &d
		pr.MatchesUnder = rs.alt
	}
	return status
}

// summariseTypes completes each GGUF type's summary: bits per weight, RMSE and largest error.
func (c *comparison) summariseTypes() {
	for i := range c.sr.Types {
		ts := &c.sr.Types[i]
		if ts.Parameters > 0 {
			ts.BitsPerWeight = float64(ts.bytes) * 8 / float64(ts.Parameters)
		}
		ts.RMSE = rmse(ts.sumSq, ts.count)
		if ts.count > 0 {
			m := ts.maxErr
			ts.MaxError = &m
		}
	}
}

// orient turns what the comparison found to the sides the models were given, the GGUF on side side:
// Report.GGUF says which; each pair's Name is side a's; values count side a's NaNs and infinities
// first and say which side narrows, and their largest difference is located in side a's tensor (for
// a source on side a, in its own coordinates, the transform undone).
func (c *comparison) orient(side int) {
	c.sr.GGUF = []string{"a", "b"}[side]
	for k := range c.res.Pairs {
		sp, pr := &c.sr.Pairs[k], &c.res.Pairs[k]
		sp.Name, sp.NameB = Sides(side, sp.Name, sp.NameB)
		if pr.Values == nil {
			continue
		}
		var alt *values.Diff
		if pr.MatchesUnder != nil {
			alt = pr.MatchesUnder.Values
		}
		if side == 0 {
			swapSides(pr.Values)
			if alt != nil {
				swapSides(alt)
			}
			continue
		}
		shape := c.hm.Tensors[pr.Source[0]].Shape
		pr.Values.MaxAbsDiffIndex = sourceIndex(pr.Values.MaxAbsDiffIndex, sp.Transform, sp.Heads, shape)
		if alt != nil {
			alt.MaxAbsDiffIndex = sourceIndex(alt.MaxAbsDiffIndex, pr.MatchesUnder.Transform, pr.MatchesUnder.Heads, shape)
		}
	}
}

// alternatives are the transforms to try on a pair whose values differ badly under the converter's.
func alternatives(p *srcPair, arch string, g, h *canon.Model) []Alternative {
	gt, ht := &g.Tensors[p.g], &h.Tensors[p.hf[0]]
	var out []Alternative
	switch p.transform {
	case TransformPermuteQK:
		out = append(out, Alternative{Transform: TransformNone})
		kv := strings.Contains(gt.Name, ".attn_k.")
		if n := ggufHeads(g, arch, kv); n > 0 && n != p.heads {
			out = append(out, Alternative{Transform: TransformPermuteQK, Heads: n})
		}
	case TransformNormPlusOne, TransformTranspose:
		out = append(out, Alternative{Transform: TransformNone})
	case TransformNone:
		if strings.HasSuffix(ht.Name, "norm.weight") {
			out = append(out, Alternative{Transform: TransformNormPlusOne})
		}
		if strings.Contains(gt.Name, ".attn_q.") || strings.Contains(gt.Name, ".attn_k.") {
			if n := ggufHeads(g, arch, strings.Contains(gt.Name, ".attn_k.")); n > 0 {
				out = append(out, Alternative{Transform: TransformPermuteQK, Heads: n})
			}
		}
	}
	if p.transform != TransformTranspose && len(ht.Shape) == 2 && ht.Shape[0] == ht.Shape[1] {
		out = append(out, Alternative{Transform: TransformTranspose})
	}
	return out
}

// srcJob compares one GGUF tensor with its source under one transform, band by band: a band is a
// run of the GGUF tensor's rows (within one expert), read, dequantised and compared on its own.
type srcJob struct {
	g, h      *source.Opened
	gt        values.Tensor // the whole GGUF tensor
	gType     tensor.DType
	hts       []values.Tensor // the source tensors (one per expert)
	hType     tensor.DType
	transform Transform
	heads     int
	rowLen    int64 // elements in a GGUF row
	rows      int64 // rows per expert (all rows when there are no experts)
	rowBytes  int64 // bytes of a GGUF row
	esH       int64 // bytes of a source element
	bandRows  int64
	bands     int64 // per expert
	hShape    []uint64
}

// bandElements is about how many elements a band holds: small enough for many goroutines' buffers
// to stay far under the memory bound, large enough to read efficiently.
var bandElements int64 = 1 << 18

func newSrcJob(g, h *source.Opened, p *srcPair, tr Transform, heads int) *srcJob {
	gt, ht := &g.Model.Tensors[p.g], &h.Model.Tensors[p.hf[0]]
	n, ok := gt.Elements()
	if !ok || n == 0 || len(gt.Shape) == 0 && n != 1 {
		return nil
	}
	rowLen := int64(1)
	if len(gt.Shape) > 0 {
		rowLen = int64(gt.Shape[len(gt.Shape)-1])
	}
	if rowLen == 0 || !g.Model.InFile(gt, g.Source.Size()) {
		return nil
	}
	experts := int64(len(p.hf))
	totalRows := int64(n) / rowLen
	if totalRows%experts != 0 || int64(gt.Len())%totalRows != 0 || int64(gt.Len()) == 0 {
		return nil
	}
	if t, ok := ggmlType(gt.DType); !ok {
		return nil
	} else if info, _ := t.Info(); rowLen%int64(info.BlockSize) != 0 || int64(gt.Len())/totalRows != rowLen/int64(info.BlockSize)*int64(info.TypeSize) {
		return nil // rows of whole blocks only, as ggml lays them out
	}
	esH, err := values.Elements(ht.DType, 1<<20)
	if err != nil || esH == 0 {
		return nil
	}
	j := &srcJob{g: g, h: h, gt: values.TensorOf(g.Source, g.Model, gt), gType: gt.DType, hType: ht.DType, transform: tr, heads: heads,
		rowLen: rowLen, rows: totalRows / experts, rowBytes: int64(gt.Len()) / totalRows, esH: (1 << 20) / esH, hShape: ht.Shape}
	if j.esH*esH != 1<<20 { // a packed dtype (sub-byte elements): not read here
		return nil
	}
	for _, i := range p.hf {
		t := &h.Model.Tensors[i]
		if t.DType != ht.DType || !slices.Equal(t.Shape, ht.Shape) || !h.Model.InFile(t, h.Source.Size()) {
			return nil
		}
		j.hts = append(j.hts, values.TensorOf(h.Source, h.Model, t))
	}
	hn, _ := ht.Elements()
	if int64(hn)*experts != int64(n) && !(tr == TransformTrimRows && int64(hn) > int64(n)) {
		return nil
	}
	j.bandRows = max(1, bandElements/rowLen)
	switch tr {
	case TransformPermuteQK:
		d0 := int64(ht.Shape[0])
		if heads <= 0 || int64(heads) > d0/2 || d0%(2*int64(heads)) != 0 { // 2·heads ≤ d0: no overflow
			return nil
		}
		if len(ht.Shape) == 1 || j.rows == 1 {
			j.bandRows = j.rows
		} else {
			block := d0 / int64(heads) // rows of one head
			j.bandRows = max(block, j.bandRows/block*block)
		}
	case TransformTranspose:
		if len(ht.Shape) != 2 {
			return nil
		}
	}
	j.bands = (j.rows + j.bandRows - 1) / j.bandRows
	return j
}

// srcMemory is the buffer budget of the comparison of a GGUF with its source when
// values.Options.Memory is 0: about 32 bytes per element of a band, a goroutine (a band's bytes on
// either side, dequantised floats, a row-reordered copy).
const srcMemory = 128 << 20

// srcWorkers is how many bands are compared at once: Options.Workers (GOMAXPROCS by default), no more
// than the memory budget holds.
func srcWorkers(opt values.Options) int {
	w := opt.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	mem := opt.Memory
	if mem <= 0 {
		mem = srcMemory
	}
	return max(1, min(w, int(mem/(bandElements*32))))
}

// srcResult is what a job found.
type srcResult struct {
	diff  values.Diff
	sumSq float64
	alt   *Alternative
}

// srcBuffers are one goroutine's buffers.
type srcBuffers struct {
	g, h, a, b []byte
	f32        []float32
	f64        []float64
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// runSrcJobs runs every band of every job on a bounded number of goroutines and merges the bands of
// each job in order.
func runSrcJobs(ctx context.Context, jobs []*srcJob, opt Options) ([]srcResult, error) {
	type bandRef struct {
		job    int
		expert int64
		band   int64
		seq    int64 // the band's place in its job
	}
	var refs []bandRef
	for k, j := range jobs {
		seq := int64(0)
		for e := range int64(len(j.hts)) {
			for b := range j.bands {
				refs = append(refs, bandRef{k, e, b, seq})
				seq++
			}
		}
	}
	type merger struct {
		mu      sync.Mutex
		total   *values.PairStats
		sumSq   float64
		next    int64
		pending map[int64]*values.PairStats
	}
	merges := make([]merger, len(jobs))
	for k := range merges {
		merges[k].pending = map[int64]*values.PairStats{}
	}
	tol := opt.Tolerance
	err := pool.RunWith(ctx, srcWorkers(opt.Values), len(refs), func() *srcBuffers { return &srcBuffers{} },
		func(ctx context.Context, buf *srcBuffers, i int) error {
			ref := refs[i]
			j := jobs[ref.job]
			ps, err := j.band(buf, ref.expert, ref.band, tol, opt.Progress)
			if err != nil {
				return err
			}
			m := &merges[ref.job]
			m.mu.Lock()
			defer m.mu.Unlock()
			m.pending[ref.seq] = ps
			for { // in band order, whatever order the bands end in: the sums are the same bit for bit
				q, ok := m.pending[m.next]
				if !ok {
					break
				}
				delete(m.pending, m.next)
				m.sumSq += q.SumSquaredDiff()
				if m.total == nil {
					m.total = q
				} else {
					m.total.Merge(q)
				}
				m.next++
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	out := make([]srcResult, len(jobs))
	for k := range jobs {
		if m := &merges[k]; m.total != nil {
			out[k] = srcResult{diff: m.total.Result(), sumSq: m.sumSq}
		}
	}
	return out, nil
}

// band compares rows [band·bandRows, …) of expert e.
func (j *srcJob) band(buf *srcBuffers, e, band int64, tol values.Tolerance, progress func(int64)) (*values.PairStats, error) {
	r0 := band * j.bandRows
	r1 := min(j.rows, r0+j.bandRows)
	nRows := r1 - r0
	nElem := nRows * j.rowLen

	// The GGUF side: its bytes as they are (F32, F16, BF16) or dequantised to float32.
	buf.g = grow(buf.g, int(nRows*j.rowBytes))
	if err := readAt(j.gt, buf.g, (e*j.rows+r0)*j.rowBytes, progress); err != nil {
		return nil, err
	}
	bBytes, bType := buf.g, j.gType
	if !supportedRaw(bType) {
		t, _ := ggmlType(j.gType)
		buf.f32 = grow(buf.f32, int(nElem))
		if err := dequant.Row(t, buf.g, buf.f32); err != nil {
			return nil, err
		}
		buf.b = grow(buf.b, int(nElem*4))
		for k, v := range buf.f32 {
			binary.LittleEndian.PutUint32(buf.b[4*k:], math.Float32bits(v))
		}
		bBytes, bType = buf.b, "F32"
	}

	// The source side, in the GGUF's order.
	ht := j.hts[e]
	es := j.esH
	buf.a = grow(buf.a, int(nElem*es))
	switch j.transform {
	case TransformTranspose:
		// Source [c0, c1]; GGUF row r is source column r: the band's columns, read row by row.
		c0, c1 := int64(j.hShape[0]), int64(j.hShape[1])
		buf.h = grow(buf.h, int(nRows*es))
		for k := range c0 {
			if err := readAt(ht, buf.h, (k*c1+r0)*es, progress); err != nil {
				return nil, err
			}
			for r := range nRows {
				copy(buf.a[(r*c0+k)*es:(r*c0+k+1)*es], buf.h[r*es:(r+1)*es])
			}
		}
	case TransformPermuteQK:
		// The converter reshapes dimension 0 as (heads, 2, d0/heads/2) and swaps the last two: GGUF
		// unit (h, i, s) is source unit (h, s, i), a unit being everything past dimension 0.
		d0 := int64(j.hShape[0])
		unit := j.rows * j.rowLen / d0 // elements per unit
		u0, u1 := r0*j.rowLen/unit, r1*j.rowLen/unit
		buf.h = grow(buf.h, int((u1-u0)*unit*es))
		if err := readAt(ht, buf.h, u0*unit*es, progress); err != nil {
			return nil, err
		}
		half := d0 / int64(j.heads) / 2
		ub := unit * es
		for u := u0; u < u1; u++ {
			hd, rest := u/(2*half), u%(2*half)
			i, s := rest/2, rest%2
			src := hd*2*half + s*half + i
			copy(buf.a[(u-u0)*ub:(u-u0+1)*ub], buf.h[(src-u0)*ub:(src-u0+1)*ub])
		}
	default:
		if err := readAt(ht, buf.a, r0*j.rowLen*es, progress); err != nil {
			return nil, err
		}
	}
	aBytes, aType := buf.a, j.hType
	if bType == "F32" && aType == "BF16" && j.transform != TransformNormPlusOne {
		// Against dequantised values, a BF16 source widened to float32 (exact) compares F32 with F32:
		// the same statistics without a rounding check that would say nothing.
		buf.h = grow(buf.h, int(nElem*4))
		for k := range nElem {
			binary.LittleEndian.PutUint32(buf.h[4*k:], uint32(binary.LittleEndian.Uint16(buf.a[2*k:]))<<16)
		}
		aBytes, aType = buf.h, "F32"
	}
	if j.transform == TransformNormPlusOne {
		buf.f64 = grow(buf.f64, int(nElem))
		if _, err := values.Decode(j.hType, buf.f64, buf.a); err != nil {
			return nil, err
		}
		buf.h = grow(buf.h, int(nElem*4))
		for k, v := range buf.f64 {
			x := float32(float32(v) + 1) // in float32, as PyTorch adds to a float32 tensor
			if j.hType == "F16" {        // a float16 tensor stays one: the sum is rounded to float16
				y, _ := values.Round("F16", float64(float32(v)+1))
				x = float32(y)
			}
			binary.LittleEndian.PutUint32(buf.h[4*k:], math.Float32bits(x))
		}
		aBytes, aType = buf.h, "F32"
	}
	ps, err := values.NewPairStats(aType, bType, tol)
	if err != nil {
		return nil, err
	}
	if err := ps.Add(aBytes, bBytes); err != nil {
		return nil, err
	}
	return ps, nil
}

// readAt fills b from t's bytes at off.
func readAt(t values.Tensor, b []byte, off int64, progress func(int64)) error {
	if off < 0 || off+int64(len(b)) > t.Len {
		return fmt.Errorf("reading %d bytes at %d of a tensor of %d bytes", len(b), off, t.Len)
	}
	n, err := t.R.ReadAt(b, t.Off+off)
	if n == len(b) {
		err = nil
	} else if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if progress != nil && n > 0 {
		progress(int64(n))
	}
	return err
}

// sourceIndex is the flat index f of an element of a GGUF tensor (its row order) as the flat index of
// the same element in its source tensor of shape hShape, the converter's transform tr undone: q/k
// rows permuted back (heads), a transposed matrix transposed back. Other transforms keep the order;
// a negative f (no maximum) stays.
func sourceIndex(f int64, tr Transform, heads int, hShape []uint64) int64 {
	if f < 0 {
		return f
	}
	switch tr {
	case TransformPermuteQK:
		if len(hShape) == 0 || heads <= 0 {
			return f
		}
		d0, total := int64(hShape[0]), int64(1)
		for _, d := range hShape {
			total *= int64(d)
		}
		if d0 == 0 || int64(heads) > d0/2 || d0%(2*int64(heads)) != 0 || total%d0 != 0 || total/d0 == 0 {
			return f
		}
		unit, half := total/d0, d0/int64(heads)/2
		u := f / unit
		hd, rest := u/(2*half), u%(2*half)
		return (hd*2*half+rest%2*half+rest/2)*unit + f%unit
	case TransformTranspose:
		if len(hShape) != 2 || hShape[0] == 0 {
			return f
		}
		c0, c1 := int64(hShape[0]), int64(hShape[1])
		return f%c0*c1 + f/c0
	}
	return f
}
