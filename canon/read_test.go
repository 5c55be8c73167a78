package canon

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
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
