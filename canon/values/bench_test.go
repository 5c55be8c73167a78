package values

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stdiff/stdiff/canon/tensor"
)

// benchElems is the tensor size benchmarks use: 4 chunks.
const benchElems = 4 * ChunkElements

// weights returns n normal(0, 0.02) values encoded as dt, and a copy with every value nudged, as a
// fine-tune would: the pair a diff compares.
func weights(dt tensor.DType, n int, seed uint64) (a, b []byte) {
	r := rand.New(rand.NewPCG(seed, 1))
	va := make([]float64, n)
	vb := make([]float64, n)
	for i := range va {
		va[i] = r.NormFloat64() * 0.02
		vb[i] = va[i] + r.NormFloat64()*0.001
	}
	return encodeAll(dt, va), encodeAll(dt, vb)
}

// BenchmarkPairStats measures PairStats.Add on one goroutine; MB/s counts the bytes of both sides.
// The "+tol" cases count elements outside a tolerance (numpy's defaults), the others compare exactly.
func BenchmarkPairStats(b *testing.B) {
	for _, c := range []struct {
		a, b       tensor.DType
		tol, exact bool
	}{
		{"BF16", "BF16", false, false}, {"BF16", "BF16", true, false}, {"F16", "F16", false, false},
		{"F32", "F32", false, false}, {"F32", "F32", true, false}, {"F64", "F64", false, false},
		{"F8_E4M3", "F8_E4M3", false, false}, {"F4", "F4", false, false}, {"F6_E2M3", "F6_E2M3", false, false},
		{"I32", "I32", false, false}, {"C64", "C64", false, false},
		{"F32", "BF16", false, false}, {"F32", "BF16", false, true}, {"F32", "F16", false, true},
		{"BF16", "F8_E4M3", false, false},
	} {
		name := string(c.a)
		if c.a != c.b {
			name += "-" + string(c.b)
		}
		tol := Tolerance{}
		if c.tol {
			name += "+tol"
			tol = Tolerance{Atol: 1e-8, Rtol: 1e-5}
		}
		if c.exact {
			name += "=exact"
		}
		b.Run(name, func(b *testing.B) {
			x, _ := weights(c.a, benchElems, 1)
			_, y := weights(c.b, benchElems, 1)
			if c.exact { // y is x converted: the rounding check finds no mismatch
				y, _ = weights(c.b, benchElems, 1)
			}
			b.SetBytes(int64(len(x) + len(y)))
			p, err := NewPairStats(c.a, c.b, tol)
			if err != nil {
				b.Fatal(err)
			}
			clock := startCPU()
			for b.Loop() {
				q := p.empty()
				if err := q.Add(x, y); err != nil {
					b.Fatal(err)
				}
			}
			clock.report(b, int64(len(x)+len(y)))
		})
	}
}

// BenchmarkStats measures Summary.Add on one goroutine, its working memory reused from one Summary
// to the next as SummarizeAll and Chunked reuse it; MB/s counts the input bytes. The "/small" cases
// summarise tensors of 10,624 elements, those of testdata/bench/snapshot.sh, with Chunked.
func BenchmarkStats(b *testing.B) {
	for _, dt := range []tensor.DType{"BF16", "F16", "F32", "F64", "F8_E4M3", "F6_E2M3", "F4", "I16", "I32", "C64"} {
		b.Run(string(dt), func(b *testing.B) {
			x, _ := weights(dt, benchElems, 1)
			b.SetBytes(int64(len(x)))
			var buf *scratchSum
			clock := startCPU()
			for b.Loop() {
				s, _ := NewSummary(dt)
				s.buf = buf
				if err := s.Add(x); err != nil {
					b.Fatal(err)
				}
				buf = s.buf
			}
			clock.report(b, int64(len(x)))
		})
	}
	for _, dt := range []tensor.DType{"BF16", "F32"} {
		b.Run(string(dt)+"/small", func(b *testing.B) {
			x, _ := weights(dt, 83*128*16, 1)
			one := len(x) / 16
			b.SetBytes(int64(len(x)))
			var c Chunked
			clock := startCPU()
			for b.Loop() {
				for off := 0; off < len(x); off += one {
					if err := c.Reset(dt); err != nil {
						b.Fatal(err)
					}
					if err := c.Add(x[off : off+one]); err != nil {
						b.Fatal(err)
					}
					_ = c.Result()
				}
			}
			clock.report(b, int64(len(x)))
		})
	}
}

// BenchmarkCompareTensors measures the whole parallel path (reads from memory, GOMAXPROCS workers).
func BenchmarkCompareTensors(b *testing.B) {
	x, y := weights("BF16", 16*ChunkElements, 1)
	b.SetBytes(int64(len(x) + len(y)))
	ta := Tensor{DType: "BF16", R: byteReader(x), Len: int64(len(x))}
	tb := Tensor{DType: "BF16", R: byteReader(y), Len: int64(len(y))}
	for b.Loop() {
		if _, err := CompareTensors(context.Background(), ta, tb, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode measures Encode per value (the rounding check's inner step).
func BenchmarkEncode(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	v := make([]float64, 4096)
	for i := range v {
		v[i] = r.NormFloat64() * 0.02
	}
	for _, dt := range []tensor.DType{"BF16", "F16", "F8_E4M3", "F4"} {
		b.Run(string(dt), func(b *testing.B) {
			m := formats[dt].mini
			var sink uint32
			for b.Loop() {
				for _, x := range v {
					sink += m.encode(x)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(v)), "ns/value")
			_ = sink
		})
	}
}

// BenchmarkDecode measures Decode, the decoding kernel of each dtype family, on one goroutine; MB/s
// counts the input bytes.
func BenchmarkDecode(b *testing.B) {
	for _, dt := range []tensor.DType{"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E8M0", "F6_E2M3", "F4", "I64", "I32", "I16", "U8", "BOOL", "C64"} {
		b.Run(string(dt), func(b *testing.B) {
			x, _ := weights(dt, benchElems, 1)
			dst := make([]float64, blockLen)
			step := formats[dt].byteLen(blockLen)
			b.SetBytes(int64(len(x)))
			clock := startCPU()
			for b.Loop() {
				for off := 0; off+step <= len(x); off += step {
					if _, err := Decode(dt, dst, x[off:off+step]); err != nil {
						b.Fatal(err)
					}
				}
			}
			clock.report(b, int64(len(x)))
		})
	}
}

// BenchmarkCompareAll measures the whole path of `stdiff A B` on tensors in memory (GOMAXPROCS
// goroutines): 16 BF16 tensors of 1M elements, all equal (bytes compared only) or all changed (the
// byte pass stops at the first chunk, then every chunk is compared by value); MB/s counts both sides.
func BenchmarkCompareAll(b *testing.B) {
	for _, changed := range []bool{false, true} {
		name := map[bool]string{false: "equal", true: "changed"}[changed]
		b.Run(name, func(b *testing.B) {
			var pairs []Pair
			var total int64
			for i := range 16 {
				x, y := weights("BF16", 4*ChunkElements, uint64(i))
				if !changed {
					y = x
				}
				pairs = append(pairs, Pair{A: Tensor{DType: "BF16", R: byteReader(x), Len: int64(len(x))}, B: Tensor{DType: "BF16", R: byteReader(y), Len: int64(len(y))}})
				total += int64(len(x) + len(y))
			}
			b.SetBytes(total)
			for b.Loop() {
				if err := CompareAll(context.Background(), pairs, Options{}, func(int, Comparison) bool { return true }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
