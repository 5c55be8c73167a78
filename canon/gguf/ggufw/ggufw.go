// Package ggufw builds GGUF files in memory, for tests, fixtures and benchmarks. By default it writes
// what ggml's own writer writes (version 3, little-endian, tensor data padded to the alignment, each
// tensor right after the previous one) and can deviate from it on purpose: any value type number,
// any bytes, any offsets. It never touches the file system: callers write what it builds.
package ggufw

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/stdiff/stdiff/canon/gguf"
)

// Writer appends GGUF encodings to a byte slice.
type Writer struct {
	B         []byte
	BigEndian bool
}

func (w *Writer) order() binary.AppendByteOrder {
	if w.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// U8 appends one byte.
func (w *Writer) U8(v uint8) { w.B = append(w.B, v) }

// U16 appends a uint16.
func (w *Writer) U16(v uint16) { w.B = w.order().AppendUint16(w.B, v) }

// U32 appends a uint32.
func (w *Writer) U32(v uint32) { w.B = w.order().AppendUint32(w.B, v) }

// U64 appends a uint64.
func (w *Writer) U64(v uint64) { w.B = w.order().AppendUint64(w.B, v) }

// Str appends a string: its uint64 length, then its bytes.
func (w *Writer) Str(s string) {
	w.U64(uint64(len(s)))
	w.B = append(w.B, s...)
}

// Raw appends bytes as they are.
func (w *Writer) Raw(b []byte) { w.B = append(w.B, b...) }

// Val writes a value: its type field(s) and its bytes.
type Val func(w *Writer)

// U8 writes a uint8 value.
func U8(v uint8) Val { return scalar(gguf.ValUint8, func(w *Writer) { w.U8(v) }) }

// I8 writes an int8 value.
func I8(v int8) Val { return scalar(gguf.ValInt8, func(w *Writer) { w.U8(uint8(v)) }) }

// U16 writes a uint16 value.
func U16(v uint16) Val { return scalar(gguf.ValUint16, func(w *Writer) { w.U16(v) }) }

// I16 writes an int16 value.
func I16(v int16) Val { return scalar(gguf.ValInt16, func(w *Writer) { w.U16(uint16(v)) }) }

// U32 writes a uint32 value.
func U32(v uint32) Val { return scalar(gguf.ValUint32, func(w *Writer) { w.U32(v) }) }

// I32 writes an int32 value.
func I32(v int32) Val { return scalar(gguf.ValInt32, func(w *Writer) { w.U32(uint32(v)) }) }

// F32 writes a float32 value.
func F32(v float32) Val {
	return scalar(gguf.ValFloat32, func(w *Writer) { w.U32(math.Float32bits(v)) })
}

// U64 writes a uint64 value.
func U64(v uint64) Val { return scalar(gguf.ValUint64, func(w *Writer) { w.U64(v) }) }

// I64 writes an int64 value.
func I64(v int64) Val { return scalar(gguf.ValInt64, func(w *Writer) { w.U64(uint64(v)) }) }

// F64 writes a float64 value.
func F64(v float64) Val {
	return scalar(gguf.ValFloat64, func(w *Writer) { w.U64(math.Float64bits(v)) })
}

// Str writes a string value.
func Str(s string) Val { return scalar(gguf.ValString, func(w *Writer) { w.Str(s) }) }

// Bool writes a bool; BoolByte writes any byte as a bool.
func Bool(v bool) Val {
	if v {
		return BoolByte(1)
	}
	return BoolByte(0)
}

// BoolByte writes b as a bool value (gguf.cpp reads any byte but 0 as true).
func BoolByte(b uint8) Val { return scalar(gguf.ValBool, func(w *Writer) { w.U8(b) }) }

func scalar(t gguf.ValueType, body func(w *Writer)) Val {
	return func(w *Writer) {
		w.U32(uint32(t))
		body(w)
	}
}

// Raw writes type number t (any number, valid or not) followed by payload as it is.
func Raw(t uint32, payload []byte) Val {
	return func(w *Writer) {
		w.U32(t)
		w.Raw(payload)
	}
}

// Array writes an array header of element type elem and length n (any numbers), then payload as it is.
func Array(elem uint32, n uint64, payload []byte) Val {
	return func(w *Writer) {
		w.U32(uint32(gguf.ValArray))
		w.U32(elem)
		w.U64(n)
		w.Raw(payload)
	}
}

// Strs writes an array of strings.
func Strs(ss ...string) Val {
	return func(w *Writer) {
		w.U32(uint32(gguf.ValArray))
		w.U32(uint32(gguf.ValString))
		w.U64(uint64(len(ss)))
		for _, s := range ss {
			w.Str(s)
		}
	}
}

// U32s writes an array of uint32.
func U32s(vs ...uint32) Val {
	return func(w *Writer) {
		w.U32(uint32(gguf.ValArray))
		w.U32(uint32(gguf.ValUint32))
		w.U64(uint64(len(vs)))
		for _, v := range vs {
			w.U32(v)
		}
	}
}

// I32s writes an array of int32.
func I32s(vs ...int32) Val {
	return func(w *Writer) {
		w.U32(uint32(gguf.ValArray))
		w.U32(uint32(gguf.ValInt32))
		w.U64(uint64(len(vs)))
		for _, v := range vs {
			w.U32(uint32(v))
		}
	}
}

// F32s writes an array of float32.
func F32s(vs ...float32) Val {
	return func(w *Writer) {
		w.U32(uint32(gguf.ValArray))
		w.U32(uint32(gguf.ValFloat32))
		w.U64(uint64(len(vs)))
		for _, v := range vs {
			w.U32(math.Float32bits(v))
		}
	}
}

// Bools writes an array of bools, each byte as given.
func Bools(bs ...uint8) Val {
	return func(w *Writer) {
		w.U32(uint32(gguf.ValArray))
		w.U32(uint32(gguf.ValBool))
		w.U64(uint64(len(bs)))
		w.Raw(bs)
	}
}

// KV is one key-value pair to write.
type KV struct {
	Key string
	Val Val
}

// Tensor is one tensor to write.
type Tensor struct {
	Name string
	Type gguf.GGMLType
	// Dims in ggml's ne order (row length first), written as they are (any count, negative values too).
	Dims []int64
	// Data is the tensor's bytes; nil gives deterministic bytes of the size type and dims call for
	// (none when that size is unknown or over 1 MiB).
	Data []byte
	// NoData writes no bytes for the tensor (its data then lies past the end of the file unless
	// others follow).
	NoData bool
}

// File describes a file to build.
type File struct {
	// Version is the version written (0 means 3).
	Version uint32
	// BigEndian writes every number big-endian (the magic stays "GGUF").
	BigEndian bool
	KVs       []KV
	Tensors   []Tensor
	// Alignment lays out the data (0: general.alignment's value when it is a uint32 pair in KVs, else 32).
	// It does not write general.alignment.
	Alignment uint64
	// Offsets, when set, are written as the tensors' data offsets instead of the computed ones (the
	// data stays where the layout puts it).
	Offsets []uint64
	// NoHeaderPad leaves out the padding between the tensor infos and the data.
	NoHeaderPad bool
	// NoLastPad leaves out the padding after the last tensor's data.
	NoLastPad bool
	// Trailing bytes appended at the end.
	Trailing []byte
}

// TensorBytes is the number of bytes a tensor of type t with dims ne occupies, when ggml knows it.
func TensorBytes(t gguf.GGMLType, ne []int64) (uint64, bool) {
	dims := make([]uint64, len(ne))
	for i, d := range ne {
		if d < 0 {
			return 0, false
		}
		dims[i] = uint64(d)
	}
	return t.ByteLen(dims)
}

// Build returns the file's bytes.
func (f File) Build() []byte {
	w := &Writer{BigEndian: f.BigEndian}
	w.Raw([]byte("GGUF"))
	v := f.Version
	if v == 0 {
		v = 3
	}
	w.U32(v)
	w.U64(uint64(len(f.Tensors)))
	w.U64(uint64(len(f.KVs)))
	for _, kv := range f.KVs {
		w.Str(kv.Key)
		kv.Val(w)
	}
	align := f.alignment()
	data := make([][]byte, len(f.Tensors))
	offsets := make([]uint64, len(f.Tensors))
	next := uint64(0)
	for i, t := range f.Tensors {
		d := t.Data
		if d == nil && !t.NoData {
			if n, ok := TensorBytes(t.Type, t.Dims); ok && n <= 1<<20 {
				d = fill(t.Name, int(n))
			}
		}
		data[i] = d
		offsets[i] = next
		next = pad(next+uint64(len(d)), align)
	}
	if f.Offsets != nil {
		copy(offsets, f.Offsets)
	}
	for i, t := range f.Tensors {
		w.Str(t.Name)
		w.U32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			w.U64(uint64(d))
		}
		w.U32(uint32(t.Type))
		w.U64(offsets[i])
	}
	if !f.NoHeaderPad {
		w.B = padBytes(w.B, align)
	}
	start := len(w.B)
	for i, d := range data {
		w.Raw(d)
		if i < len(data)-1 || !f.NoLastPad {
			for uint64(len(w.B)-start)%align != 0 {
				w.B = append(w.B, 0)
			}
		}
	}
	return append(w.B, f.Trailing...)
}

func (f File) alignment() uint64 {
	if f.Alignment != 0 {
		return f.Alignment
	}
	for _, kv := range f.KVs {
		if kv.Key == gguf.AlignmentKey {
			probe := &Writer{}
			kv.Val(probe)
			if len(probe.B) == 8 && binary.LittleEndian.Uint32(probe.B) == uint32(gguf.ValUint32) {
				if a := binary.LittleEndian.Uint32(probe.B[4:]); a != 0 && a&(a-1) == 0 {
					return uint64(a)
				}
			}
		}
	}
	return gguf.DefaultAlignment
}

func pad(x, a uint64) uint64 { return (x + a - 1) / a * a }

func padBytes(b []byte, a uint64) []byte {
	for uint64(len(b))%a != 0 {
		b = append(b, 0)
	}
	return b
}

// fill returns n deterministic bytes derived from name.
func fill(name string, n int) []byte {
	b := make([]byte, n)
	x := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		x = (x ^ uint32(name[i])) * 16777619
	}
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// Synthetic describes a llama-like file with nTensors small Q4_K tensors and a tokenizer of nTokens
// tokens (tokens, scores and token types), for benchmarks.
func Synthetic(nTensors, nTokens int) File {
	tokens := make([]string, nTokens)
	scores := make([]float32, nTokens)
	types := make([]int32, nTokens)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("tok%d▁", i)
		scores[i] = -float32(i)
		types[i] = 1
	}
	f := File{KVs: []KV{
		{"general.architecture", Str("llama")},
		{"general.name", Str("synthetic")},
		{"llama.block_count", U32(uint32(nTensors / 9))},
		{"llama.context_length", U32(4096)},
		{"tokenizer.ggml.model", Str("llama")},
		{"tokenizer.ggml.tokens", Strs(tokens...)},
		{"tokenizer.ggml.scores", F32s(scores...)},
		{"tokenizer.ggml.token_type", I32s(types...)},
		{"general.file_type", U32(15)},
	}}
	names := []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down", "attn_norm", "ffn_norm"}
	for i := 0; i < nTensors; i++ {
		t := Tensor{Name: fmt.Sprintf("blk.%d.%s.weight", i/len(names), names[i%len(names)]), Type: gguf.TypeQ4_K, Dims: []int64{256, 2}}
		if i%len(names) >= 7 {
			t.Type, t.Dims = gguf.TypeF32, []int64{256}
		}
		f.Tensors = append(f.Tensors, t)
	}
	return f
}
