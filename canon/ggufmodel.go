package canon

import (
	"encoding/hex"
	"errors"
	"math/bits"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/tensor"
)

// readGGUF reads a GGUF file (or names one of the formats before GGUF) with package gguf and makes a
// Model of it. Like Read, it fails only when r cannot be read, with r's own error.
func readGGUF(in *Input) (*Model, error) {
	f, err := gguf.Read(in.R, in.Size, in.Name)
	if err != nil {
		if cause := errors.Unwrap(err); cause != nil { // gguf.Read puts the name before r's error
			return nil, cause
		}
		return nil, err
	}
	return modelOfGGUF(f), nil
}

// modelOfGGUF is the Model of a GGUF header: ggml's verdict as RefErr (its rule as the kind), the
// findings with their codes, the pairs as metadata and the tensor infos as tensors in canon's terms.
func modelOfGGUF(f *gguf.File) *Model {
	m := &Model{Name: f.Name, Format: FormatGGUF, FileSize: f.Size, Detail: f, HeaderParsed: f.DataOffset >= 0}
	if f.DataOffset >= 0 {
		m.HeaderLen = uint64(f.DataOffset)
	} else {
		m.HeaderLen = uint64(max(f.HeaderEnd, 0))
	}
	if v := f.Verdict; v != nil {
		m.RefErr = &RefError{Kind: finding.RefKind(v.Rule), Message: v.Message, Offset: v.Offset}
	}
	dupTensors := false
	for _, fd := range f.Findings {
		m.add(fd)
		dupTensors = dupTensors || fd.Code == gguf.CodeDuplicateTensor
	}

	m.Metadata = make([]MetaEntry, 0, len(f.KVs))
	seen := make(map[string]bool, len(f.KVs))
	for i := range f.KVs {
		kv := &f.KVs[i]
		if seen[kv.Key] {
			continue
		}
		seen[kv.Key] = true
		e := MetaEntry{Key: kv.Key, Value: ggufValueText(kv.Value), Type: kv.Value.Type.String(), Offset: kv.Offset, Len: kv.Value.Len()}
		if a := kv.Value.Array; a != nil {
			e.Array = ggufArray{a}
		}
		if kv.Value.Truncated() {
			e.long = ggufString{f, &kv.Value}
		}
		m.Metadata = append(m.Metadata, e)
	}
	m.HasMetadata = len(m.Metadata) > 0

	// Every shape shares one allocation; a name seen before (llama.cpp rejects the file) is skipped.
	nDims := 0
	for i := range f.Tensors {
		nDims += len(f.Tensors[i].Dims)
	}
	shapes := make([]uint64, 0, nDims)
	var names map[string]bool
	if dupTensors {
		names = make(map[string]bool, len(f.Tensors))
	}
	m.Tensors = make([]tensor.Tensor, 0, len(f.Tensors))
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if names != nil {
			if names[ti.Name] {
				continue
			}
			names[ti.Name] = true
		}
		start := len(shapes)
		for k := len(ti.Dims) - 1; k >= 0; k-- {
			shapes = append(shapes, ti.Dims[k])
		}
		t := tensor.Tensor{Name: ti.Name, DType: tensor.OfGGML(ti.Type), Shape: shapes[start:len(shapes):len(shapes)],
			Begin: ti.Offset, End: ti.Offset, HeaderOffset: ti.HeaderOffset}
		if end, carry := bits.Add64(ti.Offset, ti.Size, 0); ti.SizeOK && carry == 0 {
			t.End = end
		}
		m.Tensors = append(m.Tensors, t)
	}
	return m
}

// maxListed is the longest array text listed element by element; longer arrays are summarised.
const maxListed = 200

// ggufValueText is a GGUF value as MetaEntry.Value shows it (see there).
func ggufValueText(v gguf.Value) string {
	a := v.Array
	if v.Type != gguf.ValArray || a == nil {
		return v.String()
	}
	kind := "[" + a.ElemType.String() + " × " + strconv.FormatUint(a.Len, 10)
	if a.Len == 0 {
		return kind + "]"
	}
	if a.Len == uint64(len(a.Head)) {
		var b strings.Builder
		b.WriteString(kind)
		b.WriteString(": ")
		for i, e := range a.Head {
			if i > 0 {
				b.WriteString(", ")
			}
			if s, isStr := e.Str(); isStr {
				b.WriteString(strconv.Quote(s))
			} else {
				b.WriteString(e.String())
			}
			if b.Len() > maxListed {
				break
			}
		}
		if b.Len() <= maxListed {
			b.WriteByte(']')
			return b.String()
		}
	}
	return kind + ", blake3 " + hex.EncodeToString(a.Digest[:8]) + "]"
}

// ggufArray is a GGUF array as a MetaArray.
type ggufArray struct{ a *gguf.Array }

// Elem is the elements' type (see MetaArray).
func (g ggufArray) Elem() string { return g.a.ElemType.String() }

// Len is the number of elements.
func (g ggufArray) Len() uint64 { return g.a.Len }

// Size is the elements' bytes in the file.
func (g ggufArray) Size() int64 { return g.a.Size }

// Digest is the BLAKE3 of the elements' bytes.
func (g ggufArray) Digest() [32]byte { return g.a.Digest }

// Each reads every element as text (see MetaArray).
func (g ggufArray) Each(fn func(i uint64, text string) error) error {
	return g.a.Each(func(i uint64, v gguf.Value) error {
		if s, ok := v.Str(); ok {
			return fn(i, s)
		}
		return fn(i, v.String())
	})
}

// ggufString is a GGUF string value longer than gguf.MaxInline.
type ggufString struct {
	f *gguf.File
	v *gguf.Value
}

// full reads it whole.
func (g ggufString) full() (string, error) { return g.f.FullString(*g.v) }
