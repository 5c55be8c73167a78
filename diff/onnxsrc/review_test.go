package onnxsrc

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stdiff/stdiff/canon/source"
)

func openReview(t *testing.T, name string) *source.Opened {
	t.Helper()
	o, err := source.Open(t.Context(), filepath.Join("..", "testdata", "review", name), source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// TestReviewMixedReaders: an initializer read by a MatMul (which wants a Linear weight transposed)
// and by a Gemm with transB (which wants it as it is), not symmetric, holds no source weight as both
// readers want it: the export is another model than its source (make.py's mixed-readers*.onnx against
// source-tied.safetensors, whose two layers hold the same values). Its pair is by shape, under its
// first reader's orientation, and it holds no other source tensor (Shared): by value in either
// orientation, stdiff called the two models identical (exit 0). The faithful export (Aᵀ for the
// MatMul, A for the Gemm) pairs by value, nothing left over.
func TestReviewMixedReaders(t *testing.T) {
	s := openReview(t, "source-tied.safetensors")
	for _, name := range []string{"mixed-readers.onnx", "mixed-readers-gemm-first.onnx"} {
		res, err := Match(t.Context(), openReview(t, name), s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Pairs) != 1 || res.Pairs[0].How != ByShape || len(res.Shared) != 0 || len(res.UnpairedSource) != 1 {
			t.Errorf("%s: pairs %+v, shared %+v, unpaired source %v: want one pair by shape, one source tensor unpaired", name, res.Pairs, res.Shared, res.UnpairedSource)
		}
	}
	res, err := Match(t.Context(), openReview(t, "mixed-readers-right.onnx"), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pairs) != 2 || len(res.Shared)+len(res.Copies)+len(res.UnpairedONNX)+len(res.UnpairedSource) != 0 {
		t.Fatalf("faithful export: %+v", res)
	}
	for _, p := range res.Pairs {
		if p.How != ByValue {
			t.Errorf("faithful export: %+v not by value", p)
		}
	}
}

// TestReviewTransposedTwins: a faithful export of two square Linear layers where one's weight is the
// other's transpose (fc2.weight = fc1.weightᵀ; make.py's shared-right.onnx: MatMul_0 reads Aᵀ, MatMul_1
// reads A) is the source, but pairing by value tries each initializer as it is first, pairs it with
// the other layer (fc2.weight = Aᵀ as it is), and orient then finds both pairs transposed the wrong
// way: two changed tensors, exit 1. A false difference, never a false identity; rare (weights equal
// to another's transpose: symmetric ones pair either way).
func TestReviewTransposedTwins(t *testing.T) {

	res, err := Match(t.Context(), openReview(t, "shared-right.onnx"), openReview(t, "source.safetensors"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Pairs {
		if p.How == ByShape {
			t.Errorf("%+v: by shape, though the export holds every weight as its reader wants it", p)
		}
	}
	// onnx::MatMul_1 (Aᵀ) is fc1.weight (A) transposed, onnx::MatMul_2 (A) is fc2.weight (Aᵀ) transposed
	want := []Pair{{ONNX: 0, Source: 0, Transform: TransformTranspose, How: ByValue}, {ONNX: 1, Source: 1, Transform: TransformTranspose, How: ByValue}}
	if !slices.Equal(res.Pairs, want) || len(res.Shared)+len(res.Copies)+len(res.UnpairedONNX)+len(res.UnpairedSource) != 0 {
		t.Errorf("pairs %+v, result %+v: want %+v, nothing else", res.Pairs, res, want)
	}
	// the export reading Aᵀ twice (fc2 computes x·Aᵀ, the source x·A) is still another model
	res, err = Match(t.Context(), openReview(t, "shared-wrong.onnx"), openReview(t, "source.safetensors"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pairs) != 1 || res.Pairs[0].How != ByValue || res.Pairs[0].Source != 0 || len(res.UnpairedSource) != 1 || len(res.Shared) != 0 {
		t.Errorf("shared-wrong.onnx: %+v: want fc1.weight paired by value, fc2.weight unpaired", res)
	}
}
