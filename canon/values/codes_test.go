package values

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stdiff/stdiff/canon/tensor"
)

// The reference values below are derived from each format's bit layout as the specs write it
// (arXiv 2209.05433 for F8_E4M3/F8_E5M2, arXiv 2206.02915 and PyTorch's Float8_*fnuz.h for the FNUZ
// formats, OCP MX v1.0 §5.3–5.4 for F8_E8M0, F6 and F4), one function per format, without using
// minifloat.go.

func signed(neg bool, v float64) float64 {
	if neg {
		return -v
	}
	return v
}

func refE4M3(c uint32) float64 { // S.EEEE.MMM, bias 7, S.1111.111 NaN, no Inf
	e, m := int(c>>3&15), float64(c&7)
	if e == 15 && c&7 == 7 {
		return math.NaN()
	}
	if e == 0 {
		return signed(c&0x80 != 0, math.Ldexp(m/8, -6))
	}
	return signed(c&0x80 != 0, math.Ldexp(1+m/8, e-7))
}

func refE5M2(c uint32) float64 { // S.EEEEE.MM, bias 15, IEEE specials
	e, m := int(c>>2&31), float64(c&3)
	switch {
	case e == 31 && m == 0:
		return signed(c&0x80 != 0, math.Inf(1))
	case e == 31:
		return math.NaN()
	case e == 0:
		return signed(c&0x80 != 0, math.Ldexp(m/4, -14))
	}
	return signed(c&0x80 != 0, math.Ldexp(1+m/4, e-15))
}

func refE4M3FNUZ(c uint32) float64 { // bias 8, 0x80 NaN
	if c == 0x80 {
		return math.NaN()
	}
	e, m := int(c>>3&15), float64(c&7)
	if e == 0 {
		return signed(c&0x80 != 0, math.Ldexp(m/8, -7))
	}
	return signed(c&0x80 != 0, math.Ldexp(1+m/8, e-8))
}

func refE5M2FNUZ(c uint32) float64 { // bias 16, 0x80 NaN
	if c == 0x80 {
		return math.NaN()
	}
	e, m := int(c>>2&31), float64(c&3)
	if e == 0 {
		return signed(c&0x80 != 0, math.Ldexp(m/4, -15))
	}
	return signed(c&0x80 != 0, math.Ldexp(1+m/4, e-16))
}

func refE8M0(c uint32) float64 { // 2^(E−127), 0xFF NaN
	if c == 0xFF {
		return math.NaN()
	}
	return math.Ldexp(1, int(c)-127)
}

func refE2M3(c uint32) float64 { // S.EE.MMM, bias 1
	e, m := int(c>>3&3), float64(c&7)
	if e == 0 {
		return signed(c&0x20 != 0, m/8)
	}
	return signed(c&0x20 != 0, math.Ldexp(1+m/8, e-1))
}

func refE3M2(c uint32) float64 { // S.EEE.MM, bias 3
	e, m := int(c>>2&7), float64(c&3)
	if e == 0 {
		return signed(c&0x20 != 0, math.Ldexp(m/4, -2))
	}
	return signed(c&0x20 != 0, math.Ldexp(1+m/4, e-3))
}

func refE2M1(c uint32) float64 { // S.EE.M, bias 1
	e, m := int(c>>1&3), float64(c&1)
	if e == 0 {
		return signed(c&8 != 0, m/2)
	}
	return signed(c&8 != 0, math.Ldexp(1+m/2, e-1))
}

func refF16(c uint32) float64 { // S.EEEEE.MMMMMMMMMM, bias 15
	e, m := int(c>>10&31), float64(c&1023)
	switch {
	case e == 31 && m == 0:
		return signed(c&0x8000 != 0, math.Inf(1))
	case e == 31:
		return math.NaN()
	case e == 0:
		return signed(c&0x8000 != 0, math.Ldexp(m/1024, -14))
	}
	return signed(c&0x8000 != 0, math.Ldexp(1+m/1024, e-15))
}

func refBF16(c uint32) float64 { // S.EEEEEEEE.MMMMMMM, bias 127
	e, m := int(c>>7&255), float64(c&127)
	switch {
	case e == 255 && m == 0:
		return signed(c&0x8000 != 0, math.Inf(1))
	case e == 255:
		return math.NaN()
	case e == 0:
		return signed(c&0x8000 != 0, math.Ldexp(m/128, -126))
	}
	return signed(c&0x8000 != 0, math.Ldexp(1+m/128, e-127))
}

var refFormats = []struct {
	dt   tensor.DType
	bits int
	ref  func(uint32) float64
}{
	{"F8_E4M3", 8, refE4M3}, {"F8_E5M2", 8, refE5M2}, {"F8_E4M3FNUZ", 8, refE4M3FNUZ},
	{"F8_E5M2FNUZ", 8, refE5M2FNUZ}, {"F8_E8M0", 8, refE8M0},
	{"F6_E2M3", 6, refE2M3}, {"F6_E3M2", 6, refE3M2}, {"F4", 4, refE2M1},
	{"F16", 16, refF16}, {"BF16", 16, refBF16},
}

// same reports whether two values are the same, NaN equal to NaN and −0 different from +0.
func same(a, b float64) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	return a == b && math.Signbit(a) == math.Signbit(b)
}

// codeBytes stores codes as dt stores them (sub-byte formats packed by pack, 16-bit little-endian).
func codeBytes(bits int, codes []uint32) []byte {
	switch bits {
	case 16:
		var b []byte
		for _, c := range codes {
			b = binary.LittleEndian.AppendUint16(b, uint16(c))
		}
		return b
	case 8:
		b := make([]byte, len(codes))
		for i, c := range codes {
			b[i] = byte(c)
		}
		return b
	}
	return pack(bits, codes)
}

// TestDecodeEveryCode decodes every code of every float format narrower than F32 and compares it
// with the value derived from the spec.
func TestDecodeEveryCode(t *testing.T) {
	for _, f := range refFormats {
		codes := make([]uint32, 1<<f.bits)
		for c := range codes {
			codes[c] = uint32(c)
		}
		dst := make([]float64, len(codes))
		n, err := Decode(f.dt, dst, codeBytes(f.bits, codes))
		if err != nil || n != len(codes) {
			t.Fatalf("%s: decoded %d of %d: %v", f.dt, n, len(codes), err)
		}
		for c, v := range dst {
			if want := f.ref(uint32(c)); !same(v, want) {
				t.Errorf("%s code %#x = %v, want %v", f.dt, c, v, want)
			}
		}
	}
}

// TestDecodeSpotValues pins the values people quote for each format.
func TestDecodeSpotValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		dt   tensor.DType
		code uint32
		want float64
	}{
		{"F8_E4M3", 0x7E, 448}, {"F8_E4M3", 0xFE, -448}, {"F8_E4M3", 0x7F, nan}, {"F8_E4M3", 0xFF, nan},
		{"F8_E4M3", 0x08, 1.0 / 64}, {"F8_E4M3", 0x01, 1.0 / 512}, {"F8_E4M3", 0x38, 1}, {"F8_E4M3", 0x78, 256},
		{"F8_E5M2", 0x7B, 57344}, {"F8_E5M2", 0x7C, inf}, {"F8_E5M2", 0xFC, -inf}, {"F8_E5M2", 0x7D, nan},
		{"F8_E5M2", 0x01, math.Ldexp(1, -16)}, {"F8_E5M2", 0x3C, 1},
		{"F8_E4M3FNUZ", 0x80, nan}, {"F8_E4M3FNUZ", 0x7F, 240}, {"F8_E4M3FNUZ", 0xFF, -240},
		{"F8_E4M3FNUZ", 0x01, math.Ldexp(1, -10)}, {"F8_E4M3FNUZ", 0x40, 1},
		{"F8_E5M2FNUZ", 0x80, nan}, {"F8_E5M2FNUZ", 0x7F, 57344}, {"F8_E5M2FNUZ", 0x01, math.Ldexp(1, -17)},
		{"F8_E5M2FNUZ", 0x40, 1},
		{"F8_E8M0", 0x7F, 1}, {"F8_E8M0", 0x00, math.Ldexp(1, -127)}, {"F8_E8M0", 0xFE, math.Ldexp(1, 127)},
		{"F8_E8M0", 0xFF, nan}, {"F8_E8M0", 0x80, 2},
		{"F4", 0x7, 6}, {"F4", 0xF, -6}, {"F4", 0x1, 0.5}, {"F4", 0x2, 1}, {"F4", 0x5, 3}, {"F4", 0x8, math.Copysign(0, -1)},
		{"F6_E2M3", 0x1F, 7.5}, {"F6_E2M3", 0x3F, -7.5}, {"F6_E2M3", 0x01, 0.125}, {"F6_E2M3", 0x08, 1},
		{"F6_E3M2", 0x1F, 28}, {"F6_E3M2", 0x3F, -28}, {"F6_E3M2", 0x01, 0.0625}, {"F6_E3M2", 0x0C, 1},
		{"F16", 0x7BFF, 65504}, {"F16", 0x7C00, inf}, {"F16", 0x0001, math.Ldexp(1, -24)}, {"F16", 0x3C00, 1},
		{"BF16", 0x3F80, 1}, {"BF16", 0x7F7F, float64(math.Float32frombits(0x7F7F0000))}, {"BF16", 0xFF80, -inf},
	} {
		bits := int(formats[c.dt].bits)
		v := make([]float64, 4)
		// F6 needs four elements; put the code first, then zeros.
		n, err := Decode(c.dt, v, codeBytes(bits, []uint32{c.code, 0, 0, 0}))
		if err != nil || n == 0 {
			t.Fatalf("%s %#x: %v", c.dt, c.code, err)
		}
		if !same(v[0], c.want) {
			t.Errorf("%s %#x = %v, want %v", c.dt, c.code, v[0], c.want)
		}
	}
}

// TestSubBytePacking pins which bits hold which element: F4 low nibble first (PyTorch's
// float4_e2m1fn_x2), F6 as a little-endian 24-bit word per four elements.
func TestSubBytePacking(t *testing.T) {
	v := make([]float64, 4)
	if n, _ := Decode("F4", v, []byte{0x21, 0x7F}); n != 4 || v[0] != 0.5 || v[1] != 1 || v[2] != -6 || v[3] != 6 {
		t.Errorf("F4 0x21 0x7F = %v (%d), want [0.5 1 -6 6]", v, n)
	}
	// codes 1, 2, 3, 4: word 1 | 2<<6 | 3<<12 | 4<<18 = 0x103081.
	if n, _ := Decode("F6_E2M3", v, []byte{0x81, 0x30, 0x10}); n != 4 || v[0] != 0.125 || v[1] != 0.25 || v[2] != 0.375 || v[3] != 0.5 {
		t.Errorf("F6_E2M3 81 30 10 = %v (%d), want [0.125 0.25 0.375 0.5]", v, n)
	}
	// A partial group is not decoded.
	if n, _ := Decode("F6_E2M3", v, []byte{0x81, 0x30}); n != 0 {
		t.Errorf("F6 from 2 bytes decoded %d elements", n)
	}
	if _, err := Elements("F6_E3M2", 4); err == nil {
		t.Error("4 bytes of F6 accepted as whole elements")
	}
}

// TestDecodeIntegers covers integer, BOOL and C64 decoding.
func TestDecodeIntegers(t *testing.T) {
	le := binary.LittleEndian
	for _, c := range []struct {
		dt   tensor.DType
		b    []byte
		want []float64
	}{
		{"U8", []byte{0, 255}, []float64{0, 255}},
		{"I8", []byte{0x80, 0x7F}, []float64{-128, 127}},
		{"BOOL", []byte{0, 1, 2, 255}, []float64{0, 1, 1, 1}},
		{"I16", le.AppendUint16(le.AppendUint16(nil, 0x8000), 0x7FFF), []float64{-32768, 32767}},
		{"U16", le.AppendUint16(nil, 0xFFFF), []float64{65535}},
		{"I32", le.AppendUint32(nil, 0x80000000), []float64{-2147483648}},
		{"U32", le.AppendUint32(nil, 0xFFFFFFFF), []float64{4294967295}},
		{"I64", le.AppendUint64(le.AppendUint64(nil, 1<<63), 1<<53+1), []float64{-(1 << 63), 1 << 53}},
		{"U64", le.AppendUint64(nil, 1<<64-1), []float64{1 << 64}},
		{"C64", le.AppendUint32(le.AppendUint32(nil, math.Float32bits(3)), math.Float32bits(-4)), []float64{5}},
		{"F32", le.AppendUint32(nil, math.Float32bits(-1.5)), []float64{-1.5}},
		{"F64", le.AppendUint64(nil, math.Float64bits(math.Pi)), []float64{math.Pi}},
	} {
		v := make([]float64, len(c.want))
		n, err := Decode(c.dt, v, c.b)
		if err != nil || n != len(c.want) {
			t.Fatalf("%s: %d, %v", c.dt, n, err)
		}
		for i := range v {
			if v[i] != c.want[i] {
				t.Errorf("%s %x [%d] = %v, want %v", c.dt, c.b, i, v[i], c.want[i])
			}
		}
	}
	if _, err := Decode("F5", nil, nil); err == nil {
		t.Error("unknown dtype decoded")
	}
}
