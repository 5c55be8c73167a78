package values

import (
	"encoding/binary"
	"encoding/json"
	"math"

	"github.com/stdiff/stdiff/canon/tensor"
)

// Stats describes the values of one tensor. Min, Max, Mean and Std cover its finite elements (for
// C64 their moduli) and are NaN, null in JSON, when there are none; Std is the population standard
// deviation (numpy's default, ddof=0).
type Stats struct {
	// Count is the number of elements, finite or not.
	Count int64   `json:"count"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
	Std   float64 `json:"std"`
	NaN   int64   `json:"nan"`
	Inf   int64   `json:"inf"`
	Zeros int64   `json:"zeros"`
	// Subnormal counts non-zero elements smaller in magnitude than the dtype's smallest normal number
	// (always 0 for dtypes without subnormals: integers, BOOL, F8_E8M0, C64).
	Subnormal int64 `json:"subnormal"`
	// L2 is the Euclidean norm of the finite elements.
	L2 float64 `json:"l2"`
}

// AllZero reports whether the tensor has elements and every one is zero.
func (s Stats) AllZero() bool { return s.Count > 0 && s.Zeros == s.Count }

// Constant reports whether the tensor has elements and all of them are the same finite value.
func (s Stats) Constant() bool { return s.Count > 0 && s.NaN == 0 && s.Inf == 0 && s.Min == s.Max }

// SubnormalOnly reports whether the tensor has non-zero elements and every one of them is subnormal.
func (s Stats) SubnormalOnly() bool { return s.Subnormal > 0 && s.Subnormal == s.Count-s.Zeros }

// statsJSON is Stats as JSON has it: fields in order, undefined (non-finite) floats as null.
type statsJSON struct {
	Count     int64    `json:"count"`
	Min       *float64 `json:"min"`
	Max       *float64 `json:"max"`
	Mean      *float64 `json:"mean"`
	Std       *float64 `json:"std"`
	NaN       int64    `json:"nan"`
	Inf       int64    `json:"inf"`
	Zeros     int64    `json:"zeros"`
	Subnormal int64    `json:"subnormal"`
	L2        *float64 `json:"l2"`
}

// MarshalJSON writes Stats's fields in order, undefined (non-finite) floats as null.
func (s Stats) MarshalJSON() ([]byte, error) {
	return json.Marshal(statsJSON{s.Count, num(s.Min), num(s.Max), num(s.Mean), num(s.Std), s.NaN, s.Inf, s.Zeros, s.Subnormal, num(s.L2)})
}

// Summary accumulates Stats over one tensor fed chunk by chunk, in order. Make one with NewSummary;
// it is not safe for concurrent use: give each goroutine its own and Merge them in chunk order.
type Summary struct {
	f *format

	n, finite, nan, inf, zeros, sub int64
	min, max                        float64
	sum, sumsq                      ksum
	m2                              float64 // Σ(x−mean)² over finite elements, merged with Chan's formula
	buf                             *scratchSum
}

// scratchSum is the working memory of a Summary, handed from one to the next by the callers that make
// many (a histogram is 256 KiB).
type scratchSum struct {
	dec  [blockLen]float64
	hist *histogram
}

// NewSummary returns an empty accumulator for a tensor of dtype dt.
func NewSummary(dt tensor.DType) (*Summary, error) {
	f, err := lookup(dt)
	if err != nil {
		return nil, err
	}
	return newSummary(f), nil
}

func newSummary(f *format) *Summary { return &Summary{f: f, min: math.Inf(1), max: math.Inf(-1)} }

// Len returns the number of elements added so far.
func (s *Summary) Len() int64 { return s.n }

// Add feeds the next elements: b must hold whole elements (F6: a multiple of 3 bytes).
func (s *Summary) Add(b []byte) error {
	n, err := s.f.elements(int64(len(b)))
	if err != nil {
		return err
	}
	if s.buf == nil {
		s.buf = new(scratchSum)
	}
	if bn := s.f.bins(); bn != nil {
		if s.buf.hist == nil {
			s.buf.hist = new(histogram)
		}
		for step := s.f.byteLen(maxBinned); len(b) > 0; b = b[min(step, len(b)):] {
			s.addBinned(bn, s.buf.hist, b[:min(step, len(b))])
		}
		return nil
	}
	for off := 0; off < int(n); off += blockLen {
		k := min(blockLen, int(n)-off)
		x, src := s.buf.dec[:k], b[s.f.byteLen(off):s.f.byteLen(off+k)]
		if s.f.kind == kF32 {
			s.blockF32(x, src)
			continue
		}
		s.f.decode(x, src)
		s.block(x)
	}
	return nil
}

// part is the summary of one block of finite values.
type part struct {
	n, zeros, small int64
	min, max        float64
	sum, sumsq, m2  float64
}

func (s *Summary) block(x []float64) {
	s.n += int64(len(x))
	p := summarize(x, s.f.minNormal)
	if !isFinite(p.sumsq) {
		// NaN or Inf in the block: count them, keep the finite values, and summarize those.
		k := 0
		for _, v := range x {
			switch {
			case v != v:
				s.nan++
			case !isFinite(v):
				s.inf++
			default:
				x[k] = v
				k++
			}
		}
		p = summarize(x[:k], s.f.minNormal)
	}
	s.addPart(p)
}

// summarize computes the part of a block assumed finite (if it is not, sumsq is not finite). The
// extremes and the counts are kept on the integer side: a float's bits, with the magnitude bits of
// negative numbers flipped, order like the floats (key), and |x| < minNormal compares bits.
func summarize(x []float64, minNormal float64) part {
	p := part{n: int64(len(x)), min: math.Inf(1), max: math.Inf(-1)}
	if len(x) == 0 {
		return p
	}
	var zeros, small uint64
	lo, hi := key(math.Inf(1)), key(math.Inf(-1))
	nb := math.Float64bits(minNormal)
	for _, v := range x {
		b := math.Float64bits(v)
		ab := b &^ (1 << 63)
		k := int64(b) ^ int64(uint64(int64(b)>>63)>>1)
		lo, hi = min(lo, k), max(hi, k)
		zeros += (ab - 1) >> 63  // ab == 0
		small += (ab - nb) >> 63 // ab < nb (0 when nb is 0)
	}
	p.min, p.max = unkey(lo), unkey(hi)
	p.zeros, p.small = int64(zeros), int64(small-zeros)
	if nb == 0 {
		p.small = 0
	}
	p.sum, p.sumsq, p.m2 = moments(x)
	return p
}

// moments returns the sum, the sum of squares and the sum of squared deviations from the mean of a
// non-empty block. Two sums of each kind, over even and odd elements, halve the chains of dependent
// additions.
func moments(x []float64) (sum, sq, m2 float64) {
	var sum1, sq1 float64
	i := 0
	for ; i+2 <= len(x); i += 2 {
		v, v1 := x[i], x[i+1]
		sum += v
		sq += v * v
		sum1 += v1
		sq1 += v1 * v1
	}
	if i < len(x) {
		sum += x[i]
		sq += x[i] * x[i]
	}
	sum += sum1
	sq += sq1
	mean := sum / float64(len(x))
	var m21 float64
	for i = 0; i+2 <= len(x); i += 2 {
		d, d1 := x[i]-mean, x[i+1]-mean
		m2 += d * d
		m21 += d1 * d1
	}
	if i < len(x) {
		d := x[i] - mean
		m2 += d * d
	}
	return sum, sq, m2 + m21
}

// blockF32 decodes and summarises a block of F32 elements in one pass over their bits (extremes and
// counts as summarize keeps them, on 32 bits), and falls back on block when one is NaN or Inf.
func (s *Summary) blockF32(x []float64, src []byte) {
	src = src[:4*len(x)]
	lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
	var zeros, small, special uint32
	for i := range x {
		u := binary.LittleEndian.Uint32(src[4*i:])
		ab := u &^ (1 << 31)
		k := int32(u) ^ int32(uint32(int32(u)>>31)>>1)
		lo, hi = min(lo, k), max(hi, k)
		zeros += (ab - 1) >> 31        // ab == 0
		small += (ab - 0x800000) >> 31 // ab < the smallest normal
		special |= 0x7F7FFFFF - ab     // the sign bit is set when ab is Inf or NaN
		x[i] = float64(math.Float32frombits(u))
	}
	if special>>31 != 0 || len(x) == 0 {
		s.block(x)
		return
	}
	unkey32 := func(k int32) float64 { return float64(math.Float32frombits(uint32(k ^ int32(uint32(k>>31)>>1)))) }
	p := part{n: int64(len(x)), min: unkey32(lo), max: unkey32(hi), zeros: int64(zeros), small: int64(small - zeros)}
	p.sum, p.sumsq, p.m2 = moments(x)
	s.n += p.n
	s.addPart(p)
}

func key(x float64) int64 {
	b := int64(math.Float64bits(x))
	return b ^ int64(uint64(b>>63)>>1)
}

func unkey(k int64) float64 { return math.Float64frombits(uint64(k ^ int64(uint64(k>>63)>>1))) }

func (s *Summary) addPart(p part) {
	if p.n == 0 {
		return
	}
	s.m2 = chan2(s.finite, s.sum.value(), s.m2, p.n, p.sum, p.m2)
	s.finite += p.n
	s.zeros += p.zeros
	s.sub += p.small
	s.min = min(s.min, p.min)
	s.max = max(s.max, p.max)
	s.sum.add(p.sum)
	s.sumsq.add(p.sumsq)
}

// chan2 merges the sums of squared deviations of two groups of na and nb values with sums sa and sb
// (Chan, Golub and LeVeque's pairwise update).
func chan2(na int64, sa, m2a float64, nb int64, sb, m2b float64) float64 {
	if na == 0 {
		return m2b
	}
	if nb == 0 {
		return m2a
	}
	d := sb/float64(nb) - sa/float64(na)
	return m2a + m2b + d*d*(float64(na)*float64(nb)/float64(na+nb))
}

// Merge adds q, the summary of the elements that come right after s's, into s.
func (s *Summary) Merge(q *Summary) {
	s.m2 = chan2(s.finite, s.sum.value(), s.m2, q.finite, q.sum.value(), q.m2)
	s.n += q.n
	s.finite += q.finite
	s.nan += q.nan
	s.inf += q.inf
	s.zeros += q.zeros
	s.sub += q.sub
	s.min = min(s.min, q.min)
	s.max = max(s.max, q.max)
	s.sum.merge(q.sum)
	s.sumsq.merge(q.sumsq)
}

// Result returns the statistics of everything added so far.
func (s *Summary) Result() Stats {
	st := Stats{Count: s.n, NaN: s.nan, Inf: s.inf, Zeros: s.zeros, Subnormal: s.sub,
		Min: math.NaN(), Max: math.NaN(), Mean: math.NaN(), Std: math.NaN(), L2: math.Sqrt(s.sumsq.value())}
	if s.finite > 0 {
		st.Min, st.Max = s.min, s.max
		st.Mean = s.sum.value() / float64(s.finite)
		st.Std = math.Sqrt(s.m2 / float64(s.finite))
	}
	return st
}

// UnmarshalJSON reads what MarshalJSON writes: null floats become NaN.
func (s *Stats) UnmarshalJSON(b []byte) error {
	var r statsJSON
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	f := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	*s = Stats{Count: r.Count, Min: f(r.Min), Max: f(r.Max), Mean: f(r.Mean), Std: f(r.Std), NaN: r.NaN, Inf: r.Inf,
		Zeros: r.Zeros, Subnormal: r.Subnormal, L2: f(r.L2)}
	return nil
}

// ChunkBytes is the byte length of ChunkElements elements of dtype dt: the chunks SummarizeAll
// summarises one by one. Summarising a tensor chunk by chunk of this length, each chunk into its own
// Summary merged in order, gives the same Stats as SummarizeAll, to the bit.
func ChunkBytes(dt tensor.DType) (int, error) {
	f, err := lookup(dt)
	if err != nil {
		return 0, err
	}
	return f.byteLen(ChunkElements), nil
}

// Chunked summarises tensors chunk by chunk as SummarizeAll does, to the bit: Reset it for a tensor,
// Add the tensor's chunks in order (each ChunkBytes long but the last), then take its Result. It
// reuses its buffers from tensor to tensor; it is not safe for concurrent use (one per goroutine).
type Chunked struct {
	f           *format
	total, part Summary
	dec         *scratchSum
}

// Reset starts the summary of a tensor of dtype dt.
func (c *Chunked) Reset(dt tensor.DType) error {
	f, err := lookup(dt)
	if err != nil {
		return err
	}
	c.f, c.total = f, Summary{f: f, min: math.Inf(1), max: math.Inf(-1)}
	return nil
}

// Add summarises the next chunk (whole elements) on its own and merges it in.
func (c *Chunked) Add(chunk []byte) error {
	c.part = Summary{f: c.f, min: math.Inf(1), max: math.Inf(-1), buf: c.dec}
	err := c.part.Add(chunk)
	c.dec, c.part.buf = c.part.buf, nil
	c.total.Merge(&c.part)
	return err
}

// Result is the Stats of the chunks added since Reset.
func (c *Chunked) Result() Stats { return c.total.Result() }
