package onnxsrc

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/values"
)

func open(t *testing.T, name string) *source.Opened {
	t.Helper()
	o, err := source.Open(t.Context(), filepath.Join("..", "testdata", "torchexport", name), source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// TestMatchOracle: the initializers of torch.onnx.export's model.onnx pair with the tensors of the
// state dict as numpy says they equal (oracle.json, made by make.py): by name, or transposed by value;
// the tied head, written twice by the exporter, is a copy of emb.weight; the Constant nodes are apart.
func TestMatchOracle(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "torchexport", "oracle.json"))
	if err != nil {
		t.Fatal(err)
	}
	var oracle struct {
		Pairs     map[string][2]string `json:"onnx_pairs"`
		Constants int                  `json:"onnx_constants"`
	}
	if err := json.Unmarshal(b, &oracle); err != nil {
		t.Fatal(err)
	}
	o, s := open(t, "model.onnx"), open(t, "model.safetensors")
	res, err := Match(t.Context(), o, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Constants) != oracle.Constants || len(res.UnpairedONNX)+len(res.UnpairedSource) != 0 {
		t.Errorf("constants %d (want %d), unpaired %v %v", len(res.Constants), oracle.Constants, res.UnpairedONNX, res.UnpairedSource)
	}
	got := map[string][2]string{}
	for _, p := range append(res.Pairs, res.Copies...) {
		if p.How == ByShape {
			t.Errorf("%s paired by shape: its values equal", o.Model.Tensors[p.ONNX].Name)
		}
		got[o.Model.Tensors[p.ONNX].Name] = [2]string{s.Model.Tensors[p.Source].Name, string(p.Transform)}
	}
	if len(got) != len(oracle.Pairs) {
		t.Errorf("%d pairs, want %d: %v", len(got), len(oracle.Pairs), got)
	}
	for n, want := range oracle.Pairs {
		if got[n] != want {
			t.Errorf("%s pairs with %v, numpy says %v", n, got[n], want)
		}
	}
	if len(res.Copies) != 1 || o.Model.Tensors[res.Copies[0].ONNX].Name != "onnx::MatMul_32" {
		t.Errorf("copies %+v, want onnx::MatMul_32", res.Copies)
	}

	// an edited weight pairs by shape with its source, still transposed
	res, err = Match(t.Context(), open(t, "edited.onnx"), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Pairs {
		if p.How == ByShape && (s.Model.Tensors[p.Source].Name != "fc1.weight" || p.Transform != TransformTranspose) {
			t.Errorf("by shape: %+v", p)
		}
	}
}

// TestTransposed: reads of any offset and length give the bytes of the transpose.
func TestTransposed(t *testing.T) {
	for _, dims := range [][3]int{{1, 1, 4}, {3, 5, 4}, {7, 2, 2}, {16, 33, 1}, {2, 300, 8}} {
		rows, cols, es := dims[0], dims[1], dims[2]
		src := make([]byte, rows*cols*es)
		for i := range src {
			src[i] = byte(rand.IntN(256))
		}
		want := make([]byte, len(src))
		for r := range rows {
			for c := range cols {
				copy(want[(c*rows+r)*es:(c*rows+r+1)*es], src[(r*cols+c)*es:(r*cols+c+1)*es])
			}
		}
		padded := append(append([]byte("head"), src...), "tail"...)
		x := Transposed(values.Tensor{R: bytes.NewReader(padded), Off: 4, Len: int64(len(src))}, []uint64{uint64(rows), uint64(cols)})
		for range 50 {
			off := rand.IntN(rows*cols) * es
			n := rand.IntN(len(src)-off) + 1
			got := make([]byte, n)
			k, err := x.ReadAt(got, int64(off))
			if k != n || err != nil || !bytes.Equal(got, want[off:off+n]) {
				t.Fatalf("%v: read %d at %d: %d bytes, %v, equal %v", dims, n, off, k, err, bytes.Equal(got[:k], want[off:off+k]))
			}
		}
	}
}

// TestMatchSkipsOptimizerState: in a training script's checkpoint whose optimizer state comes first,
// the Adam moments of fc1.weight have its shape; the edited weight of the export still pairs with
// model.fc1.weight, never with a moment.
func TestMatchSkipsOptimizerState(t *testing.T) {
	o, s := open(t, "edited.onnx"), open(t, "trainer.pt")
	res, err := Match(t.Context(), o, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range res.Pairs {
		if p.How == ByShape {
			n++
			if got := s.Model.Tensors[p.Source].Name; got != "model.fc1.weight" {
				t.Errorf("%s pairs by shape with %s, want model.fc1.weight", o.Model.Tensors[p.ONNX].Name, got)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d pairs by shape, want 1", n)
	}
}
