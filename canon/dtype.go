package canon

import (
	"strconv"

	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/safetensors"
)

// DType is a tensor element type as the reference reader spells it (case-sensitive), or for GGUF as
// ggml names it in upper case (see Tensor.DType). The names the two formats share (F32, F16, BF16,
// I8, I16, I32, I64, F64) mean the same element type in both.
type DType string

// Bits returns the size of one element in bits, and false for a dtype the reference does not know.
func (d DType) Bits() (uint64, bool) {
	switch d { // the common ones first, without a map look-up
	case "F32", "I32", "U32":
		return 32, true
	case "F16", "BF16", "I16", "U16":
		return 16, true
	}
	return safetensors.Bits(string(d))
}

// Known reports whether the safetensors reference reader accepts d (ggml's block types are not
// among them).
func (d DType) Known() bool {
	_, ok := d.Bits()
	return ok
}

// ggmlDTypes maps the DType of every ggml type to its number.
var ggmlDTypes = func() map[DType]gguf.GGMLType {
	m := make(map[DType]gguf.GGMLType, len(gguf.Types))
	for i := range gguf.Types {
		if n := gguf.Types[i].Name; n != "" {
			m[DType(n)] = gguf.GGMLType(i)
		}
	}
	return m
}()

// ggml returns the ggml type d names, and false when d is no ggml type name.
func (d DType) ggml() (gguf.GGMLType, bool) {
	t, ok := ggmlDTypes[d]
	return t, ok
}

// Quantized reports whether d is one of ggml's block-quantised types (Q4_K, Q8_0, IQ2_XXS, MXFP4, …,
// and the ones ggml has removed): their elements are stored in blocks that share scales, not one by
// one. Package values decodes none of them (values.Supported is false), so tensors of these types are
// compared by their bytes, and a change from one of them to another type is a requantisation.
func (d DType) Quantized() bool {
	t, ok := d.ggml()
	if !ok {
		return false
	}
	info, _ := t.Info()
	return info.Quantized || info.Removed
}

// ggmlDType is the DType of ggml type t: its name, or "TYPE_N" for a number ggml does not know.
func ggmlDType(t gguf.GGMLType) DType {
	if info, ok := t.Info(); ok && info.Name != "" {
		return DType(info.Name)
	}
	return DType("TYPE_" + strconv.FormatUint(uint64(t), 10))
}

// neOrder is a row-major shape in ggml's ne order (innermost first), and back: the reverse of s.
func neOrder(s []uint64) []uint64 {
	r := make([]uint64, len(s))
	for i, d := range s {
		r[len(s)-1-i] = d
	}
	return r
}
