package values

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stdiff/stdiff/canon"
)

// benchElems is the tensor size benchmarks use: 4 chunks.
const benchElems = 4 * ChunkElements

// weights returns n normal(0, 0.02) values encoded as dt, and a copy with about half the values
// nudged, as a fine-tune would: the pair a diff compares.
func weights(dt canon.DType, n int, seed uint64) (a, b []byte) {
	r := rand.New(rand.NewPCG(seed, 1))
	va := make([]float64, n)
	vb := make([]float64, n)
	for i := range va {
		va[i] = r.NormFloat64() * 0.02
		vb[i] = va[i]
		if r.IntN(2) == 0 {
			vb[i] += r.NormFloat64() * 0.001
		}
	}
	return encodeAll(dt, va), encodeAll(dt, vb)
}

func BenchmarkPairStats(b *testing.B) {
	for _, c := range []struct{ a, b canon.DType }{
		{"BF16", "BF16"}, {"F16", "F16"}, {"F32", "F32"}, {"F64", "F64"}, {"F8_E4M3", "F8_E4M3"},
		{"F4", "F4"}, {"F6_E2M3", "F6_E2M3"}, {"I32", "I32"}, {"C64", "C64"}, {"F32", "BF16"}, {"BF16", "F8_E4M3"},
	} {
		name := string(c.a)
		if c.a != c.b {
			name += "-" + string(c.b)
		}
		b.Run(name, func(b *testing.B) {
			x, _ := weights(c.a, benchElems, 1)
			_, y := weights(c.b, benchElems, 1)
			b.SetBytes(int64(len(x) + len(y)))
			p, err := NewPairStats(c.a, c.b, Tolerance{Atol: 1e-8, Rtol: 1e-5})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				q := p.empty()
				if err := q.Add(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkStats(b *testing.B) {
	for _, dt := range []canon.DType{"BF16", "F16", "F32", "F64", "F8_E4M3", "F4", "I32", "C64"} {
		b.Run(string(dt), func(b *testing.B) {
			x, _ := weights(dt, benchElems, 1)
			b.SetBytes(int64(len(x)))
			for b.Loop() {
				s, _ := NewSummary(dt)
				if err := s.Add(x); err != nil {
					b.Fatal(err)
				}
			}
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

var _ = math.Pi
