package dupes

import (
	"math/bits"
	"unsafe"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/hash/dupes/derived"
)

// The scan groups models by keys it can work out from a header without building a canon.Model (see
// skim): multiset hashes, which do not depend on the order of the tensors, so that no sort is needed.
// They only choose which models to compare; every group is confirmed by reading the models.

// mix is a 64-bit finaliser (SplitMix64's): every input bit changes about half the output bits.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// hashBytes is a fast 64-bit hash of b: a multiply-rotate step per eight bytes, then mix.
func hashBytes(b []byte) uint64 { return derived.HashBytes(b) }

// hashString is hashBytes of s's bytes.
func hashString(s string) uint64 { return hashBytes(unsafe.Slice(unsafe.StringData(s), len(s))) }

// pair is a 128-bit multiset hash: the sum of two independent 64-bit hashes of each element.
type pair [2]uint64

func (p *pair) add(e uint64) {
	p[0] += e
	p[1] += mix(e ^ 0xc2b2ae3d27d4eb4f)
}

// sampleTensors and sampleBytes bound a sample: a few KiB from each of up to 8 tensors.
const (
	sampleTensors = 8
	sampleBytes   = 4 << 10
)

// pick is a tensor a sample may read: its name's hash and its bytes (relative to the data section).
type pick struct{ h, begin, end uint64 }

// picks are the up to sampleTensors tensors with the smallest name hashes: the same tensors in two
// models with the same names, whatever their order and layout.
type picks struct {
	n     int
	worst int // the index of the largest hash once full
	p     [sampleTensors]pick
}

func (s *picks) offer(h, begin, end uint64) {
	switch {
	case s.n < sampleTensors:
		s.p[s.n] = pick{h, begin, end}
		s.n++
		if s.n < sampleTensors {
			return
		}
	case h < s.p[s.worst].h:
		s.p[s.worst] = pick{h, begin, end}
	default:
		return
	}
	for i := range s.p {
		if s.p[i].h > s.p[s.worst].h {
			s.worst = i
		}
	}
}

// ranges are the byte ranges the sample reads, relative to the data section, in name-hash order: the
// start and the middle of each tensor (a small one whole).
func (s *picks) ranges() [][2]uint64 {
	ps := s.p[:s.n]
	for i := 1; i < len(ps); i++ { // insertion sort: at most 16
		for j := i; j > 0 && ps[j].h < ps[j-1].h; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
	var out [][2]uint64
	for _, p := range ps {
		switch n := p.end - p.begin; {
		case n == 0:
		case n <= 2*sampleBytes:
			out = append(out, [2]uint64{p.begin, n})
		default:
			out = append(out, [2]uint64{p.begin, sampleBytes}, [2]uint64{p.begin + n/2, sampleBytes})
		}
	}
	return out
}

// keys are what the scan groups a model by, worked out from its header.
type keys struct {
	// structure is a multiset hash of the tensors' (name, dtype, shape), with their number and the
	// data length: models with the same tensors have the same.
	structure pair
	// shapes is a multiset hash of the (dtype, shape) of the tensors of more than one element: models
	// with the same tensors under other names have the same (renamed copies).
	shapes pair
	// layout is a hash of where each tensor is: models of one structure with the same layout have
	// their tensors at the same offsets.
	layout  uint64
	tensors int
	// metaKeys is the number of metadata entries.
	metaKeys int
	dataLen  int64
	sample   picks
	// collect, when set, receives every tensor entry (skim's light models), their shapes in arena.
	collect *[]tensor.Tensor
	arena   arena
}

// arena holds many small shapes in few allocations.
type arena struct{ buf []uint64 }

// clone copies s into the arena.
func (a *arena) clone(s []uint64) []uint64 {
	if len(a.buf)+len(s) > cap(a.buf) {
		a.buf = make([]uint64, 0, max(4096, len(s)))
	}
	n := len(a.buf)
	a.buf = append(a.buf, s...)
	return a.buf[n:len(a.buf):len(a.buf)]
}

// shapeHash hashes a dtype and a shape.
func shapeHash(dtype uint64, shape []uint64) uint64 {
	h := dtype ^ uint64(len(shape))
	for _, d := range shape {
		h = bits.RotateLeft64((h^d)*0x9fb21c651e98df25, 29)
	}
	return h
}

// add counts one tensor.
func (k *keys) add(name, dtype uint64, shape []uint64, begin, end uint64) {
	sh := shapeHash(dtype, shape)
	k.structure.add(mix(name ^ sh*0x2545f4914f6cdd1d))
	if numel(shape) > 1 {
		k.shapes.add(mix(sh))
	}
	k.layout += mix(name ^ begin*0x9e3779b97f4a7c15 ^ end*0xc2b2ae3d27d4eb4f)
	k.tensors++
	k.sample.offer(name, begin, end)
}

// numel is the number of elements of shape, capped (only "more than one" matters).
func numel(shape []uint64) uint64 {
	n := uint64(1)
	for _, d := range shape {
		if d > 1<<20 {
			d = 1 << 20
		}
		n = min(n*d, 1<<40)
	}
	return n
}

// finish folds the tensor count and the data length into the structure key.
func (k *keys) finish() {
	k.structure.add(mix(uint64(k.tensors)^0x165667b19e3779f9) ^ mix(uint64(k.dataLen)))
}

// keysOf works out a model's keys from its canon.Model (models the skim does not read: sets, GGUF,
// headers it is unsure of): the same keys the skim gives for the same header.
func keysOf(m *canon.Model) keys {
	k := keys{metaKeys: len(m.Metadata), dataLen: dataLenOf(m)}
	for i := range m.Tensors {
		t := &m.Tensors[i]
		k.add(hashString(t.Name), hashString(string(t.DType)), t.Shape, t.Begin, t.End)
	}
	k.finish()
	return k
}
