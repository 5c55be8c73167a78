package tensor_test

import (
	"testing"

	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/tensor"
)

// TestDTypeTable: every safetensors dtype has a size, is known, and is its own suggestion; misspellings
// suggest the dtype they meant; ggml's block types are not safetensors dtypes.
func TestDTypeTable(t *testing.T) {
	ds := tensor.DTypes()
	if len(ds) != 22 {
		t.Errorf("%d safetensors dtypes, want 22", len(ds))
	}
	for _, d := range ds {
		if b, ok := d.Bits(); !ok || b == 0 || !d.Known() || d.Suggest() != d {
			t.Errorf("%s: bits %d %v, known %v, suggests %q", d, b, ok, d.Known(), d.Suggest())
		}
	}
	for in, want := range map[tensor.DType]tensor.DType{"f16": "F16", "bfloat16": "BF16", "FP32": "F32", "Q4_K": "", "x": ""} {
		if got := in.Suggest(); got != want {
			t.Errorf("%q.Suggest() = %q, want %q", in, got, want)
		}
	}
	for _, d := range []tensor.DType{"Q4_K", "f32", "", "TYPE_99"} {
		if d.Known() {
			t.Errorf("%q known", d)
		}
	}
}

// TestLower: the lower-case spelling of every known dtype (safetensors' and ggml's) without an
// allocation, and of any other name too.
func TestLower(t *testing.T) {
	for d, want := range map[tensor.DType]string{"BF16": "bf16", "F8_E4M3": "f8_e4m3", "Q4_K": "q4_k", "IQ2_XXS": "iq2_xxs", "Odd": "odd", "": ""} {
		if got := d.Lower(); got != want {
			t.Errorf("%q.Lower() = %q, want %q", d, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = tensor.DType("Q6_K").Lower() }); n != 0 {
		t.Errorf("Lower of a known dtype allocates %v times", n)
	}
}

// TestExpectedLen: element types take bits × elements; ggml's block types take whole blocks of their
// rows (the last dimension of Shape); an unknown dtype or a partial block has no length.
func TestExpectedLen(t *testing.T) {
	q4k := tensor.OfGGML(gguf.GGMLType(12))
	if q4k != "Q4_K" {
		t.Fatalf("OfGGML(12) = %q, want Q4_K", q4k)
	}
	if d := tensor.OfGGML(gguf.GGMLType(9999)); d != "TYPE_9999" {
		t.Errorf("OfGGML(9999) = %q", d)
	}
	for _, c := range []struct {
		d     tensor.DType
		shape []uint64
		n     uint64
		ok    bool
	}{
		{"F32", []uint64{3, 5}, 60, true},
		{"F4", []uint64{3}, 0, false}, // 12 bits
		{"F4", []uint64{4}, 2, true},
		{"Q4_K", []uint64{2, 256}, 2 * 144, true},
		{"Q4_K", []uint64{256, 2}, 0, false}, // rows of 2 elements: no whole block
		{"XX", []uint64{1}, 0, false},
		{"U8", []uint64{1 << 32, 1 << 32}, 0, false},
	} {
		ten := tensor.Tensor{DType: c.d, Shape: c.shape}
		if n, ok := ten.ExpectedLen(); n != c.n || ok != c.ok {
			t.Errorf("%s %v: ExpectedLen %d %v, want %d %v", c.d, c.shape, n, ok, c.n, c.ok)
		}
	}
	ten := tensor.Tensor{Begin: 10, End: 4}
	if ten.Len() != 0 || ten.NameOnly() != true {
		t.Errorf("reversed offsets: Len %d; no dtype: NameOnly %v", ten.Len(), ten.NameOnly())
	}
}
