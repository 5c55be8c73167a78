package values

import (
	"context"
	"fmt"
	"io"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/tensor"
)

// ChunkElements is how many elements one chunk holds: a tensor is always split into chunks of this
// size (the last one shorter), whatever the number of workers, and the partial results are merged in
// chunk order, so results never depend on the number of cores. It is a multiple of 4, so chunks of F4
// and F6 tensors start on a byte.
const ChunkElements = 1 << 18

// Tensor locates one tensor's bytes.
type Tensor struct {
	DType tensor.DType
	// R holds the bytes; it must be safe for concurrent ReadAt (an *os.File or a canon.Source is).
	R io.ReaderAt
	// Off is the offset of the first byte in R, Len the number of bytes.
	Off, Len int64
}

// TensorOf is the bytes of t, one of m's tensors, in r, the file (or set) m was read from.
func TensorOf(r io.ReaderAt, m *canon.Model, t *tensor.Tensor) Tensor {
	return Tensor{DType: t.DType, R: r, Off: m.DataOffset() + int64(t.Begin), Len: int64(t.Len())}
}

// Options tunes the work on tensor bytes.
type Options struct {
	// Workers is how many chunks are read and computed at once (default GOMAXPROCS). Memory use is
	// about Workers × ChunkElements × the bytes of an element, on each side.
	Workers int
	// Memory bounds the buffers of CompareAll and SummarizeAll (default DefaultMemory): they run fewer
	// than Workers goroutines when the buffers of that many would not fit, whatever the number of cores.
	Memory int64
	// Tolerance is used by CompareTensors.
	Tolerance Tolerance
	// Progress, when set, is called from worker goroutines with the number of bytes just read.
	Progress func(n int64)
}

// SummarizeTensor reads a tensor once and returns its Stats.
func SummarizeTensor(ctx context.Context, t Tensor, opt Options) (Stats, error) {
	f, n, err := t.elements()
	if err != nil {
		return Stats{}, err
	}
	total := newSummary(f)
	err = forChunks(ctx, n, opt.Workers, func() func(lo, hi int64) (*Summary, error) {
		buf := make([]byte, f.byteLen(ChunkElements))
		var dec *scratchSum
		return func(lo, hi int64) (*Summary, error) {
			b, err := t.read(f, buf, lo, hi, opt.Progress)
			if err != nil {
				return nil, err
			}
			s := newSummary(f)
			s.buf = dec
			if err := s.Add(b); err != nil {
				return nil, err
			}
			dec, s.buf = s.buf, nil
			return s, nil
		}
	}, total.Merge)
	if err != nil {
		return Stats{}, err
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
	fa, na, err := a.elements()
	if err != nil {
		return Diff{}, err
	}
	fb, nb, err := b.elements()
	if err != nil {
		return Diff{}, err
	}
	if na != nb {
		return Diff{}, fmt.Errorf("%w: %d %s elements against %d %s elements", ErrLength, na, a.DType, nb, b.DType)
	}
	total := proto.empty()
	err = forChunks(ctx, na, opt.Workers, func() func(lo, hi int64) (*PairStats, error) {
		bufA := make([]byte, fa.byteLen(ChunkElements))
		bufB := make([]byte, fb.byteLen(ChunkElements))
		var dec *scratch
		return func(lo, hi int64) (*PairStats, error) {
			ab, err := a.read(fa, bufA, lo, hi, opt.Progress)
			if err != nil {
				return nil, err
			}
			bb, err := b.read(fb, bufB, lo, hi, opt.Progress)
			if err != nil {
				return nil, err
			}
			p := proto.empty()
			p.buf = dec
			if err := p.Add(ab, bb); err != nil {
				return nil, err
			}
			dec, p.buf = p.buf, nil
			return p, nil
		}
	}, total.Merge)
	if err != nil {
		return Diff{}, err
	}
	return total.Result(), nil
}

// elements checks where t lies and returns its format and element count.
func (t Tensor) elements() (*format, int64, error) {
	f, err := lookup(t.DType)
	if err != nil {
		return nil, 0, err
	}
	if t.Off < 0 || t.Len < 0 {
		return nil, 0, fmt.Errorf("%w: tensor at offset %d with %d bytes", ErrLength, t.Off, t.Len)
	}
	n, err := f.elements(t.Len)
	return f, n, err
}

// read reads elements [lo, hi) of t into buf; lo is a chunk start, so a whole number of groups.
func (t Tensor) read(f *format, buf []byte, lo, hi int64, progress func(int64)) ([]byte, error) {
	b := buf[:f.byteLen(int(hi-lo))]
	off := t.Off + lo/int64(f.group)*int64(f.groupBytes)
	if _, err := t.R.ReadAt(b, off); err != nil {
		return nil, readError(t, off, err)
	}
	if progress != nil {
		progress(int64(len(b)))
	}
	return b, nil
}

// readError is the error of a read of t's bytes at offset off that failed.
func readError(t Tensor, off int64, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("reading %s tensor bytes at offset %d: %w", t.DType, off, err)
}

// forChunks runs work over every chunk of n elements on up to workers goroutines, and hands each
// chunk's result to merge in chunk order (see forItems). newWorker makes each goroutine's work
// function, with its own buffers. The first error stops the rest.
func forChunks[T any](ctx context.Context, n int64, workers int, newWorker func() func(lo, hi int64) (T, error), merge func(T)) error {
	return forItems(ctx, []int64{n}, workers, newWorker, func(work func(lo, hi int64) (T, error), _ int, lo, hi int64) (T, error) {
		return work(lo, hi)
	}, func(_ int, r T) { merge(r) }, func(int) bool { return true })
}
