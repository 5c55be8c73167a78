// Package onnxw writes small ONNX models byte by byte, for tests: the protobuf wire format of a
// ModelProto with one graph, its initializers given as TensorProto messages. It imports nothing of
// stdiff but stfile (which imports nothing of stdiff), so that package onnx's own tests can use it.
package onnxw

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// Wire types.
const (
	Varint = 0
	Len    = 2
)

// Uvarint is v as a base-128 varint.
func Uvarint(v uint64) []byte { return binary.AppendUvarint(nil, v) }

// Tag is a field's tag: its number and wire type.
func Tag(num uint64, wire int) []byte { return Uvarint(num<<3 | uint64(wire)) }

// VarintField is field num holding the varint v.
func VarintField(num, v uint64) []byte { return append(Tag(num, Varint), Uvarint(v)...) }

// LenField is field num holding the bytes b.
func LenField(num uint64, b []byte) []byte {
	return append(append(Tag(num, Len), Uvarint(uint64(len(b)))...), b...)
}

// Cat joins byte slices.
func Cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// Tensor is a TensorProto of a name, data type (TensorProto.DataType) and dims, followed by the
// fields given (raw_data, a typed field, external_data…).
func Tensor(name string, dataType int32, dims []int64, rest ...[]byte) []byte {
	var b []byte
	for _, d := range dims {
		b = append(b, VarintField(1, uint64(d))...)
	}
	b = append(b, VarintField(2, uint64(dataType))...)
	b = append(b, LenField(8, []byte(name))...)
	return append(b, Cat(rest...)...)
}

// Raw is the raw_data field.
func Raw(b []byte) []byte { return LenField(9, b) }

// External is the external_data and data_location fields of a tensor whose bytes are in the file at
// location, from offset, length bytes long (negative: not written).
func External(location string, offset, length int64) []byte {
	entry := func(k, v string) []byte { return LenField(13, Cat(LenField(1, []byte(k)), LenField(2, []byte(v)))) }
	b := entry("location", location)
	if offset >= 0 {
		b = append(b, entry("offset", itoa(offset))...)
	}
	if length >= 0 {
		b = append(b, entry("length", itoa(length))...)
	}
	return append(b, VarintField(14, 1)...)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Model is a ModelProto (IR version 8, opset 17, producer "onnxw") of one graph with one Identity
// node and these initializers (TensorProto messages).
func Model(initializers ...[]byte) []byte {
	var g []byte
	g = append(g, LenField(1, Cat(LenField(4, []byte("Identity")), LenField(1, []byte("x")), LenField(2, []byte("y"))))...)
	g = append(g, LenField(2, []byte("g"))...)
	for _, t := range initializers {
		g = append(g, LenField(5, t)...)
	}
	return Cat(VarintField(1, 8), LenField(2, []byte("onnxw")), LenField(7, g), LenField(8, VarintField(2, 17)))
}
