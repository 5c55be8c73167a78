package canon

import (
	"encoding/hex"

	"github.com/zeebo/blake3"
)

// ID prefixes name the kind and the version of the canonical form an ID hashes.
const (
	StructurePrefix = "st1:"
	ContentPrefix   = "ct1:"
)

// StructureID is the BLAKE3-256 of the model's canonical structure form (Canonical), as "st1:" and 64
// hex digits. It ignores metadata, tensor order, offsets, padding and JSON formatting, and changes with
// any name, dtype, shape or tensor count. This is the one place it is computed: package hash and
// snapshots use it.
func StructureID(m *Model) string {
	sum := blake3.Sum256(Canonical(m))
	return StructurePrefix + hex.EncodeToString(sum[:])
}

// ContentID is the BLAKE3-256 of the canonical content form (CanonicalContent), as "ct1:" and 64 hex
// digits. digests[i] is the BLAKE3-256 of m.Tensors[i]'s bytes. It survives metadata edits and
// re-ordering but not a single changed tensor byte.
func ContentID(m *Model, digests [][32]byte) string {
	sum := blake3.Sum256(CanonicalContent(m, digests))
	return ContentPrefix + hex.EncodeToString(sum[:])
}
