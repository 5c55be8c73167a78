package values

import (
	"context"
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stdiff/stdiff/canon/tensor"
)

// referenceStats computes the Stats of b straightforwardly: every element decoded (Decode), counted
// and compared one by one, the sums taken exactly (big.Float) and rounded once.
func referenceStats(t testing.TB, dt tensor.DType, b []byte) Stats {
	t.Helper()
	f := formats[dt]
	n, err := f.elements(int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, n)
	if _, err := Decode(dt, x, b); err != nil {
		t.Fatal(err)
	}
	st := Stats{Count: n, Min: math.Inf(1), Max: math.Inf(-1)}
	exact := func() *big.Float { return new(big.Float).SetPrec(4096) }
	s1, s2, k := exact(), exact(), int64(0)
	for _, v := range x {
		switch {
		case math.IsNaN(v):
			st.NaN++
			continue
		case math.IsInf(v, 0):
			st.Inf++
			continue
		case v == 0:
			st.Zeros++
		case math.Abs(v) < f.minNormal:
			st.Subnormal++
		}
		k++
		st.Min, st.Max = math.Min(st.Min, v), math.Max(st.Max, v)
		s1.Add(s1, exact().SetFloat64(v))
		s2.Add(s2, exact().Mul(exact().SetFloat64(v), exact().SetFloat64(v)))
	}
	l2, _ := exact().Sqrt(s2).Float64()
	st.L2 = l2
	if k == 0 {
		st.Min, st.Max, st.Mean, st.Std = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		return st
	}
	kf := exact().SetInt64(k)
	mean := exact().Quo(s1, kf)
	st.Mean, _ = mean.Float64()
	// Σ(x−mean)² = Σx² − mean·Σx, exact at this precision.
	m2 := exact().Sub(s2, exact().Mul(mean, s1))
	if m2.Sign() < 0 {
		m2.SetInt64(0)
	}
	st.Std, _ = exact().Sqrt(exact().Quo(m2, kf)).Float64()
	return st
}

// checkStats compares got with the reference: counts, min and max exactly, mean, std and L2 to within
// a few units in the last place of the largest magnitude involved.
func checkStats(t testing.TB, what string, got, want Stats) {
	t.Helper()
	if got.Count != want.Count || got.NaN != want.NaN || got.Inf != want.Inf || got.Zeros != want.Zeros ||
		got.Subnormal != want.Subnormal || !same(got.Min, want.Min) || !same(got.Max, want.Max) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
	scale := math.Max(math.Abs(want.Min), math.Abs(want.Max))
	near := func(a, b, abs float64) bool {
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.IsNaN(a) && math.IsNaN(b)
		}
		return a == b || math.Abs(a-b) <= 1e-13*math.Abs(b)+abs
	}
	if want.L2 > 1e154 { // Σx² overflows float64 (F64 only): L2 and std are +Inf
		got.L2, got.Std, want.L2, want.Std = 0, 0, 0, 0
	}
	// Squares of F64 values below 1e-154 underflow: L2 and std are then off by up to √n·2^-537.
	const under = 1e-150
	if !near(got.Mean, want.Mean, 1e-14*scale) || !near(got.Std, want.Std, 1e-12*scale+under) || !near(got.L2, want.L2, under) {
		t.Fatalf("%s: mean %v std %v l2 %v, exactly %v %v %v", what, got.Mean, got.Std, got.L2, want.Mean, want.Std, want.L2)
	}
}

// summarizeIn summarises b with one Summary, fed in pieces of at most step bytes.
func summarizeIn(t testing.TB, dt tensor.DType, b []byte, step int) Stats {
	s, err := NewSummary(dt)
	if err != nil {
		t.Fatal(err)
	}
	g := formats[dt].groupBytes
	step = max(step/g*g, g)
	for len(b) > 0 {
		k := min(step, len(b))
		if err := s.Add(b[:k]); err != nil {
			t.Fatal(err)
		}
		b = b[k:]
	}
	return s.Result()
}

// TestSummaryAgainstReference: the summary of every dtype matches the straightforward computation on
// random bytes (every bit pattern, NaN and Inf included), on every code of the 8-, 6- and 4-bit
// formats and every 16-bit code, on values spanning many exponents and on values near one offset, fed
// whole or in pieces, and across chunks (SummarizeTensor).
func TestSummaryAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	for _, dt := range allDTypes {
		f := formats[dt]
		var inputs [][]byte
		raw := make([]byte, 3*4096)
		for i := range raw {
			raw[i] = byte(r.Uint32())
		}
		inputs = append(inputs, raw)
		switch {
		case f.bits == 16:
			all := make([]byte, 2<<16)
			for c := range 1 << 16 {
				binary.LittleEndian.PutUint16(all[2*c:], uint16(c))
			}
			inputs = append(inputs, all)
		case f.bits <= 8:
			codes := make([]uint32, 1<<f.bits)
			for c := range codes {
				codes[c] = uint32(c)
			}
			inputs = append(inputs, pack(f.bits, append(codes, codes[:(4-len(codes)%4)%4]...)))
		}
		inputs = append(inputs, encodeAll(dt, sample(r, 4*4096, 0.02, true)))
		offset := sample(r, 4096, 1e-3, false)
		for i := range offset {
			offset[i] += 3
		}
		inputs = append(inputs, encodeAll(dt, offset), encodeAll(dt, make([]float64, 64)))
		for k, b := range inputs {
			n, _ := f.elements(int64(len(b)))
			b = b[:f.byteLen(int(n/4*4))]
			want := referenceStats(t, dt, b)
			checkStats(t, string(dt)+" whole", summarizeIn(t, dt, b, len(b)), want)
			checkStats(t, string(dt)+" in pieces", summarizeIn(t, dt, b, 1+r.IntN(len(b)/3+1)), want)
			if k == 0 {
				got, err := SummarizeTensor(context.Background(), Tensor{DType: dt, R: byteReader(b), Len: int64(len(b))}, Options{Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				checkStats(t, string(dt)+" tensor", got, want)
			}
		}
	}
	// Over several chunks.
	b := encodeAll("BF16", sample(r, 3*ChunkElements+100, 1, true))
	want := referenceStats(t, "BF16", b)
	got, err := SummarizeTensor(context.Background(), Tensor{DType: "BF16", R: byteReader(b), Len: int64(len(b))}, Options{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkStats(t, "BF16 chunks", got, want)
}

// TestSummaryFindings: the summaries behind `check --values`' findings come out of the binned path
// exactly: all zero (±0), constant, subnormal only, NaN and Inf counted apart.
func TestSummaryFindings(t *testing.T) {
	for _, dt := range []tensor.DType{"BF16", "F16", "F8_E4M3", "F8_E5M2", "F4", "F6_E3M2", "I16", "U8"} {
		m := formats[dt].mini
		tiny := 0.0
		if m != nil && m.flavor != e8m0 {
			tiny = math.Ldexp(1, m.emin-int(m.m)) // the smallest subnormal
		}
		zeros := encodeAll(dt, []float64{0, math.Copysign(0, -1), 0, 0})
		if s := summarizeIn(t, dt, zeros, len(zeros)); !s.AllZero() || !s.Constant() || s.Std != 0 || s.Mean != 0 {
			t.Errorf("%s zeros: %+v", dt, s)
		}
		three := encodeAll(dt, []float64{3, 3, 3, 3, 3, 3, 3, 3})
		if s := summarizeIn(t, dt, three, 2); !s.Constant() || s.AllZero() || s.Mean != 3 || s.Std != 0 || s.L2 != math.Sqrt(72) {
			t.Errorf("%s constant: %+v", dt, s)
		}
		if tiny > 0 {
			sub := encodeAll(dt, []float64{tiny, -tiny, 0, tiny})
			if s := summarizeIn(t, dt, sub, len(sub)); !s.SubnormalOnly() || s.Subnormal != 3 || s.Min != -tiny || s.Max != tiny {
				t.Errorf("%s subnormal: %+v", dt, s)
			}
		}
	}
	for _, dt := range []tensor.DType{"BF16", "F16", "F8_E5M2"} {
		b := encodeAll(dt, []float64{math.NaN(), math.Inf(1), math.Inf(-1), 2, math.NaN(), 1, 0, 0})
		s := summarizeIn(t, dt, b, len(b))
		if s.NaN != 2 || s.Inf != 2 || s.Min != 0 || s.Max != 2 || s.Mean != 0.75 || s.Zeros != 2 || s.L2 != math.Sqrt(5) {
			t.Errorf("%s NaN and Inf: %+v", dt, s)
		}
		if s := summarizeIn(t, dt, b[:3*formats[dt].groupBytes], 2); s.NaN != 1 || s.Inf != 2 || !math.IsNaN(s.Mean) || !math.IsNaN(s.Min) || s.L2 != 0 {
			t.Errorf("%s NaN and Inf only: %+v", dt, s)
		}
	}
}

// FuzzSummary checks the summary of arbitrary bytes of every dtype against the straightforward
// computation, fed whole and in two pieces.
func FuzzSummary(f *testing.F) {
	f.Add([]byte{0x7E, 0x7F, 0x80, 0xFF, 0x00, 0x01, 0x3C, 0x00}, uint8(0), uint16(3))
	f.Add([]byte{0x21, 0x7F, 0x81, 0x30, 0x10, 0xFF, 0xFF, 0x7C, 0, 0, 0, 0}, uint8(5), uint16(4))
	f.Fuzz(func(t *testing.T, data []byte, sel uint8, split uint16) {
		dt := allDTypes[int(sel)%len(allDTypes)]
		fm := formats[dt]
		n := int64(len(data)) / int64(fm.groupBytes) * int64(fm.group)
		data = data[:fm.byteLen(int(n))]
		want := referenceStats(t, dt, data)
		checkStats(t, string(dt), summarizeIn(t, dt, data, len(data)+1), want)
		checkStats(t, string(dt)+" split", summarizeIn(t, dt, data, int(split)+1), want)
	})
}
