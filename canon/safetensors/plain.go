package safetensors

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/stdiff/stdiff/canon/tensor"
)

// This file reads a plain header, the form nearly every writer produces, through Skim instead of the
// full parser: the same tensors and metadata, a fraction of the work. A header is plain when Skim
// reads it (compact or spaced entries of the three fields, metadata of strings, offsets that tile
// the data section exactly), it starts with '{', is UTF-8 with no control character, names no tensor
// and no metadata key twice, and holds at least one tensor: then Read finds it valid, with no finding,
// and readPlain's Header is the one readHeader makes (TestPlainSameAsFull, FuzzPlain). Anything else
// is left to readHeader, which says what is wrong.

// plainSink collects what Skim reads of a plain header, in buffers kept for the next header (plains).
type plainSink struct {
	hb      []byte
	tensors []tensor.Tensor
	shapes  []uint64 // the tensors' shapes, one after another (shapeAt: where each starts)
	shapeAt []int
	meta    []Meta
	metaSet bool
	escaped bool        // a metadata key or value holds an escape
	spans   [][2]uint64 // Skim's scratch
	keys    map[string]struct{}
}

// plains keeps plainSinks' buffers between headers: a collection's headers are read into a few.
var plains = sync.Pool{New: func() any { return new(plainSink) }}

// maxPlainKept is the most tensors a plainSink kept in plains may have room for.
const maxPlainKept = 1 << 16

// Entry adds a tensor entry: its name and dtype stay parts of the header, as the full parser's do.
func (s *plainSink) Entry(name, dtype []byte, shape []uint64, begin, end uint64) {
	s.shapeAt = append(s.shapeAt, len(s.shapes))
	s.shapes = append(s.shapes, shape...)
	s.tensors = append(s.tensors, tensor.Tensor{Name: s.part(name), DType: dtypeOf(s.part(dtype)), Begin: begin, End: end,
		HeaderOffset: 8 + s.at(name) - 1}) // the key's opening quote, as a file offset
}

// Reset forgets what was read: Skim reads the header again, another way.
func (s *plainSink) Reset() {
	s.tensors, s.shapes, s.shapeAt, s.meta = s.tensors[:0], s.shapes[:0], s.shapeAt[:0], s.meta[:0]
	s.metaSet = false
}

func (s *plainSink) metaObject() { s.metaSet = true }

func (s *plainSink) metaEntry(key, value []byte, kesc, vesc bool) {
	s.meta = append(s.meta, Meta{Key: s.text(key, kesc), Value: s.text(value, vesc), Offset: 8 + s.at(key) - 1})
}

// text is the value of a string whose body b (a part of the header) Skim read: b itself when it holds
// no escape.
func (s *plainSink) text(b []byte, escaped bool) string {
	if !escaped {
		return s.part(b)
	}
	out := unescape(b)
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// at is the index in the header of b, a part of it.
func (s *plainSink) at(b []byte) int64 {
	return int64(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(s.hb))))
}

// part is b, a part of the header, as a string sharing its memory.
func (s *plainSink) part(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// dtypeOf is the dtype d, the common ones as constants (as compactTensor has them: no pointer into
// the header for the collector to follow).
func dtypeOf(d string) tensor.DType {
	switch d {
	case "F32":
		return "F32"
	case "F16":
		return "F16"
	case "BF16":
		return "BF16"
	case "I64":
		return "I64"
	case "F8_E4M3":
		return "F8_E4M3"
	}
	return tensor.DType(d)
}

// unescape is the value of the JSON string whose body is b, whose escapes are all ones JSON allows
// and none of a surrogate (Skim's str checked), as parseString reads it: the plain runs between escapes
// are copied eight bytes at a time (the value is never longer than its body, so each word fits).
func unescape(b []byte) []byte {
	out := make([]byte, len(b))
	n, i := 0, 0
	for {
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			binary.LittleEndian.PutUint64(out[n:], w)
			if m := hasByte(w, '\\'); m != 0 { // the lowest byte flagged is a backslash
				k := bits.TrailingZeros64(m) >> 3
				n, i = n+k, i+k
				break
			}
			n, i = n+8, i+8
		}
		for i < len(b) && b[i] != '\\' {
			out[n] = b[i]
			n, i = n+1, i+1
		}
		if i >= len(b) {
			return out[:n]
		}
		e := b[i+1]
		i += 2
		switch e {
		case 'b':
			e = '\b'
		case 'f':
			e = '\f'
		case 'n':
			e = '\n'
		case 'r':
			e = '\r'
		case 't':
			e = '\t'
		case 'u':
			var r rune
			for _, c := range b[i : i+4] {
				switch {
				case c <= '9':
					c -= '0'
				case c <= 'F':
					c -= 'A' - 10
				default:
					c -= 'a' - 10
				}
				r = r<<4 | rune(c)
			}
			i += 4
			n += utf8.EncodeRune(out[n:], r)
			continue
		} // '"', '\\' and '/' are themselves
		out[n] = e
		n++
	}
}

// textOnly reports whether b is UTF-8 with no control character: utf8.Valid(b) &&
// !HasControlOrTab(b), in one pass over ASCII.
func textOnly(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if w&msb != 0 {
			break // not ASCII: the general checks, from here
		}
		if hasByteLess(w, 0x20) != 0 {
			return false
		}
	}
	return utf8.Valid(b[i:]) && !HasControlOrTab(b[i:])
}

// uniqueKeys reports whether no two metadata entries have the same key.
func (s *plainSink) uniqueKeys() bool {
	increasing := true
	for i := 1; i < len(s.meta) && increasing; i++ {
		increasing = s.meta[i-1].Key < s.meta[i].Key
	}
	if increasing {
		return true
	}
	if s.keys == nil {
		s.keys = map[string]struct{}{}
	}
	defer clear(s.keys)
	for _, e := range s.meta {
		if _, dup := s.keys[e.Key]; dup {
			return false
		}
		s.keys[e.Key] = struct{}{}
	}
	return true
}

// readPlain reads hb, the N header bytes, into m when it is plain (see above), and reports whether it
// did; when it did not, m is as it was.
func (m *Header) readPlain(hb []byte) bool {
	if len(hb) == 0 || hb[0] != '{' || m.DataLen() < 0 {
		return false
	}
	s := plains.Get().(*plainSink)
	s.hb = hb
	s.Reset()
	defer func() {
		s.hb = nil
		clear(s.meta) // no string of this header kept past it
		if cap(s.tensors) <= maxPlainKept {
			clear(s.tensors[:cap(s.tensors)])
			plains.Put(s)
		}
	}()
	if _, ok := Skim(hb, m.DataLen(), &s.spans, s); !ok || len(s.tensors) == 0 || !textOnly(hb) {
		return false
	}
	ts := slices.Clone(s.tensors)
	if lastOfEachName(ts) != nil || !s.uniqueKeys() {
		return false
	}
	shapes := make([]uint64, len(s.shapes)) // never nil: a scalar's shape is empty, as the full parser has it
	copy(shapes, s.shapes)
	for i := range ts {
		end := len(shapes)
		if i+1 < len(ts) {
			end = s.shapeAt[i+1]
		}
		ts[i].Shape = shapes[s.shapeAt[i]:end:end]
	}
	m.HeaderParsed, m.HasMetadata, m.Tensors = true, s.metaSet, ts
	if len(s.meta) > 0 {
		m.Metadata = slices.Clone(s.meta)
	}
	return true
}
