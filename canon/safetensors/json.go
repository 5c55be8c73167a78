package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/stdiff/stdiff/canon/tensor"
)

// This file is a JSON parser specialised for safetensors headers. It accepts exactly what the reference
// reader accepts (serde_json into `HashMetadata`: a map with an optional `__metadata__` field and the
// tensors flattened beside it), keeps entries in file order with their byte positions, and, unlike the
// reference, keeps going past semantic errors so that lenient mode can say everything that is wrong.
//
// Errors come in the reference's three tiers, and the strict verdict takes the first of the first tier
// that has one:
//  1. syntax errors, nesting depth, and `__metadata__` type errors: reported where they occur;
//  2. tensor entry errors: serde buffers the whole object first, so these come after the last key;
//  3. trailing characters after the top-level value.

// maxDepth is serde_json's recursion limit: opening the 128th nested array or object is an error.
const maxDepth = 128

// jsonError is a parse error at a byte index into the header.
type jsonError struct {
	msg string
	pos int // index into the header of the byte the error is about
}

// rawTensor is a handle on one top-level tensor entry while it is parsed. The entry itself lives in
// rawHeader.tensors (its HeaderOffset holds the index of the key's opening quote in the header); what
// is unusual about it, rarely anything, is kept here until the entry is read, then summed up in
// rawHeader: a header of a million bad entries costs a byte of flags per entry, not a message.
type rawTensor struct {
	*tensor.Tensor
	idx   int
	h     *rawHeader
	flags entryFlags
	err   *jsonError // why the entry is invalid, when it is the header's first invalid entry
	form  string     // "" for the usual object; "array" or "dtype-object" for the odd forms
	extra string     // the first field the reference ignores
}

// entryFlags say what is wrong with an entry.
type entryFlags uint8

const (
	// entryInvalid: the entry is not a valid TensorInfo (the reference rejects the file).
	entryInvalid entryFlags = 1 << iota
	// entryUnknownDType: the first reason is a dtype the reference does not know.
	entryUnknownDType
)

// rawMeta is one `__metadata__` entry as written.
type rawMeta struct {
	key   string
	value string
	pos   int
	raw   bool // value was not a JSON string; value holds its JSON text
}

// rawHeader is everything parsed from a header.
type rawHeader struct {
	tensors []tensor.Tensor
	// flags of tensors[i] are flags[i] (zero past the end: flags is allocated at the first bad entry).
	flags []entryFlags
	// oddForms counts entries in the array or {"DTYPE":null} forms, firstOdd names the first;
	// extraFields counts entries with fields the reference ignores, firstExtra is the first as name.field.
	oddForms, extraFields int
	firstOdd, firstExtra  string
	meta                  []rawMeta
	metaSeen              bool
	metaNull              bool
	metaDup               []int // positions of repeated `__metadata__` keys
	metaBad               *jsonError
	start                 int // index of the top-level value
	end                   int // index just after the top-level value; -1 when the object was not closed
	syntax                *jsonError
	entryErr              *jsonError
	trailing              *jsonError
}

// strictError returns the error the reference reports for this header, or nil.
func (h *rawHeader) strictError() *jsonError {
	switch {
	case h.syntax != nil:
		return h.syntax
	case h.entryErr != nil:
		return h.entryErr
	default:
		return h.trailing
	}
}

type parser struct {
	b     []byte
	s     string // the same bytes as b: strings without escapes are substrings of it, not copies
	i     int
	depth int
	h     *rawHeader
	// fatal is set on a syntax error: nothing after it can be parsed.
	fatal bool
	// keyEnd is the index just after the last object key read.
	keyEnd int
	// shapes is an arena for shape and offset arrays, so each does not need an allocation of its own;
	// values counts what the full arenas before it hold.
	shapes []uint64
	values int
	// scratch is where strings with escapes are decoded (parseString).
	scratch []byte
}

// more estimates how many more items the rest of the header holds, at the rate of have items in the
// bytes read so far, with a margin; at least half of have, so that growth stays geometric.
func (p *parser) more(have int) int {
	n := int(int64(len(p.b)-p.i) * int64(have) / int64(max(p.i, 1)))
	return max(n+n/16+64, have/2)
}

// push appends v to the array being built at p.shapes[*first:]. When the arena is full, that array
// alone moves to a new arena sized for the rest of the header: the arrays before it stay where they
// are, so nothing is copied twice and no arena is held twice.
func (p *parser) push(first *int, v uint64) {
	if len(p.shapes) == cap(p.shapes) {
		part := p.shapes[*first:]
		p.values += *first
		next := make([]uint64, len(part), len(part)+p.more(p.values))
		copy(next, part)
		p.shapes, *first = next, 0
	}
	p.shapes = append(p.shapes, v)
}

func isWS(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

func (p *parser) ws() {
	for p.i < len(p.b) && isWS(p.b[p.i]) {
		p.i++
	}
}

// fail records a syntax error at pos and stops the parse.
func (p *parser) fail(pos int, format string, args ...any) {
	if pos > len(p.b) {
		pos = len(p.b)
	}
	e := &jsonError{msg: fmt.Sprintf(format, args...), pos: pos}
	if p.h.syntax == nil {
		p.h.syntax = e
	}
	p.fatal = true
}

// parseHeader parses a header. It takes b over: names and values may share its memory, so the caller
// must not change b afterwards. It never panics and never allocates more than a small multiple of len(b).
func parseHeader(b []byte) *rawHeader {
	h := &rawHeader{end: -1}
	h.tensors = make([]tensor.Tensor, 0) // room is made at the first entry (parseTensor), for the bytes after the metadata
	p := &parser{b: b, s: unsafe.String(unsafe.SliceData(b), len(b)), h: h}
	defer p.putScratch()
	p.ws()
	h.start = p.i
	if p.i >= len(b) {
		p.fail(p.i, "EOF while parsing a value")
		return h
	}
	if b[p.i] != '{' {
		if desc, pos, ok := p.unexpected(); ok {
			p.fail(pos, "invalid type: %s, expected struct HashMetadata", desc)
		}
		return h
	}
	p.parseTop()
	if p.fatal {
		return h
	}
	h.end = p.i
	p.ws()
	if p.i < len(b) {
		h.trailing = &jsonError{msg: "trailing characters", pos: p.i}
	}
	return h
}

// describeValue names the JSON value starting at p.i the way serde's "invalid type" messages do.
func (p *parser) describeValue() string {
	if p.i >= len(p.b) {
		return "end of input"
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return "map"
	case c == '[':
		return "sequence"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "number"
	default:
		return fmt.Sprintf("character %q", rune(c))
	}
}

// unexpected describes the value at p.i as serde's "invalid type" errors do, with the position serde
// reports (as an index for fail): a map or sequence is described before it is read, and left for the
// caller to skip; any other value is read first, so the position is after it. ok is false after a
// syntax error.
func (p *parser) unexpected() (desc string, pos int, ok bool) {
	start := p.i
	switch c := p.b[p.i]; {
	case c == '{':
		return "map", start - 1, true
	case c == '[':
		return "sequence", start - 1, true
	case c == '"':
		v, ok := p.parseString()
		if !ok {
			return "", 0, false
		}
		desc = "string " + strconv.Quote(v)
	case c == 't' || c == 'f' || c == 'n':
		if !p.skipValue() {
			return "", 0, false
		}
		if desc = "null"; c != 'n' {
			desc = "boolean `" + string(p.b[start:p.i]) + "`"
		}
	case c == '-' || (c >= '0' && c <= '9'):
		_, isUint, ok := p.parseNumber()
		if !ok {
			return "", 0, false
		}
		tok := string(p.b[start:p.i])
		if _, err := strconv.ParseInt(tok, 10, 64); isUint || err == nil {
			desc = "integer `" + tok + "`"
		} else {
			desc = "floating point `" + tok + "`"
		}
	default:
		p.fail(p.i, "expected value")
		return "", 0, false
	}
	return desc, p.i - 1, true
}

func (p *parser) enter() bool {
	p.depth++
	if p.depth >= maxDepth {
		p.fail(p.i, "recursion limit exceeded")
		return false
	}
	return true
}

func (p *parser) leave() { p.depth-- }

// parseTop parses the top-level object at p.i.
func (p *parser) parseTop() {
	p.members(func(key string, keyPos int) {
		if key == "__metadata__" {
			p.parseMetadata(keyPos, p.keyEnd)
		} else {
			p.parseTensor(key, keyPos)
		}
	})
}

// members parses the object at p.i ('{'). For each member it calls value with p.i at the value, which
// value must consume. It reports false after a syntax error.
func (p *parser) members(value func(key string, keyPos int)) bool {
	if !p.enter() {
		return false
	}
	defer p.leave()
	p.i++
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return true
	}
	for {
		switch {
		case p.i >= len(p.b):
			p.fail(p.i, "EOF while parsing an object")
			return false
		case p.b[p.i] == '}':
			p.fail(p.i, "trailing comma")
			return false
		case p.b[p.i] != '"':
			p.fail(p.i, "key must be a string")
			return false
		}
		keyPos := p.i
		key, ok := p.parseString()
		if !ok {
			return false
		}
		p.keyEnd = p.i
		p.ws()
		if p.i >= len(p.b) {
			p.fail(p.i, "EOF while parsing an object")
			return false
		}
		if p.b[p.i] != ':' {
			p.fail(p.i, "expected `:`")
			return false
		}
		p.i++
		p.ws()
		value(key, keyPos)
		if p.fatal {
			return false
		}
		p.ws()
		if p.i >= len(p.b) {
			p.fail(p.i, "EOF while parsing an object")
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.ws()
		case '}':
			p.i++
			return true
		default:
			p.fail(p.i, "expected `,` or `}`")
			return false
		}
	}
}

// elements parses the array at p.i ('['), calling value for the n-th element with p.i at it. It
// reports false after a syntax error.
func (p *parser) elements(value func(n int)) bool {
	if !p.enter() {
		return false
	}
	defer p.leave()
	p.i++
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return true
	}
	for n := 0; ; n++ {
		if p.i >= len(p.b) {
			p.fail(p.i, "EOF while parsing a list")
			return false
		}
		if p.b[p.i] == ']' {
			p.fail(p.i, "trailing comma")
			return false
		}
		value(n)
		if p.fatal {
			return false
		}
		p.ws()
		if p.i >= len(p.b) {
			p.fail(p.i, "EOF while parsing a list")
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.ws()
		case ']':
			p.i++
			return true
		default:
			p.fail(p.i, "expected `,` or `]`")
			return false
		}
	}
}

// semantic records an error of tier 1 that does not stop the parse (a `__metadata__` type error).
func (p *parser) semantic(pos int, format string, args ...any) {
	if p.h.syntax == nil {
		p.h.syntax = &jsonError{msg: fmt.Sprintf(format, args...), pos: pos}
	}
}

func (p *parser) parseMetadata(keyPos, keyEnd int) {
	h := p.h
	if h.metaSeen {
		p.semantic(keyEnd-1, "duplicate field `__metadata__`") // serde: just after the key
		h.metaDup = append(h.metaDup, keyPos)
		// serde stops here; lenient mode reads the repeated object too (last wins, as for keys inside it).
	}
	h.metaSeen = true
	if p.i >= len(p.b) {
		p.fail(p.i, "EOF while parsing a value")
		return
	}
	switch p.b[p.i] {
	case 'n':
		if p.parseLiteral("null") {
			h.metaNull = true
		}
		return
	case '{':
	default:
		start := p.i
		desc, pos, ok := p.unexpected()
		if !ok {
			return
		}
		e := &jsonError{msg: fmt.Sprintf("invalid type: %s, expected a map", desc), pos: start}
		p.semantic(pos, "%s", e.msg)
		if h.metaBad == nil {
			h.metaBad = e
		}
		if p.i == start {
			p.skipValue()
		}
		return
	}
	h.metaNull = false
	p.members(func(key string, kpos int) {
		if p.i < len(p.b) && p.b[p.i] == '"' {
			if v, ok := p.parseString(); ok {
				h.meta = append(h.meta, rawMeta{key: key, value: v, pos: kpos})
			}
			return
		}
		vpos := p.i
		if p.i >= len(p.b) {
			p.fail(p.i, "EOF while parsing a value")
			return
		}
		desc, pos, ok := p.unexpected()
		if !ok {
			return
		}
		p.semantic(pos, "invalid type: %s, expected a string", desc)
		if p.i == vpos && !p.skipValue() {
			return
		}
		h.meta = append(h.meta, rawMeta{key: key, value: string(p.b[vpos:p.i]), pos: kpos, raw: true})
	})
}

// fail records that a tensor entry is invalid, for the first reason only, as serde stops there. The
// reason is spelled out only for the header's first invalid entry (the strict verdict): lenient mode
// reads the others again when it needs to say why (entryError).
func (t *rawTensor) fail(pos int, format string, args ...any) {
	if t.flags&entryInvalid != 0 {
		return
	}
	t.flags |= entryInvalid
	if t.h.entryErr == nil {
		t.err = &jsonError{msg: fmt.Sprintf(format, args...), pos: pos}
	}
}

// spelled reports whether fail spells out the reason: for the header's first invalid entry only.
// Callers whose arguments would cost an allocation (a string in an interface) check it first.
func (t *rawTensor) spelled() bool { return t.flags&entryInvalid == 0 && t.h.entryErr == nil }

// unknownDType records that the entry's dtype is not one the reference knows.
func (t *rawTensor) unknownDType(pos int, dtype string) {
	if t.flags&entryInvalid == 0 {
		t.flags |= entryUnknownDType
	}
	if t.spelled() {
		t.fail(pos, "unknown variant `%s`", dtype)
	}
	t.flags |= entryInvalid
}

// wrongType records that the value at p.i is not what the entry expects there.
func (p *parser) wrongType(t *rawTensor, pos int, expected string) {
	if t.spelled() {
		t.fail(pos, "invalid type: %s, expected %s", p.describeValue(), expected)
	}
	t.flags |= entryInvalid
}

// parseTensor parses one top-level tensor entry. Entry errors are kept on the entry; syntax errors stop all.
func (p *parser) parseTensor(name string, keyPos int) {
	if p.i >= len(p.b) {
		p.fail(p.i, "EOF while parsing a value")
		return
	}
	switch ts := p.h.tensors; {
	case cap(ts) == 0:
		// Room for the likely number of tensors in what follows the metadata (real entries take 80 to
		// 200 bytes) in a small header; a large one grows by what the entries read so far say the rest
		// holds (see parser.more).
		n := min((len(p.b)-keyPos)/96+1, 4096)
		p.h.tensors = make([]tensor.Tensor, 0, n)
		if cap(p.shapes) == 0 {
			p.shapes = make([]uint64, 0, 3*n)
		}
	case len(ts) == cap(ts):
		p.h.tensors = slices.Grow(ts, p.more(len(ts)))
	}
	p.h.tensors = append(p.h.tensors, tensor.Tensor{Name: name, HeaderOffset: int64(keyPos)})
	n := len(p.h.tensors) - 1
	t := &rawTensor{Tensor: &p.h.tensors[n], idx: n, h: p.h}
	switch p.b[p.i] {
	case '{':
		if !p.compactTensor(t) {
			p.parseTensorObject(t)
		}
	case '[':
		p.parseTensorArray(t)
	default:
		p.wrongType(t, p.i, "struct TensorInfo")
		p.skipValue()
	}
	if p.fatal {
		p.h.tensors = p.h.tensors[:n]
		return
	}
	h := p.h
	if t.err != nil && h.entryErr == nil {
		h.entryErr = t.err
	}
	if t.flags != 0 {
		if len(h.flags) <= n {
			h.flags = slices.Grow(h.flags, cap(h.tensors)-len(h.flags))[:n+1]
		}
		h.flags[n] = t.flags
	}
	if t.form != "" {
		if h.oddForms++; h.oddForms == 1 {
			h.firstOdd = name
		}
	}
	if t.extra != "" {
		if h.extraFields++; h.extraFields == 1 {
			h.firstExtra = name + "." + t.extra
		}
	}
}

// flagsOf returns the flags of tensors[i].
func (h *rawHeader) flagsOf(i int) entryFlags {
	if i < len(h.flags) {
		return h.flags[i]
	}
	return 0
}

// entryError reads the tensor entry whose key is at b[pos] again, alone, and returns why it is invalid
// (nil when it is not). The entry sits inside the top-level object, one level deep.
func entryError(b []byte, pos int) *jsonError {
	h := &rawHeader{end: -1, tensors: make([]tensor.Tensor, 0, 1)}
	p := &parser{b: b, s: unsafe.String(unsafe.SliceData(b), len(b)), h: h, i: pos, depth: 1, shapes: make([]uint64, 0, 8)}
	name, ok := p.parseString()
	if !ok {
		return nil
	}
	p.ws()
	if p.i >= len(b) || b[p.i] != ':' {
		return nil
	}
	p.i++
	p.ws()
	p.parseTensor(name, pos)
	return p.h.entryErr
}

// compactTensor reads an entry written exactly as the reference writer writes it,
// {"dtype":"F16","shape":[2,3],"data_offsets":[0,12]}, much faster than the general path. On anything
// else it reports false with nothing consumed, and the general path reads the entry.
func (p *parser) compactTensor(t *rawTensor) bool {
	b, i := p.b, p.i
	const open, shape, offsets = `{"dtype":"`, `","shape":[`, `,"data_offsets":[`
	if !(i+len(open) <= len(b) && string(b[i:i+len(open)]) == open) { // constants compared a word at a time
		return false
	}
	i += len(open)
	ds := i
	for i < len(b) && b[i] != '"' {
		if b[i] < 0x20 || b[i] == '\\' {
			return false
		}
		i++
	}
	dt := p.s[ds:min(i, len(b))]
	switch dt { // the common ones as constants: no pointer into the header for the collector to follow
	case "F32":
		dt = "F32"
	case "F16":
		dt = "F16"
	case "BF16":
		dt = "BF16"
	case "I64":
		dt = "I64"
	case "F8_E4M3":
		dt = "F8_E4M3"
	}
	if !(i+len(shape) <= len(b) && string(b[i:i+len(shape)]) == shape) || !tensor.DType(dt).Known() {
		return false
	}
	i += len(shape)
	first := len(p.shapes)
	if i < len(b) && b[i] == ']' {
		i++
	} else {
		for {
			v, next, ok := compactUint(b, i)
			if !ok || next >= len(b) {
				p.shapes = p.shapes[:first]
				return false
			}
			p.push(&first, v)
			i = next + 1
			if b[next] == ']' {
				break
			}
			if b[next] != ',' {
				p.shapes = p.shapes[:first]
				return false
			}
		}
	}
	// offsets in two parts of at most 16 bytes: each compared inline.
	begin, next, ok := uint64(0), 0, i+len(offsets) <= len(b) && string(b[i:i+9]) == offsets[:9] && string(b[i+9:i+len(offsets)]) == offsets[9:]
	if ok {
		begin, next, ok = compactUint(b, i+len(offsets))
	}
	var end uint64
	if ok && next < len(b) && b[next] == ',' {
		end, next, ok = compactUint(b, next+1)
	} else {
		ok = false
	}
	if !ok || !(next+2 <= len(b) && string(b[next:next+2]) == "]}") {
		p.shapes = p.shapes[:first]
		return false
	}
	t.DType, t.Begin, t.End = tensor.DType(dt), begin, end
	t.Shape = p.shapes[first:len(p.shapes):len(p.shapes)]
	p.i = next + 2
	return true
}

func hasAt(b []byte, i int, s string) bool { return i+len(s) <= len(b) && string(b[i:i+len(s)]) == s }

// compactUint reads a plain JSON integer that fits 64 bits at b[i:]. It reports the index after it, and
// false for anything else (sign, fraction, exponent, leading zero, overflow).
func compactUint(b []byte, i int) (v uint64, next int, ok bool) {
	if i < 0 || i >= len(b) {
		return 0, i, false
	}
	start, short := i, min(len(b), i+19) // 19 digits never overflow
	for ; i < short; i++ {
		d := uint64(b[i] - '0') // a byte below '0' wraps to a large d
		if d > 9 {
			break
		}
		v = v*10 + d
	}
	for ; i == short && i < len(b); i, short = i+1, short+1 {
		d := uint64(b[i] - '0')
		if d > 9 {
			break
		}
		if v >= math.MaxUint64/10 && (v > math.MaxUint64/10 || d > math.MaxUint64%10) { // v*10+d overflows
			return 0, i, false
		}
		v = v*10 + d
	}
	if i == start || (b[start] == '0' && i-start > 1) || (i < len(b) && (b[i] == '.' || b[i]|0x20 == 'e')) {
		return 0, i, false
	}
	return v, i, true
}

func (p *parser) parseTensorObject(t *rawTensor) {
	start := p.i
	var haveDType, haveShape, haveOffsets bool
	ok := p.members(func(key string, kpos int) {
		switch key {
		case "dtype":
			if haveDType {
				t.fail(kpos, "duplicate field `dtype`")
			}
			haveDType = true
			p.parseDType(t)
		case "shape":
			if haveShape {
				t.fail(kpos, "duplicate field `shape`")
			}
			haveShape = true
			t.Shape = p.parseUintArray(t, -1)
		case "data_offsets":
			if haveOffsets {
				t.fail(kpos, "duplicate field `data_offsets`")
			}
			haveOffsets = true
			t.setOffsets(p.parseUintArray(t, 2))
		default:
			if t.extra == "" {
				t.extra = key
			}
			p.skipValue()
		}
	})
	if !ok {
		return
	}
	switch {
	case !haveDType:
		t.fail(start, "missing field `dtype`")
	case !haveShape:
		t.fail(start, "missing field `shape`")
	case !haveOffsets:
		t.fail(start, "missing field `data_offsets`")
	}
}

func (t *rawTensor) setOffsets(offs []uint64) {
	if len(offs) == 2 {
		t.Begin, t.End = offs[0], offs[1]
	}
}

// parseTensorArray parses the sequence form of a TensorInfo: [dtype, shape, data_offsets].
func (p *parser) parseTensorArray(t *rawTensor) {
	t.form = "array"
	start := p.i
	n := 0
	ok := p.elements(func(k int) {
		n = k + 1
		switch k {
		case 0:
			p.parseDType(t)
		case 1:
			t.Shape = p.parseUintArray(t, -1)
		case 2:
			t.setOffsets(p.parseUintArray(t, 2))
		default:
			p.skipValue()
		}
	})
	if !ok {
		return
	}
	if n < 3 {
		t.fail(start, "invalid length %d, expected struct TensorInfo with 3 elements", n)
	} else if n > 3 {
		t.fail(start, "invalid length %d, expected fewer elements in array", n)
	}
}

// parseDType parses a dtype: "F16", or the externally tagged enum form {"F16": null}.
func (p *parser) parseDType(t *rawTensor) {
	pos := p.i
	if p.i >= len(p.b) {
		p.fail(p.i, "EOF while parsing a value")
		return
	}
	switch p.b[p.i] {
	case '"':
		s, ok := p.parseString()
		if !ok {
			return
		}
		t.DType = tensor.DType(s)
		if !tensor.DType(s).Known() {
			t.unknownDType(pos, s)
		}
	case '{':
		t.form = "dtype-object"
		n := 0
		ok := p.members(func(key string, _ int) {
			isNull := p.i+4 <= len(p.b) && string(p.b[p.i:p.i+4]) == "null"
			vdesc := p.describeValue()
			if !p.skipValue() || n > 0 {
				n++
				return
			}
			n++
			t.DType = tensor.DType(key)
			if !tensor.DType(key).Known() {
				t.unknownDType(pos, key)
			} else if !isNull {
				t.fail(pos, "invalid type: %s, expected unit", vdesc)
			}
		})
		if ok && n != 1 {
			t.fail(pos, "invalid value: map, expected map with a single key")
		}
	default:
		p.wrongType(t, pos, "string or map")
		p.skipValue()
	}
}

// parseUintArray parses an array of unsigned integers (a shape, or data_offsets when want is 2).
// Type errors go to the entry; the array is parsed to its end either way.
func (p *parser) parseUintArray(t *rawTensor, want int) []uint64 {
	pos := p.i
	if p.i >= len(p.b) {
		p.fail(p.i, "EOF while parsing a value")
		return nil
	}
	expect := "a sequence"
	if want == 2 {
		expect = "a tuple of size 2"
	}
	if p.b[p.i] != '[' {
		p.wrongType(t, pos, expect)
		p.skipValue()
		return nil
	}
	first := len(p.shapes)
	n := 0
	ok := p.elements(func(k int) {
		n = k + 1
		epos := p.i
		if c := p.b[p.i]; c == '-' || (c >= '0' && c <= '9') {
			v, isUint, ok := p.parseNumber()
			if ok && !isUint {
				t.fail(epos, "invalid type: number `%s`, expected usize", p.b[epos:p.i])
			}
			p.push(&first, v)
			return
		}
		p.wrongType(t, epos, "usize")
		p.skipValue()
		p.push(&first, 0)
	})
	if !ok {
		return nil
	}
	if want == 2 && n != 2 {
		if n < 2 {
			t.fail(pos, "invalid length %d, expected a tuple of size 2", n)
		} else {
			t.fail(pos, "invalid length %d, expected fewer elements in array", n)
		}
	}
	out := p.shapes[first:len(p.shapes):len(p.shapes)]
	if want == 2 { // offsets are copied out at once: give their room back to the arena
		p.shapes = p.shapes[:first]
	}
	return out
}

// skipValue parses and discards one JSON value, checking everything serde_json checks when it buffers
// a value. It reports false after a syntax error.
func (p *parser) skipValue() bool {
	if p.i >= len(p.b) {
		p.fail(p.i, "EOF while parsing a value")
		return false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		_, ok := p.parseString()
		return ok
	case c == '{':
		return p.members(func(string, int) { p.skipValue() })
	case c == '[':
		return p.elements(func(int) { p.skipValue() })
	case c == 't':
		return p.parseLiteral("true")
	case c == 'f':
		return p.parseLiteral("false")
	case c == 'n':
		return p.parseLiteral("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, _, ok := p.parseNumber()
		return ok
	default:
		p.fail(p.i, "expected value")
		return false
	}
}

func (p *parser) parseLiteral(word string) bool {
	for k := 0; k < len(word); k++ {
		if p.i >= len(p.b) {
			p.fail(p.i, "EOF while parsing a value")
			return false
		}
		if p.b[p.i] != word[k] {
			p.fail(p.i, "expected ident")
			return false
		}
		p.i++
	}
	return true
}

// parseNumber parses a JSON number. isUint is true for an integer without sign, fraction or exponent
// that fits in 64 bits: the only numbers serde accepts as usize. Floats that overflow are errors, as
// in serde_json.
func (p *parser) parseNumber() (v uint64, isUint, ok bool) {
	start := p.i
	neg := false
	if p.b[p.i] == '-' {
		neg = true
		p.i++
	}
	if p.i >= len(p.b) {
		p.fail(p.i, "EOF while parsing a value")
		return 0, false, false
	}
	c := p.b[p.i]
	overflow := false
	switch {
	case c == '0':
		p.i++
		if p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.fail(p.i, "invalid number")
			return 0, false, false
		}
	case c >= '1' && c <= '9':
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			d := uint64(p.b[p.i] - '0')
			if v > (^uint64(0)-d)/10 {
				overflow = true
			} else if !overflow {
				v = v*10 + d
			}
			p.i++
		}
	default:
		p.fail(p.i, "invalid number")
		return 0, false, false
	}
	float := false
	if p.i < len(p.b) && p.b[p.i] == '.' {
		float = true
		p.i++
		if p.i >= len(p.b) || p.b[p.i] < '0' || p.b[p.i] > '9' {
			if p.i >= len(p.b) {
				p.fail(p.i, "EOF while parsing a value")
			} else {
				p.fail(p.i, "invalid number")
			}
			return 0, false, false
		}
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		float = true
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.i >= len(p.b) || p.b[p.i] < '0' || p.b[p.i] > '9' {
			if p.i >= len(p.b) {
				p.fail(p.i, "EOF while parsing a value")
			} else {
				p.fail(p.i, "invalid number")
			}
			return 0, false, false
		}
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
		}
	}
	if float || overflow {
		f, err := strconv.ParseFloat(string(p.b[start:p.i]), 64)
		if err != nil && (f > 1 || f < -1) { // ±Inf: serde_json refuses instead of rounding to infinity
			p.fail(p.i-1, "number out of range") // serde: after the number
			return 0, false, false
		}
		return 0, false, true
	}
	if neg {
		return 0, false, true
	}
	return v, true, true
}

// parseString parses the JSON string at p.i (which is '"') and returns its value. Like serde_json
// deserializing into a String, it refuses control characters, unknown escapes and unpaired surrogates.
func (p *parser) parseString() (string, bool) {
	b := p.b
	start := p.i + 1
	i := start
	i = plainRun(b, i)
	for i < len(b) {
		c := b[i]
		if c == '"' {
			p.i = i + 1
			return p.s[start:i], true
		}
		if c == '\\' || c < 0x20 {
			break
		}
		i++
	}
	// With escapes: the value is built in the parser's scratch buffer, the plain runs between escapes
	// copied a word at a time, and then copied into a string of its own: one allocation of the value's size. A
	// kohya header's JSON-in-string metadata is such a string.
	if p.scratch == nil {
		if b, ok := scratchPool.Get().(*[]byte); ok {
			p.scratch = *b
		}
	}
	buf := append(p.scratch[:0], b[start:i]...)
	defer func() { p.scratch = buf[:0] }()
	for {
		// The plain run up to the next escape, eight bytes at a time: each word is copied whole, and
		// the value grows by its plain bytes only (what follows them is written over next).
		for i+8 <= len(b) {
			if cap(buf)-len(buf) < 8 {
				buf = slices.Grow(buf, 8)
			}
			n, w := len(buf), binary.LittleEndian.Uint64(b[i:])
			binary.LittleEndian.PutUint64(buf[n:n+8], w)
			if m := special(w); m != 0 {
				k := bits.TrailingZeros64(m) >> 3
				buf, i = buf[:n+k], i+k
				break
			}
			buf, i = buf[:n+8], i+8
		}
		for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
			buf = append(buf, b[i])
			i++
		}
		if i >= len(b) {
			p.fail(i, "EOF while parsing a string")
			return "", false
		}
		c := b[i]
		switch {
		case c == '"':
			p.i = i + 1
			return string(buf), true
		case c < 0x20:
			p.fail(i, "control character (\\u0000-\\u001F) found while parsing a string")
			return "", false
		}
		i++ // backslash
		if i >= len(b) {
			p.fail(i, "EOF while parsing a string")
			return "", false
		}
		e := b[i]
		i++
		if c, ok := unescaped(e); ok {
			buf = append(buf, c)
			continue
		}
		switch e {
		case 'u':
			n, ok := p.hex4(&i)
			if !ok {
				return "", false
			}
			if n >= 0xDC00 && n <= 0xDFFF {
				p.fail(i-1, "lone leading surrogate in hex escape") // serde: after the escape
				return "", false
			}
			if n >= 0xD800 && n <= 0xDBFF {
				if i >= len(b) {
					p.fail(i, "EOF while parsing a string")
					return "", false
				}
				if b[i] != '\\' || i+1 >= len(b) || b[i+1] != 'u' {
					switch {
					case b[i] == '\\' && i+1 >= len(b):
						p.fail(i+1, "EOF while parsing a string")
					case b[i] == '\\':
						p.fail(i+1, "unexpected end of hex escape") // serde: after the byte that is not 'u'
					default:
						p.fail(i, "unexpected end of hex escape")
					}
					return "", false
				}
				i += 2
				n2, ok := p.hex4(&i)
				if !ok {
					return "", false
				}
				if n2 < 0xDC00 || n2 > 0xDFFF {
					p.fail(i-1, "lone leading surrogate in hex escape")
					return "", false
				}
				n = 0x10000 + (n-0xD800)<<10 + (n2 - 0xDC00)
			}
			buf = utf8.AppendRune(buf, rune(n))
		default:
			p.fail(i-1, "invalid escape")
			return "", false
		}
	}
}

// unescaped is the byte a JSON escape \e stands for, for every escape but \u; false for others.
func unescaped(e byte) (byte, bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// scratchPool keeps parsers' scratch buffers (as *[]byte: a pointer goes into the pool without an
// allocation) for the next header: the escaped strings of a collection's headers are decoded in a few
// buffers, not each in one grown for it.
var scratchPool sync.Pool

// maxPooledScratch is the largest scratch buffer kept for another header.
const maxPooledScratch = 1 << 20

// putScratch gives the parser's scratch buffer back to scratchPool.
func (p *parser) putScratch() {
	if p.scratch != nil && cap(p.scratch) <= maxPooledScratch {
		b := p.scratch[:0]
		scratchPool.Put(&b)
	}
	p.scratch = nil
}

// plainRun returns the index of the first '"', '\\' or control character at or after b[i], eight bytes
// at a time; within the last seven bytes of b it may stop short of it (callers go on byte by byte).
func plainRun(b []byte, i int) int {
	for i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		// The lowest byte these masks flag is always a match (only bytes above a match can be flagged
		// wrongly), so it is the first.
		if m := special(w); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	return i
}

const lsb, msb = 0x0101010101010101, 0x8080808080808080

// hasByte is non-zero when a byte of w equals c.
func hasByte(w uint64, c byte) uint64 {
	x := w ^ (lsb * uint64(c))
	return (x - lsb) &^ x & msb
}

// special is hasByteLess(w, 0x20) | hasByte(w, '"') | hasByte(w, '\\') in fewer steps: a byte of
// w^c has its high bit where w's byte has, so each &^ x is one &^ w.
func special(w uint64) uint64 {
	return ((w - lsb*0x20) | (w ^ lsb*'"' - lsb) | (w ^ lsb*'\\' - lsb)) &^ w & msb
}

// hasByteLess is non-zero when a byte of w is below n (n <= 128).
func hasByteLess(w uint64, n byte) uint64 { return (w - lsb*uint64(n)) &^ w & msb }

func (p *parser) hex4(i *int) (uint32, bool) {
	if *i+4 > len(p.b) {
		p.fail(len(p.b), "EOF while parsing a string")
		return 0, false
	}
	var n uint32
	for k := 0; k < 4; k++ {
		c := p.b[*i+k]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			p.fail(*i+3, "invalid escape") // serde: after the four bytes
			return 0, false
		}
		n = n<<4 | uint32(d)
	}
	*i += 4
	return n, true
}

// lineCol converts the index of the byte an error is about to serde_json's line and column: serde
// counts the bytes before its read position on that line, and its read position is just after that byte
// (or the end of the input).
func lineCol(b []byte, pos int) (line, col int) {
	idx := min(pos+1, len(b))
	line = 1
	lineStart := 0
	for k := 0; k < idx; k++ {
		if b[k] == '\n' {
			line++
			lineStart = k + 1
		}
	}
	return line, idx - lineStart
}
