package values

import "math"

// flavor says how a float format spends its top codes.
type flavor uint8

const (
	ieee   flavor = iota // all-ones exponent: Inf (mantissa 0) or NaN
	fn                   // no Inf; all-ones exponent and mantissa is NaN (E4M3FN)
	fnuz                 // no Inf, no −0; sign bit alone (0x80) is the only NaN
	finite               // every code is a finite number (MX F6, F4)
	e8m0                 // unsigned power of two, all ones is NaN
)

// noCode is what encode returns for a value the format cannot represent at all (NaN in F6/F4).
const noCode = ^uint32(0)

// minifloat describes a binary float format of at most 32 bits: sign, e exponent bits, m mantissa
// bits, exponent bias, and what the top codes mean. It decodes codes to float64 and encodes float64
// values with round-to-nearest-even.
type minifloat struct {
	bits   uint // total bits, sign included (e8m0 has no sign)
	e, m   uint
	bias   int
	flavor flavor

	magMask  uint32 // mask of exponent and mantissa bits
	signBit  uint32 // 0 for e8m0
	maxMag   uint32 // largest finite magnitude code
	nanCode  uint32 // canonical positive NaN code, or noCode
	infCode  uint32 // positive Inf code, or noCode
	emin     int    // exponent of the smallest normal
	emax     int    // exponent of the largest finite value
	maxValue float64
}

func newMinifloat(e, m uint, bias int, fl flavor) *minifloat {
	f := &minifloat{e: e, m: m, bias: bias, flavor: fl, nanCode: noCode, infCode: noCode}
	f.bits = 1 + e + m
	if fl == e8m0 {
		f.bits = e + m
	} else {
		f.signBit = 1 << (f.bits - 1)
	}
	f.magMask = 1<<(e+m) - 1
	allOnesExp := uint32(1)<<e - 1
	switch fl {
	case ieee:
		f.infCode = allOnesExp << m
		f.nanCode = f.infCode | 1<<(m-1) // quiet NaN: top mantissa bit
		f.maxMag = f.infCode - 1
	case fn:
		f.nanCode = f.magMask
		f.maxMag = f.magMask - 1
	case fnuz:
		f.nanCode = f.signBit // the sign bit alone
		f.maxMag = f.magMask
	case finite:
		f.maxMag = f.magMask
	case e8m0:
		f.nanCode = f.magMask
		f.maxMag = f.magMask - 1
	}
	f.emin = 1 - bias
	f.emax = int(f.maxMag>>m) - bias
	f.maxValue = f.value(f.maxMag)
	return f
}

// value decodes one code (only its low bits count).
func (f *minifloat) value(c uint32) float64 {
	c &= f.magMask | f.signBit
	if f.isNaN(c) {
		return math.NaN()
	}
	if f.flavor == e8m0 {
		return math.Ldexp(1, int(c)-f.bias)
	}
	mag := c & f.magMask
	if f.flavor == ieee && mag == f.infCode {
		if c&f.signBit != 0 {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	ef, mf := int(mag>>f.m), float64(mag&(1<<f.m-1))
	var v float64
	if ef == 0 {
		v = math.Ldexp(mf, f.emin-int(f.m))
	} else {
		v = math.Ldexp(float64(uint32(1)<<f.m)+mf, ef-f.bias-int(f.m))
	}
	if c&f.signBit != 0 {
		v = -v
	}
	return v
}

// isNaN reports whether code c is a NaN.
func (f *minifloat) isNaN(c uint32) bool {
	switch f.flavor {
	case ieee:
		return c&f.magMask > f.infCode
	case fn, e8m0:
		return c&f.magMask == f.nanCode
	case fnuz:
		return c == f.nanCode
	}
	return false
}

// ordinal maps a code to its position on the number line in steps of one code, so that the distance
// between two codes is their distance in units in the last place. ±0 share position 0.
func (f *minifloat) ordinal(c uint32) int64 {
	mag := int64(c & f.magMask)
	if c&f.signBit != 0 {
		return -mag
	}
	return mag
}

// encode rounds x to the nearest code, ties to even, with the overflow rules of the format's flavor
// (see the package documentation). It returns noCode when x has no code (NaN in a format without NaN).
func (f *minifloat) encode(x float64) uint32 {
	if f.flavor == e8m0 {
		return encodeE8M0(x)
	}
	// Branch-free where the data decides (the sign, the subnormal range): ~3 ns a value.
	bits := math.Float64bits(x)
	sign := uint32(bits>>63) << (f.bits - 1)
	ab := bits &^ (1 << 63)
	exp := int(ab>>52) - 1023 // -1023 for zero and float64 subnormals: they round to 0 below
	var mag uint32
	switch {
	case ab > 0x7FF0000000000000: // NaN
		switch f.flavor {
		case fnuz:
			return f.nanCode
		case finite:
			return noCode
		}
		return sign | f.nanCode
	case exp > f.emax+1: // overflow, Inf included
		mag = f.maxMag + 1
	default:
		e0 := max(exp-f.emin, 0)    // biased exponent − 1, or 0 in the subnormal range
		q := e0 + f.emin - int(f.m) // the exponent of one unit in the last place
		r := math.RoundToEven(math.Float64frombits(ab) * math.Float64frombits(uint64(1023-q)<<52))
		// r counts units in the last place, the implicit bit included for normals; a carry out of the
		// mantissa (r = 2^(m+1), or 2^m from a subnormal) moves into the exponent by itself.
		mag = uint32(e0)<<f.m + uint32(r)
	}
	if mag > f.maxMag {
		switch f.flavor {
		case ieee:
			return sign | f.infCode
		case fn:
			return sign | f.nanCode
		case fnuz:
			return f.nanCode
		case finite:
			return sign | f.maxMag
		}
	}
	if f.flavor == fnuz && mag == 0 {
		return 0
	}
	return sign | mag
}

// encodeE8M0 converts x to F8_E8M0 as PyTorch's float8_e8m0fnu does: through float32, sign ignored,
// NaN and Inf to 0xFF, rounding the significand to nearest with ties up (the implicit bit is odd),
// float32 subnormals and zero to 0x00 (2^-127) or 0x01.
func encodeE8M0(x float64) uint32 {
	b := math.Float32bits(float32(x))
	exp := b >> 23 & 0xFF
	if exp == 0xFF {
		return 0xFF
	}
	guard, rest := b&0x400000 != 0, b&0x3FFFFF != 0
	if guard && (rest || exp > 0) {
		exp++
	}
	return exp
}
