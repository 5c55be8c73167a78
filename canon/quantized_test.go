package canon_test

import (
	"testing"

	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/values"
)

// TestQuantizedOrDecodable: every ggml type is either block-quantised (compared by bytes) or an
// element type package values decodes (compared by value), never both, never neither; safetensors
// dtypes and unknown names are not quantised.
func TestQuantizedOrDecodable(t *testing.T) {
	for i, info := range gguf.Types {
		if info.Name == "" {
			continue
		}
		d := tensor.DType(info.Name)
		if d.Quantized() == values.Supported(d) {
			t.Errorf("%s (type %d): quantised %v, decodable %v", d, i, d.Quantized(), values.Supported(d))
		}
	}
	for _, d := range []tensor.DType{"Q4_K", "Q6_K", "IQ2_XXS", "MXFP4", "Q4_0_4_4", "Q4_2"} {
		if !d.Quantized() {
			t.Errorf("%s: not quantised", d)
		}
	}
	for _, d := range []tensor.DType{"F32", "F16", "BF16", "I8", "F8_E4M3", "F4", "U8", "TYPE_99", "q4_k", ""} {
		if d.Quantized() {
			t.Errorf("%s: quantised", d)
		}
	}
}
