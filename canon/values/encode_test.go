package values

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stdiff/stdiff/canon/tensor"
)

// TestEncodeEveryCode: every value a format can hold encodes back to its own code (NaNs to a NaN).
func TestEncodeEveryCode(t *testing.T) {
	for _, f := range refFormats {
		for c := uint32(0); c < 1<<f.bits; c++ {
			v := f.ref(c)
			got, ok := Encode(f.dt, v)
			switch {
			case v != v:
				if !ok || !formats[f.dt].mini.isNaN(got) {
					t.Errorf("%s: NaN encodes to %#x (ok %v)", f.dt, got, ok)
				}
			case !ok || got != c:
				t.Errorf("%s: %v encodes to %#x (ok %v), want %#x", f.dt, v, got, ok, c)
			}
		}
	}
}

// TestEncodeTiesToEven: halfway between two neighbouring codes, the even code wins; a hair off the
// middle, the nearer one does. Checked for every pair of neighbouring positive and negative codes.
func TestEncodeTiesToEven(t *testing.T) {
	for _, f := range refFormats {
		if f.dt == "F8_E8M0" {
			continue // no mantissa: ties go up (TestEncodeSpot)
		}
		m := formats[f.dt].mini
		for c := uint32(0); c < m.maxMag; c++ {
			for _, sign := range []uint32{0, m.signBit} {
				lo, hi := f.ref(sign|c), f.ref(sign|(c+1))
				if sign != 0 && c == 0 && m.flavor == fnuz {
					lo = 0 // FNUZ has no −0: the negative neighbour of −min is +0
				}
				mid := (lo + hi) / 2
				even := c
				if c%2 == 1 {
					even = c + 1
				}
				wantEven := sign | even
				if even == 0 && m.flavor == fnuz {
					wantEven = 0
				}
				if got, _ := Encode(f.dt, mid); got != wantEven {
					t.Errorf("%s: %v (between %v and %v) → %#x, want %#x", f.dt, mid, lo, hi, got, wantEven)
				}
				toward := func(x, target float64) float64 { return math.Nextafter(x, target) }
				if got, _ := Encode(f.dt, toward(mid, lo)); got != sign|c && !(c == 0 && m.flavor == fnuz && got == 0) {
					t.Errorf("%s: just below the middle of %v and %v → %#x, want %#x", f.dt, lo, hi, got, sign|c)
				}
				if got, _ := Encode(f.dt, toward(mid, hi)); got != sign|(c+1) {
					t.Errorf("%s: just above the middle of %v and %v → %#x, want %#x", f.dt, lo, hi, got, sign|(c+1))
				}
			}
		}
	}
}

// TestEncodeSpot pins overflow, underflow and the special rules of each format.
func TestEncodeSpot(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	const none = noCode
	for _, c := range []struct {
		dt   tensor.DType
		x    float64
		want uint32 // none: no code
	}{
		{"F16", 65504, 0x7BFF}, {"F16", 65519.99, 0x7BFF}, {"F16", 65520, 0x7C00}, {"F16", 1e10, 0x7C00},
		{"F16", -65520, 0xFC00}, {"F16", inf, 0x7C00}, {"F16", math.Ldexp(1, -24), 0x0001},
		{"F16", math.Ldexp(1, -25), 0x0000}, {"F16", math.Ldexp(1.0000001, -25), 0x0001},
		{"F16", math.Ldexp(3, -25), 0x0002}, {"F16", math.Ldexp(3, -26), 0x0001}, {"F16", math.Copysign(0, -1), 0x8000}, {"F16", -1e-30, 0x8000},
		{"F16", math.Ldexp(1, -14), 0x0400}, {"F16", math.Ldexp(1023.5, -24), 0x0400}, // rounds up into the normals
		{"BF16", 1 + math.Ldexp(1, -8), 0x3F80}, {"BF16", 1 + math.Ldexp(3, -8), 0x3F82},
		{"BF16", float64(math.MaxFloat32), 0x7F80}, {"BF16", -3.4e38, 0xFF80}, {"BF16", -3.39e38, 0xFF7F}, {"BF16", math.Ldexp(1, -133), 0x0001},
		{"F8_E4M3", 448, 0x7E}, {"F8_E4M3", 464, 0x7E}, {"F8_E4M3", 464.01, 0x7F}, {"F8_E4M3", 480, 0x7F},
		{"F8_E4M3", -480, 0xFF}, {"F8_E4M3", 1e6, 0x7F}, {"F8_E4M3", inf, 0x7F}, {"F8_E4M3", -inf, 0xFF},
		{"F8_E4M3", math.Ldexp(1, -10), 0x00}, {"F8_E4M3", math.Ldexp(1.01, -10), 0x01},
		{"F8_E4M3", -math.Ldexp(1, -11), 0x80},
		{"F8_E5M2", 57344, 0x7B}, {"F8_E5M2", 61439, 0x7B}, {"F8_E5M2", 61440, 0x7C}, {"F8_E5M2", inf, 0x7C},
		{"F8_E5M2", -inf, 0xFC}, {"F8_E5M2", math.Ldexp(1, -17), 0x00}, {"F8_E5M2", math.Ldexp(3, -17), 0x02},
		{"F8_E4M3FNUZ", 240, 0x7F}, {"F8_E4M3FNUZ", 247.99, 0x7F}, {"F8_E4M3FNUZ", 248, 0x80},
		{"F8_E4M3FNUZ", -248, 0x80}, {"F8_E4M3FNUZ", inf, 0x80}, {"F8_E4M3FNUZ", -1e-30, 0x00},
		{"F8_E4M3FNUZ", math.Copysign(0, -1), 0x00}, {"F8_E4M3FNUZ", -math.Ldexp(1, -10), 0x81},
		{"F8_E5M2FNUZ", 57344, 0x7F}, {"F8_E5M2FNUZ", 61440, 0x80}, {"F8_E5M2FNUZ", -math.Ldexp(1, -19), 0x00},
		{"F8_E8M0", 1, 0x7F}, {"F8_E8M0", 1.5, 0x80}, {"F8_E8M0", 1.4999, 0x7F}, {"F8_E8M0", 0, 0x00},
		{"F8_E8M0", -4, 0x81}, {"F8_E8M0", math.Ldexp(1, -127), 0x00}, {"F8_E8M0", math.Ldexp(1.5, -127), 0x01},
		{"F8_E8M0", math.Ldexp(1.6, 127), 0xFF}, {"F8_E8M0", math.Ldexp(1.4, 127), 0xFE}, {"F8_E8M0", inf, 0xFF},
		{"F8_E8M0", nan, 0xFF},
		{"F4", 6, 0x7}, {"F4", 5, 0x6}, {"F4", 7, 0x7}, {"F4", 100, 0x7}, {"F4", inf, 0x7}, {"F4", -inf, 0xF},
		{"F4", 0.25, 0x0}, {"F4", 0.75, 0x2}, {"F4", -0.3, 0x9}, {"F4", nan, none},
		{"F6_E2M3", 7.5, 0x1F}, {"F6_E2M3", 8, 0x1F}, {"F6_E2M3", -1e9, 0x3F}, {"F6_E2M3", 0.0625, 0x00},
		{"F6_E3M2", 28, 0x1F}, {"F6_E3M2", 30, 0x1F}, {"F6_E3M2", 0.03125, 0x00}, {"F6_E3M2", nan, none},
	} {
		got, ok := Encode(c.dt, c.x)
		if c.want == none {
			if ok {
				t.Errorf("Encode(%s, %v) = %#x, want no code", c.dt, c.x, got)
			}
			continue
		}
		if !ok || got != c.want {
			t.Errorf("Encode(%s, %v) = %#x (ok %v), want %#x", c.dt, c.x, got, ok, c.want)
		}
	}
	for _, dt := range []tensor.DType{"F16", "BF16", "F32", "F8_E4M3", "F8_E5M2"} {
		if c, ok := Encode(dt, nan); !ok || !formats[dt].mini.isNaN(c) {
			t.Errorf("Encode(%s, NaN) = %#x, not a NaN", dt, c)
		}
	}
	for _, dt := range []tensor.DType{"F64", "I32", "C64", "BOOL", "nope"} {
		if _, ok := Encode(dt, 1); ok {
			t.Errorf("Encode(%s) accepted", dt)
		}
	}
}

// TestEncodeF32MatchesGo: the generic encoder agrees with Go's float64→float32 conversion (IEEE
// round to nearest even) on random values of every magnitude, subnormals and overflow included.
func TestEncodeF32MatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 200000 {
		x := math.Float64frombits(r.Uint64())
		if r.IntN(2) == 0 { // concentrate around float32's range
			x = math.Ldexp(r.Float64()+0.5, r.IntN(320)-170)
		}
		want := math.Float32bits(float32(x))
		got, _ := Encode("F32", x)
		if x != x {
			if !mF32.isNaN(got) {
				t.Fatalf("F32 NaN → %#x", got)
			}
			continue
		}
		if got != want {
			t.Fatalf("Encode(F32, %v) = %#x, Go says %#x", x, got, want)
		}
	}
}

// TestRound covers Round's special results.
func TestRound(t *testing.T) {
	for _, c := range []struct {
		dt   tensor.DType
		x, w float64
	}{
		{"F64", 0.1, 0.1}, {"BF16", 1.00390625, 1}, {"F8_E4M3", 500, math.NaN()}, {"F16", 1e6, math.Inf(1)},
		{"F4", math.NaN(), math.NaN()}, {"F4", 2.4, 2},
	} {
		if v, ok := Round(c.dt, c.x); !ok || !same(v, c.w) {
			t.Errorf("Round(%s, %v) = %v, %v; want %v", c.dt, c.x, v, ok, c.w)
		}
	}
	if _, ok := Round("I8", 1); ok {
		t.Error("Round(I8) accepted")
	}
}

// TestRounder: Rounder is Round, its dtype looked up once: the same result for every float dtype on
// values of every kind (every code of the 4- to 16-bit formats, F32 and F64 values at random, the
// specials), and nil for the dtypes that are not floats. A value of a dtype rounds to itself in it
// (or NaN to NaN): package derived leaves such values unrounded.
func TestRounder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-40, 1e38, 3.5e38, 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
	for range 2000 {
		xs = append(xs, rng.NormFloat64(), rng.NormFloat64()*1e-6, math.Float64frombits(rng.Uint64()),
			float64(math.Float32frombits(rng.Uint32())))
	}
	for dt := range formats {
		round := Rounder(dt)
		if round == nil != !IsFloat(dt) {
			t.Errorf("Rounder(%s) nil %v, IsFloat %v", dt, round == nil, IsFloat(dt))
		}
		if round == nil {
			continue
		}
		for _, x := range xs {
			if want, ok := Round(dt, x); !ok || !same(round(x), want) {
				t.Fatalf("Rounder(%s)(%v) = %v, Round %v (ok %v)", dt, x, round(x), want, ok)
			}
		}
		own := xs // values of dt: every code of a narrow format, else xs rounded to it
		if f := formats[dt]; f.bits <= 16 {
			codes := make([]uint32, 1<<f.bits)
			for c := range codes {
				codes[c] = uint32(c)
			}
			own = make([]float64, len(codes))
			if n, err := Decode(dt, own, codeBytes(f.bits, codes)); err != nil || n != len(codes) {
				t.Fatalf("%s: decoded %d of %d: %v", dt, n, len(codes), err)
			}
		} else {
			own = make([]float64, len(xs))
			for i, x := range xs {
				own[i] = round(x)
			}
		}
		for _, v := range own {
			if !same(round(v), v) {
				t.Fatalf("%s: %v rounds to %v in its own dtype", dt, v, round(v))
			}
		}
	}
	if Rounder("I8") != nil || Rounder("C64") != nil || Rounder("Q4_K") != nil {
		t.Error("Rounder of a dtype that is not a float")
	}
}
