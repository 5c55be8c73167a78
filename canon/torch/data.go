package torch

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sort"
	"sync"
)

// Data is the tensors' bytes in row-major order, one tensor after another in the order of
// File.Tensors (DataRange gives each one's place): a strided view gathered element by element, a
// deflated .npz entry inflated as it is read. A tensor whose bytes are not in the file (a missing
// storage) takes no room. Data may be read from several goroutines at once.
type Data struct {
	f      *File
	r      io.ReaderAt
	starts []int64 // per tensor, its first byte in Data
	size   int64

	mu       sync.Mutex
	inflated map[int]*inflater // per compressed tensor, a reader at some position
	// gathered is the inflated storage bytes a strided view of a deflated storage reads (tensor
	// gatheredAt), kept for the reads that follow
	gathered   []byte
	gatheredAt int
}

type inflater struct {
	rc  io.ReadCloser
	pos int64
}

// readable reports whether a tensor's bytes can be given, and how many.
func (f *File) readable(t *Tensor) (int64, bool) {
	if t.Offset < 0 && !f.compressed(t) {
		return 0, false
	}
	es, ok := sizeOf(t.DType)
	if !ok {
		return 0, false
	}
	n := uint64(es)
	for _, d := range t.Shape {
		hi, lo := bits.Mul64(n, uint64(d))
		if d < 0 || hi != 0 || lo > 1<<62 {
			return 0, false
		}
		n = lo
	}
	return int64(n), true
}

// compressed reports whether a tensor's storage is a deflated entry: its bytes are inflated as
// they are read, a strided view's gathered from its storage inflated (see maxGather).
func (f *File) compressed(t *Tensor) bool {
	s := f.storage(t.Storage)
	return s != nil && s.Compressed && s.dataStart >= 0
}

// maxGather is the most bytes of a deflated storage inflated at once to gather a strided view of
// it; a larger view is an error when read (never compared as if it were empty).
const maxGather = 64 << 20

func (f *File) storage(key string) *Storage {
	for i := range f.Storages {
		if f.Storages[i].Key == key {
			return &f.Storages[i]
		}
	}
	return nil
}

// DataRange returns where tensor i's bytes are in Data: [begin, end).
func (d *Data) DataRange(i int) (begin, end int64) {
	if i+1 < len(d.starts) {
		return d.starts[i], d.starts[i+1]
	}
	return d.starts[i], d.size
}

// Data returns the tensors' bytes (see Data) read through r, the file f was read from.
func (f *File) Data(r io.ReaderAt) *Data {
	d := &Data{f: f, r: r, starts: make([]int64, len(f.Tensors)), inflated: map[int]*inflater{}, gatheredAt: -1}
	for i := range f.Tensors {
		d.starts[i] = d.size
		if n, ok := f.readable(&f.Tensors[i]); ok {
			d.size += n
		}
	}
	return d
}

// Size is the number of bytes of Data.
func (d *Data) Size() int64 { return d.size }

// Close releases the readers of compressed entries.
func (d *Data) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, in := range d.inflated {
		in.rc.Close()
		delete(d.inflated, k)
	}
	return nil
}

// ReadAt reads len(p) bytes at off.
func (d *Data) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("torch.Data: negative offset")
	}
	n := 0
	for len(p) > 0 {
		if off >= d.size {
			return n, io.EOF
		}
		i := sort.Search(len(d.starts), func(i int) bool { return d.starts[i] > off }) - 1
		begin, end := d.DataRange(i)
		k := int(min(int64(len(p)), end-off))
		if err := d.readTensor(i, p[:k], off-begin); err != nil {
			return n, err
		}
		n, off, p = n+k, off+int64(k), p[k:]
	}
	return n, nil
}

// readTensor reads bytes [at, at+len(p)) of tensor i in row-major order, little-endian: a
// big-endian tensor's elements are read whole and swapped, so its values, not its bytes, are what
// comparisons and content IDs see.
func (d *Data) readTensor(i int, p []byte, at int64) error {
	t := &d.f.Tensors[i]
	w := swapWidth(t)
	if !t.BigEndian || w <= 1 {
		return d.readNative(i, p, at)
	}
	lo, hi := at-at%w, at+int64(len(p))
	if r := hi % w; r != 0 {
		hi += w - r
	}
	buf := make([]byte, hi-lo)
	if err := d.readNative(i, buf, lo); err != nil {
		return err
	}
	for e := 0; e+int(w) <= len(buf); e += int(w) {
		x := buf[e : e+int(w)]
		for a, b := 0, len(x)-1; a < b; a, b = a+1, b-1 {
			x[a], x[b] = x[b], x[a]
		}
	}
	copy(p, buf[at-lo:])
	return nil
}

// swapWidth is the width of the numbers a tensor's elements are made of (a complex element is
// two), what byte order reverses.
func swapWidth(t *Tensor) int64 {
	es, _ := sizeOf(t.DType)
	if t.DType == "C64" || t.DType == "C128" || t.DType == "C32" {
		es /= 2
	}
	return es
}

// readNative reads bytes [at, at+len(p)) of tensor i in row-major order, in the file's byte order.
func (d *Data) readNative(i int, p []byte, at int64) error {
	t := &d.f.Tensors[i]
	src, base := d.r, t.Offset
	if d.f.compressed(t) {
		if t.Contiguous {
			return d.readInflated(i, p, at)
		}
		b, err := d.gather(i)
		if err != nil {
			return err
		}
		src, base = bytes.NewReader(b), 0
	}
	if t.Contiguous {
		_, err := src.ReadAt(p, base+at)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	es, _ := sizeOf(t.DType)
	idx := make([]int64, len(t.Shape))
	for len(p) > 0 {
		e, within := at/es, at%es
		// the element's offset in the storage, from its row-major index
		rem, so := e, int64(0)
		for j := len(t.Shape) - 1; j >= 0; j-- {
			idx[j] = rem % t.Shape[j]
			rem /= t.Shape[j]
			so += idx[j] * t.Stride[j]
		}
		var el [16]byte
		if _, err := src.ReadAt(el[:es], base+so*es); err != nil && err != io.EOF {
			return err
		}
		c := copy(p, el[within:es])
		p, at = p[c:], at+int64(c)
	}
	return nil
}

// gather returns the bytes of tensor i's deflated storage that its view reaches, from its storage
// offset, inflating them the first time.
func (d *Data) gather(i int) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gatheredAt == i {
		return d.gathered, nil
	}
	t := &d.f.Tensors[i]
	if t.Size > maxGather {
		return nil, fmt.Errorf("%s is a strided view of %d bytes of a deflated storage; stdiff gathers at most %d", t.Name, t.Size, maxGather)
	}
	rc, skip, err := d.openEntry(t)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if _, err := io.CopyN(io.Discard, rc, skip); err != nil {
		return nil, fmt.Errorf("inflating %s: %w", t.Name, err)
	}
	b := make([]byte, t.Size)
	if _, err := io.ReadFull(rc, b); err != nil {
		return nil, fmt.Errorf("inflating %s: %w", t.Name, err)
	}
	d.gathered, d.gatheredAt = b, i
	return b, nil
}

// readInflated reads a deflated .npz entry's array bytes, inflating from the start of the entry
// again only when a read goes backwards.
func (d *Data) readInflated(i int, p []byte, at int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	in := d.inflated[i]
	if in == nil || in.pos > at {
		if in != nil {
			in.rc.Close()
		}
		rc, skip, err := d.openEntry(&d.f.Tensors[i])
		if err != nil {
			return err
		}
		in = &inflater{rc: rc, pos: -skip}
		d.inflated[i] = in
	}
	if _, err := io.CopyN(io.Discard, in.rc, at-in.pos); err != nil {
		return fmt.Errorf("inflating %s: %w", d.f.Tensors[i].Name, err)
	}
	if _, err := io.ReadFull(in.rc, p); err != nil {
		return fmt.Errorf("inflating %s: %w", d.f.Tensors[i].Name, err)
	}
	in.pos = at + int64(len(p))
	return nil
}

// openEntry opens the deflated entry of a compressed tensor; skip is where the tensor's first
// element is in it (past an .npy header, at its storage offset).
func (d *Data) openEntry(t *Tensor) (io.ReadCloser, int64, error) {
	s := d.f.storage(t.Storage)
	if s == nil || s.dataStart < 0 {
		return nil, 0, fmt.Errorf("%s: its entry cannot be read", t.Name)
	}
	es, _ := sizeOf(t.DType)
	fr := flate.NewReader(io.NewSectionReader(d.r, s.entryOffset, s.entrySize))
	return fr, s.dataStart + t.StorageOffset*es, nil
}
