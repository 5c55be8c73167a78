package canon

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"runtime"
	"testing"

	"github.com/stdiff/stdiff/canon/safetensors"
	"github.com/stdiff/stdiff/canon/stfile"
)

// eofAtEnd is an io.ReaderAt that says io.EOF along with the last bytes, as io.ReaderAt allows.
type eofAtEnd struct{ b []byte }

func (r eofAtEnd) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r.b)) {
		return 0, io.EOF
	}
	n := copy(p, r.b[off:])
	if off+int64(n) == int64(len(r.b)) {
		return n, io.EOF
	}
	return n, nil
}

// TestReadReaderAt: Read takes any io.ReaderAt and its size, reads what a header needs, and tells a
// reader that fails from one that ends with io.EOF as the interface allows.
func TestReadReaderAt(t *testing.T) {
	b, err := os.ReadFile("../testdata/base.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	want := ReadBytes("base", b)
	for _, r := range []io.ReaderAt{bytes.NewReader(b), eofAtEnd{b}, eofAtEnd{b[:8+want.HeaderLen]}} {
		m, err := Read(r, int64(len(b)), "base")
		if err != nil || !m.Valid() || len(m.Tensors) != len(want.Tensors) || m.Name != "base" || m.FileSize != int64(len(b)) {
			t.Errorf("%T: %v, %+v", r, err, m)
		}
	}
	// An empty header ({} padded to 8 bytes) in an 8+8-byte file: the data section is empty.
	empty := []byte("\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
	if m, err := Read(eofAtEnd{empty}, int64(len(empty)), "e"); err != nil || !m.Valid() {
		t.Errorf("empty header: %v %v", err, m.RefErr)
	}
	// A reader that gives fewer bytes than the size says is an error, not a model.
	if _, err := Read(bytes.NewReader(b[:100]), int64(len(b)), "short"); !errors.Is(err, io.EOF) {
		t.Errorf("short reader: %v", err)
	}
	if _, err := Read(bytes.NewReader(b), -1, "negative"); err == nil {
		t.Error("negative size accepted")
	}
}

// TestReadHeaderMemory: reading a kohya LoRA's header (110 KB, a third of it JSON in escaped strings)
// allocates at most 2.5 times the header: the header, a record per tensor, and each escaped string once
// (decoded in a buffer kept for the next header, not in one grown for it); no name table when the
// names come sorted, as the reference writer sorts them, and no order when the data comes in header
// order. The least of several reads counts: sync.Pool may drop a buffer (the race detector makes it).
func TestReadHeaderMemory(t *testing.T) {
	data := stfile.KohyaSDXL(1).Build()
	m := ReadBytes("kohya", data)
	if !m.Valid() || len(m.Tensors) < 500 || len(m.Metadata) < 50 {
		t.Fatalf("bad read: %v, %d tensors, %d metadata", m.RefErr, len(m.Tensors), len(m.Metadata))
	}
	least := uint64(math.MaxUint64)
	for range 10 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ReadBytes("kohya", data)
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	if limit := m.HeaderLen * 5 / 2; least > limit {
		t.Errorf("reading a %d-byte header allocates %d bytes (%.1f times), want at most %d", m.HeaderLen, least, float64(least)/float64(m.HeaderLen), limit)
	}
}

// TestReadInto: a header that fits the buffer given is read into it, one that does not into memory of
// its own, and either way the model is Read's.
func TestReadInto(t *testing.T) {
	data := stfile.KohyaSDXL(2).Build()
	want := ReadBytes("kohya", data)
	n := int(want.HeaderLen)
	for _, c := range []struct {
		buf    []byte
		shared bool
	}{{make([]byte, 0, n), true}, {make([]byte, 3, n+100), true}, {make([]byte, 0, n-1), false}, {nil, false}} {
		m, err := ReadInto(bytes.NewReader(data), int64(len(data)), "kohya", c.buf)
		if err != nil {
			t.Fatal(err)
		}
		if shared := cap(c.buf) > 0 && &m.RawHeader[0] == &c.buf[:1][0]; shared != c.shared {
			t.Errorf("buffer of %d: header read into it %v, want %v", cap(c.buf), shared, c.shared)
		}
		if !m.Valid() || len(m.Tensors) != len(want.Tensors) || len(m.Metadata) != len(want.Metadata) || m.Metadata[3] != want.Metadata[3] || !bytes.Equal(m.RawHeader, want.RawHeader) {
			t.Errorf("buffer of %d: the model differs from Read's", cap(c.buf))
		}
	}
}

// TestSafetensorsTensorsShared: a safetensors header's tensors become the Model's as they are, in the
// same memory (one Tensor type, canon/tensor: a 50,000-tensor header is neither copied nor converted).
func TestSafetensorsTensorsShared(t *testing.T) {
	data := stfile.KohyaSDXL(1).Build()
	h, err := safetensors.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	m := modelOfSafetensors(h, "x.safetensors")
	if len(m.Tensors) == 0 || len(m.Tensors) != len(h.Tensors) || &m.Tensors[0] != &h.Tensors[0] {
		t.Fatalf("Model.Tensors (%d) is not the header's tensors (%d) in the same memory", len(m.Tensors), len(h.Tensors))
	}
}
