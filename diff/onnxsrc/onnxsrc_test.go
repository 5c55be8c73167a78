package onnxsrc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
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
// model.fc1.weight (its MatMul, /fc1/MatMul, names fc1.weight: the source's one name ending so), never
// with a moment.
func TestMatchSkipsOptimizerState(t *testing.T) {
	o, s := open(t, "edited.onnx"), open(t, "trainer.pt")
	res, err := Match(t.Context(), o, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range res.Pairs {
		src := s.Model.Tensors[p.Source].Name
		if strings.HasPrefix(src, "optimizer.") {
			t.Errorf("%s pairs with %s, an optimizer moment", o.Model.Tensors[p.ONNX].Name, src)
		}
		if o.Model.Tensors[p.ONNX].Name == "onnx::MatMul_30" {
			found = true
			if src != "model.fc1.weight" || p.How != ByGraph || p.Transform != TransformTranspose {
				t.Errorf("onnx::MatMul_30 pairs with %s (how %d, %s), want model.fc1.weight by the graph, transposed", src, p.How, p.Transform)
			}
		}
	}
	if !found {
		t.Error("onnx::MatMul_30 is not paired")
	}
}

// TestMatchFollowsTheGraph: each initializer of make.py's twins exports pairs with the source tensor
// its reader names (/layer0/MatMul reads layer0.weight), transposed as a MatMul reads a Linear weight
// (conv1d: Gemm reads GPT-2's Conv1D weight as it is), whatever other source tensor its bytes equal;
// the values then differ exactly where numpy says the initializer does not hold that tensor so
// (twins-oracle.json).
func TestMatchFollowsTheGraph(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "torchexport", "twins-oracle.json"))
	if err != nil {
		t.Fatal(err)
	}
	var oracle map[string]map[string][3]string // export → initializer → reader, tensor it holds, transform
	if err := json.Unmarshal(b, &oracle); err != nil {
		t.Fatal(err)
	}
	for export, source := range map[string]string{"twins.onnx": "twins.safetensors", "twins-swapped.onnx": "twins.safetensors",
		"twins-untransposed.onnx": "twins.safetensors", "conv1d.onnx": "conv1d.safetensors"} {
		o, s := open(t, export), open(t, source)
		res, err := Match(t.Context(), o, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.UnpairedONNX)+len(res.UnpairedSource)+len(res.Copies)+len(res.Shared) != 0 {
			t.Errorf("%s: unpaired %v %v, copies %v, shared %v", export, res.UnpairedONNX, res.UnpairedSource, res.Copies, res.Shared)
		}
		for _, p := range res.Pairs {
			name, src := o.Model.Tensors[p.ONNX].Name, s.Model.Tensors[p.Source].Name
			held := oracle[export][name]
			reader := strings.TrimPrefix(held[0], "/")
			want, wantTr := reader[:strings.LastIndexByte(reader, '/')]+".weight", TransformTranspose
			if export == "conv1d.onnx" {
				want, wantTr = name, TransformNone
			}
			if strings.HasSuffix(name, ".bias") {
				continue
			}
			if src != want || p.Transform != wantTr {
				t.Errorf("%s: %s (read by %s) pairs with %s %s, want %s %s", export, name, held[0], src, p.Transform, want, wantTr)
			}
			same := held[1] == src && Transform(held[2]) == p.Transform
			c, err := values.CompareTensors(t.Context(), tensorOf(o, p.ONNX, p.Transform), tensorOf(s, p.Source, TransformNone), values.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if equal := c.Differing == 0; equal != same {
				t.Errorf("%s: %s against %s: values equal %v, numpy says %v", export, name, src, equal, same)
			}
		}
	}
}

// tensorOf is tensor i of o's model, read transposed back when tr says so.
func tensorOf(o *source.Opened, i int, tr Transform) values.Tensor {
	t := &o.Model.Tensors[i]
	vt := values.TensorOf(o.Source, o.Model, t)
	if tr == TransformTranspose {
		vt = values.Tensor{DType: vt.DType, R: Transposed(vt, t.Shape), Len: vt.Len}
	}
	return vt
}

// TestMatchFollowsTheGraphOrder: in make.py's twins exports with their nodes named as torch.onnx.export
// named them before 1.13 (MatMul_3), no module names a reader; each initializer still pairs with the
// source tensor the same export with module names says it stands for (the graph reads layer0 before
// layer1), so the swapped export's two weights differ from their sources, as numpy says
// (twins-oracle.json), and the faithful one's equal theirs.
func TestMatchFollowsTheGraphOrder(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "torchexport", "twins-oracle.json"))
	if err != nil {
		t.Fatal(err)
	}
	var oracle map[string]map[string][3]string // export → initializer → reader, tensor it holds, transform
	if err := json.Unmarshal(b, &oracle); err != nil {
		t.Fatal(err)
	}
	for unnamed, named := range map[string]string{"twins-unnamed.onnx": "twins.onnx", "twins-unnamed-swapped.onnx": "twins-swapped.onnx"} {
		o, s := open(t, unnamed), open(t, "twins.safetensors")
		res, err := Match(t.Context(), o, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.UnpairedONNX)+len(res.UnpairedSource)+len(res.Copies)+len(res.Shared) != 0 {
			t.Errorf("%s: unpaired %v %v, copies %v, shared %v", unnamed, res.UnpairedONNX, res.UnpairedSource, res.Copies, res.Shared)
		}
		for _, p := range res.Pairs {
			name, src := o.Model.Tensors[p.ONNX].Name, s.Model.Tensors[p.Source].Name
			held, reader := oracle[unnamed][name], strings.TrimPrefix(oracle[named][name][0], "/")
			if strings.Contains(held[0], "/") || !strings.Contains(reader, "/") {
				t.Fatalf("%s: %s read by %q, in %s by %q", unnamed, name, held[0], named, reader)
			}
			if want := reader[:strings.LastIndexByte(reader, '/')] + ".weight"; src != want || p.Transform != TransformTranspose {
				t.Errorf("%s: %s pairs with %s %s, want %s transpose", unnamed, name, src, p.Transform, want)
			}
			same := held[1] == src && Transform(held[2]) == p.Transform
			c, err := values.CompareTensors(t.Context(), tensorOf(o, p.ONNX, p.Transform), tensorOf(s, p.Source, TransformNone), values.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if equal := c.Differing == 0; equal != same || (unnamed == "twins-unnamed-swapped.onnx" && src != "proj.weight" && same) {
				t.Errorf("%s: %s against %s: values equal %v, numpy says %v", unnamed, name, src, equal, same)
			}
		}
	}
}

// TestFamily: a name's digit runs become # and its numbers.
func TestFamily(t *testing.T) {
	for name, want := range map[string]string{"layer.10.fc.weight": "layer.#.fc.weight [10]", "h.2.mlp.c_fc.weight": "h.#.mlp.c_fc.weight [2]",
		"emb.weight": "emb.weight []", "blocks.1.attn.3.w": "blocks.#.attn.#.w [1 3]"} {
		fam, nums := family(name)
		if got := fmt.Sprint(fam, " ", nums); got != want {
			t.Errorf("family(%q) = %s, want %s", name, got, want)
		}
	}
}
