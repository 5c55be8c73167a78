package values

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sync"
)

// The summary of a dtype whose codes are at most 16 bits wide (BF16, F16, the 8-, 6- and 4-bit
// formats, I8, U8, I16, U16, BOOL) counts how often each code occurs: one load and one increment
// per element, no float arithmetic. Every statistic then comes from the counts: the counts of NaN,
// Inf, zeros and subnormals by code, min and max from the extreme codes present, and the sums as
// Σ count·value over the codes present, in code order, groupLen codes at a time.

// groupLen is how many consecutive codes the binned summary visits as one group: a 16-bit code's
// group is code>>7, so that a chunk's finalisation visits only the groups it saw. 128 codes of BF16
// (7 mantissa bits) or F16 (10) share an exponent.
const groupLen = 128

// maxBinned is the most elements counted in one histogram (the counters are uint32, and a count times
// a value of at most 16 significant bits stays exact in a float64).
const maxBinned = 1 << 28

// bins is what the binned summary knows of a dtype: each code's value and, per group, whether the
// values of its codes are finite, non-zero, normal and evenly spaced (plainGroup summarises it).
type bins struct {
	vals  []float64
	plain []bool
}

func newBins(vals []float64, minNormal float64) *bins {
	b := &bins{vals: vals, plain: make([]bool, (len(vals)+groupLen-1)/groupLen)}
	for g := range b.plain {
		vs := vals[g*groupLen : min(len(vals), (g+1)*groupLen)]
		b.plain[g] = len(vs) == groupLen
		for i, v := range vs {
			if !isFinite(v) || v == 0 || math.Abs(v) < minNormal || v != vs[0]+float64(i)*(vs[1]-vs[0]) {
				b.plain[g] = false
			}
		}
	}
	return b
}

var (
	bf16Bins = sync.OnceValue(func() *bins { return newBins(bf16Table()[:], formats["BF16"].minNormal) })
	f16Bins  = sync.OnceValue(func() *bins { return newBins(f16Table()[:], formats["F16"].minNormal) })
	i16Bins  = sync.OnceValue(func() *bins { return intBins(func(c int) float64 { return float64(int16(c)) }) })
	u16Bins  = sync.OnceValue(func() *bins { return intBins(func(c int) float64 { return float64(c) }) })
	// tableBins holds the bins of the formats decoded through their 256-entry table.
	tableBins sync.Map // *format → *bins
)

func intBins(v func(c int) float64) *bins {
	t := make([]float64, 1<<16)
	for c := range t {
		t[c] = v(c)
	}
	return newBins(t, 0)
}

// bins returns the format's bins, nil when its codes are wider than 16 bits.
func (f *format) bins() *bins {
	switch f.kind {
	case kBF16:
		return bf16Bins()
	case kF16:
		return f16Bins()
	case kI16:
		return i16Bins()
	case kU16:
		return u16Bins()
	case kTable, kF4, kF6:
		if b, ok := tableBins.Load(f); ok {
			return b.(*bins)
		}
		n := map[kind]int{kTable: 256, kF4: 16, kF6: 64}[f.kind]
		b, _ := tableBins.LoadOrStore(f, newBins(f.table[:n], f.minNormal))
		return b.(*bins)
	}
	return nil
}

// histogram is the counts of a binned summary, all zero between uses: the finalisation clears what
// the counting set.
type histogram struct {
	n    [1 << 16]uint32
	seen [1 << 16 / groupLen]bool // the groups of 16-bit codes present, when marked
}

// count counts the codes of the elements of b (whole elements, at most maxBinned) into h. It returns
// how many bins there are and which groups of codes to visit: for 16-bit codes, those whose low 15
// bits lie in [lo, hi] (in both halves of the code space), bounds taken from the AND and the OR of
// every code (a code holds all the bits of the AND and none outside the OR); groups 0 and 256, which
// hold the codes whose low 15 bits are zero, are always visited. Narrower codes have all their
// groups visited.
func (f *format) count(h *histogram, b []byte) (bins, lo, hi int) {
	n := &h.n
	switch f.kind {
	case kBF16, kF16, kI16, kU16:
		and, or := ^uint64(0), uint64(0) // of four codes at a time: cheaper than a min and a max
		i := 0
		for ; i+8 <= len(b); i += 8 {
			w := binary.LittleEndian.Uint64(b[i:])
			n[uint16(w)]++
			n[uint16(w>>16)]++
			n[uint16(w>>32)]++
			n[uint16(w>>48)]++
			and &= w
			or |= w
		}
		for ; i+2 <= len(b); i += 2 {
			c := binary.LittleEndian.Uint16(b[i:])
			n[c]++
			and &= uint64(c) | ^uint64(0xFFFF)
			or |= uint64(c)
		}
		and &= and >> 32
		and &= and >> 16
		or |= or >> 32
		or |= or >> 16
		return 1 << 16, int(and & 0x7FFF), int(or & 0x7FFF)
	case kTable:
		countBytes(n, b)
		return 256, 0, 0
	case kF4:
		countBytes(n, b)
		var nib [16]uint32
		for c := range 256 {
			nib[c&15] += n[c]
			nib[c>>4] += n[c]
		}
		clear(n[:256])
		copy(n[:16], nib[:])
		return 16, 0, 0
	case kF6:
		// Four histograms, one per position in the group: a run of one code does not make a chain
		// of increments of one counter.
		for i := 0; i+3 <= len(b); i += 3 {
			w := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16
			n[w&63]++
			n[64+w>>6&63]++
			n[128+w>>12&63]++
			n[192+w>>18]++
		}
		fold(n, 64, 4)
		return 64, 0, 0
	}
	panic("values: count of a dtype wider than 16 bits")
}

// countBytes counts the bytes of b into n[:256], through four histograms (n[:1024]), so that a run of
// one byte does not make a chain of increments of one counter.
func countBytes(n *[1 << 16]uint32, b []byte) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		n[uint8(w)]++
		n[256+uint(uint8(w>>8))]++
		n[512+uint(uint8(w>>16))]++
		n[768+uint(uint8(w>>24))]++
		n[uint8(w>>32)]++
		n[256+uint(uint8(w>>40))]++
		n[512+uint(uint8(w>>48))]++
		n[768+uint(w>>56)]++
	}
	for ; i < len(b); i++ {
		n[b[i]]++
	}
	fold(n, 256, 4)
}

// fold adds the k histograms of w bins at the start of n into the first one, and clears the others.
func fold(n *[1 << 16]uint32, w, k int) {
	for j := 1; j < k; j++ {
		for c := range w {
			n[c] += n[j*w+c]
		}
	}
	clear(n[w : k*w])
}

// addBinned summarises b (whole elements, at most maxBinned) by counting its codes, and merges the
// result into s. Each group of codes present is summarised on its own (count, sum, sum of squares,
// squared deviations from its mean), the groups merged in code order with Chan's update.
func (s *Summary) addBinned(bn *bins, h *histogram, b []byte) {
	nb, lo, hi := s.f.count(h, b)
	q := Summary{f: s.f, min: math.Inf(1), max: math.Inf(-1)}
	visit := func(g int) {
		cs, vs := h.n[g*groupLen:min(nb, (g+1)*groupLen)], bn.vals[g*groupLen:min(nb, (g+1)*groupLen)]
		var p part
		if bn.plain[g] {
			p = plainGroup((*[groupLen]uint32)(cs), (*[groupLen]float64)(vs))
		} else {
			p = q.mixedGroup(cs, vs)
		}
		if p.n > 0 || !bn.plain[g] { // a mixed group may have held NaN and Inf only
			q.addPart(p)
			clear(cs)
		}
	}
	if nb <= 256 {
		for g := range (nb + groupLen - 1) / groupLen {
			visit(g)
		}
	} else {
		// An input of fewer elements than there are codes between the bounds marks the groups it
		// holds: a second pass over the input costs less than visiting every group between them.
		marked := 2*(hi/groupLen-lo/groupLen+1)*groupLen > len(b)/2
		if marked {
			mark(&h.seen, b)
		}
		for _, half := range [2]int{0, 1 << 15 / groupLen} { // in code order
			for r := 0; r <= hi/groupLen; r = max(r+1, lo/groupLen) {
				if g := half + r; !marked || h.seen[g] {
					h.seen[g] = false
					visit(g)
				}
			}
		}
	}
	q.n = q.finite + q.nan + q.inf
	s.Merge(&q)
}

// mark sets seen[g] for the group g of every 16-bit code in b.
func mark(seen *[1 << 16 / groupLen]bool, b []byte) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		seen[uint16(w)>>7] = true
		seen[uint16(w>>16)>>7] = true
		seen[uint16(w>>32)>>7] = true
		seen[w>>55] = true
	}
	for ; i+2 <= len(b); i += 2 {
		seen[binary.LittleEndian.Uint16(b[i:])>>7] = true
	}
}

// plainGroup summarises the counts of a group of codes whose values are finite, normal, non-zero and
// evenly spaced, v_i = v_f + (i−f)·d (the codes of one exponent, or integers), from integer moments
// about the first code present f: n = Σc_i, t1 = Σc_i·(i−f), t2 = Σc_i·(i−f)² (exact: Σc_i ≤
// maxBinned), so that the sum is n·v_f + d·t1 and the squared deviations d²·(n·t2 − t1²)/n, taken in
// 128-bit integers.
func plainGroup(cs *[groupLen]uint32, vs *[groupLen]float64) part {
	// The first and last codes present, found four counts at a time (many groups visited are empty).
	first, last := 0, groupLen-4
	for first < groupLen && cs[first]|cs[first+1]|cs[first+2]|cs[first+3] == 0 {
		first += 4
	}
	if first == groupLen {
		return part{}
	}
	for cs[first] == 0 {
		first++
	}
	for cs[last]|cs[last+1]|cs[last+2]|cs[last+3] == 0 {
		last -= 4
	}
	for last += 3; cs[last] == 0; last-- {
	}
	// Running sums from the last code down, additions only: after code i, a = Σ_{j≥i} c_j·(j−i+1)
	// and b = Σ_{j≥i} c_j·(j−i+1)(j−i+2)/2; at i = f, a = t1 + n and b = (t2 + 3·t1 + 2n)/2.
	var n, a, b uint64
	i := last
	for ; i > first; i -= 2 { // two codes at a time: shorter chains of dependent additions
		c1, c0 := uint64(cs[i]), uint64(cs[i-1])
		b += 2*a + 3*n + 3*c1 + c0
		a += 2*n + 2*c1 + c0
		n += c1 + c0
	}
	if i == first {
		n += uint64(cs[i])
		a += n
		b += a
	}
	t1 := a - n
	t2 := 2*b - 3*t1 - 2*n
	p := part{n: int64(n)}
	p.min, p.max = min(vs[first], vs[last]), max(vs[first], vs[last])
	v0, d, fn, f1 := vs[first], vs[1]-vs[0], float64(n), float64(t1)
	p.sum = fn*v0 + d*f1
	// Within an exponent's codes v0 and d have one sign: no cancellation. In a group of negative
	// integers they do not, but the terms are small integers (exact) or the cancellation is bounded
	// (the group spans 128 codes far from zero).
	p.sumsq = fn*v0*v0 + 2*v0*d*f1 + d*d*float64(t2)
	hi, lo := bits.Mul64(n, t2)
	h1, l1 := bits.Mul64(t1, t1)
	lo, borrow := bits.Sub64(lo, l1, 0)
	hi, _ = bits.Sub64(hi, h1, borrow) // n·t2 ≥ t1² (Cauchy–Schwarz)
	p.m2 = d * d * ((float64(hi)*0x1p64 + float64(lo)) / fn)
	return p
}

// mixedGroup summarises the counts of any other group of codes: it counts NaN and Inf into q and
// returns the part of the finite values.
func (q *Summary) mixedGroup(cs []uint32, vs []float64) part {
	p := part{min: math.Inf(1), max: math.Inf(-1)}
	vs = vs[:len(cs)]
	for i, c := range cs {
		if c == 0 {
			continue
		}
		v, k := vs[i], int64(c)
		switch {
		case v != v:
			q.nan += k
		case !isFinite(v):
			q.inf += k
		default:
			p.n += k
			if v == 0 {
				p.zeros += k
			} else if math.Abs(v) < q.f.minNormal {
				p.small += k
			}
			x := float64(c) * v
			p.sum += x
			p.sumsq += x * v
			p.min, p.max = min(p.min, v), max(p.max, v)
		}
	}
	if p.n == 0 {
		return p
	}
	mean := p.sum / float64(p.n)
	for i, c := range cs {
		if v := vs[i]; c != 0 && isFinite(v) {
			d := v - mean
			p.m2 += float64(c) * d * d
		}
	}
	return p
}
