// Package stfile builds safetensors files in memory, for tests, fixtures and benchmarks. It writes what
// the reference writer writes by default (compact JSON, `__metadata__` first, space padding to a multiple
// of 8, contiguous offsets in tensor order) and can deviate from it on purpose. It never touches the
// file system: callers write what Build returns.
package stfile

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
)

// Tensor is one tensor to write. Data may be nil: it is then filled with deterministic bytes derived from
// Seed and the tensor's name.
type Tensor struct {
	Name  string
	DType string
	Shape []uint64
	Data  []byte
}

// KV is one metadata entry.
type KV struct{ Key, Value string }

// File describes a file to build.
type File struct {
	Metadata []KV
	// NullMetadata writes `"__metadata__":null` (as MLX does) when Metadata is empty.
	NullMetadata bool
	Tensors      []Tensor
	// Pad is the padding byte (default ' '); NulPadded gives the NUL padding some JS writers produce.
	Pad byte
	// NoPad leaves the header unpadded.
	NoPad bool
	// DataOrder, when set, lays out the data in this order of tensor indices (the header order stays).
	DataOrder []int
	// Seed varies the generated tensor bytes.
	Seed int64
	// Trailing bytes appended after the data.
	Trailing []byte
	// Indent pretty-prints the header.
	Indent bool
}

// ByteLen is the byte length of a dtype and shape (sub-byte dtypes rounded up).
func ByteLen(dtype string, shape []uint64) uint64 {
	bits := map[string]uint64{"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8,
		"F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16,
		"F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64}[dtype]
	n := uint64(1)
	for _, d := range shape {
		n *= d
	}
	return (n*bits + 7) / 8
}

// Build returns the file's bytes.
func (f File) Build() []byte {
	data := make([][]byte, len(f.Tensors))
	lens := make([]uint64, len(f.Tensors))
	for i, t := range f.Tensors {
		if t.Data != nil {
			data[i] = t.Data
		} else {
			data[i] = Fill(f.Seed, t.Name, ByteLen(t.DType, t.Shape))
		}
		lens[i] = uint64(len(data[i]))
	}
	out := f.header(lens)
	for _, i := range f.order() {
		out = append(out, data[i]...)
	}
	return append(out, f.Trailing...)
}

// HeaderBytes returns the 8-byte length and the header of the file whose tensors hold ByteLen bytes
// each, for writers that stream the data themselves (in DataOrder, or header order).
func (f File) HeaderBytes() []byte {
	lens := make([]uint64, len(f.Tensors))
	for i, t := range f.Tensors {
		lens[i] = ByteLen(t.DType, t.Shape)
	}
	return f.header(lens)
}

func (f File) order() []int {
	order := f.DataOrder
	if order == nil {
		order = make([]int, len(f.Tensors))
		for i := range order {
			order[i] = i
		}
	}
	return order
}

// header builds the length and header for tensors of the given data lengths.
func (f File) header(lens []uint64) []byte {
	offs := make([][2]uint64, len(f.Tensors))
	var pos uint64
	for _, i := range f.order() {
		offs[i] = [2]uint64{pos, pos + lens[i]}
		pos += lens[i]
	}
	var h strings.Builder
	nl, sp := "", ""
	if f.Indent {
		nl, sp = "\n  ", " "
	}
	h.WriteString("{")
	first := true
	sep := func() {
		if !first {
			h.WriteString(",")
		}
		first = false
		h.WriteString(nl)
	}
	if len(f.Metadata) > 0 {
		sep()
		h.WriteString(`"__metadata__":` + sp + "{")
		for i, kv := range f.Metadata {
			if i > 0 {
				h.WriteString(",")
			}
			h.WriteString(jsonString(kv.Key) + ":" + sp + jsonString(kv.Value))
		}
		h.WriteString("}")
	} else if f.NullMetadata {
		sep()
		h.WriteString(`"__metadata__":` + sp + "null")
	}
	for i, t := range f.Tensors {
		sep()
		shape := make([]string, len(t.Shape))
		for k, d := range t.Shape {
			shape[k] = fmt.Sprint(d)
		}
		fmt.Fprintf(&h, `%s:%s{"dtype":%s,"shape":[%s],"data_offsets":[%d,%d]}`,
			jsonString(t.Name), sp, jsonString(t.DType), strings.Join(shape, ","), offs[i][0], offs[i][1])
	}
	if f.Indent {
		h.WriteString("\n")
	}
	h.WriteString("}")
	header := []byte(h.String())
	if !f.NoPad {
		pad := f.Pad
		if pad == 0 {
			pad = ' '
		}
		for len(header)%8 != 0 {
			header = append(header, pad)
		}
	}
	out := make([]byte, 8, 8+len(header)+int(pos)+len(f.Trailing))
	binary.LittleEndian.PutUint64(out, uint64(len(header)))
	return append(out, header...)
}

// NulPadded returns the file's bytes with NUL padding instead of spaces (at least one NUL byte).
func (f File) NulPadded() []byte {
	f.NoPad = true
	b := f.Build()
	n := binary.LittleEndian.Uint64(b[:8])
	pad := 8 - int(n%8)
	header := append([]byte(nil), b[8:8+n]...)
	for i := 0; i < pad; i++ {
		header = append(header, 0)
	}
	out := make([]byte, 8, len(b)+pad)
	binary.LittleEndian.PutUint64(out, uint64(len(header)))
	out = append(out, header...)
	return append(out, b[8+n:]...)
}

// Fill returns n deterministic pseudo-random bytes for a tensor.
func Fill(seed int64, name string, n uint64) []byte {
	var h int64 = seed
	for _, c := range name {
		h = h*31 + int64(c)
	}
	b := make([]byte, n)
	rand.New(rand.NewSource(h)).Read(b)
	return b
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ManyTensors returns a file shaped like a large transformer checkpoint's header: n tensors with
// realistic names (about 110 header bytes each) and tiny data, so the header dominates.
func ManyTensors(n int) File {
	f := File{Metadata: []KV{{Key: "format", Value: "pt"}}}
	kinds := []string{"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
		"self_attn.o_proj.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight",
		"input_layernorm.weight", "post_attention_layernorm.weight", "self_attn.rotary_emb.inv_freq"}
	for i := 0; i < n; i++ {
		f.Tensors = append(f.Tensors, Tensor{
			Name:  fmt.Sprintf("model.language_model.layers.%d.%s", i/len(kinds), kinds[i%len(kinds)]),
			DType: "BF16", Shape: []uint64{1, uint64(1 + i%3)},
			Data: make([]byte, 2*(1+i%3)),
		})
	}
	return f
}
