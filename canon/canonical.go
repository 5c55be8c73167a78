package canon

import (
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// The canonical form is what structure and content IDs hash. It is specified byte for byte, once, in
// cmd/stdiff/docs/identities.md, so anyone can recompute an ID with a short script; change it only with
// a new version number.
//
// Version 1, structure: the line "stdiff-structure/1\n", then one line per tensor, tensors sorted by the
// bytes of their names:
//
//	<byte length of name>:<name> <dtype in lower case> [<dim>,<dim>,…] <byte length>\n
//
// Version 1, content: the line "stdiff-content/1\n", then the same tensor lines, each with
// " <BLAKE3-256 of the tensor's bytes, 64 lower-case hex digits>" before the newline.
//
// GGUF models have their own first lines, "stdiff-structure-gguf/1\n" and "stdiff-content-gguf/1\n",
// so that a GGUF file and a safetensors file never share an ID; their tensor lines are written the same
// way: the dtype is ggml's type name in lower case (q4_k, iq2_xxs, f16), the shape is row-major
// (ggml's ne order reversed, as safetensors writes shapes), and the byte length is ggml's size of the
// tensor, without the padding that follows it in the file.
const (
	CanonicalStructureV1     = "stdiff-structure/1\n"
	CanonicalContentV1       = "stdiff-content/1\n"
	CanonicalStructureGGUFV1 = "stdiff-structure-gguf/1\n"
	CanonicalContentGGUFV1   = "stdiff-content-gguf/1\n"
)

// CanonicalOrder returns the indices of m.Tensors sorted by name bytes: the order of the canonical form.
// The result is computed once per model and shared: do not modify it. Like the rest of a Model, it is
// not safe for concurrent first use.
func CanonicalOrder(m *Model) []int {
	if len(m.canonicalOrder) == len(m.Tensors) && m.canonicalOrder != nil {
		return m.canonicalOrder
	}
	idx := make([]int, len(m.Tensors))
	sorted := true
	for i := range idx {
		idx[i] = i
		if i > 0 && m.Tensors[i-1].Name > m.Tensors[i].Name {
			sorted = false
		}
	}
	if !sorted {
		slices.SortFunc(idx, func(a, b int) int { return strings.Compare(m.Tensors[a].Name, m.Tensors[b].Name) })
	}
	m.canonicalOrder = idx
	return idx
}

// Canonical returns the canonical structure form of m (version 1; GGUF's for a GGUF model).
func Canonical(m *Model) []byte {
	if m.Format == FormatGGUF {
		return canonical(m, CanonicalStructureGGUFV1, nil)
	}
	return canonical(m, CanonicalStructureV1, nil)
}

// CanonicalContent returns the canonical content form: digests[i] is the BLAKE3-256 of m.Tensors[i]'s bytes.
func CanonicalContent(m *Model, digests [][32]byte) []byte {
	if m.Format == FormatGGUF {
		return canonical(m, CanonicalContentGGUFV1, digests)
	}
	return canonical(m, CanonicalContentV1, digests)
}

func canonical(m *Model, version string, digests [][32]byte) []byte {
	size := len(version)
	for i := range m.Tensors {
		size += len(m.Tensors[i].Name) + 40 + 8*len(m.Tensors[i].Shape) + 65*boolInt(digests != nil)
	}
	b := make([]byte, 0, size)
	b = append(b, version...)
	for _, i := range CanonicalOrder(m) {
		t := &m.Tensors[i]
		b = strconv.AppendInt(b, int64(len(t.Name)), 10)
		b = append(b, ':')
		b = append(b, t.Name...)
		b = append(b, ' ')
		b = append(b, t.DType.Lower()...)
		b = append(b, " ["...)
		for k, d := range t.Shape {
			if k > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendUint(b, d, 10)
		}
		b = append(b, "] "...)
		b = strconv.AppendUint(b, t.Len(), 10)
		if digests != nil {
			b = append(b, ' ')
			b = hex.AppendEncode(b, digests[i][:])
		}
		b = append(b, '\n')
	}
	return b
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
