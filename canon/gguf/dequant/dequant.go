// Package dequant turns GGUF tensor data back into float32 values, as ggml's reference dequantisers
// (dequantize_row_* in ggml-quants.c) do, bit for bit: the same float32 operations in the same order,
// never fused into one (an explicit float32 conversion rounds each product before it is added to).
// Values that are NaN in ggml's output are NaN here too, their payload aside.
//
// Supported: F32, F16, BF16, F64 and the integer types as values; Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q1_0,
// Q2_0, MXFP4, NVFP4, Q2_K…Q6_K, TQ1_0, TQ2_0, IQ4_NL, IQ4_XS, and IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS,
// IQ3_S, IQ1_S and IQ1_M, which index ggml's codebooks: codebooks.txt, taken as data from ggml's
// src/ggml-common.h by gen/main.go. ggml itself dequantises neither Q8_1 nor Q8_K (its intermediate
// types, never in a model file): Row says ErrUnsupported for them.
package dequant

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/stdiff/stdiff/canon/gguf"
)

// ErrUnsupported is the error for a type this package cannot dequantise.
var ErrUnsupported = errors.New("no dequantiser for this type")

// Supported reports whether Row can dequantise type t.
func Supported(t gguf.GGMLType) bool { _, ok := rows[t]; return ok }

// Row dequantises the blocks in src, of type t, into dst: one float32 per element. src must hold whole
// blocks and dst exactly as many elements as they hold.
func Row(t gguf.GGMLType, src []byte, dst []float32) error {
	f, ok := rows[t]
	info, known := t.Info()
	if !ok || !known {
		return fmt.Errorf("%s: %w", t, ErrUnsupported)
	}
	bs, ts := int(info.BlockSize), int(info.TypeSize)
	if len(src)%ts != 0 || len(src)/ts*bs != len(dst) {
		return fmt.Errorf("%s: %d bytes are not %d elements in blocks of %d (%d bytes each)", info.Name, len(src), len(dst), bs, ts)
	}
	for i := 0; i < len(src)/ts; i++ {
		f(src[i*ts:(i+1)*ts], dst[i*bs:(i+1)*bs])
	}
	return nil
}

// rows dequantise one block each.
var rows = map[gguf.GGMLType]func(b []byte, y []float32){
	gguf.TypeF32:    func(b []byte, y []float32) { y[0] = math.Float32frombits(binary.LittleEndian.Uint32(b)) },
	gguf.TypeF16:    func(b []byte, y []float32) { y[0] = half(b) },
	gguf.TypeBF16:   func(b []byte, y []float32) { y[0] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16) },
	gguf.TypeF64:    func(b []byte, y []float32) { y[0] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b))) },
	gguf.TypeI8:     func(b []byte, y []float32) { y[0] = float32(int8(b[0])) },
	gguf.TypeI16:    func(b []byte, y []float32) { y[0] = float32(int16(binary.LittleEndian.Uint16(b))) },
	gguf.TypeI32:    func(b []byte, y []float32) { y[0] = float32(int32(binary.LittleEndian.Uint32(b))) },
	gguf.TypeI64:    func(b []byte, y []float32) { y[0] = float32(int64(binary.LittleEndian.Uint64(b))) },
	gguf.TypeQ4_0:   q4_0,
	gguf.TypeQ4_1:   q4_1,
	gguf.TypeQ5_0:   q5_0,
	gguf.TypeQ5_1:   q5_1,
	gguf.TypeQ8_0:   q8_0,
	gguf.TypeQ1_0:   q1_0,
	gguf.TypeQ2_0:   q2_0,
	gguf.TypeMXFP4:  mxfp4,
	gguf.TypeNVFP4:  nvfp4,
	gguf.TypeQ2_K:   q2K,
	gguf.TypeQ3_K:   q3K,
	gguf.TypeQ4_K:   q4K,
	gguf.TypeQ5_K:   q5K,
	gguf.TypeQ6_K:   q6K,
	gguf.TypeTQ1_0:  tq1_0,
	gguf.TypeTQ2_0:  tq2_0,
	gguf.TypeIQ4_NL: iq4nl,
	gguf.TypeIQ4_XS: iq4xs,

	// The types that index ggml's codebooks (iq.go).
	gguf.TypeIQ2_XXS: iq2xxs,
	gguf.TypeIQ2_XS:  iq2xs,
	gguf.TypeIQ2_S:   iq2s,
	gguf.TypeIQ3_XXS: iq3xxs,
	gguf.TypeIQ3_S:   iq3s,
	gguf.TypeIQ1_S:   iq1s,
	gguf.TypeIQ1_M:   iq1m,
}

// half is the IEEE half-precision value of the two bytes at b (exact: every half is a float32).
func half(b []byte) float32 { return halfBits(binary.LittleEndian.Uint16(b)) }

func halfBits(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf, NaN
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: man × 2^-24
		v := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// mul and muladd are x*y and x*y+z in float32, each result rounded (never one fused operation).
func mul(x, y float32) float32       { return float32(x * y) }
func mulsub(x, y, z float32) float32 { return float32(x*y) - z }
func muladd(x, y, z float32) float32 { return float32(x*y) + z }

func q4_0(b []byte, y []float32) {
	d, qs := half(b), b[2:18]
	for j := range 16 {
		y[j] = mul(float32(int(qs[j]&0xf)-8), d)
		y[j+16] = mul(float32(int(qs[j]>>4)-8), d)
	}
}

func q4_1(b []byte, y []float32) {
	d, m, qs := half(b), half(b[2:]), b[4:20]
	for j := range 16 {
		y[j] = muladd(float32(qs[j]&0xf), d, m)
		y[j+16] = muladd(float32(qs[j]>>4), d, m)
	}
}

func q5_0(b []byte, y []float32) {
	d, qh, qs := half(b), binary.LittleEndian.Uint32(b[2:]), b[6:22]
	for j := range 16 {
		h0 := byte(qh>>j<<4) & 0x10
		h1 := byte(qh>>(j+12)) & 0x10
		y[j] = mul(float32(int(qs[j]&0xf|h0)-16), d)
		y[j+16] = mul(float32(int(qs[j]>>4|h1)-16), d)
	}
}

func q5_1(b []byte, y []float32) {
	d, m, qh, qs := half(b), half(b[2:]), binary.LittleEndian.Uint32(b[4:]), b[8:24]
	for j := range 16 {
		h0 := byte(qh>>j<<4) & 0x10
		h1 := byte(qh>>(j+12)) & 0x10
		y[j] = muladd(float32(qs[j]&0xf|h0), d, m)
		y[j+16] = muladd(float32(qs[j]>>4|h1), d, m)
	}
}

func q8_0(b []byte, y []float32) {
	d := half(b)
	for j := range 32 {
		y[j] = mul(float32(int8(b[2+j])), d)
	}
}

func q1_0(b []byte, y []float32) {
	d, qs := half(b), b[2:]
	for j := range 128 {
		if qs[j/8]>>(j%8)&1 != 0 {
			y[j] = d
		} else {
			y[j] = -d
		}
	}
}

func q2_0(b []byte, y []float32) {
	d, qs := half(b), b[2:]
	for j := range 64 {
		q := int(qs[j/4]>>((j%4)*2)) & 3
		y[j] = mul(float32(q-1), d)
	}
}

// fp4 are the E2M1 values, doubled (as ggml keeps them, its scales halved to match).
var fp4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// e8m0Half is an E8M0 scale times one half: 2^(x-128).
func e8m0Half(x uint8) float32 {
	if x < 2 {
		return math.Float32frombits(0x00200000 << x)
	}
	return math.Float32frombits(uint32(x-1) << 23)
}

func mxfp4(b []byte, y []float32) {
	d, qs := e8m0Half(b[0]), b[1:17]
	for j := range 16 {
		y[j] = mul(float32(fp4[qs[j]&0xf]), d)
		y[j+16] = mul(float32(fp4[qs[j]>>4]), d)
	}
}

// ue4m3Half is an unsigned E4M3 scale (bias 7) times one half; 0 and 0x7f are 0.
func ue4m3Half(x uint8) float32 {
	if x == 0 || x == 0x7f {
		return 0
	}
	exp, man := int(x>>3)&0xf, float32(x&7)
	var raw float32
	if exp == 0 {
		raw = float32(math.Ldexp(float64(man), -9))
	} else {
		raw = float32(math.Ldexp(float64(1+man/8), exp-7))
	}
	return raw * 0.5
}

func nvfp4(b []byte, y []float32) {
	scales, qs := b[0:4], b[4:36]
	for s := range 4 {
		d := ue4m3Half(scales[s])
		for j := range 8 {
			q := qs[s*8+j]
			y[s*16+j] = mul(float32(fp4[q&0xf]), d)
			y[s*16+j+8] = mul(float32(fp4[q>>4]), d)
		}
	}
}

func q2K(b []byte, y []float32) {
	scales, q, d, dmin := b[0:16], b[16:80], half(b[80:]), half(b[82:])
	is, k := 0, 0
	for n := 0; n < 256; n += 128 {
		shift := 0
		for range 4 {
			for half := 0; half < 32; half += 16 {
				sc := scales[is]
				is++
				dl, ml := mul(d, float32(sc&0xf)), mul(dmin, float32(sc>>4))
				for l := range 16 {
					y[k] = mulsub(dl, float32(int8(q[half+l]>>shift&3)), ml)
					k++
				}
			}
			shift += 2
		}
		q = q[32:]
	}
}

func q3K(b []byte, y []float32) {
	hmask, q, raw, dAll := b[0:32], b[32:96], b[96:108], half(b[108:])
	var aux [4]uint32
	for i := range 3 {
		aux[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	const kmask1, kmask2 = 0x03030303, 0x0f0f0f0f
	tmp := aux[2]
	aux[2] = aux[0]>>4&kmask2 | (tmp>>4&kmask1)<<4
	aux[3] = aux[1]>>4&kmask2 | (tmp>>6&kmask1)<<4
	aux[0] = aux[0]&kmask2 | (tmp&kmask1)<<4
	aux[1] = aux[1]&kmask2 | (tmp>>2&kmask1)<<4
	var scales [16]int8
	for i := range 16 {
		scales[i] = int8(aux[i/4] >> (8 * (i % 4)))
	}
	is, k, m := 0, 0, byte(1)
	for n := 0; n < 256; n += 128 {
		shift := 0
		for range 4 {
			for half := 0; half < 32; half += 16 {
				dl := mul(dAll, float32(int(scales[is])-32))
				is++
				for l := range 16 {
					v := int(int8(q[half+l] >> shift & 3))
					if hmask[half+l]&m == 0 {
						v -= 4
					}
					y[k] = mul(dl, float32(v))
					k++
				}
			}
			shift += 2
			m <<= 1
		}
		q = q[32:]
	}
}

// scaleMinK4 is the j-th 6-bit scale and min of a Q4_K or Q5_K block's 12 scale bytes.
func scaleMinK4(j int, q []byte) (d, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

func q4K(b []byte, y []float32) {
	d, dmin, scales, q := half(b), half(b[2:]), b[4:16], b[16:144]
	k := 0
	for is := 0; is < 8; is += 2 {
		sc, m := scaleMinK4(is, scales)
		d1, m1 := mul(d, float32(sc)), mul(dmin, float32(m))
		sc, m = scaleMinK4(is+1, scales)
		d2, m2 := mul(d, float32(sc)), mul(dmin, float32(m))
		for l := range 32 {
			y[k+l] = mulsub(d1, float32(q[l]&0xf), m1)
			y[k+32+l] = mulsub(d2, float32(q[l]>>4), m2)
		}
		k += 64
		q = q[32:]
	}
}

func q5K(b []byte, y []float32) {
	d, dmin, scales, qh, ql := half(b), half(b[2:]), b[4:16], b[16:48], b[48:176]
	k := 0
	u1, u2 := byte(1), byte(2)
	for is := 0; is < 8; is += 2 {
		sc, m := scaleMinK4(is, scales)
		d1, m1 := mul(d, float32(sc)), mul(dmin, float32(m))
		sc, m = scaleMinK4(is+1, scales)
		d2, m2 := mul(d, float32(sc)), mul(dmin, float32(m))
		for l := range 32 {
			h1, h2 := 0, 0
			if qh[l]&u1 != 0 {
				h1 = 16
			}
			if qh[l]&u2 != 0 {
				h2 = 16
			}
			y[k+l] = mulsub(d1, float32(int(ql[l]&0xf)+h1), m1)
			y[k+32+l] = mulsub(d2, float32(int(ql[l]>>4)+h2), m2)
		}
		k += 64
		ql = ql[32:]
		u1, u2 = u1<<2, u2<<2
	}
}

func q6K(b []byte, y []float32) {
	ql, qh, sc, d := b[0:128], b[128:192], b[192:208], half(b[208:])
	for n := 0; n < 256; n += 128 {
		for l := range 32 {
			is := l / 16
			q1 := int(int8(ql[l]&0xf|(qh[l]&3)<<4)) - 32
			q2 := int(int8(ql[l+32]&0xf|(qh[l]>>2&3)<<4)) - 32
			q3 := int(int8(ql[l]>>4|(qh[l]>>4&3)<<4)) - 32
			q4 := int(int8(ql[l+32]>>4|(qh[l]>>6&3)<<4)) - 32
			y[n+l] = mul(mul(d, float32(int8(sc[is]))), float32(q1))
			y[n+l+32] = mul(mul(d, float32(int8(sc[is+2]))), float32(q2))
			y[n+l+64] = mul(mul(d, float32(int8(sc[is+4]))), float32(q3))
			y[n+l+96] = mul(mul(d, float32(int8(sc[is+6]))), float32(q4))
		}
		ql, qh, sc = ql[64:], qh[32:], sc[8:]
	}
}

// trit is the n-th base-3 digit of a TQ1_0 byte, as ggml reads it: (q·3^n mod 256)·3 >> 8.
func trit(q byte, n int) float32 {
	p := [5]byte{1, 3, 9, 27, 81}
	x := q * p[n]
	return float32(int(uint16(x)*3>>8) - 1)
}

func tq1_0(b []byte, y []float32) {
	qs, qh, d := b[0:48], b[48:52], half(b[52:])
	k := 0
	for _, span := range [][2]int{{0, 32}, {32, 16}} {
		for n := range 5 {
			for m := range span[1] {
				y[k] = mul(trit(qs[span[0]+m], n), d)
				k++
			}
		}
	}
	for n := range 4 {
		for j := range 4 {
			y[k] = mul(trit(qh[j], n), d)
			k++
		}
	}
}

func tq2_0(b []byte, y []float32) {
	qs, d := b[0:64], half(b[64:])
	k := 0
	for j := 0; j < 64; j += 32 {
		for l := range 4 {
			for m := range 32 {
				y[k] = mul(float32(int(qs[j+m]>>(l*2)&3)-1), d)
				k++
			}
		}
	}
}

// iq4Values are IQ4_NL's and IQ4_XS's non-linear code points.
var iq4Values = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

func iq4nl(b []byte, y []float32) {
	d, qs := half(b), b[2:18]
	for j := range 16 {
		y[j] = mul(d, float32(iq4Values[qs[j]&0xf]))
		y[j+16] = mul(d, float32(iq4Values[qs[j]>>4]))
	}
}

func iq4xs(b []byte, y []float32) {
	d, scalesH, scalesL, qs := half(b), binary.LittleEndian.Uint16(b[2:]), b[4:8], b[8:136]
	for ib := range 8 {
		ls := int(scalesL[ib/2]>>(4*(ib%2))&0xf) | int(scalesH>>(2*ib)&3)<<4
		dl := mul(d, float32(ls-32))
		for j := range 16 {
			y[ib*32+j] = mul(dl, float32(iq4Values[qs[ib*16+j]&0xf]))
			y[ib*32+j+16] = mul(dl, float32(iq4Values[qs[ib*16+j]>>4]))
		}
	}
}
