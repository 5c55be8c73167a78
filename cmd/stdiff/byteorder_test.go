package main

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/torch/torchw"
)

// f32s is vs as float32 in byte order o.
func f32s(o binary.ByteOrder, vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		o.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// ptWith is a torch.save archive of one tensor "w" (F32, shape) whose storage holds storage (in
// byte order byteorder, deflated when deflate is set), viewed with stride from offset (nil stride:
// contiguous).
func ptWith(byteorder string, deflate bool, shape []uint64, storage []byte, offset uint64, stride []uint64) []byte {
	pkl := torchw.StateDict([]torchw.Tensor{{Name: "w", DType: "F32", Shape: shape, Data: storage, Offset: offset, Stride: stride}})
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	add := func(name, content string, m uint16) {
		fw, _ := w.CreateHeader(&zip.FileHeader{Name: "archive/" + name, Method: m})
		fw.Write([]byte(content))
	}
	add("data.pkl", pkl, zip.Store)
	add("byteorder", byteorder, zip.Store)
	m := zip.Store
	if deflate {
		m = zip.Deflate
	}
	add("data/0", string(storage), m)
	add("version", "3\n", zip.Store)
	w.Close()
	return buf.Bytes()
}

// npyOf is an .npy file of descr (shape (n,)) holding data.
func npyOf(descr string, data []byte) []byte {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }", descr, len(data)/4)
	header := dict + strings.Repeat(" ", 117-len(dict)) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	b.WriteString(header + string(data))
	return b.Bytes()
}

// contentIDs runs hash --content --json on paths and returns each file's content ID.
func contentIDs(t *testing.T, paths ...string) []string {
	var out, errb bytes.Buffer
	if code := run(append([]string{"hash", "--content", "--json"}, paths...), &out, &errb); code != 0 {
		t.Fatalf("hash --content: exit %d\n%s", code, errb.String())
	}
	var r struct {
		Files []struct {
			ContentID string `json:"content_id"`
		} `json:"files"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Files) != len(paths) {
		t.Fatalf("%v: %s", err, out.String())
	}
	ids := make([]string, len(paths))
	for i, f := range r.Files {
		ids[i] = f.ContentID
	}
	return ids
}

// TestByteOrderContent: values are compared and identified in one byte order (issue #31, item 4). A
// big-endian .npy ('>f4') has the content ID of the same values little-endian and differs from a
// little-endian file holding its bytes (other values); so does a .pt whose archive/byteorder is "big"
// (torch byte-swaps it on load). diff says the same: exit 0 for the same values, 1 for the same bytes.
func TestByteOrderContent(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	vs := []float32{1, -2.5, 3e7, 0.125}
	le, be := f32s(binary.LittleEndian, vs...), f32s(binary.BigEndian, vs...)
	npyLE := write("le.npy", npyOf("<f4", le))
	npyBE := write("be.npy", npyOf(">f4", be))
	npySame := write("same-bytes.npy", npyOf("<f4", be))
	ptLE := write("le.pt", ptWith("little", false, []uint64{4}, le, 0, nil))
	ptBE := write("be.pt", ptWith("big", false, []uint64{4}, be, 0, nil))
	ptSame := write("same-bytes.pt", ptWith("little", false, []uint64{4}, be, 0, nil))

	ids := contentIDs(t, npyLE, npyBE, npySame, ptLE, ptBE, ptSame)
	if ids[0] != ids[1] || ids[1] == ids[2] {
		t.Errorf("npy: content IDs little %s, big %s, big's bytes little-endian %s: want the first two equal, the last other", ids[0], ids[1], ids[2])
	}
	if ids[3] != ids[4] || ids[4] == ids[5] {
		t.Errorf("pt: content IDs little %s, big %s, big's bytes little-endian %s: want the first two equal, the last other", ids[3], ids[4], ids[5])
	}
	for _, c := range []struct {
		a, b string
		code int
	}{{npyBE, npyLE, 0}, {npyBE, npySame, 1}, {ptBE, ptLE, 0}, {ptBE, ptSame, 1}} {
		var errb bytes.Buffer
		if code := run([]string{"diff", c.a, c.b}, io.Discard, &errb); code != c.code {
			t.Errorf("diff %s %s: exit %d, want %d\n%s", filepath.Base(c.a), filepath.Base(c.b), code, c.code, errb.String())
		}
	}
}

// TestDeflatedStridedView: a strided view (a transpose, a slice) of a deflated storage is read, not
// compared as empty (issue #31, item 6): two such .pt files of other values differ and have other
// content IDs, and one has the content ID of a contiguous file of the same values.
func TestDeflatedStridedView(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	view := func(vs ...float32) torchw.Tensor {
		return torchw.Strided(torchw.Tensor{Name: "w", DType: "F32", Shape: []uint64{2, 3}, Data: f32s(binary.LittleEndian, vs...)}, 2)
	}
	a, b := view(1, 2, 3, 4, 5, 6), view(1, 2, 3, 4, 5, 7)
	pa := write("a.pt", ptWith("little", true, a.Shape, a.Data, a.Offset, a.Stride))
	pb := write("b.pt", ptWith("little", true, b.Shape, b.Data, b.Offset, b.Stride))
	flat := write("flat.pt", ptWith("little", false, []uint64{2, 3}, f32s(binary.LittleEndian, 1, 2, 3, 4, 5, 6), 0, nil))
	ids := contentIDs(t, pa, pb, flat)
	if ids[0] == ids[1] || ids[0] != ids[2] {
		t.Errorf("content IDs a %s, b %s, contiguous a %s: want a and b other, a and contiguous a equal", ids[0], ids[1], ids[2])
	}
	var errb bytes.Buffer
	if code := run([]string{"diff", pa, pb}, io.Discard, &errb); code != 1 {
		t.Errorf("diff a.pt b.pt: exit %d, want 1\n%s", code, errb.String())
	}
	if code := run([]string{"diff", pa, flat}, io.Discard, &errb); code != 0 {
		t.Errorf("diff a.pt flat.pt: exit %d, want 0\n%s", code, errb.String())
	}
}
