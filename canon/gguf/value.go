package gguf

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
)

// ValueType is the type of a key-value pair's value (enum gguf_type).
type ValueType uint32

// Value types as GGUF numbers them.
const (
	ValUint8   ValueType = 0
	ValInt8    ValueType = 1
	ValUint16  ValueType = 2
	ValInt16   ValueType = 3
	ValUint32  ValueType = 4
	ValInt32   ValueType = 5
	ValFloat32 ValueType = 6
	ValBool    ValueType = 7
	ValString  ValueType = 8
	ValArray   ValueType = 9
	ValUint64  ValueType = 10
	ValInt64   ValueType = 11
	ValFloat64 ValueType = 12

	valTypeCount = 13
)

var valTypeNames = [valTypeCount]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
	"bool", "string", "array", "uint64", "int64", "float64"}

// valSizes is the encoded size of each fixed-size type (0 for string and array).
var valSizes = [valTypeCount]int{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8}

// String is the type's name as the GGUF specification spells it (uint8 … float64), or "type N".
func (t ValueType) String() string {
	if t < valTypeCount {
		return valTypeNames[t]
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// Size is the number of bytes one value of a fixed-size type takes (0 for string, array and unknown types).
func (t ValueType) Size() int {
	if t < valTypeCount {
		return valSizes[t]
	}
	return 0
}

// MaxInline is the most bytes of a string value kept in memory; longer strings keep their first
// MaxInline bytes (Value.Truncated) and are read whole with File.FullString.
const MaxInline = 1 << 20

// HeadLen is the number of an array's first elements kept in memory (Array.Head).
const HeadLen = 16

// Value is one value: a scalar, a string or an array.
type Value struct {
	Type ValueType
	// Offset is the file offset of the value's bytes (for a string, of its length; for an array, of its
	// element type).
	Offset int64
	// Array is the array when Type is ValArray.
	Array *Array

	bits uint64 // integers (signed ones sign-extended), float bits, the bool byte
	str  string // a string's first MaxInline bytes
	n    uint64 // a string's length in the file
}

// Uint returns an unsigned integer value (uint8 … uint64).
func (v Value) Uint() (uint64, bool) {
	switch v.Type {
	case ValUint8, ValUint16, ValUint32, ValUint64:
		return v.bits, true
	}
	return 0, false
}

// Int returns an integer value of any integer type that fits int64.
func (v Value) Int() (int64, bool) {
	switch v.Type {
	case ValInt8, ValInt16, ValInt32, ValInt64:
		return int64(v.bits), true
	case ValUint8, ValUint16, ValUint32, ValUint64:
		if v.bits <= math.MaxInt64 {
			return int64(v.bits), true
		}
	}
	return 0, false
}

// Float returns a float32 or float64 value as a float64.
func (v Value) Float() (float64, bool) {
	switch v.Type {
	case ValFloat32:
		return float64(math.Float32frombits(uint32(v.bits))), true
	case ValFloat64:
		return math.Float64frombits(v.bits), true
	}
	return 0, false
}

// Bool returns a bool value as gguf.cpp reads it: any byte but 0 is true.
func (v Value) Bool() (bool, bool) {
	if v.Type != ValBool {
		return false, false
	}
	return v.bits != 0, true
}

// Str returns a string value (its first MaxInline bytes when Truncated).
func (v Value) Str() (string, bool) {
	if v.Type != ValString {
		return "", false
	}
	return v.str, true
}

// Len is a string's length in bytes as stored in the file (0 for other types).
func (v Value) Len() uint64 { return v.n }

// Truncated reports whether a string is longer than the MaxInline bytes kept.
func (v Value) Truncated() bool { return v.Type == ValString && v.n > uint64(len(v.str)) }

// String renders the value for display: numbers in decimal, bools as true/false, strings as they are
// (the kept part), arrays as their element type and length.
func (v Value) String() string {
	switch v.Type {
	case ValUint8, ValUint16, ValUint32, ValUint64:
		return strconv.FormatUint(v.bits, 10)
	case ValInt8, ValInt16, ValInt32, ValInt64:
		return strconv.FormatInt(int64(v.bits), 10)
	case ValFloat32:
		return strconv.FormatFloat(float64(math.Float32frombits(uint32(v.bits))), 'g', -1, 32)
	case ValFloat64:
		return strconv.FormatFloat(math.Float64frombits(v.bits), 'g', -1, 64)
	case ValBool:
		return strconv.FormatBool(v.bits != 0)
	case ValString:
		return v.str
	case ValArray:
		if v.Array != nil {
			return fmt.Sprintf("[%s × %d]", v.Array.ElemType, v.Array.Len)
		}
	}
	return v.Type.String()
}

// KV is one key-value pair.
type KV struct {
	Key string
	// Offset is the file offset of the pair (its key's length).
	Offset int64
	Value  Value
}

// Array is an array value: its element type and length, where its elements lie in the file, the
// first HeadLen of them, and a digest of them all. The other elements are read on demand.
type Array struct {
	ElemType ValueType
	Len      uint64
	// Offset and Size locate the elements' bytes in the file.
	Offset, Size int64
	// Head holds the first min(Len, HeadLen) elements.
	Head []Value
	// Digest is the BLAKE3 hash of the Size bytes of the elements as stored in the file.
	Digest [32]byte

	f      *File
	once   sync.Once
	starts []int64 // a string array's element offsets, built on first random access
	idxErr error
}

// ErrIndex is returned for an element index past the end of an array.
var ErrIndex = errors.New("array index out of range")

// At returns element i, reading it from the file.
func (a *Array) At(i uint64) (Value, error) {
	if i >= a.Len {
		return Value{}, ErrIndex
	}
	if i < uint64(len(a.Head)) {
		return a.Head[i], nil
	}
	if sz := a.ElemType.Size(); sz > 0 {
		b := newBReader(a.f.r, a.f.Size, a.f.ByteOrder, sz)
		b.seek(a.Offset + int64(i)*int64(sz))
		v := b.scalar(a.ElemType)
		return v, b.err
	}
	a.once.Do(a.index)
	if a.idxErr != nil {
		return Value{}, a.idxErr
	}
	b := newBReader(a.f.r, a.f.Size, a.f.ByteOrder, 512)
	b.seek(a.starts[i])
	n := b.u64()
	return b.str(n, MaxInline), b.err
}

// index records where each string element starts.
func (a *Array) index() {
	a.starts = make([]int64, 0, a.Len)
	a.idxErr = a.Each(func(_ uint64, v Value) error {
		a.starts = append(a.starts, v.Offset)
		return nil
	})
}

// Each calls fn with every element in order, reading them from the file in one pass, and stops at
// the first error fn returns.
func (a *Array) Each(fn func(i uint64, v Value) error) error {
	sz := a.ElemType.Size()
	b := newBReader(a.f.r, a.f.Size, a.f.ByteOrder, 0)
	b.seek(a.Offset)
	for i := uint64(0); i < a.Len; i++ {
		var v Value
		if sz > 0 {
			v = b.scalar(a.ElemType)
		} else {
			n := b.u64()
			v = b.str(n, MaxInline)
		}
		if b.err != nil {
			return b.err
		}
		if err := fn(i, v); err != nil {
			return err
		}
	}
	return nil
}

// Strings returns every element of a string array.
func (a *Array) Strings() ([]string, error) {
	if a.ElemType != ValString {
		return nil, fmt.Errorf("array of %s, not of strings", a.ElemType)
	}
	out := make([]string, 0, a.Len)
	err := a.Each(func(_ uint64, v Value) error {
		out = append(out, v.str)
		return nil
	})
	return out, err
}

// FullString reads a string value whole, also one longer than MaxInline.
func (f *File) FullString(v Value) (string, error) {
	if v.Type != ValString {
		return "", fmt.Errorf("%s value, not a string", v.Type)
	}
	if !v.Truncated() {
		return v.str, nil
	}
	buf := make([]byte, v.n)
	if _, err := f.r.ReadAt(buf, v.Offset+8); err != nil {
		return "", err
	}
	return string(buf), nil
}
