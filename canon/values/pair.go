package values

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/stdiff/stdiff/canon/tensor"
)

// Tolerance is numpy.isclose's: elements a and b are close when |a−b| ≤ Atol + Rtol·|b| (b is the
// second side). Two NaNs are close only with EqualNaN; an infinity is close only to the same infinity.
// The zero Tolerance asks for equal values.
type Tolerance struct {
	Atol     float64 `json:"atol"`
	Rtol     float64 `json:"rtol"`
	EqualNaN bool    `json:"equal_nan"`
}

// Check returns an error wrapping ErrTolerance when Atol or Rtol is negative or not finite.
func (t Tolerance) Check() error {
	if !(t.Atol >= 0 && t.Rtol >= 0 && isFinite(t.Atol) && isFinite(t.Rtol)) {
		return fmt.Errorf("%w: atol %g and rtol %g must be finite and not negative", ErrTolerance, t.Atol, t.Rtol)
	}
	return nil
}

// IsZero reports whether t is the zero Tolerance, which asks for equal values (NaN unequal to NaN).
func (t Tolerance) IsZero() bool { return t == Tolerance{} }

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
	// RMSE is √(Σ(a−b)²/Count) as llama.cpp's quantize-stats defines it, when the caller computed it
	// (a GGUF compared with its source; see PairStats.SumSquaredDiff); nil otherwise.
	RMSE *float64 `json:"rmse,omitempty"`
}

// Rounding says how far the narrower side of a pair is from the round-to-nearest-even conversion of
// the wider side (wider: more bits; with equal widths, a is the source).
type Rounding struct {
	// From is the wider dtype, To the narrower one; Narrow is "a" or "b", the side that holds To.
	From   tensor.DType `json:"from"`
	To     tensor.DType `json:"to"`
	Narrow string       `json:"narrow"`
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

// MarshalJSON writes Diff's fields in order, undefined (non-finite) floats as null.
func (d Diff) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Count            int64     `json:"count"`
		Differing        int64     `json:"differing"`
		DiffFraction     float64   `json:"diff_fraction"`
		MaxAbsDiff       *float64  `json:"max_abs_diff"`
		MaxAbsDiffIndex  int64     `json:"max_abs_diff_index"`
		MeanAbsDiff      *float64  `json:"mean_abs_diff"`
		RelL2            *float64  `json:"rel_l2"`
		Cosine           *float64  `json:"cosine"`
		NaNA             int64     `json:"nan_a"`
		NaNB             int64     `json:"nan_b"`
		InfA             int64     `json:"inf_a"`
		InfB             int64     `json:"inf_b"`
		OutsideTolerance int64     `json:"outside_tolerance"`
		WithinTolerance  bool      `json:"within_tolerance"`
		ExactRounding    *bool     `json:"exact_rounding,omitempty"`
		Rounding         *Rounding `json:"rounding,omitempty"`
		RMSE             *float64  `json:"rmse,omitempty"`
	}{d.Count, d.Differing, d.DiffFraction, num(d.MaxAbsDiff), d.MaxAbsDiffIndex, num(d.MeanAbsDiff),
		num(d.RelL2), num(d.Cosine), d.NaNA, d.NaNB, d.InfA, d.InfB, d.OutsideTolerance, d.WithinTolerance,
		d.ExactRounding, d.Rounding, d.RMSE})
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
	t      tolerance

	n, finite, differ, outside int64
	nanA, nanB, infA, infB     int64
	maxAbs                     float64
	maxIdx                     int64
	sAbs, sD2, sA2, sB2, sAB   ksum

	kern      kernel
	rawDiffer bool        // I64/U64 on both sides: count differing elements on the bytes
	round     *roundCheck // nil unless both dtypes are floats and differ
	buf       *scratch
}

// kernel is the loop PairStats runs over a block.
type kernel uint8

const (
	kernF64     kernel = iota // decode both sides to float64, then blockF64
	kern16                    // both sides 16-bit floats decoded through tables (block16)
	kern8                     // both sides 8-bit codes decoded through tables (block8)
	kernComplex               // either side C64
)

// scratch holds one block of decoded values; allocated on the first Add.
type scratch struct {
	a, b, ai, bi [blockLen]float64
	codes        [blockLen]uint32
}

// NewPairStats returns an empty accumulator for tensors of dtypes a and b (possibly different)
// compared under tol.
func NewPairStats(a, b tensor.DType, tol Tolerance) (*PairStats, error) {
	if err := tol.Check(); err != nil {
		return nil, err
	}
	fa, err := lookup(a)
	if err != nil {
		return nil, err
	}
	fb, err := lookup(b)
	if err != nil {
		return nil, err
	}
	p := &PairStats{fa: fa, fb: fb, tol: tol, maxIdx: -1,
		t: tolerance{on: tol.Atol != 0 || tol.Rtol != 0, atol: tol.Atol, rtol: tol.Rtol}}
	p.rawDiffer = fa == fb && (fa.kind == kI64 || fa.kind == kU64)
	converted := a != b && IsFloat(a) && IsFloat(b)
	switch {
	case fa.kind == kC64 || fb.kind == kC64:
		p.kern = kernComplex
	case converted:
		p.kern = kernF64 // the rounding check needs the decoded values
	case fa.table16() != nil && fb.table16() != nil:
		p.kern = kern16
	case fa.kind == kTable && fb.kind == kTable:
		p.kern = kern8
	}
	if converted {
		r := &roundCheck{wide: fa, narrow: fb, first: -1}
		if fb.bits > fa.bits {
			r.wide, r.narrow, r.narrowIsA = fb, fa, true
		}
		r.viaF32 = r.wide.kind == kF64 && r.narrow.bits < 32
		r.bf16 = r.narrow.kind == kBF16 && r.wide.kind != kF64
		r.values = r.narrow.table16()
		p.round = r
	}
	return p, nil
}

// empty returns a new accumulator with p's dtypes and tolerance.
func (p *PairStats) empty() *PairStats {
	q := &PairStats{fa: p.fa, fb: p.fb, tol: p.tol, t: p.t, maxIdx: -1, kern: p.kern, rawDiffer: p.rawDiffer}
	if p.round != nil {
		r := *p.round
		r.mismatches, r.saturated, r.first, r.maxULP, r.maxDev = 0, 0, -1, 0, 0
		q.round = &r
	}
	return q
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
	n := int(na)
	for off := 0; off < n; off += blockLen {
		k := min(blockLen, n-off)
		ab := a[p.fa.byteLen(off):p.fa.byteLen(off+k)]
		bb := b[p.fb.byteLen(off):p.fb.byteLen(off+k)]
		var f fsums
		var g gsums
		switch p.kern {
		case kernComplex:
			p.fa.decodeComplex(s.a[:k], s.ai[:k], ab)
			p.fb.decodeComplex(s.b[:k], s.bi[:k], bb)
			p.complexBlock(s.a[:k], s.ai[:k], s.b[:k], s.bi[:k])
			continue
		case kern16:
			f, g = block16(p.fa.table16(), p.fb.table16(), ab, bb, p.t)
		case kern8:
			f, g = block8(p.fa.table, p.fb.table, ab, bb, p.t)
		default:
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
			f, g = blockF64(s.a[:k], s.b[:k], p.t)
		}
		p.realBlock(f, g, ab, bb, s.a[:k], s.b[:k], p.kern == kernF64)
	}
	return nil
}

// addSame feeds the next elements of both tensors when they are the same bytes of one dtype: it gives
// what Add(b, b) gives, bit for bit (the same sums in the same order), decoding one side only.
func (p *PairStats) addSame(b []byte) error {
	if p.fa != p.fb || p.kern == kernComplex {
		return p.Add(b, b)
	}
	n, err := p.fa.elements(int64(len(b)))
	if err != nil {
		return err
	}
	if p.buf == nil {
		p.buf = new(scratch)
	}
	x := p.buf.a[:]
	for off := 0; off < int(n); off += blockLen {
		k := min(blockLen, int(n)-off)
		raw := b[p.fa.byteLen(off):p.fa.byteLen(off+k)]
		p.fa.decode(x[:k], raw)
		sq := 0.0
		for _, v := range x[:k] {
			sq += v * v // step's a2, b2 and ab when x == y
		}
		p.realBlock(fsums{a2: sq, b2: sq}, gsums{ab: sq, same: uint64(k)}, raw, raw, x[:k], x[:k], true)
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

// The fast loops. fsums and gsums are a block's running sums; structs of at most four fields stay in
// registers, so step, inlined into each loop, keeps them there: one definition of the statistics for
// the loops over decoded float64 values and over table-decoded 16- and 8-bit codes. The maximum and
// the differing count are kept on the integer side (|d|'s bits order like |d|), which leaves the
// float units to the sums.
type fsums struct{ abs, d2, a2, b2 float64 }

type gsums struct {
	ab                     float64
	same, maxBits, outside uint64
}

// tolerance is Tolerance as the loops use it: on is false for the zero tolerance, where the outside
// count is the differing count.
type tolerance struct {
	on         bool
	atol, rtol float64
}

func step(f fsums, g gsums, x, y float64) (fsums, gsums) {
	d := x - y
	adb := math.Float64bits(d) &^ (1 << 63)
	f.abs += math.Float64frombits(adb)
	f.d2 += d * d
	f.a2 += x * x
	f.b2 += y * y
	g.ab += x * y
	g.same += (adb - 1) >> 63 // 1 when d == 0 (adb ≤ 0x7FF0… for finite d)
	g.maxBits = max(g.maxBits, adb)
	return f, g
}

// count counts the pair as outside the tolerance when it is (numpy.isclose's test).
func (t tolerance) count(g gsums, x, y float64) gsums {
	if math.Abs(x-y) > t.atol+t.rtol*math.Abs(y) {
		g.outside++
	}
	return g
}

func blockF64(a, b []float64, t tolerance) (f fsums, g gsums) {
	b = b[:len(a)]
	for i, x := range a {
		f, g = step(f, g, x, b[i])
		if t.on {
			g = t.count(g, x, b[i])
		}
	}
	return f, g
}

// block16 runs step over 16-bit codes decoded through tables, four codes per 8-byte load (without a
// tolerance to count; with one, code by code).
func block16(ta, tb *[1 << 16]float64, a, b []byte, t tolerance) (f fsums, g gsums) {
	b = b[:len(a)]
	i := 0
	if !t.on {
		for ; i+8 <= len(a); i += 8 {
			wa, wb := binary.LittleEndian.Uint64(a[i:]), binary.LittleEndian.Uint64(b[i:])
			f, g = step(f, g, ta[uint16(wa)], tb[uint16(wb)])
			f, g = step(f, g, ta[uint16(wa>>16)], tb[uint16(wb>>16)])
			f, g = step(f, g, ta[uint16(wa>>32)], tb[uint16(wb>>32)])
			f, g = step(f, g, ta[wa>>48], tb[wb>>48])
		}
	}
	for ; i+2 <= len(a); i += 2 {
		x, y := ta[binary.LittleEndian.Uint16(a[i:])], tb[binary.LittleEndian.Uint16(b[i:])]
		f, g = step(f, g, x, y)
		if t.on {
			g = t.count(g, x, y)
		}
	}
	return f, g
}

// block8 runs step over 8-bit codes decoded through tables, eight codes per 8-byte load (without a
// tolerance to count; with one, code by code).
func block8(ta, tb *[256]float64, a, b []byte, t tolerance) (f fsums, g gsums) {
	b = b[:len(a)]
	i := 0
	if !t.on {
		for ; i+8 <= len(a); i += 8 {
			wa, wb := binary.LittleEndian.Uint64(a[i:]), binary.LittleEndian.Uint64(b[i:])
			for range 8 {
				f, g = step(f, g, ta[uint8(wa)], tb[uint8(wb)])
				wa >>= 8
				wb >>= 8
			}
		}
	}
	for ; i < len(a); i++ {
		x, y := ta[a[i]], tb[b[i]]
		f, g = step(f, g, x, y)
		if t.on {
			g = t.count(g, x, y)
		}
	}
	return f, g
}

// realBlock folds one block's fast sums into p. The fast loops assume every element is finite; any
// NaN or Inf makes a square sum non-finite, and the block is redone by the careful loop. The index of
// a new maximum takes its own pass over the decoded values, which most blocks skip. xa and xb are the
// decoded values when decoded is true, else scratch to decode into from the bytes ab and bb.
func (p *PairStats) realBlock(f fsums, g gsums, ab, bb []byte, xa, xb []float64, decoded bool) {
	decode := func() {
		if !decoded {
			p.fa.decode(xa, ab)
			p.fb.decode(xb, bb)
			decoded = true
		}
	}
	if !isFinite(f.a2 + f.b2 + f.d2) {
		decode()
		p.slowBlock(xa, nil, xb, nil)
		return
	}
	p.sAbs.add(f.abs)
	p.sD2.add(f.d2)
	p.sA2.add(f.a2)
	p.sB2.add(f.b2)
	p.sAB.add(g.ab)
	differ := int64(len(xa)) - int64(g.same)
	if !p.rawDiffer {
		p.differ += differ
	}
	mx := math.Float64frombits(g.maxBits)
	if mx > p.maxAbs {
		decode()
		for i, x := range xa {
			if math.Abs(x-xb[i]) == mx {
				p.maxAbs, p.maxIdx = mx, p.n+int64(i)
				break
			}
		}
	}
	if p.t.on {
		p.outside += int64(g.outside)
	} else {
		p.outside += differ
	}
	p.n += int64(len(xa))
	p.finite += int64(len(xa))
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

// SumSquaredDiff is Σ(a−b)² over the finite pairs added so far: llama.cpp's quantize-stats takes the
// square root of its mean as a tensor's RMSE.
func (p *PairStats) SumSquaredDiff() float64 { return p.sD2.value() }

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
	viaF32       bool              // the wide side is F64: also accept rounding through float32, as PyTorch does
	bf16         bool              // to BF16 from float32 values: encodeBF16
	values       *[1 << 16]float64 // the narrow side's values when it is 16-bit

	mismatches, saturated, first, maxULP int64
	maxDev                               float64
}

// block checks one block: wide values, narrow values and the narrow side's raw bytes.
func (r *roundCheck) block(base int64, wide, narrow []float64, raw []byte, codes []uint32) {
	m := r.narrow.mini
	r.narrow.codes(codes, raw)
	wide = wide[:len(codes)]
	for i, c := range codes {
		var e uint32
		if r.bf16 {
			e = encodeBF16(wide[i])
		} else {
			e = m.encode(wide[i])
		}
		if e != c {
			r.mismatch(base+int64(i), wide[i], c, e, narrow[i])
		}
	}
}

// encodeBF16 is minifloat.encode for BF16 from a value float32 holds exactly: round to nearest even
// on the float32 bits.
func encodeBF16(x float64) uint32 {
	b := math.Float32bits(float32(x))
	if b&0x7FFFFFFF > 0x7F800000 {
		return b>>16 | 0x7FC0
	}
	return (b + 0x7FFF + (b >> 16 & 1)) >> 16
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
	ev := 0.0
	if r.values != nil {
		ev = r.values[uint16(e)]
	} else {
		ev = r.narrow.codeValue(e)
	}
	if dev := math.Abs(v - ev); isFinite(dev) {
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

// NonFinite is the NaN and Inf counts of both sides, where either has any: "NaN 0 → 5 · Inf 1 → 1";
// "" when both are finite throughout.
func (d *Diff) NonFinite() string {
	var parts []string
	if d.NaNA > 0 || d.NaNB > 0 {
		parts = append(parts, fmt.Sprintf("NaN %d → %d", d.NaNA, d.NaNB))
	}
	if d.InfA > 0 || d.InfB > 0 {
		parts = append(parts, fmt.Sprintf("Inf %d → %d", d.InfA, d.InfB))
	}
	return strings.Join(parts, " · ")
}

// NewNonFinite says how many NaN and Inf the new side has where the old had none: "5 new NaN, 2 new
// Inf"; "" when none appeared.
func (d *Diff) NewNonFinite() string {
	var parts []string
	if d.NaNA == 0 && d.NaNB > 0 {
		parts = append(parts, fmt.Sprintf("%d new NaN", d.NaNB))
	}
	if d.InfA == 0 && d.InfB > 0 {
		parts = append(parts, fmt.Sprintf("%d new Inf", d.InfB))
	}
	return strings.Join(parts, ", ")
}
