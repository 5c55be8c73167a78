package canon

import (
	"bytes"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
)

// The canonical form is what structure and content IDs hash. It is specified byte for byte in the
// README (section "Identities") so anyone can recompute an ID with a short script; change it only with a
// new version number.
//
// Version 1, structure: the line "stdiff-structure/1\n", then one line per tensor, tensors sorted by the
// bytes of their names:
//
//	<byte length of name>:<name> <dtype in lower case> [<dim>,<dim>,…] <byte length>\n
//
// Version 1, content: the line "stdiff-content/1\n", then the same tensor lines, each with
// " <BLAKE3-256 of the tensor's bytes, 64 lower-case hex digits>" before the newline.
const (
	CanonicalStructureV1 = "stdiff-structure/1\n"
	CanonicalContentV1   = "stdiff-content/1\n"
)

// CanonicalOrder returns the indices of m.Tensors sorted by name bytes: the order of the canonical form.
func CanonicalOrder(m *Model) []int {
	idx := make([]int, len(m.Tensors))
	sorted := true
	for i := range idx {
		idx[i] = i
		if i > 0 && m.Tensors[i-1].Name > m.Tensors[i].Name {
			sorted = false
		}
	}
	if !sorted {
		sort.Slice(idx, func(a, b int) bool { return m.Tensors[idx[a]].Name < m.Tensors[idx[b]].Name })
	}
	return idx
}

// Canonical returns the canonical structure form of m (version 1).
func Canonical(m *Model) []byte {
	return canonical(m, CanonicalStructureV1, nil)
}

// CanonicalContent returns the canonical content form: digests[i] is the BLAKE3-256 of m.Tensors[i]'s bytes.
func CanonicalContent(m *Model, digests [][32]byte) []byte {
	return canonical(m, CanonicalContentV1, digests)
}

func canonical(m *Model, version string, digests [][32]byte) []byte {
	var b bytes.Buffer
	b.Grow(len(version) + len(m.Tensors)*(80+65*boolInt(digests != nil)))
	b.WriteString(version)
	var num []byte
	for _, i := range CanonicalOrder(m) {
		t := &m.Tensors[i]
		num = strconv.AppendInt(num[:0], int64(len(t.Name)), 10)
		b.Write(num)
		b.WriteByte(':')
		b.WriteString(t.Name)
		b.WriteByte(' ')
		b.WriteString(strings.ToLower(string(t.DType)))
		b.WriteString(" [")
		for k, d := range t.Shape {
			if k > 0 {
				b.WriteByte(',')
			}
			b.Write(strconv.AppendUint(num[:0], d, 10))
		}
		b.WriteString("] ")
		b.Write(strconv.AppendUint(num[:0], t.Len(), 10))
		if digests != nil {
			b.WriteByte(' ')
			var h [64]byte
			hex.Encode(h[:], digests[i][:])
			b.Write(h[:])
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
