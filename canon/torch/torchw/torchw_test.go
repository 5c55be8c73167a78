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
