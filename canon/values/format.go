package values

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/stdiff/stdiff/canon/tensor"
)

// ErrDType is returned for a dtype this package cannot read (one the reference does not know).
var ErrDType = errors.New("unknown dtype")

// ErrLength is returned when bytes are not a whole number of elements, or two sides hold different
// numbers of elements.
var ErrLength = errors.New("length mismatch")

// ErrTolerance is returned for a negative or non-finite tolerance.
var ErrTolerance = errors.New("bad tolerance")

// kind is how a dtype's bytes become float64 values.
type kind uint8

const (
	kTable kind = iota // one byte, one value: 256-entry table (8-bit floats, U8, I8, BOOL)
	kF4                // two per byte, low nibble first
	kF6                // four per three bytes, LSB-first bit stream
	kF16
	kBF16
	kF32
	kF64
	kI16
	kU16
	kI32
	kU32
	kI64
	kU64
	kC64
)

// format is everything this package knows about one dtype.
type format struct {
	dt    tensor.DType
	kind  kind
	bits  int        // per element
	mini  *minifloat // float formats (nil for integers, BOOL, C64, F64)
	table *[256]float64
	// group: elements per groupBytes bytes (F4 2 per 1, F6 4 per 3, otherwise 1 per bits/8).
	group, groupBytes int
	// minNormal is the smallest positive normal value; 0 when the dtype has no subnormals.
	minNormal float64
}

var (
	mF16   = newMinifloat(5, 10, 15, ieee)
	mBF16  = newMinifloat(8, 7, 127, ieee)
	mF32   = newMinifloat(8, 23, 127, ieee)
	mE5M2  = newMinifloat(5, 2, 15, ieee)
	mE4M3  = newMinifloat(4, 3, 7, fn)
	mE4FNZ = newMinifloat(4, 3, 8, fnuz)
	mE5FNZ = newMinifloat(5, 2, 16, fnuz)
	mE8M0  = newMinifloat(8, 0, 127, e8m0)
	mE2M3  = newMinifloat(2, 3, 1, finite)
	mE3M2  = newMinifloat(3, 2, 3, finite)
	mE2M1  = newMinifloat(2, 1, 1, finite)
)

var formats = func() map[tensor.DType]*format {
	m := map[tensor.DType]*format{}
	add := func(dt tensor.DType, k kind, bits int, mf *minifloat) *format {
		f := &format{dt: dt, kind: k, bits: bits, mini: mf, group: 1, groupBytes: bits / 8}
		if mf != nil && mf.flavor != e8m0 {
			f.minNormal = math.Ldexp(1, mf.emin)
		}
		m[dt] = f
		return f
	}
	table := func(f *format, v func(c uint32) float64) {
		var t [256]float64
		for c := range t {
			t[c] = v(uint32(c))
		}
		f.table = &t
	}
	for _, x := range []struct {
		dt tensor.DType
		mf *minifloat
	}{{"F8_E5M2", mE5M2}, {"F8_E4M3", mE4M3}, {"F8_E4M3FNUZ", mE4FNZ}, {"F8_E5M2FNUZ", mE5FNZ}, {"F8_E8M0", mE8M0}} {
		f := add(x.dt, kTable, 8, x.mf)
		table(f, f.mini.value)
	}
	table(add("U8", kTable, 8, nil), func(c uint32) float64 { return float64(c) })
	table(add("I8", kTable, 8, nil), func(c uint32) float64 { return float64(int8(c)) })
	table(add("BOOL", kTable, 8, nil), func(c uint32) float64 { return float64(min(c, 1)) })
	f4 := add("F4", kF4, 4, mE2M1)
	f4.group, f4.groupBytes = 2, 1
	table(f4, f4.mini.value) // indexed by nibble; the upper 240 entries are unused
	for _, x := range []struct {
		dt tensor.DType
		mf *minifloat
	}{{"F6_E2M3", mE2M3}, {"F6_E3M2", mE3M2}} {
		f := add(x.dt, kF6, 6, x.mf)
		f.group, f.groupBytes = 4, 3
		table(f, f.mini.value)
	}
	add("F16", kF16, 16, mF16)
	add("BF16", kBF16, 16, mBF16)
	add("F32", kF32, 32, mF32)
	add("F64", kF64, 64, nil).minNormal = math.Ldexp(1, -1022)
	add("I16", kI16, 16, nil)
	add("U16", kU16, 16, nil)
	add("I32", kI32, 32, nil)
	add("U32", kU32, 32, nil)
	add("I64", kI64, 64, nil)
	add("U64", kU64, 64, nil)
	add("C64", kC64, 64, nil)
	return m
}()

// Every F16 and BF16 code's value, built on first use (512 KiB each): one load decodes an element.
var (
	f16Table  = sync.OnceValue(func() *[1 << 16]float64 { return table16(mF16) })
	bf16Table = sync.OnceValue(func() *[1 << 16]float64 { return table16(mBF16) })
)

func table16(m *minifloat) *[1 << 16]float64 {
	var t [1 << 16]float64
	for c := range t {
		t[c] = m.value(uint32(c))
	}
	return &t
}

// table16 returns the value table of a 16-bit float format, nil for other dtypes.
func (f *format) table16() *[1 << 16]float64 {
	switch f.kind {
	case kF16:
		return f16Table()
	case kBF16:
		return bf16Table()
	}
	return nil
}

func lookup(dt tensor.DType) (*format, error) {
	f, ok := formats[dt]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrDType, dt)
	}
	return f, nil
}

// elements returns how many elements n bytes hold, or an error when n is not a whole number of
// element groups (F6 needs multiples of 3 bytes).
func (f *format) elements(n int64) (int64, error) {
	if n%int64(f.groupBytes) != 0 {
		return 0, fmt.Errorf("%w: %d bytes is not a whole number of %s elements", ErrLength, n, f.dt)
	}
	return n / int64(f.groupBytes) * int64(f.group), nil
}

// byteLen is the number of bytes of n elements (n a multiple of the group).
func (f *format) byteLen(n int) int { return n / f.group * f.groupBytes }

// Supported reports whether values can decode dtype dt (every dtype the reference knows).
func Supported(dt tensor.DType) bool { _, ok := formats[dt]; return ok }

// IsFloat reports whether dt is a floating-point dtype (C64 excluded), the dtypes between which the
// rounding check of PairStats applies.
func IsFloat(dt tensor.DType) bool {
	f, ok := formats[dt]
	return ok && (f.mini != nil || f.kind == kF64)
}

// Elements returns the number of dt elements in n bytes, or an error wrapping ErrLength when n bytes
// are not whole elements, or ErrDType.
func Elements(dt tensor.DType, n int64) (int64, error) {
	f, err := lookup(dt)
	if err != nil {
		return 0, err
	}
	return f.elements(n)
}

// Decode decodes the elements of src into dst as float64 values and returns how many it decoded:
// as many as both hold, rounded down to whole groups for F4 (2 per byte) and F6 (4 per 3 bytes).
// C64 elements decode to their modulus. See the package documentation for each dtype's layout.
func Decode(dt tensor.DType, dst []float64, src []byte) (int, error) {
	f, err := lookup(dt)
	if err != nil {
		return 0, err
	}
	n := min(len(dst), len(src)/f.groupBytes*f.group)
	n -= n % f.group
	f.decode(dst[:n], src[:f.byteLen(n)])
	return n, nil
}

// decode fills dst from src, which holds exactly len(dst) elements (len(dst) a multiple of the group).
func (f *format) decode(dst []float64, src []byte) {
	switch f.kind {
	case kTable:
		t := f.table
		src = src[:len(dst)]
		for i, c := range src {
			dst[i] = t[c]
		}
	case kF4:
		t := f.table
		src = src[:len(dst)/2]
		for i, c := range src {
			dst[2*i] = t[c&15]
			dst[2*i+1] = t[c>>4]
		}
	case kF6:
		t := f.table
		for i := 0; i+4 <= len(dst); i += 4 {
			s := src[i/4*3 : i/4*3+3]
			w := uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16
			dst[i] = t[w&63]
			dst[i+1] = t[w>>6&63]
			dst[i+2] = t[w>>12&63]
			dst[i+3] = t[w>>18]
		}
	case kF16, kBF16:
		t := f.table16()
		src = src[:2*len(dst)]
		for i := range dst {
			dst[i] = t[binary.LittleEndian.Uint16(src[2*i:])]
		}
	case kF32:
		src = src[:4*len(dst)]
		for i := range dst {
			dst[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:])))
		}
	case kF64:
		src = src[:8*len(dst)]
		for i := range dst {
			dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:]))
		}
	case kI16:
		src = src[:2*len(dst)]
		for i := range dst {
			dst[i] = float64(int16(binary.LittleEndian.Uint16(src[2*i:])))
		}
	case kU16:
		src = src[:2*len(dst)]
		for i := range dst {
			dst[i] = float64(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case kI32:
		src = src[:4*len(dst)]
		for i := range dst {
			dst[i] = float64(int32(binary.LittleEndian.Uint32(src[4*i:])))
		}
	case kU32:
		src = src[:4*len(dst)]
		for i := range dst {
			dst[i] = float64(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case kI64:
		src = src[:8*len(dst)]
		for i := range dst {
			dst[i] = float64(int64(binary.LittleEndian.Uint64(src[8*i:])))
		}
	case kU64:
		src = src[:8*len(dst)]
		for i := range dst {
			dst[i] = float64(binary.LittleEndian.Uint64(src[8*i:]))
		}
	case kC64:
		src = src[:8*len(dst)]
		for i := range dst {
			re := float64(math.Float32frombits(binary.LittleEndian.Uint32(src[8*i:])))
			im := float64(math.Float32frombits(binary.LittleEndian.Uint32(src[8*i+4:])))
			dst[i] = math.Sqrt(re*re + im*im)
		}
	}
}

// decodeComplex fills re and im from src: C64 as pairs, any other dtype as real values with im = 0.
func (f *format) decodeComplex(re, im []float64, src []byte) {
	if f.kind != kC64 {
		f.decode(re, src)
		clear(im[:len(re)])
		return
	}
	src = src[:8*len(re)]
	im = im[:len(re)]
	for i := range re {
		re[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(src[8*i:])))
		im[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(src[8*i+4:])))
	}
}

// codeValue is the value of one code of a float format, through the decode tables where there are.
func (f *format) codeValue(c uint32) float64 {
	switch f.kind {
	case kTable, kF4, kF6:
		return f.table[uint8(c)]
	case kF16, kBF16:
		return f.table16()[uint16(c)]
	case kF32:
		return float64(math.Float32frombits(c))
	}
	return f.mini.value(c)
}

// codes extracts the raw codes of a float format's elements (len(dst) of them) from src.
func (f *format) codes(dst []uint32, src []byte) {
	switch f.kind {
	case kTable:
		for i, c := range src[:len(dst)] {
			dst[i] = uint32(c)
		}
	case kF4:
		for i, c := range src[:len(dst)/2] {
			dst[2*i] = uint32(c & 15)
			dst[2*i+1] = uint32(c >> 4)
		}
	case kF6:
		for i := 0; i+4 <= len(dst); i += 4 {
			s := src[i/4*3 : i/4*3+3]
			w := uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16
			dst[i], dst[i+1], dst[i+2], dst[i+3] = w&63, w>>6&63, w>>12&63, w>>18
		}
	case kF16, kBF16:
		src = src[:2*len(dst)]
		for i := range dst {
			dst[i] = uint32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case kF32:
		src = src[:4*len(dst)]
		for i := range dst {
			dst[i] = binary.LittleEndian.Uint32(src[4*i:])
		}
	}
}

// Encode rounds x to the nearest value of the float dtype dt, ties to even, and returns its code
// (the bits as stored, in the low bits of the result) with PyTorch's overflow rules: see the package
// documentation. ok is false when dt is not a float dtype narrower than F64, or when x has no code in
// dt (NaN in F6 or F4).
func Encode(dt tensor.DType, x float64) (code uint32, ok bool) {
	f, err := lookup(dt)
	if err != nil || f.mini == nil {
		return 0, false
	}
	c := f.mini.encode(x)
	return c, c != noCode
}

// Round returns x rounded to the float dtype dt (Encode then decode): NaN when x has no value there
// (NaN, or a value that overflows to NaN), ±Inf when it overflows to Inf. For F64 it returns x; ok is
// false for a dtype that is not a float.
func Round(dt tensor.DType, x float64) (v float64, ok bool) {
	if dt == "F64" {
		return x, true
	}
	f, err := lookup(dt)
	if err != nil || f.mini == nil {
		return 0, false
	}
	return f.mini.round(x), true
}

// Rounder returns Round for the float dtype dt as a function, its dtype looked up once (for rounding
// many values to one dtype); nil for a dtype that is not a float (IsFloat false).
func Rounder(dt tensor.DType) func(x float64) float64 {
	f, ok := formats[dt]
	switch {
	case !ok:
		return nil
	case f.kind == kF64:
		return func(x float64) float64 { return x }
	case f.mini == nil:
		return nil
	}
	return f.mini.round
}

// round is x rounded to m (Round).
func (m *minifloat) round(x float64) float64 {
	c := m.encode(x)
	if c == noCode {
		return math.NaN()
	}
	return m.value(c)
}
