package safetensors

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// SkimSink receives what Skim reads.
type SkimSink interface {
	// Entry is one tensor entry, in header order. name and dtype share the header's memory; shape is
	// valid only during the call.
	Entry(name, dtype []byte, shape []uint64, begin, end uint64)
	// Reset forgets the entries received so far: Skim reads the header again, another way.
	Reset()
}

// MetadataSpanSink is a SkimSink that is also told where `__metadata__`'s value lies in the header:
// its bytes h[begin:end] (from the first byte after the key's colon to its closing brace). It is not
// called for a header without metadata; it may be called again after a Reset (the header read again,
// another way).
type MetadataSpanSink interface {
	MetadataSpan(begin, end int)
}

// Skim reads the tensor entries of a safetensors header h (the N bytes after the length) into sink,
// without building a Header: what grouping files needs and nothing more, several times faster than
// Read. It accepts only the plain form nearly every writer produces: an object of tensor entries
// {"dtype", "shape", "data_offsets"} and an optional `__metadata__` of strings, names without escapes,
// a data section exactly covered by the tensors (dataLen bytes). For anything else ok is false, and
// the caller reads the header with Read, which says what is wrong with it; so whenever Skim returns
// true, Read finds the same tensors and metaKeys metadata keys, and the file valid but for what only
// reading everything tells (a name written twice) and two checks Skim leaves to its caller: that the
// header is UTF-8 (utf8.Valid) and holds no control character (HasControlOrTab). scratch is reused
// between calls.
func Skim(h []byte, dataLen int64, scratch *[][2]uint64, sink SkimSink) (metaKeys int, ok bool) {
	k := skimState{sink: sink}
	k.meta, _ = sink.(metaSink)
	k.span, _ = sink.(MetadataSpanSink)
	spans := (*scratch)[:0]
	defer func() { *scratch = spans }()
	sorted, compact := skimCompact(h, &k, &spans)
	if !compact { // spaces, another order of fields: the general way, from the start
		k, spans = skimState{sink: sink, shape: k.shape, meta: k.meta, span: k.span}, spans[:0]
		sink.Reset()
		if sorted, ok = skimGeneral(h, &k, &spans); !ok {
			return 0, false
		}
	}
	end := uint64(0)
	if !sorted {
		slices.SortFunc(spans, func(a, b [2]uint64) int { return int(min(max(int64(a[0])-int64(b[0]), -1), 1)) })
	}
	for _, s := range spans {
		if s[0] != end {
			return 0, false
		}
		end = s[1]
	}
	if end != uint64(dataLen) || dataLen < 0 {
		return 0, false
	}
	return k.metaKeys, true
}

// skimState is what Skim carries through a header: where entries go and how many metadata keys it saw.
type skimState struct {
	sink     SkimSink
	shape    []uint64 // the shape handed to sink, reused
	metaKeys int
	meta     metaSink         // sink, when it takes the metadata too
	span     MetadataSpanSink // sink, when it is told where the metadata is
}

// metaSink is a SkimSink that also takes the `__metadata__` object (ReadHeadInto's plain path).
type metaSink interface {
	// metaObject says that `__metadata__` is there (it may be empty).
	metaObject()
	// decoded is where the values of strings with escapes are appended (strTo).
	decoded() *[]byte
	// metaEntry is one entry: the bodies of its key and value strings, parts of the header; for a
	// string with escapes, at is where its value is in *decoded() and n its length (at is -1 for none).
	metaEntry(key, value []byte, kat, kn, vat, vn int)
}

// skimGeneral reads the tensor entries of a header into k and spans, however it is spaced and its
// fields ordered; sorted is false when the spans are out of order.
func skimGeneral(h []byte, k *skimState, spansp *[][2]uint64) (sorted, ok bool) {
	p := skimmer{b: h}
	spans := *spansp
	defer func() { *spansp = spans }()
	if !p.byte('{') {
		return false, false
	}
	sorted = true
	end := uint64(0)
	metaSeen := false
	if p.ws(); p.peek() == '}' {
		p.i++
	} else {
		for {
			name, ok := p.key()
			if !ok {
				return false, false
			}
			if string(name) == "__metadata__" {
				begin := p.i
				n, ok := p.metadata(k.meta)
				if !ok || metaSeen {
					return false, false
				}
				k.metaKeys, metaSeen = n, true
				if k.span != nil {
					k.span.MetadataSpan(begin, p.i)
				}
			} else {
				dtype, sb, begin, stop, ok := p.entry()
				if !ok || !addEntry(k, &spans, name, dtype, sb.d[:sb.n], begin, stop, &end, &sorted) {
					return false, false
				}
			}
			p.ws()
			if p.peek() == '}' {
				p.i++
				break
			}
			if !p.byte(',') {
				return false, false
			}
		}
	}
	for ; p.i < len(p.b); p.i++ { // only spaces may follow (the padding writers add)
		if !isSpace(p.b[p.i]) {
			return false, false
		}
	}
	return sorted, true
}

// addEntry checks a tensor entry (its length is its dtype's size times its elements, its offsets in
// order) and adds it to k and spans; end is where the last one ended, sorted false once one started
// elsewhere.
func addEntry(k *skimState, spans *[][2]uint64, name, dtype []byte, shape []uint64, begin, stop uint64, end *uint64, sorted *bool) bool {
	if stop < begin {
		return false
	}
	size, ok := byteLen(dtype, shape)
	if !ok || size != stop-begin {
		return false
	}
	if begin != *end {
		*sorted = false
	}
	*end = stop
	*spans = append(*spans, [2]uint64{begin, stop})
	// The sink gets a copy in k's buffer: shape itself, handed to an interface, would move every
	// entry's shape buffer to the heap.
	k.shape = append(k.shape[:0], shape...)
	k.sink.Entry(name, dtype, k.shape, begin, stop)
	return true
}

// skimCompact reads the tensor entries of a header written the usual way, without a space, each
// {"dtype":…,"shape":[…],"data_offsets":[…]}; compact is false, with k and spans half-filled, for a
// header written any other way (skimGeneral reads it then) or not plain.
func skimCompact(b []byte, k *skimState, spans *[][2]uint64) (sorted, compact bool) {
	if len(b) < 2 || b[0] != '{' {
		return false, false
	}
	i, end, metaSeen := 1, uint64(0), false
	sorted = true
	if b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return false, false
			}
			i++
			start := i
			j := bytes.IndexByte(b[i:], '"')
			if j < 0 || bytes.IndexByte(b[i:i+j], '\\') >= 0 {
				return false, false
			}
			if i += j; i+1 >= len(b) || b[i+1] != ':' {
				return false, false
			}
			name := b[start:i]
			i += 2
			if string(name) == "__metadata__" {
				p := skimmer{b: b, i: i}
				n, ok := p.metadata(k.meta)
				if !ok || metaSeen {
					return false, false
				}
				if k.span != nil {
					k.span.MetadataSpan(i, p.i)
				}
				i, k.metaKeys, metaSeen = p.i, n, true
			} else {
				var dtype []byte
				var sb shapeBuf
				var begin, stop uint64
				var ok bool
				if !hasAt(b, i, `{"dtype":"`) {
					return false, false
				}
				i += len(`{"dtype":"`)
				ds := i
				for i < len(b) && b[i] != '"' {
					i++
				}
				dtype = b[ds:i]
				if i++; !hasAt(b, i, `,"shape":[`) {
					return false, false
				}
				i += len(`,"shape":[`)
				if i < len(b) && b[i] == ']' {
					i++
				} else {
					for {
						var d uint64
						if d, i, ok = digits(b, i); !ok || sb.n == len(sb.d) {
							return false, false
						}
						sb.d[sb.n] = d
						sb.n++
						if i < len(b) && b[i] == ']' {
							i++
							break
						}
						if i >= len(b) || b[i] != ',' {
							return false, false
						}
						i++
					}
				}
				if !hasAt(b, i, `,"data_offsets":[`) {
					return false, false
				}
				i += len(`,"data_offsets":[`)
				if begin, i, ok = digits(b, i); !ok || i >= len(b) || b[i] != ',' {
					return false, false
				}
				if stop, i, ok = digits(b, i+1); !ok || !hasAt(b, i, "]}") {
					return false, false
				}
				i += 2
				if !addEntry(k, spans, name, dtype, sb.d[:sb.n], begin, stop, &end, &sorted) {
					return false, false
				}
			}
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			if i >= len(b) || b[i] != ',' {
				return false, false
			}
			i++
		}
	}
	for ; i < len(b); i++ { // only spaces may follow (the padding writers add)
		if b[i] != ' ' {
			return false, false
		}
	}
	return sorted, true
}

// digits reads a non-negative integer as JSON writes it at b[i:], and where it ends.
func digits(b []byte, i int) (uint64, int, bool) {
	start := i
	var n uint64
	for len(b)-i >= 8 { // eight bytes at a time (swarDigits); the last few one by one
		v, k := swarDigits(binary.LittleEndian.Uint64(b[i:]))
		n = n*pow10[k] + v
		if i += k; k < 8 || i-start > 19 {
			break
		}
	}
	if len(b)-i < 8 {
		for i < len(b) && b[i]-'0' < 10 {
			n = n*10 + uint64(b[i]-'0')
			i++
		}
	}
	switch {
	case i == start || i-start > 19 || (b[start] == '0' && i-start > 1):
		return 0, i, false
	case i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E'):
		return 0, i, false
	}
	return n, i, true
}

var pow10 = [9]uint64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000}

// swarDigits reads the decimal digits at the start of the eight bytes of w (the first byte lowest):
// their value and how many there are, with a few multiplications instead of a loop.
func swarDigits(w uint64) (uint64, int) {
	const zeros, highs = 0x3030303030303030, 0x8080808080808080
	// A byte is no digit when it is below '0' (its high bit set by the subtraction) or above '9' (set
	// by the addition); carries only reach the bytes after the first such byte.
	nondigit := ((w - zeros) | (w + 0x4646464646464646)) & highs
	k := bits.TrailingZeros64(nondigit) / 8
	if k == 0 {
		return 0, 0
	}
	v := (w - zeros) << (64 - 8*k) // the k digits at the top, zeros below
	v = (v & 0x0f0f0f0f0f0f0f0f) * 2561 >> 8
	v = (v & 0x00ff00ff00ff00ff) * 6553601 >> 16
	v = (v & 0x0000ffff0000ffff) * 42949672960001 >> 32
	return v, k
}

// byteLen is the length of a tensor of dtype and shape, and false for a dtype the reference does not
// know, a length that overflows, or one that is not a whole number of bytes.
func byteLen(dtype []byte, shape []uint64) (uint64, bool) {
	var b uint64
	switch string(dtype) {
	case "F16", "BF16", "I16", "U16":
		b = 16
	case "F32", "I32", "U32":
		b = 32
	case "F64", "I64", "U64", "C64":
		b = 64
	case "U8", "I8", "BOOL", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ":
		b = 8
	default:
		return 0, false // sub-byte and unknown dtypes: Read says
	}
	n := b
	for _, d := range shape {
		hi, lo := bits.Mul64(n, d)
		if hi != 0 {
			return 0, false
		}
		n = lo
	}
	return n / 8, true
}

func isSpace(c byte) bool { return c == ' ' }

// skimmer walks a header's bytes.
type skimmer struct {
	b []byte
	i int
}

func (p *skimmer) ws() {
	for p.i < len(p.b) && isSpace(p.b[p.i]) {
		p.i++
	}
}

func (p *skimmer) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// byte skips spaces and c.
func (p *skimmer) byte(c byte) bool {
	p.ws()
	if p.peek() != c {
		return false
	}
	p.i++
	return true
}

// plain reads a string without escapes (short ones: a plain loop beats bytes.IndexByte there).
func (p *skimmer) plain() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	for j := p.i; j < len(p.b); j++ {
		switch p.b[j] {
		case '"':
			s := p.b[p.i:j]
			p.i = j + 1
			return s, true
		case '\\':
			return nil, false
		}
	}
	return nil, false
}

// key reads an object key and its colon.
func (p *skimmer) key() ([]byte, bool) {
	s, ok := p.plain()
	return s, ok && p.byte(':')
}

// HasControlOrTab reports whether b holds a byte below 0x20 (a control character, or whitespace other
// than a space): in a string JSON forbids them, and writers put none between tokens, so the skim
// leaves such headers to Read. Eight bytes at a time.
func HasControlOrTab(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; len(b) >= 8; b = b[8:] {
		x := binary.LittleEndian.Uint64(b)
		if (x-0x20*ones)&^x&highs != 0 {
			return true
		}
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// skipString skips a string that may hold escapes.
func (p *skimmer) skipString() bool {
	_, _, ok := p.str()
	return ok
}

// strTo is str that also reads the value of a string with escapes: it is appended to *dst, from at,
// n bytes (at is -1 for a string without escapes, whose value is its body). On failure *dst is as
// it was. Escapes are decoded as parseString decodes them, the plain runs between them copied eight
// bytes at a time.
func (p *skimmer) strTo(dst *[]byte) (body []byte, at, n int, ok bool) {
	if !p.byte('"') {
		return nil, -1, 0, false
	}
	b, start := p.b, p.i
	i := plainRun(b, start)
	for i < len(b) && b[i] != '"' && b[i] != '\\' { // plainRun stops at control characters too
		i++
	}
	switch {
	case i >= len(b):
		return nil, -1, 0, false
	case b[i] == '"':
		p.i = i + 1
		return b[start:i], -1, 0, true
	}
	out := *dst
	at = len(out)
	out = append(out, b[start:i]...)
	for {
		if b[i] == '"' {
			p.i = i + 1
			*dst = out
			return b[start:i], at, len(out) - at, true
		}
		// a backslash
		if i+1 >= len(b) {
			return nil, -1, 0, false
		}
		switch c, ok := unescaped(b[i+1]); {
		case ok:
			out = append(out, c)
			i += 2
		case b[i+1] == 'u':
			if i+6 > len(b) || b[i+2] == 'd' || b[i+2] == 'D' { // a surrogate: Read says
				return nil, -1, 0, false
			}
			var r rune
			for _, c := range b[i+2 : i+6] {
				switch {
				case '0' <= c && c <= '9':
					c -= '0'
				case 'a' <= c && c <= 'f':
					c -= 'a' - 10
				case 'A' <= c && c <= 'F':
					c -= 'A' - 10
				default:
					return nil, -1, 0, false
				}
				r = r<<4 | rune(c)
			}
			out = utf8.AppendRune(out, r)
			i += 6
		default:
			return nil, -1, 0, false
		}
		// The plain run to the next quote or backslash, eight bytes at a time, each word copied whole
		// (the value grows by its plain bytes only); control characters are copied as they are.
		for {
			for i+8 <= len(b) {
				if cap(out)-len(out) < 8 {
					out = slices.Grow(out, 8)
				}
				k, w := len(out), binary.LittleEndian.Uint64(b[i:])
				binary.LittleEndian.PutUint64(out[k:k+8], w)
				if m := hasByte(w, '"') | hasByte(w, '\\'); m != 0 {
					c := bits.TrailingZeros64(m) >> 3
					out, i = out[:k+c], i+c
					break
				}
				out, i = out[:k+8], i+8
			}
			for i < len(b) && b[i] != '"' && b[i] != '\\' && i+8 > len(b) {
				out = append(out, b[i])
				i++
			}
			if i >= len(b) {
				return nil, -1, 0, false
			}
			if b[i] == '"' || b[i] == '\\' {
				break
			}
		}
	}
}

// str reads a string that may hold escapes, each one JSON allows (a \u escape of a surrogate is left
// to Read): body is its bytes between the quotes, escaped whether a backslash is among them. Control
// characters are its caller's to check. Eight bytes at a time up to the next quote or backslash.
func (p *skimmer) str() (body []byte, escaped, ok bool) {
	if !p.byte('"') {
		return nil, false, false
	}
	b, start := p.b, p.i
	for i := start; ; {
		i = plainRun(b, i)
		for i < len(b) && b[i] != '"' && b[i] != '\\' { // plainRun stops at control characters too
			i++
		}
		switch {
		case i >= len(b):
			return nil, false, false
		case b[i] == '"':
			p.i = i + 1
			return b[start:i], escaped, true
		case i+1 >= len(b):
			return nil, false, false
		}
		escaped = true
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(b) || b[i+2] == 'd' || b[i+2] == 'D' { // a surrogate
				return nil, false, false
			}
			for _, c := range b[i+2 : i+6] {
				if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
					return nil, false, false
				}
			}
			i += 6
		default:
			return nil, false, false
		}
	}
}

// metadata reads `__metadata__`'s object of strings and returns its number of entries; each to
// sink, when not nil.
func (p *skimmer) metadata(sink metaSink) (int, bool) {
	if !p.byte('{') {
		return 0, false
	}
	if sink != nil {
		sink.metaObject()
	}
	if p.ws(); p.peek() == '}' {
		p.i++
		return 0, true
	}
	n := 0
	for {
		if sink != nil {
			d := sink.decoded()
			key, kat, kn, ok := p.strTo(d)
			if !ok || !p.byte(':') {
				return 0, false
			}
			value, vat, vn, ok := p.strTo(d)
			if !ok {
				return 0, false
			}
			sink.metaEntry(key, value, kat, kn, vat, vn)
		} else if !p.skipString() || !p.byte(':') || !p.skipString() {
			return 0, false
		}
		n++
		p.ws()
		switch p.peek() {
		case '}':
			p.i++
			return n, true
		case ',':
			p.i++
		default:
			return 0, false
		}
	}
}

// skipObject skips an object of strings, as metadata reads one.
func (p *skimmer) skipObject() bool {
	_, ok := p.metadata(nil)
	return ok
}

// number reads a non-negative integer as JSON writes it.
func (p *skimmer) number() (uint64, bool) {
	p.ws()
	start := p.i
	var n uint64
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		if p.i-start >= 19 {
			return 0, false
		}
		n = n*10 + uint64(p.b[p.i]-'0')
		p.i++
	}
	if p.i == start || (p.b[start] == '0' && p.i-start > 1) {
		return 0, false
	}
	if c := p.peek(); c == '.' || c == 'e' || c == 'E' {
		return 0, false
	}
	return n, true
}

// shapeBuf holds a tensor's shape while it is read (real shapes have at most a handful of dimensions).
type shapeBuf struct {
	d [8]uint64
	n int
}

// entry reads a tensor entry: {"dtype": …, "shape": […], "data_offsets": [begin, end]}, its fields in
// any order, each once, no other field.
func (p *skimmer) entry() (dtype []byte, sb shapeBuf, begin, end uint64, ok bool) {
	if !p.byte('{') {
		return
	}
	var seen [3]bool
	for {
		key, ok := p.key()
		if !ok {
			return nil, sb, 0, 0, false
		}
		switch string(key) {
		case "dtype":
			if seen[0] {
				return nil, sb, 0, 0, false
			}
			seen[0] = true
			if dtype, ok = p.plain(); !ok {
				return nil, sb, 0, 0, false
			}
		case "shape":
			if seen[1] || !p.byte('[') {
				return nil, sb, 0, 0, false
			}
			seen[1] = true
			if p.ws(); p.peek() == ']' {
				p.i++
				break
			}
			for {
				d, ok := p.number()
				if !ok || sb.n == len(sb.d) {
					return nil, sb, 0, 0, false
				}
				sb.d[sb.n] = d
				sb.n++
				if p.byte(']') {
					break
				}
				if !p.byte(',') {
					return nil, sb, 0, 0, false
				}
			}
		case "data_offsets":
			if seen[2] || !p.byte('[') {
				return nil, sb, 0, 0, false
			}
			seen[2] = true
			var ok1, ok2 bool
			begin, ok1 = p.number()
			if !ok1 || !p.byte(',') {
				return nil, sb, 0, 0, false
			}
			end, ok2 = p.number()
			if !ok2 || !p.byte(']') {
				return nil, sb, 0, 0, false
			}
		default:
			return nil, sb, 0, 0, false
		}
		p.ws()
		if p.peek() == '}' {
			p.i++
			break
		}
		if !p.byte(',') {
			return nil, sb, 0, 0, false
		}
	}
	if !seen[0] || !seen[1] || !seen[2] {
		return nil, sb, 0, 0, false
	}
	return dtype, sb, begin, end, true
}
