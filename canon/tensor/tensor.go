// Package tensor holds the tensor entry every format's header gives (Tensor) and its element type
// (DType), with the safetensors reference's dtype table and ggml's type names, so that a format
// package (canon/safetensors) and canon, which adapts its header into a Model, share one type: a
// header of 50,000 tensors is handed over without a copy or a conversion.
//
// It imports nothing of stdiff but canon/gguf (for ggml's types, which imports only canon/finding).
package tensor

import "math/bits"

// Tensor is one tensor entry of a header.
type Tensor struct {
	Name string
	// DType is the element type: as safetensors spells it ("F32", "BF16"), or for GGUF ggml's type
	// name in upper case ("F32", "Q4_K", "IQ2_XXS"; "TYPE_N" for a type number ggml does not know).
	DType DType
	// Shape in row-major order, outermost dimension first, as safetensors and PyTorch write it. For
	// GGUF this is ggml's ne order reversed: a ggml tensor of ne [4096, 32000] has Shape [32000, 4096].
	Shape []uint64
	// Begin and End are the data_offsets: byte offsets relative to the start of the data section. For
	// GGUF, Begin is the tensor info's offset and End = Begin + the byte length its type and shape call
	// for (End = Begin when that length is unknown: an unknown type, a partial block, an overflow).
	Begin, End uint64
	// HeaderOffset is the file offset of the entry's name in the header (for GGUF, of the tensor info).
	HeaderOffset int64
}

// NameOnly reports whether only the tensor's name is known: it comes from the weight map of an index
// whose shard is missing (see source.ReadSet). Its DType is "" (no file's tensor has that), its Shape nil, and
// it claims no bytes.
func (t *Tensor) NameOnly() bool { return t.DType == "" }

// Len is the number of data bytes the entry claims (End-Begin, or 0 when reversed).
func (t *Tensor) Len() uint64 {
	if t.End < t.Begin {
		return 0
	}
	return t.End - t.Begin
}

// Elements is the product of the shape (1 for a scalar); ok is false when it overflows 64 bits.
func (t *Tensor) Elements() (n uint64, ok bool) {
	n = 1
	for _, d := range t.Shape {
		hi, lo := bits.Mul64(n, d)
		if hi != 0 {
			return 0, false
		}
		n = lo
	}
	return n, true
}

// ExpectedLen is the byte length the dtype and shape call for. ok is false when the dtype is unknown,
// the size overflows, or the bit count is not a whole number of bytes. A ggml block type (Q4_K, …)
// takes whole blocks: its rows (the last dimension of Shape) must be a whole number of blocks.
func (t *Tensor) ExpectedLen() (n uint64, ok bool) {
	b, known := t.DType.Bits()
	if !known {
		if gt, isGGML := t.DType.ggml(); isGGML {
			return gt.ByteLen(neOrder(t.Shape))
		}
		return 0, false
	}
	e, ok := t.Elements()
	if !ok {
		return 0, false
	}
	hi, lo := bits.Mul64(e, b)
	if hi != 0 || lo%8 != 0 {
		return 0, false
	}
	return lo / 8, true
}

// neOrder is a row-major shape in ggml's ne order (innermost first), and back: the reverse of s.
func neOrder(s []uint64) []uint64 {
	r := make([]uint64, len(s))
	for i, d := range s {
		r[len(s)-1-i] = d
	}
	return r
}
