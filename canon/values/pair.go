package values

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/stdiff/stdiff/canon"
)

// Tolerance is numpy.isclose's: elements a and b are close when |a−b| ≤ Atol + Rtol·|b| (b is the
// second side). Two NaNs are close only with EqualNaN; an infinity is close only to the same infinity.
// The zero Tolerance asks for equal values.
type Tolerance struct {
	Atol, Rtol float64
	EqualNaN   bool
}

// Diff is the comparison of two tensors with the same number of elements, element by element in
// flat (row-major) order. Side a is the old tensor, side b the new one.
//
// MaxAbsDiff, MaxAbsDiffIndex, MeanAbsDiff, RelL2 and Cosine cover the pairs where both elements are
// finite; the NaN and Inf counts say how many are not. A float field that is undefined (no finite pair,
// a zero norm) is NaN, and null in JSON.
type Diff struct {
	// Count is the number of elements on each side.
	Count int64 `json:"count"`
	// Differing counts elements whose values differ (a NaN equals a NaN here, +0 equals −0; I64 and
	// U64 compare exactly); DiffFraction is Differing / Count (0 for no elements).
	Differing    int64   `json:"differing"`
	DiffFraction float64 `json:"diff_fraction"`
	// MaxAbsDiff is the largest |a−b| (for C64 the modulus of the complex difference) and
	// MaxAbsDiffIndex the flat index of its first occurrence, −1 when no finite pair differs.
	MaxAbsDiff      float64 `json:"max_abs_diff"`
	MaxAbsDiffIndex int64   `json:"max_abs_diff_index"`
	// MeanAbsDiff is the mean |a−b| over finite pairs.
	MeanAbsDiff float64 `json:"mean_abs_diff"`
	// RelL2 is ‖a−b‖ / ‖a‖ (0 when both norms are 0, NaN when only ‖a‖ is or no pair is finite).
	RelL2 float64 `json:"rel_l2"`
	// Cosine is the cosine similarity ⟨a,b⟩ / (‖a‖·‖b‖), clamped to [−1, 1]; NaN when a norm is 0.
	// For C64 ⟨a,b⟩ is Re(Σ a·conj(b)), the tensors taken as real vectors of twice the length.
	Cosine float64 `json:"cosine"`
	// NaN and Inf counts on each side (C64: an element with a NaN part is NaN, else one with an
	// infinite part is Inf).
	NaNA int64 `json:"nan_a"`
	NaNB int64 `json:"nan_b"`
	InfA int64 `json:"inf_a"`
	InfB int64 `json:"inf_b"`
	// OutsideTolerance counts elements that are not close under the Tolerance; WithinTolerance is
	// true when there are none.
	OutsideTolerance int64 `json:"outside_tolerance"`
	WithinTolerance  bool  `json:"within_tolerance"`
	// ExactRounding and Rounding are set when both dtypes are floats and differ (C64 excluded):
	// whether the narrower side is exactly the round-to-nearest-even conversion of the wider one.
	ExactRounding *bool     `json:"exact_rounding,omitempty"`
	Rounding      *Rounding `json:"rounding,omitempty"`
}

// Rounding says how far the narrower side of a pair is from the round-to-nearest-even conversion of
// the wider side (wider: more bits; with equal widths, a is the source).
type Rounding struct {
	// From is the wider dtype, To the narrower one; Narrow is "a" or "b", the side that holds To.
	From   canon.DType `json:"from"`
	To     canon.DType `json:"to"`
	Narrow string      `json:"narrow"`
	// Mismatches counts elements that are not the conversion (any NaN matches any NaN; −0 and +0
	// differ). FirstMismatch is the flat index of the first, −1 when there is none.
	Mismatches    int64 `json:"mismatches"`
	FirstMismatch int64 `json:"first_mismatch_index"`
	// Saturated counts finite elements beyond the narrow format's range, where the conversion gives
	// Inf or NaN, held as ±max instead (clamped before the cast): they are not mismatches.
	Saturated int64 `json:"saturated"`
	// MaxULP is the largest distance, in steps of the narrow format, between a mismatching element and
	// the conversion (elements where either is NaN left out); MaxAbsDeviation the largest absolute
	// difference of their values (infinite ones left out).
	MaxULP          int64   `json:"max_ulp"`
	MaxAbsDeviation float64 `json:"max_abs_deviation"`
}

// MarshalJSON writes undefined (non-finite) float fields as null.
func (d Diff) MarshalJSON() ([]byte, error) {
	type plain Diff
	return json.Marshal(struct {
		plain
		MaxAbsDiff  *float64 `json:"max_abs_diff"`
		MeanAbsDiff *float64 `json:"mean_abs_diff"`
		RelL2       *float64 `json:"rel_l2"`
		Cosine      *float64 `json:"cosine"`
	}{plain(d), num(d.MaxAbsDiff), num(d.MeanAbsDiff), num(d.RelL2), num(d.Cosine)})
}

func num(x float64) *float64 {
	if !isFinite(x) {
		return nil
	}
	return &x
}

// PairStats accumulates a Diff over two tensors fed chunk by chunk, in order. The zero value is not
// usable; make one with NewPairStats. A PairStats is not safe for concurrent use: give each goroutine
// its own, one per chunk, and Merge them in chunk order (CompareTensors does this).
type PairStats struct {
	fa, fb *format
	tol    Tolerance

	n, finite, differ, outside int64
	nanA, nanB, infA, infB     int64
	maxAbs                     float64
	maxIdx                     int64
	sAbs, sD2, sA2, sB2, sAB   ksum

	rawDiffer bool        // I64/U64 on both sides: count differing elements on the bytes
	round     *roundCheck // nil unless both dtypes are floats and differ
	buf       *scratch
}

// scratch holds one block of decoded values; allocated on the first Add.
type scratch struct {
	a, b, ai, bi [blockLen]float64
	codes        [blockLen]uint32
}

// NewPairStats returns an empty accumulator for tensors of dtypes a and b (possibly different)
// compared under tol.
func NewPairStats(a, b canon.DType, tol Tolerance) (*PairStats, error) {
	if !(tol.Atol >= 0 && tol.Rtol >= 0 && isFinite(tol.Atol) && isFinite(tol.Rtol)) {
		return nil, fmt.Errorf("%w: atol %g and rtol %g must be finite and not negative", ErrTolerance, tol.Atol, tol.Rtol)
	}
	fa, err := lookup(a)
	if err != nil {
		return nil, err
	}
	fb, err := lookup(b)
	if err != nil {
		return nil, err
	}
	p := &PairStats{fa: fa, fb: fb, tol: tol, maxIdx: -1}
	p.rawDiffer = fa == fb && (fa.kind == kI64 || fa.kind == kU64)
	if a != b && IsFloat(a) && IsFloat(b) {
		r := &roundCheck{wide: fa, narrow: fb, first: -1}
		if fb.bits > fa.bits {
			r.wide, r.narrow, r.narrowIsA = fb, fa, true
		}
		r.viaF32 = r.wide.kind == kF64 && r.narrow.bits < 32
		p.round = r
	}
	return p, nil
}

// Len returns the number of element pairs added so far.
func (p *PairStats) Len() int64 { return p.n }

// Add feeds the next elements of both tensors: a and b must hold the same number of whole elements
// (F6: multiples of 3 bytes). Elements are indexed in the order they are added.
func (p *PairStats) Add(a, b []byte) error {
	na, err := p.fa.elements(int64(len(a)))
	if err != nil {
		return err
	}
	nb, err := p.fb.elements(int64(len(b)))
	if err != nil {
		return err
	}
	if na != nb {
		return fmt.Errorf("%w: %d %s elements against %d %s elements", ErrLength, na, p.fa.dt, nb, p.fb.dt)
	}
	if p.buf == nil {
		p.buf = new(scratch)
	}
	s := p.buf
	cplx := p.fa.kind == kC64 || p.fb.kind == kC64
	n := int(na)
	for off := 0; off < n; off += blockLen {
		k := min(blockLen, n-off)
		ab := a[p.fa.byteLen(off):p.fa.byteLen(off+k)]
		bb := b[p.fb.byteLen(off):p.fb.byteLen(off+k)]
		if cplx {
			p.fa.decodeComplex(s.a[:k], s.ai[:k], ab)
			p.fb.decodeComplex(s.b[:k], s.bi[:k], bb)
			p.complexBlock(s.a[:k], s.ai[:k], s.b[:k], s.bi[:k])
			continue
		}
		p.fa.decode(s.a[:k], ab)
		p.fb.decode(s.b[:k], bb)
		if r := p.round; r != nil {
			if r.narrowIsA {
				r.block(p.n, s.b[:k], s.a[:k], ab, s.codes[:k])
			} else {
				r.block(p.n, s.a[:k], s.b[:k], bb, s.codes[:k])
			}
		}
		if p.rawDiffer {
			p.differ += int64(differingWords(ab, bb))
		}
		p.realBlock(s.a[:k], s.b[:k])
	}
	return nil
}

func differingWords(a, b []byte) int {
	b = b[:len(a)]
	d := 0
	for i := 0; i+8 <= len(a); i += 8 {
		d += b2i(binary.LittleEndian.Uint64(a[i:]) != binary.LittleEndian.Uint64(b[i:]))
	}
	return d
}

// realBlock accumulates one block of real pairs. The fast loop assumes every element is finite and
// checks afterwards: any NaN or Inf makes a square sum non-finite, and the block is redone by the
// careful loop. The index of a new maximum and the tolerance count take their own passes, which most
// blocks skip.
func (p *PairStats) realBlock(a, b []float64) {
	b = b[:len(a)]
	var sAbs, sD2, sA2, sB2, sAB float64
	var differ int
	mx := 0.0
	for i, x := range a {
		y := b[i]
		d := x - y
		ad := math.Abs(d)
		sAbs += ad
		sD2 += d * d
		sA2 += x * x
		sB2 += y * y
		sAB += x * y
		differ += b2i(ad > 0)
		if ad > mx {
			mx = ad
		}
	}
	if !isFinite(sA2 + sB2 + sD2) {
		p.slowBlock(a, nil, b, nil)
		return
	}
	p.sAbs.add(sAbs)
	p.sD2.add(sD2)
	p.sA2.add(sA2)
	p.sB2.add(sB2)
	p.sAB.add(sAB)
	if !p.rawDiffer {
		p.differ += int64(differ)
	}
	if mx > p.maxAbs {
		for i, x := range a {
			if math.Abs(x-b[i]) == mx {
				p.maxAbs, p.maxIdx = mx, p.n+int64(i)
				break
			}
		}
	}
	atol, rtol := p.tol.Atol, p.tol.Rtol
	switch {
	case atol == 0 && rtol == 0:
		p.outside += int64(differ)
	case mx > atol:
		outside := 0
		for i, x := range a {
			y := b[i]
			outside += b2i(math.Abs(x-y) > atol+rtol*math.Abs(y))
		}
		p.outside += int64(outside)
	}
	p.n += int64(len(a))
	p.finite += int64(len(a))
}

// complexBlock is realBlock for complex pairs (either side C64, the other's imaginary parts zero).
func (p *PairStats) complexBlock(ar, ai, br, bi []float64) {
	ai, br, bi = ai[:len(ar)], br[:len(ar)], bi[:len(ar)]
	atol, rtol := p.tol.Atol, p.tol.Rtol
	var sAbs, sD2, sA2, sB2, sAB float64
	var differ, outside int
	mx, mi := p.maxAbs, -1
	for i, xr := range ar {
		xi, yr, yi := ai[i], br[i], bi[i]
		dr, di := xr-yr, xi-yi
		d2 := dr*dr + di*di
		ad := math.Sqrt(d2)
		b2 := yr*yr + yi*yi
		sAbs += ad
		sD2 += d2
		sA2 += xr*xr + xi*xi
		sB2 += b2
		sAB += xr*yr + xi*yi
		differ += b2i(dr != 0 || di != 0)
		outside += b2i(ad > atol+rtol*math.Sqrt(b2))
		if ad > mx {
			mx, mi = ad, i
		}
	}
	if !isFinite(sA2 + sB2 + sD2) {
		p.slowBlock(ar, ai, br, bi)
		return
	}
	p.sAbs.add(sAbs)
	p.sD2.add(sD2)
	p.sA2.add(sA2)
	p.sB2.add(sB2)
	p.sAB.add(sAB)
	p.differ += int64(differ)
	p.outside += int64(outside)
	if mi >= 0 {
		p.maxAbs, p.maxIdx = mx, p.n+int64(mi)
	}
	p.n += int64(len(ar))
	p.finite += int64(len(ar))
}

// class is 0 for a finite number, 1 for NaN, 2 for ±Inf (complex: NaN if a part is NaN).
func class(re, im float64) int {
	switch {
	case re != re || im != im:
		return 1
	case !isFinite(re) || !isFinite(im):
		return 2
	}
	return 0
}

// slowBlock accumulates a block that holds NaN or Inf (or squares that overflow), element by element.
// ai and bi are nil for real pairs.
func (p *PairStats) slowBlock(ar, ai, br, bi []float64) {
	atol, rtol := p.tol.Atol, p.tol.Rtol
	var sAbs, sD2, sA2, sB2, sAB float64
	for i, xr := range ar {
		yr := br[i]
		var xi, yi float64
		if ai != nil {
			xi, yi = ai[i], bi[i]
		}
		ca, cb := class(xr, xi), class(yr, yi)
		p.nanA += int64(b2i(ca == 1))
		p.infA += int64(b2i(ca == 2))
		p.nanB += int64(b2i(cb == 1))
		p.infB += int64(b2i(cb == 2))
		if ca != 0 || cb != 0 {
			equal := (xr == yr && xi == yi) || (ca == 1 && cb == 1)
			if !equal && !p.rawDiffer {
				p.differ++
			}
			if !(xr == yr && xi == yi) && !(p.tol.EqualNaN && ca == 1 && cb == 1) {
				p.outside++
			}
			continue
		}
		dr, di := xr-yr, xi-yi
		d2 := dr*dr + di*di
		ad := math.Sqrt(d2)
		if ai == nil {
			ad = math.Abs(dr)
		}
		b2 := yr*yr + yi*yi
		babs := math.Sqrt(b2)
		if ai == nil {
			babs = math.Abs(yr)
		}
		sAbs += ad
		sD2 += d2
		sA2 += xr*xr + xi*xi
		sB2 += b2
		sAB += xr*yr + xi*yi
		if (dr != 0 || di != 0) && !p.rawDiffer {
			p.differ++
		}
		if ad > atol+rtol*babs {
			p.outside++
		}
		if ad > p.maxAbs {
			p.maxAbs, p.maxIdx = ad, p.n+int64(i)
		}
		p.finite++
	}
	p.sAbs.add(sAbs)
	p.sD2.add(sD2)
	p.sA2.add(sA2)
	p.sB2.add(sB2)
	p.sAB.add(sAB)
	p.n += int64(len(ar))
}

// Merge adds q, the accumulator of the elements that come right after p's, into p. Both must have
// been made for the same dtypes and tolerance. q's element indices are shifted by p.Len().
func (p *PairStats) Merge(q *PairStats) {
	if q.maxIdx >= 0 && q.maxAbs > p.maxAbs {
		p.maxAbs, p.maxIdx = q.maxAbs, p.n+q.maxIdx
	}
	if p.round != nil && q.round != nil {
		p.round.merge(q.round, p.n)
	}
	p.n += q.n
	p.finite += q.finite
	p.differ += q.differ
	p.outside += q.outside
	p.nanA += q.nanA
	p.nanB += q.nanB
	p.infA += q.infA
	p.infB += q.infB
	p.sAbs.merge(q.sAbs)
	p.sD2.merge(q.sD2)
	p.sA2.merge(q.sA2)
	p.sB2.merge(q.sB2)
	p.sAB.merge(q.sAB)
}

// Result returns the statistics of everything added so far.
func (p *PairStats) Result() Diff {
	d := Diff{
		Count: p.n, Differing: p.differ, MaxAbsDiffIndex: p.maxIdx,
		NaNA: p.nanA, NaNB: p.nanB, InfA: p.infA, InfB: p.infB,
		OutsideTolerance: p.outside, WithinTolerance: p.outside == 0,
		MaxAbsDiff: math.NaN(), MeanAbsDiff: math.NaN(), RelL2: math.NaN(), Cosine: math.NaN(),
	}
	if p.n > 0 {
		d.DiffFraction = float64(p.differ) / float64(p.n)
	}
	if p.finite > 0 {
		d.MaxAbsDiff = p.maxAbs
		d.MeanAbsDiff = p.sAbs.value() / float64(p.finite)
	}
	na, nd, nb := math.Sqrt(p.sA2.value()), math.Sqrt(p.sD2.value()), math.Sqrt(p.sB2.value())
	switch {
	case na > 0:
		d.RelL2 = nd / na
	case na == 0 && nd == 0 && p.finite > 0:
		d.RelL2 = 0
	}
	if na > 0 && nb > 0 {
		d.Cosine = max(-1, min(1, p.sAB.value()/na/nb))
	}
	if r := p.round; r != nil {
		exact := r.mismatches == 0
		d.ExactRounding = &exact
		d.Rounding = r.result()
	}
	return d
}

// roundCheck compares the narrow side of a pair with the round-to-nearest-even conversion of the wide
// side, element by element.
type roundCheck struct {
	wide, narrow *format
	narrowIsA    bool
	viaF32       bool // the wide side is F64: also accept rounding through float32, as PyTorch does

	mismatches, saturated, first, maxULP int64
	maxDev                               float64
}

// block checks one block: wide values, narrow values and the narrow side's raw bytes.
func (r *roundCheck) block(base int64, wide, narrow []float64, raw []byte, codes []uint32) {
	m := r.narrow.mini
	r.narrow.codes(codes, raw)
	wide = wide[:len(codes)]
	for i, c := range codes {
		if e := m.encode(wide[i]); e != c {
			r.mismatch(base+int64(i), wide[i], c, e, narrow[i])
		}
	}
}

// mismatch handles an element whose code c is not the directly rounded code e of x (v is c's value).
func (r *roundCheck) mismatch(idx int64, x float64, c, e uint32, v float64) {
	m := r.narrow.mini
	if x != x && m.isNaN(c) {
		return // any NaN matches any NaN
	}
	if r.viaF32 && m.encode(float64(float32(x))) == c {
		return
	}
	if e != noCode && isFinite(x) && (m.isNaN(e) || (m.infCode != noCode && e&m.magMask == m.infCode)) {
		sat := m.maxMag
		if x < 0 {
			sat |= m.signBit
		}
		if c == sat {
			r.saturated++
			return
		}
	}
	r.mismatches++
	if r.first < 0 {
		r.first = idx
	}
	if e == noCode || m.isNaN(c) || m.isNaN(e) {
		return
	}
	r.maxULP = max(r.maxULP, abs64(m.ordinal(c)-m.ordinal(e)))
	if dev := math.Abs(v - m.value(e)); isFinite(dev) {
		r.maxDev = max(r.maxDev, dev)
	}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// merge adds q, the check of the elements that follow r's, base being the number of elements before q.
func (r *roundCheck) merge(q *roundCheck, base int64) {
	if r.first < 0 && q.first >= 0 {
		r.first = base + q.first
	}
	r.mismatches += q.mismatches
	r.saturated += q.saturated
	r.maxULP = max(r.maxULP, q.maxULP)
	r.maxDev = max(r.maxDev, q.maxDev)
}

func (r *roundCheck) result() *Rounding {
	side := "b"
	if r.narrowIsA {
		side = "a"
	}
	return &Rounding{From: r.wide.dt, To: r.narrow.dt, Narrow: side, Mismatches: r.mismatches,
		FirstMismatch: r.first, Saturated: r.saturated, MaxULP: r.maxULP, MaxAbsDeviation: r.maxDev}
}
