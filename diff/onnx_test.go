package diff

import (
	"math"
	"slices"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/diff/ggufsrc"
)

// TestONNXExportAgainstSource: torch.onnx.export stores Linear weights transposed as onnx::MatMul_N
// and adds Constant nodes; paired by value (transposes undone) with graph constants apart, a
// faithful export is identical to its source, either way round and against the torch.save state
// dict (before: 9 removed / 35 added, exit 1); an edited weight is one change named by its source
// name, with name_b and transform transpose.
func TestONNXExportAgainstSource(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"model.safetensors", "model.onnx"}, {"model.onnx", "model.safetensors"}, {"model.pt", "model.onnx"},
	} {
		r, err := Models(t.Context(), openExport(t, tc.a), openExport(t, tc.b), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome() != canon.Clean || !r.Identical || len(r.Tensors.Added)+len(r.Tensors.Removed)+len(r.Tensors.Changed)+len(r.Tensors.Renamed) != 0 {
			t.Errorf("%s → %s: categories %v, tensors %+v", tc.a, tc.b, r.Categories, r.Tensors)
		}
		has := map[NoteCode]Note{}
		for _, n := range r.Notes {
			has[n.Code] = n
		}
		if n := has[NoteGraphConstants]; n.Count != 2 {
			t.Errorf("%s → %s: constants note %+v", tc.a, tc.b, n)
		}
		if n := has[NotePairedByValue]; n.Count < 2 || n.Old != "2" && n.Old != "3" {
			t.Errorf("%s → %s: paired note %+v", tc.a, tc.b, n)
		}
		if _, ok := has[NoteGraphCopy]; ok == (tc.a == "model.pt") { // the state dict has head.weight to pair with
			t.Errorf("%s → %s: copy note %v", tc.a, tc.b, ok)
		}
	}
	for _, tc := range []struct{ a, b string }{{"model.safetensors", "edited.onnx"}, {"edited.onnx", "model.safetensors"}} {
		r, err := Models(t.Context(), openExport(t, tc.a), openExport(t, tc.b), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Tensors.Changed) != 1 || len(r.Tensors.Added)+len(r.Tensors.Removed) != 0 || !slices.Equal(r.Categories, []Category{CategoryData, CategoryValues}) {
			t.Fatalf("%s → %s: categories %v, tensors %+v", tc.a, tc.b, r.Categories, r.Tensors)
		}
		c := r.Tensors.Changed[0]
		if c.Name != "fc1.weight" || c.NameB != "onnx::MatMul_30" || c.Transform != ggufsrc.TransformTranspose || c.Values == nil || math.Abs(c.Values.MaxAbsDiff-0.5) > 1e-6 || c.Values.Differing != 1 {
			t.Errorf("%s → %s: change %+v values %+v", tc.a, tc.b, c, c.Values)
		}
	}
}

// TestONNXExportSharedInitializers: the exporter keeps one initializer of tensors with equal values
// (two LayerNorms' weights, all ones, and biases, all zeros: oracle.json's layers_initializers has
// blocks.0.ln.* only). The source tensors it dropped are held by the one it kept: a note, and the
// export is identical to its source (before: "- blocks.1.ln.bias", "- blocks.1.ln.weight", exit 1).
func TestONNXExportSharedInitializers(t *testing.T) {
	for _, tc := range []struct{ a, b string }{{"layers.safetensors", "layers.onnx"}, {"layers.onnx", "layers.safetensors"}} {
		r, err := Models(t.Context(), openExport(t, tc.a), openExport(t, tc.b), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome() != canon.Clean || len(r.Tensors.Added)+len(r.Tensors.Removed)+len(r.Tensors.Changed) != 0 {
			t.Errorf("%s → %s: categories %v, tensors %+v", tc.a, tc.b, r.Categories, r.Tensors)
		}
		i := slices.IndexFunc(r.Notes, func(n Note) bool { return n.Code == NoteGraphShared })
		if i < 0 || r.Notes[i].Count != 2 || r.Notes[i].Key != "blocks.1.ln.bias" || r.Notes[i].Old != "blocks.0.ln.bias" {
			t.Errorf("%s → %s: notes %+v", tc.a, tc.b, r.Notes)
		}
	}
}

// TestValuesShape: the place of the largest difference is given in the shape the values were compared
// in: the source's, whichever side the transposed ONNX initializer is on.
func TestValuesShape(t *testing.T) {
	src := Tensor{Name: "fc1.weight", Shape: []uint64{12, 8}}
	onnx := Tensor{Name: "onnx::MatMul_30", Shape: []uint64{8, 12}}
	for _, c := range []Change{
		{Name: "fc1.weight", NameB: "onnx::MatMul_30", Transform: ggufsrc.TransformTranspose, Old: src, New: onnx},
		{Name: "fc1.weight", NameB: "onnx::MatMul_30", Transform: ggufsrc.TransformTranspose, Old: onnx, New: src},
	} {
		if got := coords(valuesShape(&c), 9); got != "[1, 1]" {
			t.Errorf("%s → %s: index 9 at %s, want [1, 1] of [12, 8]", c.Old.Name, c.New.Name, got)
		}
	}
}
