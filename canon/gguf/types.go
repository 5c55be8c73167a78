package gguf

import (
	"fmt"
	"math/bits"
)

// GGMLType is a tensor element type as ggml numbers it (enum ggml_type).
type GGMLType uint32

// TypeInfo describes one ggml tensor type: elements come in blocks of BlockSize, each block
// TypeSize bytes. A row's element count must be a multiple of BlockSize.
type TypeInfo struct {
	// Name is the type's name as ggml's enum spells it after GGML_TYPE_ (F32, Q4_K, IQ2_XXS, …).
	Name string
	// GGMLName is ggml's own name for the type (ggml_type_name: f32, q4_K, iq2_xxs, …).
	GGMLName string
	// BlockSize is the number of elements per block; 0 for a removed type.
	BlockSize uint64
	// TypeSize is the number of bytes per block; 0 for a removed type.
	TypeSize uint64
	// Quantized is true for block-quantized types.
	Quantized bool
	// Removed is true for a type ggml no longer reads: gguf.cpp rejects tensors of this type.
	Removed bool
	// LegacyBlockSize and LegacyTypeSize are a removed type's layout when ggml still read it
	// (0 when it never appeared in GGUF files), so that old files can still be laid out leniently.
	LegacyBlockSize, LegacyTypeSize uint64
	// Hint says what to do about a file with a removed type.
	Hint string
}

// Tensor types by ggml's numbering (ggml commit d99724f2b141fed9e1a9f402213506c081433465).
const (
	TypeF32     GGMLType = 0
	TypeF16     GGMLType = 1
	TypeQ4_0    GGMLType = 2
	TypeQ4_1    GGMLType = 3
	TypeQ5_0    GGMLType = 6
	TypeQ5_1    GGMLType = 7
	TypeQ8_0    GGMLType = 8
	TypeQ8_1    GGMLType = 9
	TypeQ2_K    GGMLType = 10
	TypeQ3_K    GGMLType = 11
	TypeQ4_K    GGMLType = 12
	TypeQ5_K    GGMLType = 13
	TypeQ6_K    GGMLType = 14
	TypeQ8_K    GGMLType = 15
	TypeIQ2_XXS GGMLType = 16
	TypeIQ2_XS  GGMLType = 17
	TypeIQ3_XXS GGMLType = 18
	TypeIQ1_S   GGMLType = 19
	TypeIQ4_NL  GGMLType = 20
	TypeIQ3_S   GGMLType = 21
	TypeIQ2_S   GGMLType = 22
	TypeIQ4_XS  GGMLType = 23
	TypeI8      GGMLType = 24
	TypeI16     GGMLType = 25
	TypeI32     GGMLType = 26
	TypeI64     GGMLType = 27
	TypeF64     GGMLType = 28
	TypeIQ1_M   GGMLType = 29
	TypeBF16    GGMLType = 30
	TypeTQ1_0   GGMLType = 34
	TypeTQ2_0   GGMLType = 35
	TypeMXFP4   GGMLType = 39
	TypeNVFP4   GGMLType = 40
	TypeQ1_0    GGMLType = 41
	TypeQ2_0    GGMLType = 42

	// TypeCount is one past the highest type number ggml knows (GGML_TYPE_COUNT); gguf.cpp rejects
	// every type number from here on.
	TypeCount GGMLType = 43
)

const (
	hintRepackQ4  = "ggml now repacks Q4_0 at load time: get or make a Q4_0 file of the model with a current llama.cpp (llama-quantize)"
	hintRepackIQ4 = "ggml now repacks IQ4_NL at load time: get or make an IQ4_NL file of the model with a current llama.cpp (llama-quantize)"
	hintQ4_2      = "Q4_2 and Q4_3 were dropped before GGUF existed: quantize the model again with a current llama.cpp"
)

// Types is ggml's type table, indexed by GGMLType (block sizes and type sizes as ggml_blck_size and
// ggml_type_size report them; testdata/ggml-types.txt records ggml's own answers).
var Types = [TypeCount]TypeInfo{
	TypeF32:     {Name: "F32", GGMLName: "f32", BlockSize: 1, TypeSize: 4},
	TypeF16:     {Name: "F16", GGMLName: "f16", BlockSize: 1, TypeSize: 2},
	TypeQ4_0:    {Name: "Q4_0", GGMLName: "q4_0", BlockSize: 32, TypeSize: 18, Quantized: true},
	TypeQ4_1:    {Name: "Q4_1", GGMLName: "q4_1", BlockSize: 32, TypeSize: 20, Quantized: true},
	4:           {Name: "Q4_2", GGMLName: "DEPRECATED", Removed: true, Hint: hintQ4_2},
	5:           {Name: "Q4_3", GGMLName: "DEPRECATED", Removed: true, Hint: hintQ4_2},
	TypeQ5_0:    {Name: "Q5_0", GGMLName: "q5_0", BlockSize: 32, TypeSize: 22, Quantized: true},
	TypeQ5_1:    {Name: "Q5_1", GGMLName: "q5_1", BlockSize: 32, TypeSize: 24, Quantized: true},
	TypeQ8_0:    {Name: "Q8_0", GGMLName: "q8_0", BlockSize: 32, TypeSize: 34, Quantized: true},
	TypeQ8_1:    {Name: "Q8_1", GGMLName: "q8_1", BlockSize: 32, TypeSize: 36, Quantized: true},
	TypeQ2_K:    {Name: "Q2_K", GGMLName: "q2_K", BlockSize: 256, TypeSize: 84, Quantized: true},
	TypeQ3_K:    {Name: "Q3_K", GGMLName: "q3_K", BlockSize: 256, TypeSize: 110, Quantized: true},
	TypeQ4_K:    {Name: "Q4_K", GGMLName: "q4_K", BlockSize: 256, TypeSize: 144, Quantized: true},
	TypeQ5_K:    {Name: "Q5_K", GGMLName: "q5_K", BlockSize: 256, TypeSize: 176, Quantized: true},
	TypeQ6_K:    {Name: "Q6_K", GGMLName: "q6_K", BlockSize: 256, TypeSize: 210, Quantized: true},
	TypeQ8_K:    {Name: "Q8_K", GGMLName: "q8_K", BlockSize: 256, TypeSize: 292, Quantized: true},
	TypeIQ2_XXS: {Name: "IQ2_XXS", GGMLName: "iq2_xxs", BlockSize: 256, TypeSize: 66, Quantized: true},
	TypeIQ2_XS:  {Name: "IQ2_XS", GGMLName: "iq2_xs", BlockSize: 256, TypeSize: 74, Quantized: true},
	TypeIQ3_XXS: {Name: "IQ3_XXS", GGMLName: "iq3_xxs", BlockSize: 256, TypeSize: 98, Quantized: true},
	TypeIQ1_S:   {Name: "IQ1_S", GGMLName: "iq1_s", BlockSize: 256, TypeSize: 50, Quantized: true},
	TypeIQ4_NL:  {Name: "IQ4_NL", GGMLName: "iq4_nl", BlockSize: 32, TypeSize: 18, Quantized: true},
	TypeIQ3_S:   {Name: "IQ3_S", GGMLName: "iq3_s", BlockSize: 256, TypeSize: 110, Quantized: true},
	TypeIQ2_S:   {Name: "IQ2_S", GGMLName: "iq2_s", BlockSize: 256, TypeSize: 82, Quantized: true},
	TypeIQ4_XS:  {Name: "IQ4_XS", GGMLName: "iq4_xs", BlockSize: 256, TypeSize: 136, Quantized: true},
	TypeI8:      {Name: "I8", GGMLName: "i8", BlockSize: 1, TypeSize: 1},
	TypeI16:     {Name: "I16", GGMLName: "i16", BlockSize: 1, TypeSize: 2},
	TypeI32:     {Name: "I32", GGMLName: "i32", BlockSize: 1, TypeSize: 4},
	TypeI64:     {Name: "I64", GGMLName: "i64", BlockSize: 1, TypeSize: 8},
	TypeF64:     {Name: "F64", GGMLName: "f64", BlockSize: 1, TypeSize: 8},
	TypeIQ1_M:   {Name: "IQ1_M", GGMLName: "iq1_m", BlockSize: 256, TypeSize: 56, Quantized: true},
	TypeBF16:    {Name: "BF16", GGMLName: "bf16", BlockSize: 1, TypeSize: 2},
	31:          {Name: "Q4_0_4_4", GGMLName: "TYPE_Q4_0_4_4 REMOVED, use Q4_0 with runtime repacking", Removed: true, LegacyBlockSize: 32, LegacyTypeSize: 18, Hint: hintRepackQ4},
	32:          {Name: "Q4_0_4_8", GGMLName: "TYPE_Q4_0_4_8 REMOVED, use Q4_0 with runtime repacking", Removed: true, LegacyBlockSize: 32, LegacyTypeSize: 18, Hint: hintRepackQ4},
	33:          {Name: "Q4_0_8_8", GGMLName: "TYPE_Q4_0_8_8 REMOVED, use Q4_0 with runtime repacking", Removed: true, LegacyBlockSize: 32, LegacyTypeSize: 18, Hint: hintRepackQ4},
	TypeTQ1_0:   {Name: "TQ1_0", GGMLName: "tq1_0", BlockSize: 256, TypeSize: 54, Quantized: true},
	TypeTQ2_0:   {Name: "TQ2_0", GGMLName: "tq2_0", BlockSize: 256, TypeSize: 66, Quantized: true},
	36:          {Name: "IQ4_NL_4_4", GGMLName: "TYPE_IQ4_NL_4_4 REMOVED, use IQ4_NL with runtime repacking", Removed: true, LegacyBlockSize: 32, LegacyTypeSize: 18, Hint: hintRepackIQ4},
	37:          {Name: "IQ4_NL_4_8", GGMLName: "TYPE_IQ4_NL_4_8 REMOVED, use IQ4_NL with runtime repacking", Removed: true, LegacyBlockSize: 32, LegacyTypeSize: 18, Hint: hintRepackIQ4},
	38:          {Name: "IQ4_NL_8_8", GGMLName: "TYPE_IQ4_NL_8_8 REMOVED, use IQ4_NL with runtime repacking", Removed: true, LegacyBlockSize: 32, LegacyTypeSize: 18, Hint: hintRepackIQ4},
	TypeMXFP4:   {Name: "MXFP4", GGMLName: "mxfp4", BlockSize: 32, TypeSize: 17, Quantized: true},
	TypeNVFP4:   {Name: "NVFP4", GGMLName: "nvfp4", BlockSize: 64, TypeSize: 36, Quantized: true},
	TypeQ1_0:    {Name: "Q1_0", GGMLName: "q1_0", BlockSize: 128, TypeSize: 18, Quantized: true},
	TypeQ2_0:    {Name: "Q2_0", GGMLName: "q2_0", BlockSize: 64, TypeSize: 18, Quantized: true},
}

// Info returns the type's entry in Types; ok is false for a number ggml does not know.
func (t GGMLType) Info() (info TypeInfo, ok bool) {
	if t >= TypeCount {
		return TypeInfo{}, false
	}
	return Types[t], true
}

// String is the type's name (Q4_K), or "type N" for a number ggml does not know.
func (t GGMLType) String() string {
	if t < TypeCount {
		return Types[t].Name
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// TypeByName returns the type whose Name or GGMLName is name.
func TypeByName(name string) (GGMLType, bool) {
	for i := range Types {
		if Types[i].Name == name || (!Types[i].Removed && Types[i].GGMLName == name) {
			return GGMLType(i), true
		}
	}
	return 0, false
}

// layout is the block size and type size a tensor of type t is laid out with: the current ones, or a
// removed type's legacy ones (0, 0 when unknown).
func (t GGMLType) layout() (blck, size uint64) {
	info, ok := t.Info()
	if !ok {
		return 0, 0
	}
	if info.Removed {
		return info.LegacyBlockSize, info.LegacyTypeSize
	}
	return info.BlockSize, info.TypeSize
}

// ByteLen is the number of bytes a tensor of type t with dims (ne order) occupies: elements / block
// size × type size. ok is false for an unknown type (or a removed type never seen in GGUF files),
// a first dimension that is not a whole number of blocks, or a size that overflows 64 bits.
func (t GGMLType) ByteLen(dims []uint64) (n uint64, ok bool) {
	blck, size := t.layout()
	if blck == 0 {
		return 0, false
	}
	if len(dims) > 0 && dims[0]%blck != 0 {
		return 0, false
	}
	e, ok := elements(dims)
	if !ok {
		return 0, false
	}
	hi, lo := bits.Mul64(e/blck, size)
	return lo, hi == 0
}

// elements is the product of dims; ok is false when it overflows 64 bits.
func elements(dims []uint64) (n uint64, ok bool) {
	for _, d := range dims {
		if d == 0 {
			return 0, true
		}
	}
	n = 1
	for _, d := range dims {
		hi, lo := bits.Mul64(n, d)
		if hi != 0 {
			return 0, false
		}
		n = lo
	}
	return n, true
}
