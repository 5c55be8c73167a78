package values

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/tensor"
)

func f32Bytes(v ...float64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
	}
	return b
}

func f64Bytes(v ...float64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func u16Bytes(v ...uint16) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint16(b, x)
	}
	return b
}

func pairOf(t *testing.T, dta tensor.DType, a []byte, dtb tensor.DType, b []byte, tol Tolerance) Diff {
	t.Helper()
	p, err := NewPairStats(dta, dtb, tol)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Add(a, b); err != nil {
		t.Fatal(err)
	}
	return p.Result()
}

// TestDeterministic: the same tensors give byte-identical results whatever the number of workers
// and of cores.
func TestDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	n := 5*ChunkElements + 333
	va := sample(r, n, 1, true)
	vb := perturb(r, va, 0.01)
	for _, dts := range [][2]tensor.DType{{"F32", "F32"}, {"F32", "BF16"}, {"C64", "C64"}} {
		a, b := encodeAll(dts[0], va), encodeAll(dts[1], vb)
		var first, firstStats []byte
		for _, procs := range []int{1, 2, 8} {
			old := runtime.GOMAXPROCS(procs)
			for _, workers := range []int{0, 1, 2, 3, 8} {
				d := compareTensors(t, dts[0], a, dts[1], b, Tolerance{Atol: 1e-3, Rtol: 1e-2}, workers)
				js, _ := json.Marshal(d)
				s, err := SummarizeTensor(context.Background(), Tensor{DType: dts[0], R: byteReader(a), Len: int64(len(a))}, Options{Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				ss, _ := json.Marshal(s)
				if first == nil {
					first, firstStats = js, ss
				} else if !bytes.Equal(js, first) || !bytes.Equal(ss, firstStats) {
					t.Errorf("%v GOMAXPROCS %d, %d workers:\n%s\n%s\nfirst:\n%s\n%s", dts, procs, workers, js, ss, first, firstStats)
				}
			}
			runtime.GOMAXPROCS(old)
		}
	}
}

// TestMergeMatchesOnePass: accumulating chunk by chunk and merging in order gives the counts, the
// extremes and the index of one pass, and sums equal to rounding.
func TestMergeMatchesOnePass(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	va := sample(r, 10000, 1, true)
	vb := perturb(r, va, 0.1)
	a, b := encodeAll("F16", va), encodeAll("F8_E4M3", vb)
	one := pairOf(t, "F16", a, "F8_E4M3", b, Tolerance{Atol: 0.05})
	total, _ := NewPairStats("F16", "F8_E4M3", Tolerance{Atol: 0.05})
	s1, _ := NewSummary("F16")
	for lo := 0; lo < len(va); {
		hi := min(lo+1+r.IntN(3000), len(va))
		p, _ := NewPairStats("F16", "F8_E4M3", Tolerance{Atol: 0.05})
		if err := p.Add(a[2*lo:2*hi], b[lo:hi]); err != nil {
			t.Fatal(err)
		}
		total.Merge(p)
		s, _ := NewSummary("F16")
		s.Add(a[2*lo : 2*hi])
		s1.Merge(s)
		lo = hi
	}
	got := total.Result()
	if got.Count != one.Count || got.Differing != one.Differing || got.OutsideTolerance != one.OutsideTolerance ||
		got.MaxAbsDiff != one.MaxAbsDiff || got.MaxAbsDiffIndex != one.MaxAbsDiffIndex || got.NaNA != one.NaNA ||
		got.InfB != one.InfB || *got.Rounding != *one.Rounding {
		t.Errorf("merged %+v %+v\none pass %+v %+v", got, got.Rounding, one, one.Rounding)
	}
	if !close(got.RelL2, one.RelL2, 1e-14) || !close(got.Cosine, one.Cosine, 1e-14) || !close(got.MeanAbsDiff, one.MeanAbsDiff, 1e-14) {
		t.Errorf("sums: merged %v %v %v, one pass %v %v %v", got.RelL2, got.Cosine, got.MeanAbsDiff, one.RelL2, one.Cosine, one.MeanAbsDiff)
	}
	s0, _ := NewSummary("F16")
	s0.Add(a)
	x, y := s0.Result(), s1.Result()
	if x.Count != y.Count || x.Min != y.Min || x.Max != y.Max || x.NaN != y.NaN || x.Zeros != y.Zeros ||
		!close(x.Mean, y.Mean, 1e-14) || !close(x.Std, y.Std, 1e-14) || !close(x.L2, y.L2, 1e-14) {
		t.Errorf("summary merged %+v, one pass %+v", y, x)
	}
}

// TestTolerance covers numpy.isclose's rules: ≤ (not <), asymmetry (|b| scales rtol), NaN only
// with EqualNaN, infinities only equal to themselves.
func TestTolerance(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name               string
		a, b               []float64
		tol                Tolerance
		outside, differing int64
	}{
		{"atol boundary", []float64{1, 1, 1}, []float64{1.5, 1.25, 2}, Tolerance{Atol: 0.5}, 1, 3},
		{"rtol scales b", []float64{1, 1}, []float64{2, 4}, Tolerance{Rtol: 0.5}, 1, 2},
		{"rtol swapped", []float64{2, 4}, []float64{1, 1}, Tolerance{Rtol: 0.5}, 2, 2},
		{"atol plus rtol", []float64{10, 10}, []float64{12, 12.5}, Tolerance{Atol: 1, Rtol: 1.0 / 12}, 1, 2},
		{"exact", []float64{0, math.Copysign(0, -1), 1, 1}, []float64{math.Copysign(0, -1), 0, 1, 1.0000001}, Tolerance{}, 1, 1},
		{"nan", []float64{nan, nan, 1}, []float64{nan, 1, nan}, Tolerance{Atol: 10}, 3, 2},
		{"nan equal", []float64{nan, nan, 1}, []float64{nan, 1, nan}, Tolerance{Atol: 10, EqualNaN: true}, 2, 2},
		{"inf", []float64{inf, inf, -inf, inf}, []float64{inf, -inf, -inf, 1e308}, Tolerance{Atol: 1e308, Rtol: 1}, 2, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := pairOf(t, "F64", f64Bytes(c.a...), "F64", f64Bytes(c.b...), c.tol)
			if d.OutsideTolerance != c.outside || d.WithinTolerance != (c.outside == 0) || d.Differing != c.differing {
				t.Errorf("outside %d within %v differing %d, want %d %v %d", d.OutsideTolerance, d.WithinTolerance, d.Differing, c.outside, c.outside == 0, c.differing)
			}
			// The careful loop (a NaN elsewhere in the block) must agree with the fast one.
			a, b := append([]float64{nan}, c.a...), append([]float64{nan}, c.b...)
			ds := pairOf(t, "F64", f64Bytes(a...), "F64", f64Bytes(b...), c.tol)
			extra := int64(b2i(!c.tol.EqualNaN))
			if ds.OutsideTolerance != c.outside+extra || ds.Differing != c.differing {
				t.Errorf("slow path: outside %d differing %d, want %d %d", ds.OutsideTolerance, ds.Differing, c.outside+extra, c.differing)
			}
		})
	}
	if _, err := NewPairStats("F32", "F32", Tolerance{Atol: -1}); !errors.Is(err, ErrTolerance) {
		t.Errorf("negative atol: %v", err)
	}
	if _, err := NewPairStats("F32", "F32", Tolerance{Rtol: nan}); !errors.Is(err, ErrTolerance) {
		t.Errorf("NaN rtol: %v", err)
	}
}

// TestPairKnown checks every field on a small hand-computed case.
func TestPairKnown(t *testing.T) {
	d := pairOf(t, "F32", f32Bytes(3, 4, 0, 1), "F32", f32Bytes(3, 0, 0, 2), Tolerance{Atol: 1.5})
	// diffs 0, 4, 0, 1; ‖a‖ = √26, ‖b‖ = √13, ⟨a,b⟩ = 11, ‖a−b‖ = √17.
	want := Diff{Count: 4, Differing: 2, DiffFraction: 0.5, MaxAbsDiff: 4, MaxAbsDiffIndex: 1, MeanAbsDiff: 1.25,
		RelL2: math.Sqrt(17) / math.Sqrt(26), Cosine: 11 / math.Sqrt(26) / math.Sqrt(13), OutsideTolerance: 1}
	if d.Count != want.Count || d.Differing != want.Differing || d.DiffFraction != want.DiffFraction || d.MaxAbsDiff != want.MaxAbsDiff ||
		d.MaxAbsDiffIndex != want.MaxAbsDiffIndex || d.MeanAbsDiff != want.MeanAbsDiff || !close(d.RelL2, want.RelL2, 1e-15) ||
		!close(d.Cosine, want.Cosine, 1e-15) || d.OutsideTolerance != 1 || d.WithinTolerance || d.ExactRounding != nil {
		t.Errorf("got %+v\nwant %+v", d, want)
	}
	// The first of equal maxima is reported; a later chunk's equal maximum does not replace it.
	d = compareTensors(t, "U8", append(make([]byte, ChunkElements+5), 0), "U8", append(make([]byte, ChunkElements+5), 7), Tolerance{}, 2)
	if d.MaxAbsDiffIndex != ChunkElements+5 {
		t.Errorf("index %d", d.MaxAbsDiffIndex)
	}
	a, b := make([]byte, 3*ChunkElements), make([]byte, 3*ChunkElements)
	a[10], a[2*ChunkElements+10] = 9, 9
	if d := compareTensors(t, "I8", a, "I8", b, Tolerance{}, 3); d.MaxAbsDiffIndex != 10 || d.Differing != 2 {
		t.Errorf("index %d, differing %d", d.MaxAbsDiffIndex, d.Differing)
	}
	// Nothing differs: index −1; zero norms: rel_l2 0, cosine undefined (null in JSON).
	d = pairOf(t, "F16", u16Bytes(0, 0x8000), "F16", u16Bytes(0x8000, 0), Tolerance{})
	if d.MaxAbsDiffIndex != -1 || d.Differing != 0 || d.RelL2 != 0 || !math.IsNaN(d.Cosine) || !d.WithinTolerance {
		t.Errorf("zeros: %+v", d)
	}
	js, _ := json.Marshal(d)
	for _, k := range []string{`"cosine":null`, `"rel_l2":0`, `"max_abs_diff_index":-1`, `"max_abs_diff":0`, `"within_tolerance":true`} {
		if !strings.Contains(string(js), k) {
			t.Errorf("JSON %s lacks %s", js, k)
		}
	}
	if strings.Contains(string(js), "exact_rounding") {
		t.Errorf("JSON %s has exact_rounding for one dtype", js)
	}
	// Only NaN pairs: no finite pair, every float undefined.
	d = pairOf(t, "F32", f32Bytes(math.NaN()), "F32", f32Bytes(math.NaN()), Tolerance{})
	if !math.IsNaN(d.MaxAbsDiff) || !math.IsNaN(d.MeanAbsDiff) || !math.IsNaN(d.RelL2) || d.Differing != 0 || d.OutsideTolerance != 1 {
		t.Errorf("NaN only: %+v", d)
	}
	if js, err := json.Marshal(d); err != nil || !strings.Contains(string(js), `"max_abs_diff":null`) {
		t.Errorf("NaN only JSON %s: %v", js, err)
	}
	// Empty tensors.
	if d := pairOf(t, "F32", nil, "BF16", nil, Tolerance{}); d.Count != 0 || d.DiffFraction != 0 || !d.WithinTolerance || !*d.ExactRounding {
		t.Errorf("empty: %+v", d)
	}
	// I64 beyond 2^53: values that round to the same float64 still count as differing.
	le := binary.LittleEndian
	d = pairOf(t, "I64", le.AppendUint64(nil, 1<<60), "I64", le.AppendUint64(nil, 1<<60+1), Tolerance{})
	if d.Differing != 1 || d.MaxAbsDiff != 0 {
		t.Errorf("I64: %+v", d)
	}
	// Complex: modulus of the difference, real inner product.
	c := func(re, im float64) []byte { return f32Bytes(re, im) }
	d = pairOf(t, "C64", append(c(3, 4), c(1, 0)...), "C64", append(c(0, 0), c(1, 1)...), Tolerance{})
	if d.MaxAbsDiff != 5 || d.MaxAbsDiffIndex != 0 || d.MeanAbsDiff != 3 || d.Differing != 2 || !close(d.Cosine, 1/math.Sqrt(26)/math.Sqrt(2), 1e-15) {
		t.Errorf("C64: %+v", d)
	}
}

// TestRoundingCheck covers the cross-dtype verdict: saturation, NaN payloads, signed zeros,
// subnormals, double rounding from F64, and how far off a mismatch is.
func TestRoundingCheck(t *testing.T) {
	type want struct {
		exact                        bool
		mismatches, saturated, first int64
		maxULP                       int64
		maxDev                       float64
	}
	check := func(name string, d Diff, w want) {
		t.Helper()
		r := d.Rounding
		if r == nil || d.ExactRounding == nil {
			t.Fatalf("%s: no rounding check", name)
		}
		if *d.ExactRounding != w.exact || r.Mismatches != w.mismatches || r.Saturated != w.saturated ||
			r.FirstMismatch != w.first || r.MaxULP != w.maxULP || r.MaxAbsDeviation != w.maxDev {
			t.Errorf("%s: %v %+v, want %+v", name, *d.ExactRounding, *r, w)
		}
	}
	nan := math.NaN()
	check("F32→F16 overflow", pairOf(t, "F32", f32Bytes(65520, -1e6), "F16", u16Bytes(0x7C00, 0xFC00), Tolerance{}),
		want{exact: true, first: -1})
	check("F32→F16 clamped", pairOf(t, "F32", f32Bytes(65520, -1e6), "F16", u16Bytes(0x7BFF, 0xFBFF), Tolerance{}),
		want{exact: true, saturated: 2, first: -1})
	check("F32→E4M3", pairOf(t, "F32", f32Bytes(1000, -1000, 1000, 448, 3), "F8_E4M3", []byte{0x7E, 0xFE, 0x7F, 0x7E, 0x44}, Tolerance{}),
		want{exact: true, saturated: 2, first: -1})
	check("E4M3 wrong", pairOf(t, "F32", f32Bytes(3, 3.25, 1000), "F8_E4M3", []byte{0x45, 0x46, 0x7D}, Tolerance{}),
		want{mismatches: 3, first: 0, maxULP: 1, maxDev: 0.25})
	nanPayload := float64(math.Float32frombits(0x7FA00001))
	check("NaN payloads", pairOf(t, "F32", f32Bytes(nanPayload, nan, -nan), "BF16", u16Bytes(0x7FC0, 0xFFFF, 0x7F81), Tolerance{}),
		want{exact: true, first: -1})
	check("NaN for a number", pairOf(t, "F32", f32Bytes(1, nan), "BF16", u16Bytes(0x7FC0, 0x3F80), Tolerance{}),
		want{mismatches: 2, first: 0})
	check("signed zero", pairOf(t, "F32", f32Bytes(math.Copysign(0, -1), 0), "BF16", u16Bytes(0x0000, 0x0000), Tolerance{}),
		want{mismatches: 1, first: 0})
	tiny := math.Ldexp(3, -134) // 1.5 BF16 subnormal ulps: a tie, rounds to even code 2
	check("subnormal", pairOf(t, "F32", f32Bytes(tiny, -tiny), "BF16", u16Bytes(0x0002, 0x8002), Tolerance{}),
		want{exact: true, first: -1})
	check("subnormal off", pairOf(t, "F32", f32Bytes(tiny), "BF16", u16Bytes(0x0001), Tolerance{}),
		want{mismatches: 1, first: 0, maxULP: 1, maxDev: math.Ldexp(1, -133)})
	x := 1 + math.Ldexp(1, -11) + math.Ldexp(1, -40) // F16: directly 0x3C01, through float32 0x3C00
	check("double rounding", pairOf(t, "F64", f64Bytes(x, x, x), "F16", u16Bytes(0x3C01, 0x3C00, 0x3C02), Tolerance{}),
		want{mismatches: 1, first: 2, maxULP: 1, maxDev: math.Ldexp(1, -10)})
	check("F16→BF16", pairOf(t, "F16", u16Bytes(0x3C01, 0x7BFF), "BF16", u16Bytes(0x3F80, 0x4780), Tolerance{}),
		want{exact: true, first: -1}) // 1+2^-10 rounds to 1; 65504 to 65536
	check("F4 saturates", pairOf(t, "F32", f32Bytes(100, -7, 0.25, 5), "F4", []byte{0xF7, 0x60}, Tolerance{}),
		want{exact: true, first: -1})
	check("F4 NaN", pairOf(t, "F32", f32Bytes(nan, 1), "F4", []byte{0x20}, Tolerance{}), want{mismatches: 1, first: 0})
	// A mismatch in a later chunk is indexed in the whole tensor.
	n := 2*ChunkElements + 10
	wide := f32Bytes(make([]float64, n)...)
	narrow := u16Bytes(make([]uint16, n)...)
	narrow[2*(ChunkElements+3)] = 1
	check("later chunk", compareTensors(t, "F32", wide, "BF16", narrow, Tolerance{}, 3),
		want{mismatches: 1, first: ChunkElements + 3, maxULP: 1, maxDev: math.Ldexp(1, -133)})
	for _, dts := range [][2]tensor.DType{{"F32", "I32"}, {"C64", "F32"}, {"BF16", "BF16"}, {"U8", "I8"}} {
		a, b := make([]byte, formats[dts[0]].byteLen(2)), make([]byte, formats[dts[1]].byteLen(2))
		if d := pairOf(t, dts[0], a, dts[1], b, Tolerance{}); d.ExactRounding != nil || d.Rounding != nil {
			t.Errorf("%v: rounding check %+v", dts, d.Rounding)
		}
	}
}

type shortReader struct{ n int64 }

func (r shortReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.n {
		return int(max(0, r.n-off)), io.EOF
	}
	return len(p), nil
}

// TestErrors: bad dtypes, lengths, short reads and cancellation are errors, never panics.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := NewPairStats("F32", "F5", Tolerance{}); !errors.Is(err, ErrDType) {
		t.Errorf("unknown dtype: %v", err)
	}
	if _, err := NewSummary("bf16"); !errors.Is(err, ErrDType) {
		t.Errorf("lower-case dtype: %v", err)
	}
	p, _ := NewPairStats("F32", "BF16", Tolerance{})
	if err := p.Add(make([]byte, 8), make([]byte, 2)); !errors.Is(err, ErrLength) {
		t.Errorf("2 against 1 elements: %v", err)
	}
	if err := p.Add(make([]byte, 6), make([]byte, 3)); !errors.Is(err, ErrLength) {
		t.Errorf("partial elements: %v", err)
	}
	s, _ := NewSummary("F6_E2M3")
	if err := s.Add(make([]byte, 4)); !errors.Is(err, ErrLength) {
		t.Errorf("F6 4 bytes: %v", err)
	}
	ta := Tensor{DType: "F32", R: shortReader{n: 100}, Len: 4 * ChunkElements}
	tb := Tensor{DType: "F32", R: byteReader(make([]byte, 4*ChunkElements)), Len: 4 * ChunkElements}
	if _, err := CompareTensors(ctx, ta, tb, Options{}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short read: %v", err)
	}
	if _, err := SummarizeTensor(ctx, ta, Options{}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short read: %v", err)
	}
	tb.Len = 8
	if _, err := CompareTensors(ctx, ta, tb, Options{}); !errors.Is(err, ErrLength) {
		t.Errorf("element counts: %v", err)
	}
	// A tensor far larger than its reader (a header can claim anything): an error, found at once,
	// without memory in proportion to the claimed size.
	huge := Tensor{DType: "BF16", R: shortReader{n: 1 << 20}, Len: 1 << 60}
	if _, err := SummarizeTensor(ctx, huge, Options{}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("huge tensor: %v", err)
	}
	for _, bad := range []Tensor{{DType: "U8", R: tb.R, Len: -1}, {DType: "U8", R: tb.R, Off: -8, Len: 8}} {
		if _, err := SummarizeTensor(ctx, bad, Options{}); !errors.Is(err, ErrLength) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	tb.Len = 4 * ChunkElements
	if _, err := CompareTensors(cctx, tb, tb, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestStatsFindings covers the predicates check --values builds findings on.
func TestStatsFindings(t *testing.T) {
	sum := func(dt tensor.DType, b []byte) Stats {
		s, err := NewSummary(dt)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Add(b); err != nil {
			t.Fatal(err)
		}
		return s.Result()
	}
	if s := sum("F16", u16Bytes(0, 0x8000, 0)); !s.AllZero() || !s.Constant() || s.SubnormalOnly() || s.Zeros != 3 {
		t.Errorf("zeros: %+v", s)
	}
	if s := sum("F32", f32Bytes(2, 2, 2)); s.AllZero() || !s.Constant() || s.Std != 0 || s.Mean != 2 || !close(s.L2, math.Sqrt(12), 1e-15) {
		t.Errorf("constant: %+v", s)
	}
	if s := sum("F32", f32Bytes(2, 2, math.NaN())); s.Constant() || s.NaN != 1 || s.Count != 3 || s.Mean != 2 {
		t.Errorf("constant with NaN: %+v", s)
	}
	if s := sum("F16", u16Bytes(0x0001, 0x83FF, 0)); !s.SubnormalOnly() || s.Subnormal != 2 {
		t.Errorf("subnormal: %+v", s)
	}
	if s := sum("F16", u16Bytes(0x0001, 0x0400)); s.SubnormalOnly() || s.Subnormal != 1 {
		t.Errorf("one normal: %+v", s)
	}
	if s := sum("I8", []byte{0, 1}); s.Subnormal != 0 || s.Min != 0 || s.Max != 1 {
		t.Errorf("integers: %+v", s)
	}
	s := sum("F32", f32Bytes(math.Inf(1), math.NaN(), math.Inf(-1)))
	if s.Inf != 2 || s.NaN != 1 || !math.IsNaN(s.Mean) || s.L2 != 0 || s.AllZero() || s.Constant() {
		t.Errorf("no finite: %+v", s)
	}
	js, err := json.Marshal(s)
	if err != nil || !strings.Contains(string(js), `"min":null`) || !strings.Contains(string(js), `"std":null`) {
		t.Errorf("JSON %s: %v", js, err)
	}
	if s := sum("BF16", nil); s.Count != 0 || s.AllZero() || s.Constant() {
		t.Errorf("empty: %+v", s)
	}
}

// TestKernelsAgree: the table loops for 16- and 8-bit codes give bit-for-bit the results of decoding
// to float64 first, NaN blocks, tolerance and a short last word included.
func TestKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	n := 3*blockLen + 7
	va := sample(r, n, 1, true)
	vb := perturb(r, va, 0.05)
	for _, dts := range [][2]tensor.DType{{"BF16", "BF16"}, {"F16", "F16"}, {"F8_E4M3", "F8_E4M3"}, {"F8_E5M2", "F8_E5M2"}, {"U8", "I8"}} {
		for _, tol := range []Tolerance{{}, {Atol: 0.01, Rtol: 0.1}} {
			a, b := encodeAll(dts[0], va), encodeAll(dts[1], vb)
			fast, _ := NewPairStats(dts[0], dts[1], tol)
			if fast.kern != kern16 && fast.kern != kern8 {
				t.Fatalf("%v: kernel %d", dts, fast.kern)
			}
			slow, _ := NewPairStats(dts[0], dts[1], tol)
			slow.kern = kernF64
			if err := fast.Add(a, b); err != nil {
				t.Fatal(err)
			}
			if err := slow.Add(a, b); err != nil {
				t.Fatal(err)
			}
			x, _ := json.Marshal(fast.Result())
			y, _ := json.Marshal(slow.Result())
			if !bytes.Equal(x, y) {
				t.Errorf("%v %+v:\ntable   %s\ndecoded %s", dts, tol, x, y)
			}
		}
	}
}

// TestJSONFields: MarshalJSON writes every field's tag, in the struct's order, so a field added to
// Diff or Stats cannot be forgotten there.
func TestJSONFields(t *testing.T) {
	tr, rmse := true, 0.5
	for _, v := range []any{
		Diff{Count: 1, RelL2: 1, ExactRounding: &tr, Rounding: &Rounding{}, RMSE: &rmse},
		Stats{Count: 1},
	} {
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		rt := reflect.TypeOf(v)
		last := -1
		for i := range rt.NumField() {
			tag := strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]
			at := strings.Index(string(js), `"`+tag+`":`)
			if at < 0 || at < last {
				t.Errorf("%s: %s missing or out of order in %s", rt.Name(), tag, js)
			}
			last = at
		}
	}
}

// TestSumSquaredDiff: Σ(a−b)² over the finite pairs, merged chunks included (quantize-stats' RMSE is
// its mean's root).
func TestSumSquaredDiff(t *testing.T) {
	f32 := func(xs ...float32) []byte {
		var b []byte
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		return b
	}
	p, err := NewPairStats("F32", "F32", Tolerance{})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := NewPairStats("F32", "F32", Tolerance{})
	if err := p.Add(f32(1, 2), f32(1, 4)); err != nil {
		t.Fatal(err)
	}
	if err := q.Add(f32(3, float32(math.Inf(1))), f32(0, 5)); err != nil {
		t.Fatal(err)
	}
	p.Merge(q)
	if got := p.SumSquaredDiff(); got != 13 {
		t.Errorf("SumSquaredDiff = %v, want 13 (4 + 9, the infinite pair left out)", got)
	}
}
