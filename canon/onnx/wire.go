package onnx

import (
	"errors"
	"fmt"
	"io"
)

// Protocol buffers' wire types.
const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
	wireStart  = 3 // groups: deprecated, never in ONNX; refused
	wireEnd    = 4
	wireI32    = 5
)

// errTruncated is the cause of a field that runs past the end of its message or of the file.
var errTruncated = errors.New("runs past the end of its message")

// wireError is a protobuf that cannot be read, at a byte offset.
type wireError struct {
	Offset int64
	Err    error
}

func (e *wireError) Error() string { return fmt.Sprintf("at byte %d: %v", e.Offset, e.Err) }
func (e *wireError) Unwrap() error { return e.Err }

// reader reads protobuf fields from an io.ReaderAt through a small window, never more than the
// bytes asked for: a length read from the file is checked against the message it lies in before any
// byte of it is read or anything is allocated for it.
type reader struct {
	r    io.ReaderAt
	size int64
	// win holds the file's bytes from winOff.
	win    []byte
	winOff int64
	// Err is the first error reading the file itself (not a malformed message).
	Err error
}

const windowSize = 64 << 10

func newReader(r io.ReaderAt, size int64) *reader {
	return &reader{r: r, size: size, win: make([]byte, 0, windowSize), winOff: -1}
}

// at returns the bytes from off, at least n of them when the file has them (fewer near its end); the
// slice is valid until the next call.
func (rd *reader) at(off int64, n int) ([]byte, error) {
	if off < 0 || off > rd.size {
		return nil, errTruncated
	}
	if rd.winOff >= 0 && off >= rd.winOff && off+int64(n) <= rd.winOff+int64(len(rd.win)) {
		return rd.win[off-rd.winOff:], nil
	}
	want := max(n, windowSize)
	if cap(rd.win) < want {
		rd.win = make([]byte, 0, want)
	}
	k := int(min(int64(want), rd.size-off))
	rd.win = rd.win[:k]
	got, err := rd.r.ReadAt(rd.win, off)
	if got < k {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		rd.Err, rd.winOff = err, -1
		return nil, err
	}
	rd.winOff = off
	return rd.win, nil
}

// varint reads a base-128 varint at off, before end; it returns the value and the offset after it.
func (rd *reader) varint(off, end int64) (uint64, int64, error) {
	b, err := rd.at(off, 10)
	if err != nil {
		return 0, 0, err
	}
	var v uint64
	for i := 0; i < 10; i++ {
		if off+int64(i) >= end || i >= len(b) {
			return 0, 0, &wireError{off, errTruncated}
		}
		c := b[i]
		if i == 9 && c > 1 {
			return 0, 0, &wireError{off, errors.New("varint overflows 64 bits")}
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, off + int64(i) + 1, nil
		}
	}
	return 0, 0, &wireError{off, errors.New("varint longer than 10 bytes")}
}

// field is one field of a message: its number, wire type, and value: a varint or fixed value in
// Value, or the bytes of a length-delimited one from Start to End.
type field struct {
	Num        uint64
	Type       int
	Value      uint64
	At         int64 // where the field's tag is
	Start, End int64
}

// next reads the field at off, within a message that ends at end, and returns it and where the
// next one starts.
func (rd *reader) next(off, end int64) (field, int64, error) {
	tag, p, err := rd.varint(off, end)
	if err != nil {
		return field{}, 0, err
	}
	f := field{Num: tag >> 3, Type: int(tag & 7), At: off}
	if f.Num == 0 || f.Num > 1<<29-1 {
		return f, 0, &wireError{off, fmt.Errorf("field number %d", f.Num)}
	}
	switch f.Type {
	case wireVarint:
		f.Value, p, err = rd.varint(p, end)
		return f, p, err
	case wireI64, wireI32:
		n := int64(8)
		if f.Type == wireI32 {
			n = 4
		}
		if end-p < n {
			return f, 0, &wireError{p, errTruncated}
		}
		b, err := rd.at(p, int(n))
		if err != nil {
			return f, 0, err
		}
		for i := n - 1; i >= 0; i-- {
			f.Value = f.Value<<8 | uint64(b[i])
		}
		return f, p + n, nil
	case wireLen:
		n, q, err := rd.varint(p, end)
		if err != nil {
			return f, 0, err
		}
		if n > uint64(end-q) {
			return f, 0, &wireError{p, fmt.Errorf("a length of %d bytes %v", n, errTruncated)}
		}
		f.Start, f.End = q, q+int64(n)
		return f, f.End, nil
	}
	return f, 0, &wireError{off, fmt.Errorf("wire type %d (groups and unknown types are not read)", f.Type)}
}

// bytes reads the bytes of a length-delimited field, at most max of them (an error past that).
func (rd *reader) bytes(f field, max int) ([]byte, error) {
	if f.Type != wireLen {
		return nil, &wireError{f.At, fmt.Errorf("field %d has wire type %d, not length-delimited", f.Num, f.Type)}
	}
	n := f.End - f.Start
	if n > int64(max) {
		return nil, &wireError{f.Start, fmt.Errorf("a string of %d bytes, more than the %d stdiff reads", n, max)}
	}
	b, err := rd.at(f.Start, int(n))
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), b[:n]...), nil
}

// each calls fn for every field of the message from start to end, in order, until fn or reading fails.
func (rd *reader) each(start, end int64, fn func(f field) error) error {
	for off := start; off < end; {
		f, next, err := rd.next(off, end)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
		off = next
	}
	return nil
}
