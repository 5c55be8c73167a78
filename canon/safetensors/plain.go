package safetensors

import (
	"bytes"
	"encoding/binary"
	"sync"
	"unicode/utf8"
	"unsafe"
	"weak"

	"github.com/stdiff/stdiff/canon/tensor"
)

// This file reads a plain header, the form nearly every writer produces, through Skim instead of the full
// parser: the same tensors and metadata with less work (no entry kept twice, no layout walk: Skim proves
// the offsets tile) and, for a caller that reads headers one after another into one buffer, next to no
// allocation (reuse). A header is plain when Skim reads it (compact or spaced entries of the three fields,
// metadata of strings, offsets that tile the data section exactly), it starts with '{', is UTF-8 with no
// control character, names no tensor and no metadata key twice, and holds at least one tensor: then Read
// finds it valid, with no finding, and readPlain's Header is the one readHeader makes
// (TestPlainSameAsFull, FuzzPlain). Anything else is left to readHeader, which says what is wrong.

// plainSink collects what Skim reads of a plain header, in buffers kept for the next header read into
// the same buffer (reuse).
type plainSink struct {
	hb          []byte
	tensors     []tensor.Tensor
	shapes      []uint64 // the tensors' shapes, one after another (shapeAt: where each starts)
	shapeAt     []int
	meta        []Meta
	metaSet     bool
	constDTypes bool        // every dtype of tensors is a constant, no part of the header
	text        []byte      // the values of meta's keys and values with escapes, one after another
	decodedAt   []decodedAt // where they are
	spans       [][2]uint64 // Skim's scratch
	keys        map[string]struct{}
}

// Entry adds a tensor entry: its name and dtype stay parts of the header, as the full parser's do.
func (s *plainSink) Entry(name, dtype []byte, shape []uint64, begin, end uint64) {
	if cap(s.tensors) == 0 {
		// Room for the likely number of entries in the rest of the header (the full parser's
		// estimate: real entries take 80 to 200 bytes), so that a large one does not grow by doubling.
		n := (len(s.hb)-int(s.at(name)))/96 + 1
		s.tensors, s.shapeAt, s.shapes = make([]tensor.Tensor, 0, n), make([]int, 0, n), make([]uint64, 0, 2*n)
	}
	s.shapeAt = append(s.shapeAt, len(s.shapes))
	s.shapes = append(s.shapes, shape...)
	dt := dtypeOf(s.part(dtype))
	if unsafe.StringData(string(dt)) == unsafe.SliceData(dtype) {
		s.constDTypes = false // a part of the header
	}
	s.tensors = append(s.tensors, tensor.Tensor{Name: s.part(name), DType: dt, Begin: begin, End: end,
		HeaderOffset: 8 + s.at(name) - 1}) // the key's opening quote, as a file offset
}

// Reset forgets what was read: Skim reads the header again, another way.
func (s *plainSink) Reset() {
	s.tensors, s.shapes, s.shapeAt, s.meta = s.tensors[:0], s.shapes[:0], s.shapeAt[:0], s.meta[:0]
	s.text, s.decodedAt = s.text[:0], s.decodedAt[:0]
	s.metaSet, s.constDTypes = false, true
}

func (s *plainSink) metaObject() { s.metaSet = true }

func (s *plainSink) decoded() *[]byte { return &s.text }

func (s *plainSink) metaEntry(key, value []byte, kat, kn, vat, vn int) {
	if kat >= 0 {
		s.decodedAt = append(s.decodedAt, decodedAt{i: len(s.meta), at: kat, n: kn, key: true})
	}
	if vat >= 0 {
		s.decodedAt = append(s.decodedAt, decodedAt{i: len(s.meta), at: vat, n: vn})
	}
	s.meta = append(s.meta, Meta{Key: s.part(key), Value: s.part(value), Offset: 8 + s.at(key) - 1})
}

// decodedAt is where the value of the key or value of s.meta[i], a string with escapes, is in s.text.
type decodedAt struct {
	i, at, n int
	key      bool
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

// TextOnly reports whether b is UTF-8 with no control character: utf8.Valid(b) &&
// !HasControlOrTab(b), in one pass over ASCII (the two checks Skim leaves to its caller).
func TextOnly(b []byte) bool {
	// Four words a step. In a word of ASCII bytes (no high bit), a byte is 0x20 or more exactly when
	// adding 0x60 sets its high bit, and no sum carries into the next byte.
	const up = 0x6060606060606060
	i := 0
	for ; i+32 <= len(b); i += 32 {
		x := b[i : i+32 : i+32]
		w, v := binary.LittleEndian.Uint64(x), binary.LittleEndian.Uint64(x[8:])
		y, z := binary.LittleEndian.Uint64(x[16:]), binary.LittleEndian.Uint64(x[24:])
		if (w|v|y|z)&msb != 0 {
			break // not ASCII: the general checks, from here
		}
		if (w+up)&(v+up)&(y+up)&(z+up)&msb != msb {
			return false
		}
	}
	return utf8.Valid(b[i:]) && !HasControlOrTab(b[i:])
}

// uniqueKeys reports whether no two metadata entries have the same key. A key written with an escape
// counts as a duplicate: the keys compared here are the strings' bodies, and "\u0061" is "a" to the
// reference (TestPlainEscapedDuplicateMetaKey); writers escape no key.
func (s *plainSink) uniqueKeys() bool {
	for _, d := range s.decodedAt {
		if d.key {
			return false
		}
	}
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

// reuse is the memory of a plain header's Header (its tensors, their shapes, its metadata and the
// decoded strings of it) read into a caller's buffer: the next header read into that buffer is given
// it again, as ReadHeadInto's contract allows (the caller no longer uses the last Header), so that a
// caller reading a collection through one buffer a worker allocates next to nothing per header.
type reuse struct {
	sink    *plainSink // the scratch of the skim
	tensors []tensor.Tensor
	shapes  []uint64
	meta    []Meta
	text    []byte
	// rest is a copy of what followed `__metadata__` in the last header but the spaces that pad it,
	// when `__metadata__` came first and rest holds every tensor entry (their dtypes constants: no
	// string of them is a part of the header); restAt is where rest started in it, dataLen the data
	// section its tensors cover. A header whose rest is the same bytes has the same tensors (sameRest).
	rest    []byte
	restAt  int
	dataLen int64
}

// metaFirst starts a header whose first key is `__metadata__`.
const metaFirst = `{"__metadata__":`

// sameRest reads hb the quick way when its `__metadata__` comes first and what follows it is the
// rest of the last header read into the buffer (a collection's files of one layout differ in their
// metadata alone): its metadata into s, its tensors the last header's (r.tensors, their names and
// header offsets moved to where they are now). It reports false, with s to be read again, for
// anything else. What Skim would check of the tensors it checked of the same bytes in the last header.
func (r *reuse) sameRest(s *plainSink, hb []byte, dataLen int64) bool {
	if r.rest == nil || dataLen != r.dataLen || !bytes.HasPrefix(hb, []byte(metaFirst)) {
		return false
	}
	p := skimmer{b: hb, i: len(metaFirst)}
	if _, ok := p.metadata(s); !ok || p.i >= len(hb) || hb[p.i] != ',' || !bytes.Equal(bytes.TrimRight(hb[p.i+1:], " "), r.rest) {
		return false
	}
	delta := p.i + 1 - r.restAt
	for i := range r.tensors {
		t := &r.tensors[i]
		at := int(t.HeaderOffset) - 8 + 1 + delta // the name, after the key's opening quote
		t.Name = s.part(hb[at : at+len(t.Name)])
		t.HeaderOffset += int64(delta)
	}
	r.restAt = p.i + 1
	return TextOnly(hb[:p.i+1])
}

// keepRest keeps what sameRest needs of hb, whose tensors s read, when its `__metadata__` came first.
func (r *reuse) keepRest(s *plainSink, hb []byte, dataLen int64) {
	r.rest = r.rest[:0]
	if !s.constDTypes || !bytes.HasPrefix(hb, []byte(metaFirst)) || len(s.tensors) == 0 {
		r.rest = nil
		return
	}
	p := skimmer{b: hb, i: len(metaFirst)}
	if !p.skipObject() || p.i >= len(hb) || hb[p.i] != ',' {
		r.rest = nil
		return
	}
	r.rest, r.restAt, r.dataLen = append(r.rest, bytes.TrimRight(hb[p.i+1:], " ")...), p.i+1, dataLen
}

// reused holds reuse by the address of the buffer (a buffer's address outlives the buffer only when
// nothing uses its last Header any more, so a new buffer at the same address may have its memory),
// weakly: memory not asked for again before the next collection is the collector's (the last Header's
// while it is used), and so is every buffer (a reuse refers to its header). Of a header of at most
// maxReusedTensors tensors and maxReusedText bytes of decoded strings; at most maxReused buffers'.
var reused struct {
	sync.Mutex
	by map[uintptr]weak.Pointer[reuse]
}

const (
	maxReused        = 64
	maxReusedTensors = 1 << 14
	maxReusedText    = 1 << 20
)

// takeReuse returns the memory kept for the buffer at key (0: none), or an empty reuse.
func takeReuse(key uintptr) *reuse {
	if key != 0 {
		reused.Lock()
		w := reused.by[key]
		delete(reused.by, key)
		reused.Unlock()
		if r := w.Value(); r != nil {
			return r
		}
	}
	return &reuse{}
}

// keepReuse keeps r for the next header read into the buffer at key.
func keepReuse(key uintptr, r *reuse) {
	if key == 0 || cap(r.sink.tensors) > maxReusedTensors || cap(r.tensors) > maxReusedTensors || cap(r.text) > maxReusedText || cap(r.rest) > 4*maxReusedText {
		return
	}
	reused.Lock()
	if reused.by == nil || len(reused.by) >= maxReused { // buffers no longer read into: forget them
		reused.by = make(map[uintptr]weak.Pointer[reuse], maxReused)
	}
	reused.by[key] = weak.Make(r)
	reused.Unlock()
}

// into is a copy of src in dst's memory when it has room for it (src itself when that is dst's
// memory), else in new memory; never nil.
func into[T any](dst, src []T) []T {
	switch {
	case dst != nil && cap(dst) >= len(src) && (len(src) == 0 || &dst[:1][0] == &src[0]):
		return dst[:len(src)]
	case dst != nil && cap(dst) >= len(src):
		dst = dst[:len(src)]
	default:
		dst = make([]T, len(src))
	}
	copy(dst, src)
	return dst
}

// readPlain reads hb, the N header bytes, into m when it is plain (see above), and reports whether it
// did; when it did not, m is as it was. key is the address of the caller's buffer hb is in (see
// reuse), 0 for none.
func (m *Header) readPlain(hb []byte, key uintptr) bool {
	if len(hb) == 0 || hb[0] != '{' || m.DataLen() < 0 {
		return false
	}
	r := takeReuse(key)
	if r.sink == nil {
		r.sink = new(plainSink)
	}
	s := r.sink
	s.hb = hb
	s.Reset()
	if cap(s.spans) == 0 {
		s.spans = make([][2]uint64, 0, len(hb)/96+1) // as many as Entry makes room for
	}
	defer func() {
		s.hb = nil
		keepReuse(key, r) // with the buffer, whose header its strings are parts of
	}()
	if key != 0 && r.sameRest(s, hb, m.DataLen()) {
		if !s.uniqueKeys() {
			return false
		}
		m.Tensors = r.tensors[:len(r.tensors):len(r.tensors)]
		m.HeaderParsed, m.HasMetadata = true, true
		m.metadataFrom(r, s)
		return true
	}
	s.Reset()
	r.rest = nil // r.tensors are given to this header or to none
	if _, ok := Skim(hb, m.DataLen(), &s.spans, s); !ok || len(s.tensors) == 0 || !TextOnly(hb) {
		return false
	}
	if lastOfEachName(s.tensors) != nil || !s.uniqueKeys() {
		return false
	}
	if key == 0 { // no buffer to keep memory for: the sink's is the Header's
		r.tensors, r.shapes, r.meta, r.text = s.tensors, s.shapes, s.meta, s.text
	}
	ts := into(r.tensors, s.tensors)
	shapes := into(r.shapes, s.shapes) // never nil: a scalar's shape is empty, as the full parser has it
	for i := range ts {
		end := len(shapes)
		if i+1 < len(ts) {
			end = s.shapeAt[i+1]
		}
		ts[i].Shape = shapes[s.shapeAt[i]:end:end]
	}
	r.tensors, r.shapes = ts, shapes
	m.HeaderParsed, m.HasMetadata = true, s.metaSet
	m.metadataFrom(r, s)
	m.Tensors = ts[:len(ts):len(ts)]
	if key != 0 {
		r.keepRest(s, hb, m.DataLen())
	}
	return true
}

// metadataFrom gives m the metadata s read, in r's memory.
func (m *Header) metadataFrom(r *reuse, s *plainSink) {
	if len(s.meta) == 0 {
		return
	}
	meta, text := into(r.meta, s.meta), into(r.text, s.text)
	for _, d := range s.decodedAt {
		v := unsafe.String(unsafe.SliceData(text[d.at:]), d.n)
		if d.key {
			meta[d.i].Key = v
		} else {
			meta[d.i].Value = v
		}
	}
	m.Metadata, r.meta, r.text = meta[:len(meta):len(meta)], meta, text
}
