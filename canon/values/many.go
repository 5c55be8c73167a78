package values

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/stdiff/stdiff/canon/pool"
)

// DefaultMemory is the buffer budget of CompareAll and SummarizeAll when Options.Memory is 0.
const DefaultMemory = 32 << 20

// scanBytes is the chunk size in which the bytes of a dtype this package cannot decode are compared.
const scanBytes = 1 << 20

// Pair is two tensors compared element by element: A is the old one, B the new one.
type Pair struct {
	A, B Tensor
	// BytesOnly compares the bytes of a pair of one dtype and leaves the values alone (no Diff), as
	// for a dtype this package cannot decode: for a caller to whom a difference is all that matters.
	BytesOnly bool
}

// Comparison is what CompareAll found about one pair.
type Comparison struct {
	// Equal is true when both tensors have the same dtype and the same bytes.
	Equal bool
	// Diff holds the statistics of a pair that is not Equal when both dtypes decode; nil otherwise (the
	// bytes of a dtype this package cannot decode, such as GGUF's quantised types, and of a pair
	// marked BytesOnly, are only compared).
	Diff *Diff
}

// CompareAll compares every pair, reading each tensor's bytes in chunks on a bounded number of
// goroutines, and calls done once for each pair with what it found: never two calls at once, in no
// particular order of pairs. When done returns false, CompareAll starts no more work and returns nil.
//
// Pairs of one dtype are first compared byte by byte, as cmp does, so that equal tensors cost no
// decoding (and a pair that cannot be decoded, or is BytesOnly, is reported as soon as a difference is
// found); a pair found to differ is then read again and compared by value, where chunks whose bytes
// are equal are decoded on one side only. A pair of different dtypes (both decodable, with the same
// number of elements) is compared by value at once. The statistics are those CompareTensors gives,
// bit for bit, whatever the number of goroutines.
//
// Memory: buffers for Options.Workers goroutines, as many as Options.Memory allows (at least one),
// a few hundred bytes per chunk being compared, and a few dozen bytes per pair. Options.Progress is told of every
// byte read once: bytes read again by the comparison by value are not counted twice.
func CompareAll(ctx context.Context, pairs []Pair, opt Options, done func(i int, c Comparison) bool) error {
	if err := opt.Tolerance.Check(); err != nil {
		return err
	}
	scan, valued, err := planPairs(pairs)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &comparing{pairs: pairs, opt: opt, done: done, cancel: cancel, owed: make([]atomic.Int64, len(pairs))}
	differ, err := c.compareBytes(ctx, scan)
	if err != nil {
		return c.finish(err)
	}
	for k, s := range scan {
		switch {
		case !differ[k].Load():
			if !c.report(s.pair, Comparison{Equal: true}) {
				return nil
			}
		case !pairs[s.pair].BytesOnly && Supported(pairs[s.pair].A.DType):
			valued = append(valued, s.pair)
		}
	}
	sort.Ints(valued)
	return c.finish(c.compareValues(ctx, valued))
}

// scanItem is a pair of one dtype, compared byte by byte first.
type scanItem struct {
	pair  int
	chunk int64 // bytes per chunk
	n     int64 // bytes
}

// planPairs checks the pairs and splits them: pairs of one dtype, compared byte by byte first
// (scan), and pairs of different dtypes, compared by value at once (valued).
func planPairs(pairs []Pair) (scan []scanItem, valued []int, err error) {
	scan = make([]scanItem, 0, len(pairs)) // at its final size at once: no garbage from growing it
	for i, p := range pairs {
		if p.A.Off < 0 || p.A.Len < 0 || p.B.Off < 0 || p.B.Len < 0 {
			return nil, nil, fmt.Errorf("pair %d: %w: negative offset or length", i, ErrLength)
		}
		if p.A.DType == p.B.DType {
			if p.A.Len != p.B.Len {
				return nil, nil, fmt.Errorf("pair %d: %w: %d bytes against %d", i, ErrLength, p.A.Len, p.B.Len)
			}
			cb := int64(scanBytes)
			if f, ok := formats[p.A.DType]; ok { // no error value for each tensor of a type not decoded
				if _, err := f.elements(p.A.Len); err != nil {
					return nil, nil, fmt.Errorf("pair %d: %w", i, err)
				}
				cb = int64(f.byteLen(ChunkElements))
			}
			scan = append(scan, scanItem{i, cb, p.A.Len})
			continue
		}
		if _, _, err := elementsOfPair(p); err != nil {
			return nil, nil, fmt.Errorf("pair %d: %w", i, err)
		}
		valued = append(valued, i)
	}
	return scan, valued, nil
}

// comparing is one run of CompareAll.
type comparing struct {
	pairs  []Pair
	opt    Options
	done   func(i int, c Comparison) bool
	cancel context.CancelFunc
	mu     sync.Mutex // serialises done
	// stopped is set once done asked to stop.
	stopped bool
	// owed are the bytes the comparison of bytes told Progress of, per pair.
	owed []atomic.Int64
}

// report hands a pair's comparison to done and says whether to go on.
func (c *comparing) report(i int, cmp Comparison) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped && !c.done(i, cmp) {
		c.stopped = true
		c.cancel()
	}
	return !c.stopped
}

// finish is err, or nil once done asked to stop.
func (c *comparing) finish(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	return err
}

// compareBytes is the first pass: the pairs of scan, chunk by chunk, a pair's chunks skipped once one
// of them differs. A pair that differs and is compared by bytes only is reported at once. It returns
// which pairs of scan differ. Small pairs whose bytes follow each other on both sides (as a file's
// tensors do) are read as one run, one read a side for many pairs: a header of 50,000 small tensors
// costs a few hundred reads, not 100,000.
func (c *comparing) compareBytes(ctx context.Context, scan []scanItem) ([]atomic.Bool, error) {
	pairs, opt := c.pairs, c.opt
	widest := int64(0)
	for _, s := range scan {
		widest = max(widest, s.chunk)
	}
	runs := byteRuns(pairs, scan, widest)
	starts := make([]int, len(runs)+1) // run i is read in chunks starts[i]..starts[i+1]-1
	for i, r := range runs {
		starts[i+1] = starts[i] + 1
		if s := scan[r.k0]; r.k1 == r.k0+1 {
			starts[i+1] = starts[i] + int((s.n+s.chunk-1)/s.chunk)
		}
	}
	differs := make([]atomic.Bool, len(scan))
	err := pool.RunWith(ctx, workersFor(opt, 2*widest), starts[len(runs)], func() [2][]byte {
		return [2][]byte{make([]byte, widest), make([]byte, widest)}
	}, func(_ context.Context, buf [2][]byte, j int) error {
		i := sort.Search(len(runs), func(i int) bool { return starts[i+1] > j })
		r := runs[i]
		if r.k1 == r.k0+1 && differs[r.k0].Load() {
			return nil
		}
		s := scan[r.k0]
		off := int64(j-starts[i]) * s.chunk // within a pair read in chunks; 0 for a run
		n := r.n - off
		if r.k1 == r.k0+1 {
			n = min(n, s.chunk)
		}
		p := pairs[s.pair]
		a, b := buf[0][:n], buf[1][:n]
		if err := readAt(p.A, a, off); err != nil {
			return c.readErrorOf(r, scan, buf, err)
		}
		if err := readAt(p.B, b, off); err != nil {
			return c.readErrorOf(r, scan, buf, err)
		}
		at := int64(0)
		for k := r.k0; k < r.k1; k++ {
			s := scan[k]
			m := min(s.n, n-at) // a pair read in chunks is longer than its chunk
			c.owed[s.pair].Add(2 * m)
			if opt.Progress != nil {
				opt.Progress(2 * m)
			}
			q := pairs[s.pair]
			if !bytes.Equal(a[at:at+m], b[at:at+m]) && differs[k].CompareAndSwap(false, true) && (q.BytesOnly || !Supported(q.A.DType)) {
				c.report(s.pair, Comparison{}) // bytes only: known now
			}
			at += m
		}
		return nil
	})
	return differs, err
}

// readErrorOf is the error of run r whose read failed with err: for a run of several pairs, the error
// of the first pair whose own bytes cannot be read, so that the error names the tensor at fault.
func (c *comparing) readErrorOf(r byteRun, scan []scanItem, buf [2][]byte, err error) error {
	if r.k1 == r.k0+1 {
		return err
	}
	for k := r.k0; k < r.k1; k++ {
		p := c.pairs[scan[k].pair]
		for side, t := range []Tensor{p.A, p.B} {
			if e := readAt(t, buf[side][:t.Len], 0); e != nil {
				return e
			}
		}
	}
	return err
}

// byteRun is scan[k0:k1], n bytes a side: one pair (read in chunks when longer than one), or
// consecutive pairs of at most a chunk each whose bytes follow each other in the same readers on both
// sides, read at once.
type byteRun struct {
	k0, k1 int
	n      int64
}

// byteRuns cuts scan, in order, into runs of at most limit bytes (a pair longer than a chunk is a run
// of its own, whatever its length).
func byteRuns(pairs []Pair, scan []scanItem, limit int64) []byteRun {
	runs := make([]byteRun, 0, len(scan)/16+1)
	for k := 0; k < len(scan); {
		s := scan[k]
		head, n, m := pairs[s.pair], s.n, 1
		for s.n <= s.chunk && k+m < len(scan) {
			next := scan[k+m]
			q := pairs[next.pair]
			if next.n > next.chunk || n+next.n > limit || q.A.Off != head.A.Off+n || q.B.Off != head.B.Off+n ||
				!sameReader(q.A.R, head.A.R) || !sameReader(q.B.R, head.B.R) {
				break
			}
			n += next.n
			m++
		}
		runs = append(runs, byteRun{k0: k, k1: k + m, n: n})
		k += m
	}
	return runs
}

// sameReader reports whether x and y are the same reader (false when they cannot be compared).
func sameReader(x, y io.ReaderAt) bool {
	if x == nil || y == nil {
		return false
	}
	tx := reflect.TypeOf(x)
	return tx == reflect.TypeOf(y) && tx.Comparable() && x == y
}

// credit tells Progress of the n bytes of pair read by value that the comparison of bytes did not.
func (c *comparing) credit(pair int, n int64) {
	for {
		o := c.owed[pair].Load()
		take := min(o, n)
		if c.owed[pair].CompareAndSwap(o, o-take) {
			if n > take && c.opt.Progress != nil {
				c.opt.Progress(n - take)
			}
			return
		}
	}
}

// compareValues is the second pass: the pairs of valued (in order) by value, each one's chunks merged
// in order, each pair reported with its statistics once its last chunk is in.
func (c *comparing) compareValues(ctx context.Context, valued []int) error {
	pairs, opt := c.pairs, c.opt
	counts := make([]int64, len(valued))
	totals := make([]*PairStats, len(valued)) // made at a pair's first chunk, dropped at its last
	widest := int64(0)
	for k, i := range valued {
		fa, na, _ := elementsOfPair(pairs[i])
		fb, _ := lookup(pairs[i].B.DType)
		counts[k] = na
		widest = max(widest, int64(fa.byteLen(ChunkElements)+fb.byteLen(ChunkElements)))
	}
	stats := func(k int) *PairStats {
		p, _ := NewPairStats(pairs[valued[k]].A.DType, pairs[valued[k]].B.DType, opt.Tolerance) // checked above
		return p
	}
	type worker struct {
		buf []byte
		dec *scratch
	}
	return forItems(ctx, counts, workersFor(opt, widest), func() *worker {
		return &worker{buf: make([]byte, widest)}
	}, func(w *worker, k int, lo, hi int64) (*PairStats, error) {
		p := pairs[valued[k]]
		fa, _ := lookup(p.A.DType)
		fb, _ := lookup(p.B.DType)
		na := fa.byteLen(int(hi - lo))
		a, b := w.buf[:na], w.buf[na:na+fb.byteLen(int(hi-lo))]
		if err := readAt(p.A, a, lo/int64(fa.group)*int64(fa.groupBytes)); err != nil {
			return nil, err
		}
		if err := readAt(p.B, b, lo/int64(fb.group)*int64(fb.groupBytes)); err != nil {
			return nil, err
		}
		c.credit(valued[k], int64(len(a)+len(b)))
		s := stats(k)
		s.buf = w.dec
		var err error
		if fa == fb && bytes.Equal(a, b) {
			err = s.addSame(a)
		} else {
			err = s.Add(a, b)
		}
		w.dec, s.buf = s.buf, nil
		return s, err
	}, func(k int, s *PairStats) {
		if totals[k] == nil {
			totals[k] = stats(k)
		}
		totals[k].Merge(s)
	}, func(k int) bool {
		if totals[k] == nil { // no element
			totals[k] = stats(k)
		}
		d := totals[k].Result()
		totals[k] = nil
		return c.report(valued[k], Comparison{Diff: &d})
	})
}

// SummarizeAll reads every tensor once, in chunks on a bounded number of goroutines (see CompareAll
// for the memory it takes), and calls done with each one's Stats, in tensor order, never two calls at
// once. When done returns false, SummarizeAll starts no more work and returns nil. Every tensor's
// dtype must be one this package decodes (Supported).
func SummarizeAll(ctx context.Context, tensors []Tensor, opt Options, done func(i int, s Stats) bool) error {
	counts := make([]int64, len(tensors))
	formats := make([]*format, len(tensors))
	widest := 0
	for i, t := range tensors {
		f, n, err := t.elements()
		if err != nil {
			return fmt.Errorf("tensor %d: %w", i, err)
		}
		formats[i], counts[i] = f, n
		widest = max(widest, f.byteLen(ChunkElements))
	}
	totals := make([]*Summary, len(tensors))
	type worker struct {
		buf []byte
		dec *scratchSum
	}
	return forItems(ctx, counts, workersFor(opt, int64(widest)), func() *worker {
		return &worker{buf: make([]byte, widest)}
	}, func(w *worker, k int, lo, hi int64) (*Summary, error) {
		f := formats[k]
		b, err := tensors[k].read(f, w.buf, lo, hi, opt.Progress)
		if err != nil {
			return nil, err
		}
		s := newSummary(f)
		s.buf = w.dec
		err = s.Add(b)
		w.dec, s.buf = s.buf, nil
		return s, err
	}, func(k int, s *Summary) {
		if totals[k] == nil {
			totals[k] = newSummary(formats[k])
		}
		totals[k].Merge(s)
	}, func(k int) bool {
		if totals[k] == nil {
			totals[k] = newSummary(formats[k])
		}
		st := totals[k].Result()
		totals[k] = nil
		return done(k, st)
	})
}

// elementsOfPair returns the format and element count of both sides of a pair of possibly different
// dtypes, or an error when a dtype cannot be decoded or the counts differ.
func elementsOfPair(p Pair) (*format, int64, error) {
	fa, na, err := p.A.elements()
	if err != nil {
		return nil, 0, err
	}
	_, nb, err := p.B.elements()
	if err != nil {
		return nil, 0, err
	}
	if na != nb {
		return nil, 0, fmt.Errorf("%w: %d %s elements against %d %s elements", ErrLength, na, p.A.DType, nb, p.B.DType)
	}
	return fa, na, nil
}

// workersFor is how many goroutines work at once: Options.Workers (default GOMAXPROCS), fewer when
// their buffers of perWorker bytes each would not fit in Options.Memory; at least one.
func workersFor(opt Options, perWorker int64) int {
	w := opt.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	budget := opt.Memory
	if budget <= 0 {
		budget = DefaultMemory
	}
	if perWorker > 0 {
		w = min(w, int(max(budget/perWorker, 1)))
	}
	return w
}

// readAt reads len(b) bytes of t at offset off within the tensor.
func readAt(t Tensor, b []byte, off int64) error {
	if _, err := t.R.ReadAt(b, t.Off+off); err != nil {
		return readError(t, t.Off+off, err)
	}
	return nil
}

// forItems runs work over the chunks of every item (item k has n[k] elements, cut every ChunkElements)
// on up to workers goroutines, handed out in item then chunk order, each goroutine with state of its
// own from newWorker. Each chunk's result goes to merge in that order, as soon as the chunks before it
// are merged, and finish(k) is called once every chunk of item k is merged (items in order, empty ones
// included). When finish returns false no more work is started and forItems returns nil; the first
// error stops the rest.
func forItems[S, T any](ctx context.Context, n []int64, workers int, newWorker func() S, work func(s S, k int, lo, hi int64) (T, error), merge func(k int, r T), finish func(k int) bool) error {
	starts := make([]int, len(n)+1)
	for k, x := range n {
		starts[k+1] = starts[k] + int((x+ChunkElements-1)/ChunkElements)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	pending := map[int]T{}
	next, item, stopped := 0, 0, false
	advance := func() { // finish the items whose chunks are all merged; under mu
		for !stopped && item < len(n) && starts[item+1] <= next {
			if !finish(item) {
				stopped = true
				cancel()
			}
			item++
		}
	}
	if advance(); stopped {
		return nil
	}
	err := pool.RunWith(ctx, workers, starts[len(n)], newWorker, func(_ context.Context, s S, j int) error {
		k := sort.Search(len(n), func(k int) bool { return starts[k+1] > j })
		lo := int64(j-starts[k]) * ChunkElements
		r, err := work(s, k, lo, min(lo+ChunkElements, n[k]))
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		pending[j] = r
		for r, ok := pending[next]; ok && !stopped; r, ok = pending[next] {
			delete(pending, next)
			merge(item, r) // advance left item at the one chunk next belongs to
			next++
			advance()
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	if stopped {
		return nil
	}
	return err
}
