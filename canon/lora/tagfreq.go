package lora

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// tagSummary is what Derive needs of kohya's ss_tag_frequency: its folders, and its n most frequent
// tags, highest first, ties in string order, the counts of a tag (trimmed of spaces) summed over the
// folders. ok is false where tagFrequency's is. The form sd-scripts writes, one folder of distinct
// tags, is read in one pass that allocates nothing per tag (scanTopTags); anything else goes
// through tagFrequency.
func tagSummary(s string, n int) (dirs, top []string, ok bool) {
	if dirs, top, ok := scanTopTags(s, n); ok {
		return dirs, top, true
	}
	freq, ok := tagFrequency(s)
	if !ok {
		return nil, nil, false
	}
	counts := map[string]float64{}
	for d, tags := range freq {
		dirs = append(dirs, d)
		for tag, c := range tags {
			counts[strings.TrimSpace(tag)] += c
		}
	}
	return dirs, mostFrequent(counts, n), true
}

// scanTopTags is tagSummary's fast path for at most one folder whose tags are trimmed and counted in
// plain integers: ok is false for anything else, valid or not. A tag that comes again sends the input
// to the general path (the last of a repeated tag counts, as in encoding/json) when it was ever among
// the best so far (topSeen); one that never was is out of the top of every count, its last included:
// the best only get better. So only the few tags that were ever among the best are remembered, not
// every tag.
func scanTopTags(s string, n int) (dirs, top []string, ok bool) {
	if !utf8.ValidString(s) {
		return nil, nil, false
	}
	sc := tagScanner{s: s}
	if !sc.byte('{') {
		return nil, nil, false
	}
	if sc.byte('}') {
		return nil, nil, sc.end()
	}
	dir, ok := sc.str()
	if !ok || !sc.byte(':') || !sc.byte('{') {
		return nil, nil, false
	}
	best := make([]tagCount, 0, n+1)
	var seen topSeen
	if !sc.byte('}') {
		for {
			// Python's json.dumps writes `"tag": 12, ` with no escape in most tags: such an entry is
			// read here at once, anything else (escapes, other spacing, other numbers) as below.
			sc.ws() // after an entry read byte by byte
			if tag, c, next, ok := plainEntry(s, sc.i); ok {
				if spaced(tag) || seen.has(tag) {
					return nil, nil, false
				}
				if x := (tagCount{tag, c}); len(best) < n || x.before(best[n-1]) {
					best = insertTop(best, x, n)
					seen.add(x.tag)
				}
				if sc.i = next; s[next-1] == '}' {
					break
				}
				continue
			}
			tag, escaped, ok := sc.view()
			if !ok || !sc.byte(':') || spaced(tag) || seen.has(tag) {
				return nil, nil, false
			}
			c, ok := sc.count()
			if !ok {
				return nil, nil, false
			}
			if x := (tagCount{tag, c}); len(best) < n || x.before(best[n-1]) {
				if escaped {
					x.tag = strings.Clone(tag) // a view of sc.buf
				}
				best = insertTop(best, x, n)
				seen.add(x.tag)
			}
			if sc.byte('}') {
				break
			}
			if !sc.byte(',') {
				return nil, nil, false
			}
		}
	}
	if !sc.byte('}') || !sc.end() { // more folders, or not JSON
		return nil, nil, false
	}
	top = make([]string, len(best))
	for i, x := range best {
		top[i] = x.tag
	}
	return []string{dir}, top, true
}

// plainEntry reads the entry of a tag at s[i:] when it is written `"tag": 12, ` or `"tag": 12}`: the
// tag without escapes, the count a plain integer of at most 15 digits (as tagScanner.count reads it),
// next the index just past the ", " or the '}'. ok is false for any other form, which the caller then
// reads byte by byte (a tag with escapes, other spacing, an invalid entry).
func plainEntry(s string, i int) (tag string, c float64, next int, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return "", 0, 0, false
	}
	j := plainRun(s, i+1)
	for j < len(s) && s[j] >= 0x20 && s[j] != '"' && s[j] != '\\' {
		j++
	}
	if j+2 >= len(s) || s[j] != '"' || s[j+1] != ':' || s[j+2] != ' ' {
		return "", 0, 0, false
	}
	d := j + 3
	k, v := d, int64(0)
	for k < len(s) && k-d < 15 && s[k]-'0' < 10 {
		v = v*10 + int64(s[k]-'0')
		k++
	}
	switch {
	case k == d, k-d > 1 && s[d] == '0', k+1 >= len(s):
		return "", 0, 0, false
	case s[k] == '}':
		return s[i+1 : j], float64(v), k + 1, true
	case s[k] == ',' && s[k+1] == ' ':
		return s[i+1 : j], float64(v), k + 2, true
	}
	return "", 0, 0, false
}

// spaced reports whether strings.TrimSpace would change s, looking at its ends alone when they are
// ASCII.
func spaced(s string) bool {
	if s == "" {
		return false
	}
	first, last := s[0], s[len(s)-1]
	if first >= utf8.RuneSelf || last >= utf8.RuneSelf {
		return strings.TrimSpace(s) != s
	}
	return asciiSpace(first) || asciiSpace(last)
}

// asciiSpace reports whether c is one of the ASCII bytes strings.TrimSpace trims.
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// tagCount is a tag and its count.
type tagCount struct {
	tag string
	n   float64
}

// before orders tags by count, highest first, then by the tag.
func (a tagCount) before(b tagCount) bool { return a.n > b.n || a.n == b.n && a.tag < b.tag }

// insertTop puts x in its place in top, sorted by before, keeping at most n.
func insertTop(top []tagCount, x tagCount, n int) []tagCount {
	k := len(top)
	for k > 0 && x.before(top[k-1]) {
		k--
	}
	top = append(top, tagCount{})
	copy(top[k+1:], top[k:])
	top[k] = x
	return top[:min(len(top), n)]
}

// topSeen is the tags that were ever among the best of scanTopTags: a few, looked up in a filter of
// their lengths and end bytes before they are compared.
type topSeen struct {
	filter [1024 / 64]uint64
	tags   []string
}

// key is where tag's bit is in the filter.
func (ts *topSeen) key(tag string) uint {
	if tag == "" {
		return 0
	}
	return (uint(len(tag))*131 + uint(tag[0])*31 + uint(tag[len(tag)-1])) % 1024
}

// add remembers tag (which must not change afterwards).
func (ts *topSeen) add(tag string) {
	k := ts.key(tag)
	ts.filter[k/64] |= 1 << (k % 64)
	ts.tags = append(ts.tags, tag)
}

// has reports whether tag was added.
func (ts *topSeen) has(tag string) bool {
	if k := ts.key(tag); ts.filter[k/64]&(1<<(k%64)) == 0 {
		return false
	}
	for _, t := range ts.tags {
		if t == tag {
			return true
		}
	}
	return false
}

// tagFrequency reads kohya's ss_tag_frequency, {"<folder>": {"<tag>": <count>, …}, …}, exactly as
// json.Unmarshal into a map[string]map[string]float64 does, reporting false where it fails. The form
// sd-scripts writes (Python's json.dumps: integer counts, \uXXXX escapes) is read by a scanner of its
// own, several times faster; anything else (null values, fractions, duplicate folders, lone surrogates,
// invalid UTF-8) goes to encoding/json.
func tagFrequency(s string) (map[string]map[string]float64, bool) {
	if freq, ok := scanTagFrequency(s); ok {
		return freq, true
	}
	var freq map[string]map[string]float64
	if json.Unmarshal([]byte(s), &freq) != nil {
		return nil, false
	}
	return freq, true
}

// scanTagFrequency is tagFrequency's fast path: ok is false for anything it does not read, valid or not.
func scanTagFrequency(s string) (freq map[string]map[string]float64, ok bool) {
	if !utf8.ValidString(s) {
		return nil, false
	}
	sc := tagScanner{s: s}
	if !sc.byte('{') {
		return nil, false
	}
	freq = map[string]map[string]float64{}
	if sc.byte('}') {
		return freq, sc.end()
	}
	for {
		dir, ok := sc.str()
		if !ok || !sc.byte(':') || !sc.byte('{') {
			return nil, false
		}
		if _, dup := freq[dir]; dup {
			return nil, false
		}
		hint := 0
		if len(freq) == 0 { // most have one folder: room for what follows, at some 25 bytes a tag
			hint = (len(s) - sc.i) / 32
		}
		tags := make(map[string]float64, hint)
		freq[dir] = tags
		if !sc.byte('}') {
			for {
				tag, ok := sc.str()
				if !ok || !sc.byte(':') {
					return nil, false
				}
				n, ok := sc.count()
				if !ok {
					return nil, false
				}
				tags[tag] = n // the last of a repeated tag wins, as in encoding/json
				if sc.byte('}') {
					break
				}
				if !sc.byte(',') {
					return nil, false
				}
			}
		}
		if sc.byte('}') {
			return freq, sc.end()
		}
		if !sc.byte(',') {
			return nil, false
		}
	}
}

// scanObjectKeys is objectKeys' fast path: the keys of an object whose values are objects of plain
// integers (what sd-scripts writes in ss_dataset_dirs), once each; ok is false for anything else,
// valid or not.
func scanObjectKeys(s string) (keys []string, ok bool) {
	if !utf8.ValidString(s) {
		return nil, false
	}
	sc := tagScanner{s: s}
	if !sc.byte('{') {
		return nil, false
	}
	if sc.byte('}') {
		return []string{}, sc.end()
	}
	for {
		key, ok := sc.str()
		if !ok || !sc.byte(':') || !sc.byte('{') {
			return nil, false
		}
		if !slices.Contains(keys, key) { // a repeated key is one key of the map
			keys = append(keys, key)
		}
		if !sc.byte('}') {
			for {
				if _, _, ok := sc.view(); !ok || !sc.byte(':') {
					return nil, false
				}
				if _, ok := sc.count(); !ok {
					return nil, false
				}
				if sc.byte('}') {
					break
				}
				if !sc.byte(',') {
					return nil, false
				}
			}
		}
		if sc.byte('}') {
			return keys, sc.end()
		}
		if !sc.byte(',') {
			return nil, false
		}
	}
}

type tagScanner struct {
	s   string
	i   int
	buf []byte // escaped strings are decoded here (view)
}

func (sc *tagScanner) ws() {
	for sc.i < len(sc.s) {
		// Most bytes are above ' ', so not JSON whitespace: one test tells.
		if c := sc.s[sc.i]; c > ' ' || c != ' ' && c != '\n' && c != '\t' && c != '\r' {
			return
		}
		sc.i++
	}
}

// byte consumes c (after whitespace) when it is next.
func (sc *tagScanner) byte(c byte) bool {
	sc.ws()
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

// end reports whether only whitespace is left.
func (sc *tagScanner) end() bool {
	sc.ws()
	return sc.i == len(sc.s)
}

// count reads a plain integer of at most 15 digits (exact in a float64, as strconv.ParseFloat gives it).
func (sc *tagScanner) count() (float64, bool) {
	sc.ws()
	start, v := sc.i, int64(0)
	for sc.i < len(sc.s) && sc.s[sc.i] >= '0' && sc.s[sc.i] <= '9' && sc.i-start < 15 {
		v = v*10 + int64(sc.s[sc.i]-'0')
		sc.i++
	}
	n := sc.i - start
	if n == 0 || n > 1 && sc.s[start] == '0' || sc.i < len(sc.s) && numberGoesOn(sc.s[sc.i]) {
		return 0, false
	}
	return float64(v), true
}

// numberGoesOn reports whether c may continue a JSON number after its integer digits.
func numberGoesOn(c byte) bool { return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' }

// str reads a JSON string.
func (sc *tagScanner) str() (string, bool) {
	v, escaped, ok := sc.view()
	if escaped {
		v = strings.Clone(v)
	}
	return v, ok
}

// view reads a JSON string as str does, without allocating: a string without escapes is a part of
// sc.s, an escaped one is decoded into sc.buf and is valid until the next call (escaped says so).
func (sc *tagScanner) view() (v string, escaped, ok bool) {
	sc.ws()
	if sc.i >= len(sc.s) || sc.s[sc.i] != '"' {
		return "", false, false
	}
	start := sc.i + 1
	for i := plainRun(sc.s, start); i < len(sc.s); i++ {
		switch c := sc.s[i]; {
		case c == '"':
			sc.i = i + 1
			return sc.s[start:i], false, true
		case c == '\\':
			sc.i = i
			v, ok := sc.escaped(start)
			return v, true, ok
		case c < 0x20:
			return "", false, false
		}
	}
	return "", false, false
}

// plainRun returns the index of the first '"', '\\' or control character at or after s[i], eight bytes
// at a time; within the last seven bytes of s it may stop short of it (callers go on byte by byte).
func plainRun(s string, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q, bs := w^(ones*'"'), w^(ones*'\\')
		// A byte's high bit is set where it is below 0x20 or is a quote or backslash (x-ones sets it for
		// x = 0, and only bytes above a flagged one can be flagged wrongly, so the lowest is right).
		if m := ((w - ones*0x20) | (q - ones) | (bs - ones)) &^ w & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	return i
}

// escaped reads the rest of a string from its first backslash on, into sc.buf; the string returned
// is a view of sc.buf.
func (sc *tagScanner) escaped(start int) (string, bool) {
	b := append(sc.buf[:0], sc.s[start:sc.i]...)
	defer func() { sc.buf = b }()
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		switch {
		case c == '"':
			sc.i++
			return unsafe.String(unsafe.SliceData(b), len(b)), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b = append(b, c)
			sc.i++
			continue
		}
		if sc.i+1 >= len(sc.s) {
			return "", false
		}
		e := sc.s[sc.i+1]
		sc.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := sc.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				if !strings.HasPrefix(sc.s[sc.i:], `\u`) {
					return "", false
				}
				sc.i += 2
				r2, ok := sc.hex4()
				if !ok {
					return "", false
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", false
				}
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", false
		}
	}
	return "", false
}

func (sc *tagScanner) hex4() (rune, bool) {
	if sc.i+4 > len(sc.s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(sc.s[sc.i : sc.i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	sc.i += 4
	return r, true
}

// mostFrequent returns the n tags of the highest counts, highest first, ties in string order: the
// first n of all tags sorted so, without sorting them all (a kohya LoRA has thousands).
func mostFrequent(counts map[string]float64, n int) []string {
	top := make([]tagCount, 0, n+1)
	for tag, c := range counts {
		if x := (tagCount{tag, c}); len(top) < n || x.before(top[n-1]) {
			top = insertTop(top, x, n)
		}
	}
	tags := make([]string, len(top))
	for i, x := range top {
		tags[i] = x.tag
	}
	return tags
}
