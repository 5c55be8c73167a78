package torchw_test

import (
	"bytes"
	"testing"

	"github.com/stdiff/stdiff/canon/torch"
	"github.com/stdiff/stdiff/canon/torch/torchw"
)

// TestRoundTrip: what torchw writes, torch reads back: names, dtypes, shapes, bytes, metadata.
func TestRoundTrip(t *testing.T) {
	ts := []torchw.Tensor{
		{Name: "a.w", DType: "F32", Shape: []uint64{2, 300}, Data: bytes.Repeat([]byte{1, 2, 3, 4}, 600)},
		{Name: "b", DType: "I16", Shape: []uint64{3}, Data: []byte{1, 0, 2, 0, 3, 0}},
	}
	for name, data := range map[string][]byte{
		"zip":    torchw.Zip("m", torchw.StateDict(ts, "epoch", "300"), ts),
		"legacy": torchw.Legacy(torchw.StateDict(ts, "epoch", "300"), ts),
	} {
		f := torch.Read(bytes.NewReader(data), int64(len(data)), name)
		if !f.Valid() || len(f.Tensors) != 2 || len(f.Metadata) != 1 || f.Metadata[0].Value != "300" {
			t.Fatalf("%s: %+v", name, f)
		}
		d := f.Data(bytes.NewReader(data))
		for i, tn := range f.Tensors {
			b, e := d.DataRange(i)
			got := make([]byte, e-b)
			d.ReadAt(got, b)
			if tn.Name != ts[i].Name || tn.DType != ts[i].DType || !bytes.Equal(got, ts[i].Data) {
				t.Errorf("%s: %+v", name, tn)
			}
		}
	}
	evil := torchw.Zip("m", torchw.StateDict(ts), ts, "extra.pkl", torchw.Call("os", "system", "id"))
	if f := torch.Read(bytes.NewReader(evil), int64(len(evil)), "evil"); f.Valid() {
		t.Fatal("a hostile pickle beside data.pkl is valid")
	}
}

// TestViewsAndNumPy: a view torchw writes (Strided: a storage offset, column-major strides) reads back
// as its values in row-major order; NPY and NPZ (stored or deflated) read back as torch reads NumPy
// files, without findings.
func TestViewsAndNumPy(t *testing.T) {
	a := torchw.Tensor{Name: "a", DType: "F32", Shape: []uint64{3, 2, 4}, Data: make([]byte, 96)}
	for i := range a.Data {
		a.Data[i] = byte(i)
	}
	b := torchw.Tensor{Name: "b", DType: "I64", Shape: []uint64{2}, Data: []byte{1, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
	s := torchw.Tensor{Name: "s", DType: "U8", Shape: []uint64{}, Data: []byte{7}}
	want := []torchw.Tensor{a, b, s}
	views := []torchw.Tensor{torchw.Strided(a, 5), torchw.Strided(b, 1), s}
	for name, data := range map[string][]byte{
		"views":          torchw.Zip("m", torchw.StateDict(views), views),
		"a.npy":          torchw.NPY(a),
		"npz":            torchw.NPZ(want, false),
		"npz-compressed": torchw.NPZ(want, true),
	} {
		f := torch.Read(bytes.NewReader(data), int64(len(data)), name)
		n := len(want)
		if name == "a.npy" {
			n = 1
		}
		if !f.Valid() || len(f.Tensors) != n || len(f.Findings) != 0 && name != "views" {
			t.Fatalf("%s: %d tensors, findings %+v", name, len(f.Tensors), f.Findings)
		}
		d := f.Data(bytes.NewReader(data))
		for i, tn := range f.Tensors {
			b, e := d.DataRange(i)
			got := make([]byte, e-b)
			if _, err := d.ReadAt(got, b); err != nil && e > b {
				t.Fatal(err)
			}
			if tn.DType != want[i].DType || !bytes.Equal(got, want[i].Data) || len(tn.Shape) != len(want[i].Shape) {
				t.Errorf("%s: tensor %d %+v: % x, want % x", name, i, tn, got, want[i].Data)
			}
		}
		d.Close()
	}
}
