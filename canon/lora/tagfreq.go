package lora

import (
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

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

type tagScanner struct {
	s string
	i int
}

func (sc *tagScanner) ws() {
	for sc.i < len(sc.s) && (sc.s[sc.i] == ' ' || sc.s[sc.i] == '\n' || sc.s[sc.i] == '\t' || sc.s[sc.i] == '\r') {
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
	if n == 0 || n > 1 && sc.s[start] == '0' || sc.i < len(sc.s) && strings.IndexByte("0123456789.eE", sc.s[sc.i]) >= 0 {
		return 0, false
	}
	return float64(v), true
}

// str reads a JSON string.
func (sc *tagScanner) str() (string, bool) {
	sc.ws()
	if sc.i >= len(sc.s) || sc.s[sc.i] != '"' {
		return "", false
	}
	sc.i++
	start := sc.i
	for sc.i < len(sc.s) {
		switch c := sc.s[sc.i]; {
		case c == '"':
			sc.i++
			return sc.s[start : sc.i-1], true
		case c == '\\':
			return sc.escaped(start)
		case c < 0x20:
			return "", false
		}
		sc.i++
	}
	return "", false
}

// escaped reads the rest of a string from its first backslash on.
func (sc *tagScanner) escaped(start int) (string, bool) {
	b := []byte(sc.s[start:sc.i])
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		switch {
		case c == '"':
			sc.i++
			return string(b), true
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
	type tc struct {
		tag string
		n   float64
	}
	before := func(a, b tc) bool { return a.n > b.n || a.n == b.n && a.tag < b.tag }
	top := make([]tc, 0, n+1)
	for tag, c := range counts {
		x := tc{tag, c}
		if len(top) == n && !before(x, top[n-1]) {
			continue
		}
		k := len(top)
		for k > 0 && before(x, top[k-1]) {
			k--
		}
		top = append(top, tc{})
		copy(top[k+1:], top[k:])
		top[k] = x
		if len(top) > n {
			top = top[:n]
		}
	}
	tags := make([]string, len(top))
	for i, x := range top {
		tags[i] = x.tag
	}
	return tags
}

// trimmed reports whether no tag of tags has space around it (strings.TrimSpace leaves each as it is).
func trimmed(tags map[string]float64) bool {
	for tag := range tags {
		if strings.TrimSpace(tag) != tag {
			return false
		}
	}
	return true
}
