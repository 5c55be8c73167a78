package tensor

import (
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/gguf"
)

// DType is a tensor element type as the reference reader spells it (case-sensitive), or for GGUF as
// ggml names it in upper case (see Tensor.DType). The names the two formats share (F32, F16, BF16,
// I8, I16, I32, I64, F64) mean the same element type in both.
type DType string

// dtypeBits maps every dtype the safetensors reference reader accepts to its size in bits.
var dtypeBits = map[DType]uint64{
	"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8,
	"F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8,
	"I16": 16, "U16": 16, "F16": 16, "BF16": 16,
	"I32": 32, "U32": 32, "F32": 32,
	"C64": 64, "F64": 64, "I64": 64, "U64": 64,
}

// Bits returns the size of one element in bits, and false for a dtype the safetensors reference does
// not know.
func (d DType) Bits() (uint64, bool) {
	switch d { // the common ones first, without a map look-up
	case "F32", "I32", "U32":
		return 32, true
	case "F16", "BF16", "I16", "U16":
		return 16, true
	}
	b, ok := dtypeBits[d]
	return b, ok
}

// Known reports whether the safetensors reference reader accepts d (ggml's block types are not
// among them).
func (d DType) Known() bool {
	_, ok := d.Bits()
	return ok
}

// Suggest returns the known dtype that d most likely meant (case or common aliases), or "".
func (d DType) Suggest() DType {
	u := DType(strings.ToUpper(string(d)))
	if _, ok := dtypeBits[u]; ok {
		return u
	}
	aliases := map[DType]DType{
		"FLOAT32": "F32", "FLOAT16": "F16", "FP16": "F16", "FP32": "F32", "HALF": "F16",
		"BFLOAT16": "BF16", "FLOAT64": "F64", "DOUBLE": "F64", "FLOAT": "F32",
		"INT8": "I8", "UINT8": "U8", "INT16": "I16", "INT32": "I32", "INT64": "I64",
		"E8M0": "F8_E8M0", "FP4": "F4", "BOOLEAN": "BOOL",
	}
	return aliases[u]
}

// DTypes lists every dtype the safetensors reference reader accepts, in no particular order.
func DTypes() []DType {
	out := make([]DType, 0, len(dtypeBits))
	for d := range dtypeBits {
		out = append(out, d)
	}
	return out
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

// OfGGML is the DType of ggml type t: its name, or "TYPE_N" for a number ggml does not know.
func OfGGML(t gguf.GGMLType) DType {
	if info, ok := t.Info(); ok && info.Name != "" {
		return DType(info.Name)
	}
	return DType("TYPE_" + strconv.FormatUint(uint64(t), 10))
}

// lowerDTypes holds the lower-case spelling of every known dtype (the safetensors reference's and
// ggml's), so that Lower allocates nothing for them.
var lowerDTypes = func() map[DType]string {
	m := make(map[DType]string, len(ggmlDTypes)+len(dtypeBits))
	for d := range dtypeBits {
		m[d] = strings.ToLower(string(d))
	}
	for d := range ggmlDTypes {
		m[d] = strings.ToLower(string(d))
	}
	return m
}()

// Lower is d in lower case, as canonical forms write it; it allocates nothing for a known dtype.
func (d DType) Lower() string {
	if l, ok := lowerDTypes[d]; ok {
		return l
	}
	return strings.ToLower(string(d))
}
