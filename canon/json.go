package canon

import (
	"fmt"
	"strconv"
	"unicode/utf8"
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

// rawTensor is one top-level tensor entry as written, before duplicates are resolved.
type rawTensor struct {
	name   string
	pos    int // index of the key's opening quote
	dtype  string
	shape  []uint64
	begin  uint64
	end    uint64
	err    *jsonError // why the entry is not a valid TensorInfo, nil when it is
	form   string     // "" for the usual object; "array" or "dtype-object" for the odd forms
	extras []string   // unknown fields, ignored by the reference
}

// rawMeta is one `__metadata__` entry as written.
type rawMeta struct {
	key   string
	value string
	pos   int
	raw   bool // value was not a JSON string; value holds its JSON text
}

// rawHeader is everything parsed from a header.
type rawHeader struct {
	tensors   []rawTensor
	meta      []rawMeta
	metaSeen  bool
	metaNull  bool
	metaPos   int
	metaDup   []int // positions of repeated `__metadata__` keys
	metaBad   *jsonError
	start     int // index of the top-level value
	end       int // index just after the top-level value; -1 when the object was not closed
	syntax    *jsonError
	entryErr  *jsonError
	trailing  *jsonError
	closedPos int // index just after the closing brace (serde's position for entry errors)
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
	i     int
	depth int
	h     *rawHeader
	// fatal is set on a syntax error: nothing after it can be parsed.
	fatal bool
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

// parseHeader parses a header. It never panics and never allocates more than a small multiple of len(b).
func parseHeader(b []byte) *rawHeader {
	h := &rawHeader{end: -1}
	p := &parser{b: b, h: h}
	p.ws()
	h.start = p.i
	if p.i >= len(b) {
		p.fail(p.i, "EOF while parsing a value")
		return h
	}
	if b[p.i] != '{' {
		p.fail(p.i, "invalid type: %s, expected a map", p.describeValue())
		return h
	}
	p.parseTop()
	if p.fatal {
		return h
	}
	h.end = p.i
	h.closedPos = p.i
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
	if !p.enter() {
		return
	}
	defer p.leave()
	p.i++ // '{'
	first := true
	for {
		p.ws()
		if p.i >= len(p.b) {
			p.fail(p.i, "EOF while parsing an object")
			return
		}
		c := p.b[p.i]
		if c == '}' {
			p.i++
			return
		}
		if !first {
			if c != ',' {
				p.fail(p.i, "expected `,` or `}`")
				return
			}
			p.i++
			p.ws()
			if p.i >= len(p.b) {
				p.fail(p.i, "EOF while parsing an object")
				return
			}
			if p.b[p.i] == '}' {
				p.fail(p.i, "trailing comma")
				return
			}
		}
		first = false
		if p.b[p.i] != '"' {
			p.fail(p.i, "key must be a string")
			return
		}
		keyPos := p.i
		key, ok := p.parseString()
		if !ok {
			return
		}
		p.ws()
		if p.i >= len(p.b) {
			p.fail(p.i, "EOF while parsing an object")
			return
		}
		if p.b[p.i] != ':' {
			p.fail(p.i, "expected `:`")
			return
		}
		p.i++
		p.ws()
		if key == "__metadata__" {
			p.parseMetadata(keyPos)
		} else {
			p.parseTensor(key, keyPos)
		}
		if p.fatal {
			return
		}
	}
}

// semantic records an error of tier 1 that does not stop the parse (a `__metadata__` type error).
func (p *parser) semantic(pos int, format string, args ...any) {
	if p.h.syntax == nil {
		p.h.syntax = &jsonError{msg: fmt.Sprintf(format, args...), pos: pos}
	}
}

func (p *parser) parseMetadata(keyPos int) {
	h := p.h
	if h.metaSeen {
		p.semantic(keyPos, "duplicate field `__metadata__`")
		h.metaDup = append(h.metaDup, keyPos)
		// serde stops here; lenient mode reads the repeated object too (last wins, as for keys inside it).
	}
	h.metaSeen = true
	h.metaPos = keyPos
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
		desc := p.describeValue()
		e := &jsonError{msg: fmt.Sprintf("invalid type: %s, expected a map", desc), pos: start}
		p.semantic(start, "%s", e.msg)
		if h.metaBad == nil {
			h.metaBad = e
		}
		p.skipValue()
		return
	}
	h.metaNull = false
	if !p.enter() {
		return
	}
	defer p.leave()
	p.i++
	first := true
	for {
		p.ws()
		if p.i >= len(p.b) {
			p.fail(p.i, "EOF while parsing an object")
			return
		}
		if p.b[p.i] == '}' {
			p.i++
			return
		}
		if !first {
			if p.b[p.i] != ',' {
				p.fail(p.i, "expected `,` or `}`")
				return
			}
			p.i++
			p.ws()
			if p.i >= len(p.b) {
				p.fail(p.i, "EOF while parsing an object")
				return
			}
			if p.b[p.i] == '}' {
				p.fail(p.i, "trailing comma")
				return
			}
		}
		first = false
		if p.b[p.i] != '"' {
			p.fail(p.i, "key must be a string")
			return
		}
		kpos := p.i
		key, ok := p.parseString()
		if !ok {
			return
		}
		p.ws()
		if p.i >= len(p.b) {
			p.fail(p.i, "EOF while parsing an object")
			return
		}
		if p.b[p.i] != ':' {
			p.fail(p.i, "expected `:`")
			return
		}
		p.i++
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == '"' {
			v, ok := p.parseString()
			if !ok {
				return
			}
			h.meta = append(h.meta, rawMeta{key: key, value: v, pos: kpos})
			continue
		}
		vpos := p.i
		desc := p.describeValue()
		if p.i < len(p.b) {
			p.semantic(vpos, "invalid type: %s, expected a string", desc)
		}
		if !p.skipValue() {
			return
		}
		h.meta = append(h.meta, rawMeta{key: key, value: string(p.b[vpos:p.i]), pos: kpos, raw: true})
	}
}

// entryError records why a tensor entry is invalid (the first reason only, as serde stops there).
func (t *rawTensor) fail(pos int, format string, args ...any) {
	if t.err == nil {
		t.err = &jsonError{msg: fmt.Sprintf(format, args...), pos: pos}
	}
}

// parseTensor parses one top-level tensor entry. Entry errors are kept on the entry; syntax errors stop all.
func (p *parser) parseTensor(name string, keyPos int) {
	t := rawTensor{name: name, pos: keyPos}
	defer func() {
		if p.fatal {
			return
		}
		if t.err != nil && p.h.entryErr == nil {
			p.h.entryErr = &jsonError{msg: t.err.msg, pos: t.err.pos}
		}
		p.h.tensors = append(p.h.tensors, t)
	}()
	if p.i >= len(p.b) {
		p.fail(p.i, "EOF while parsing a value")
		return
	}
	switch p.b[p.i] {
	case '{':
		p.parseTensorObject(&t)
	case '[':
		p.parseTensorArray(&t)
	default:
		t.fail(p.i, "invalid type: %s, expected struct TensorInfo", p.describeValue())
		p.skipValue()
	}
}

func (p *parser) parseTensorObject(t *rawTensor) {
	if !p.enter() {
		return
	}
	defer p.leave()
	start := p.i
	p.i++
	var haveDType, haveShape, haveOffsets bool
	first := true
	for {
		p.ws()
		if p.i >= len(p.b) {
			p.fail(p.i, "EOF while parsing an object")
			return
		}
		if p.b[p.i] == '}' {
			p.i++
			break
		}
		if !first {
			if p.b[p.i] != ',' {
				p.fail(p.i, "expected `,` or `}`")
				return
			}
			p.i++
			p.ws()
			if p.i >= len(p.b) {
				p.fail(p.i, "EOF while parsing an object")
				return
			}
			if p.b[p.i] == '}' {
				p.fail(p.i, "trailing comma")
				return
			}
		}
		first = false
		if p.b[p.i] != '"' {
			p.fail(p.i, "key must be a string")
			return
		}
		kpos := p.i
		key, ok := p.parseString()
		if !ok {
			return
		}
		p.ws()
		if p.i >= len(p.b) {
			p.fail(p.i, "EOF while parsing an object")
			return
		}
		if p.b[p.i] != ':' {
			p.fail(p.i, "expected `:`")
			return
		}
		p.i++
		p.ws()
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
			t.shape = p.parseUintArray(t, -1)
		case "data_offsets":
			if haveOffsets {
				t.fail(kpos, "duplicate field `data_offsets`")
			}
			haveOffsets = true
			offs := p.parseUintArray(t, 2)
			if len(offs) == 2 {
				t.begin, t.end = offs[0], offs[1]
			}
		default:
			t.extras = append(t.extras, key)
			p.skipValue()
		}
		if p.fatal {
			return
		}
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

// parseTensorArray parses the sequence form of a TensorInfo: [dtype, shape, data_offsets].
func (p *parser) parseTensorArray(t *rawTensor) {
	if !p.enter() {
		return
	}
	defer p.leave()
	t.form = "array"
	start := p.i
	p.i++
	n := 0
	for {
		p.ws()
		if p.i >= len(p.b) {
			p.fail(p.i, "EOF while parsing a list")
			return
		}
		if p.b[p.i] == ']' {
			p.i++
			break
		}
		if n > 0 {
			if p.b[p.i] != ',' {
				p.fail(p.i, "expected `,` or `]`")
				return
			}
			p.i++
			p.ws()
			if p.i >= len(p.b) {
				p.fail(p.i, "EOF while parsing a list")
				return
			}
			if p.b[p.i] == ']' {
				p.fail(p.i, "trailing comma")
				return
			}
		}
		switch n {
		case 0:
			p.parseDType(t)
		case 1:
			t.shape = p.parseUintArray(t, -1)
		case 2:
			offs := p.parseUintArray(t, 2)
			if len(offs) == 2 {
				t.begin, t.end = offs[0], offs[1]
			}
		default:
			p.skipValue()
		}
		if p.fatal {
			return
		}
		n++
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
		t.dtype = s
		if !DType(s).Known() {
			t.fail(pos, "unknown variant `%s`", s)
		}
	case '{':
		t.form = "dtype-object"
		if !p.enter() {
			return
		}
		defer p.leave()
		p.i++
		n := 0
		for {
			p.ws()
			if p.i >= len(p.b) {
				p.fail(p.i, "EOF while parsing an object")
				return
			}
			if p.b[p.i] == '}' {
				p.i++
				break
			}
			if n > 0 {
				if p.b[p.i] != ',' {
					p.fail(p.i, "expected `,` or `}`")
					return
				}
				p.i++
				p.ws()
				if p.i >= len(p.b) {
					p.fail(p.i, "EOF while parsing an object")
					return
				}
				if p.b[p.i] == '}' {
					p.fail(p.i, "trailing comma")
					return
				}
			}
			if p.b[p.i] != '"' {
				p.fail(p.i, "key must be a string")
				return
			}
			key, ok := p.parseString()
			if !ok {
				return
			}
			p.ws()
			if p.i >= len(p.b) {
				p.fail(p.i, "EOF while parsing an object")
				return
			}
			if p.b[p.i] != ':' {
				p.fail(p.i, "expected `:`")
				return
			}
			p.i++
			p.ws()
			isNull := p.i+4 <= len(p.b) && string(p.b[p.i:p.i+4]) == "null"
			vdesc := p.describeValue()
			if !p.skipValue() {
				return
			}
			if n == 0 {
				t.dtype = key
				if !DType(key).Known() {
					t.fail(pos, "unknown variant `%s`", key)
				} else if !isNull {
					t.fail(pos, "invalid type: %s, expected unit", vdesc)
				}
			}
			n++
		}
		if n != 1 {
			t.fail(pos, "invalid value: map, expected map with a single key")
		}
	default:
		t.fail(pos, "invalid type: %s, expected string or map", p.describeValue())
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
		t.fail(pos, "invalid type: %s, expected %s", p.describeValue(), expect)
		p.skipValue()
		return nil
	}
	if !p.enter() {
		return nil
	}
	defer p.leave()
	p.i++
	var out []uint64
	n := 0
	for {
		p.ws()
		if p.i >= len(p.b) {
			p.fail(p.i, "EOF while parsing a list")
			return nil
		}
		if p.b[p.i] == ']' {
			p.i++
			break
		}
		if n > 0 {
			if p.b[p.i] != ',' {
				p.fail(p.i, "expected `,` or `]`")
				return nil
			}
			p.i++
			p.ws()
			if p.i >= len(p.b) {
				p.fail(p.i, "EOF while parsing a list")
				return nil
			}
			if p.b[p.i] == ']' {
				p.fail(p.i, "trailing comma")
				return nil
			}
		}
		epos := p.i
		c := p.b[p.i]
		if c == '-' || (c >= '0' && c <= '9') {
			v, isUint, ok := p.parseNumber()
			if !ok {
				return nil
			}
			if !isUint {
				t.fail(epos, "invalid type: number `%s`, expected usize", p.b[epos:p.i])
			}
			out = append(out, v)
		} else {
			t.fail(epos, "invalid type: %s, expected usize", p.describeValue())
			if !p.skipValue() {
				return nil
			}
			out = append(out, 0)
		}
		n++
	}
	if want == 2 && n != 2 {
		if n < 2 {
			t.fail(pos, "invalid length %d, expected a tuple of size 2", n)
		} else {
			t.fail(pos, "invalid length %d, expected fewer elements in array", n)
		}
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
	case c == '{' || c == '[':
		closer := byte('}')
		what := "an object"
		if c == '[' {
			closer, what = ']', "a list"
		}
		if !p.enter() {
			return false
		}
		defer p.leave()
		p.i++
		n := 0
		for {
			p.ws()
			if p.i >= len(p.b) {
				p.fail(p.i, "EOF while parsing %s", what)
				return false
			}
			if p.b[p.i] == closer {
				p.i++
				return true
			}
			if n > 0 {
				if p.b[p.i] != ',' {
					p.fail(p.i, "expected `,` or `%c`", closer)
					return false
				}
				p.i++
				p.ws()
				if p.i >= len(p.b) {
					p.fail(p.i, "EOF while parsing %s", what)
					return false
				}
				if p.b[p.i] == closer {
					p.fail(p.i, "trailing comma")
					return false
				}
			}
			n++
			if c == '{' {
				if p.b[p.i] != '"' {
					p.fail(p.i, "key must be a string")
					return false
				}
				if _, ok := p.parseString(); !ok {
					return false
				}
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
			}
			if !p.skipValue() {
				return false
			}
		}
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
			p.fail(start, "number out of range")
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
	for i < len(b) {
		c := b[i]
		if c == '"' {
			p.i = i + 1
			return string(b[start:i]), true
		}
		if c == '\\' || c < 0x20 {
			break
		}
		i++
	}
	buf := make([]byte, 0, i-start+16)
	buf = append(buf, b[start:i]...)
	for {
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
		case c != '\\':
			buf = append(buf, c)
			i++
			continue
		}
		i++ // backslash
		if i >= len(b) {
			p.fail(i, "EOF while parsing a string")
			return "", false
		}
		e := b[i]
		i++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			n, ok := p.hex4(&i)
			if !ok {
				return "", false
			}
			if n >= 0xDC00 && n <= 0xDFFF {
				p.fail(i, "lone leading surrogate in hex escape")
				return "", false
			}
			if n >= 0xD800 && n <= 0xDBFF {
				if i >= len(b) {
					p.fail(i, "EOF while parsing a string")
					return "", false
				}
				if b[i] != '\\' || i+1 >= len(b) || b[i+1] != 'u' {
					if b[i] == '\\' && i+1 >= len(b) {
						p.fail(i+1, "EOF while parsing a string")
					} else {
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
					p.fail(i, "lone leading surrogate in hex escape")
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
			p.fail(*i+k, "invalid escape")
			return 0, false
		}
		n = n<<4 | uint32(d)
	}
	*i += 4
	return n, true
}

// lineCol converts a header index to serde_json's 1-based line and byte column.
func lineCol(b []byte, pos int) (line, col int) {
	if pos > len(b) {
		pos = len(b)
	}
	line = 1
	lineStart := 0
	for k := 0; k < pos; k++ {
		if b[k] == '\n' {
			line++
			lineStart = k + 1
		}
	}
	return line, pos - lineStart + 1
}
