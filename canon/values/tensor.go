package values

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/stdiff/stdiff/canon"
)

// ChunkElements is how many elements one chunk holds: a tensor is always split into chunks of this
// size (the last one shorter), whatever the number of workers, and the partial results are merged in
// chunk order, so results never depend on the number of cores. It is a multiple of 4, so chunks of F4
// and F6 tensors start on a byte.
const ChunkElements = 1 << 18

// Tensor locates one tensor's bytes.
type Tensor struct {
	DType canon.DType
	// R holds the bytes; it must be safe for concurrent ReadAt (an *os.File or a canon.Source is).
	R io.ReaderAt
	// Off is the offset of the first byte in R, Len the number of bytes.
	Off, Len int64
}

// Options tunes the work on tensor bytes.
type Options struct {
	// Workers is how many chunks are read and computed at once (default GOMAXPROCS). Memory use is
	// about Workers × ChunkElements × the bytes of an element, on each side.
	Workers int
	// Tolerance is used by CompareTensors.
	Tolerance Tolerance
	// Progress, when set, is called from worker goroutines with the number of bytes just read.
	Progress func(n int64)
}

// SummarizeTensor reads a tensor once and returns its Stats.
func SummarizeTensor(ctx context.Context, t Tensor, opt Options) (Stats, error) {
	f, err := lookup(t.DType)
	if err != nil {
		return Stats{}, err
	}
	n, err := f.elements(t.Len)
	if err != nil {
		return Stats{}, err
	}
	parts := make([]*Summary, chunks(n))
	err = forChunks(ctx, n, opt.Workers, func() func(i int64, lo, hi int64) error {
		buf := make([]byte, f.byteLen(ChunkElements))
		var dec *[blockLen]float64
		return func(i int64, lo, hi int64) error {
			b, err := readChunk(t, f, buf, lo, hi, opt.Progress)
			if err != nil {
				return err
			}
			s := newSummary(f)
			s.buf = dec
			if err := s.Add(b); err != nil {
				return err
			}
			dec, s.buf = s.buf, nil
			parts[i] = s
			return nil
		}
	})
	if err != nil {
		return Stats{}, err
	}
	total := newSummary(f)
	for _, p := range parts {
		total.Merge(p)
	}
	return total.Result(), nil
}

// CompareTensors reads two tensors with the same number of elements once, side by side, and returns
// their Diff under opt.Tolerance.
func CompareTensors(ctx context.Context, a, b Tensor, opt Options) (Diff, error) {
	proto, err := NewPairStats(a.DType, b.DType, opt.Tolerance)
	if err != nil {
		return Diff{}, err
	}
	na, err := proto.fa.elements(a.Len)
	if err != nil {
		return Diff{}, err
	}
	nb, err := proto.fb.elements(b.Len)
	if err != nil {
		return Diff{}, err
	}
	if na != nb {
		return Diff{}, fmt.Errorf("%w: %d %s elements against %d %s elements", ErrLength, na, a.DType, nb, b.DType)
	}
	parts := make([]*PairStats, chunks(na))
	err = forChunks(ctx, na, opt.Workers, func() func(i int64, lo, hi int64) error {
		bufA := make([]byte, proto.fa.byteLen(ChunkElements))
		bufB := make([]byte, proto.fb.byteLen(ChunkElements))
		var dec *scratch
		return func(i int64, lo, hi int64) error {
			ab, err := readChunk(a, proto.fa, bufA, lo, hi, opt.Progress)
			if err != nil {
				return err
			}
			bb, err := readChunk(b, proto.fb, bufB, lo, hi, opt.Progress)
			if err != nil {
				return err
			}
			p := proto.empty()
			p.buf = dec
			if err := p.Add(ab, bb); err != nil {
				return err
			}
			dec, p.buf = p.buf, nil
			parts[i] = p
			return nil
		}
	})
	if err != nil {
		return Diff{}, err
	}
	total := proto.empty()
	for _, p := range parts {
		total.Merge(p)
	}
	return total.Result(), nil
}

func chunks(n int64) int64 { return (n + ChunkElements - 1) / ChunkElements }

// readChunk reads elements [lo, hi) of t into buf.
func readChunk(t Tensor, f *format, buf []byte, lo, hi int64, progress func(int64)) ([]byte, error) {
	b := buf[:f.byteLen(int(hi-lo))]
	off := lo / int64(f.group) * int64(f.groupBytes) // lo is a chunk start, a whole number of groups
	if _, err := t.R.ReadAt(b, t.Off+off); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("reading %s tensor bytes at offset %d: %w", t.DType, t.Off+off, err)
	}
	if progress != nil {
		progress(int64(len(b)))
	}
	return b, nil
}

// forChunks runs work over every chunk of n elements on up to workers goroutines; newWorker makes
// each goroutine's work function (with its own buffers). The first error stops the rest.
func forChunks(ctx context.Context, n int64, workers int, newWorker func() func(i int64, lo, hi int64) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	total := chunks(n)
	workers = int(min(int64(workers), max(total, 1)))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var once sync.Once
	var firstErr error
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work := newWorker()
			for {
				i := next.Add(1) - 1
				if i >= total || ctx.Err() != nil {
					return
				}
				lo := i * ChunkElements
				if err := work(i, lo, min(lo+ChunkElements, n)); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
