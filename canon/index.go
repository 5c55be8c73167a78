package canon

import (
	"hash/maphash"

	"github.com/stdiff/stdiff/canon/tensor"
)

// NameIndex finds tensors by name. It holds hashes' slots and indices only, so indexing 50,000 tensors
// costs a fraction of a map of strings. Build it with NewNameIndex; it is read-only afterwards.
type NameIndex struct {
	ts    []tensor.Tensor
	slots []uint64 // high 32 bits: the name's hash; low 32: index + 1; 0 is empty
	seed  maphash.Seed
}

// NewNameIndex indexes ts by name. With duplicate names, Find returns the last.
func NewNameIndex(ts []tensor.Tensor) *NameIndex {
	size := 1
	for size < 2*len(ts) {
		size <<= 1
	}
	x := &NameIndex{ts: ts, slots: make([]uint64, size), seed: maphash.MakeSeed()}
	for i := range ts {
		k, tag := x.slot(ts[i].Name)
		x.slots[k] = tag | uint64(i+1)
	}
	return x
}

// slot is where name is, or the empty slot where it would go, and the hash tag stored with it. Names
// are compared only when their tags are equal, so a look-up rarely touches other tensors.
func (x *NameIndex) slot(name string) (k, tag uint64) {
	h := maphash.String(x.seed, name)
	tag = h &^ (1<<32 - 1)
	mask := uint64(len(x.slots) - 1)
	for k = h & mask; ; k = (k + 1) & mask {
		s := x.slots[k]
		if s == 0 || (s&^(1<<32-1) == tag && x.ts[int(uint32(s))-1].Name == name) {
			return k, tag
		}
	}
}

// Find returns the index of the tensor with the given name.
func (x *NameIndex) Find(name string) (int, bool) {
	if len(x.ts) == 0 {
		return 0, false
	}
	k, _ := x.slot(name)
	j := int(uint32(x.slots[k])) - 1
	return j, j >= 0
}
