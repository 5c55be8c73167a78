package template

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a token inside a tag.
type tokKind int

const (
	tEOF tokKind = iota
	tName
	tInt
	tFloat
	tString
	tOp
)

type token struct {
	kind tokKind
	s    string // the name, the operator, the string's value (escapes decoded), the number's text
	off  int    // byte offset in the template
	// unknown: a string literal holding a \N{…} escape this package cannot name (s has U+FFFD
	// in its place)
	unknown bool
}

// segKind is the kind of a piece of the template's source.
type segKind int

const (
	segText segKind = iota
	segOutput
	segStmt
)

type segment struct {
	kind segKind
	text string  // segText
	toks []token // segOutput, segStmt
	off  int
}

// SyntaxError says why a template could not be parsed, and where.
type SyntaxError struct {
	// Offset is the byte offset in the template.
	Offset int
	Msg    string
}

// Error is "offset N: why".
func (e *SyntaxError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

func errAt(off int, format string, args ...any) error {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// lex splits src into text, {{ output }} and {% statement %} segments, applying whitespace control
// ("-" and "+" markers) and transformers' environment settings (trim_blocks, lstrip_blocks).
// Comments are dropped; {% raw %} bodies become text.
func lex(src string) ([]segment, error) {
	var segs []segment
	i := 0
	trimNext := false  // a "-" before the closing of the last tag: strip the whitespace that follows
	trimBlock := false // the last tag was a statement or comment: drop one newline (trim_blocks)
	for i < len(src) {
		j := nextTag(src, i)
		text := src[i:j]
		if trimNext {
			text = strings.TrimLeft(text, " \t\r\n")
		} else if trimBlock {
			if strings.HasPrefix(text, "\r\n") {
				text = text[2:]
			} else if strings.HasPrefix(text, "\n") {
				text = text[1:]
			}
		}
		trimNext, trimBlock = false, false
		if j == len(src) {
			if text != "" {
				segs = append(segs, segment{kind: segText, text: newlines(text), off: i})
			}
			break
		}
		open := src[j+1]
		k := j + 2
		mark := byte(0)
		if k < len(src) && (src[k] == '-' || src[k] == '+') {
			mark = src[k]
			k++
		}
		switch {
		case mark == '-':
			text = strings.TrimRight(text, " \t\r\n")
		case mark == 0 && open != '{':
			text = lstrip(text) // lstrip_blocks
		}
		if text != "" {
			segs = append(segs, segment{kind: segText, text: newlines(text), off: i})
		}
		if open == '#' {
			end := strings.Index(src[k:], "#}")
			if end < 0 {
				return nil, errAt(j, "unclosed comment")
			}
			end += k
			trimNext = end > k && src[end-1] == '-'
			trimBlock = !trimNext
			i = end + 2
			continue
		}
		closer := "}}"
		if open == '%' {
			closer = "%}"
		}
		toks, end, err := tokenize(src, k, closer)
		if err != nil {
			return nil, err
		}
		trimNext = src[end] == '-'
		if trimNext {
			end++
		}
		i = end + 2
		if open == '{' {
			segs = append(segs, segment{kind: segOutput, toks: toks, off: j})
			continue
		}
		trimBlock = !trimNext
		if len(toks) == 1 && toks[0].kind == tName && toks[0].s == "raw" {
			body, next, trimmed, err := rawBody(src, i, trimNext)
			if err != nil {
				return nil, errAt(j, "%v", err)
			}
			if body != "" {
				segs = append(segs, segment{kind: segText, text: newlines(body), off: i})
			}
			i, trimNext, trimBlock = next, trimmed, !trimmed
			continue
		}
		segs = append(segs, segment{kind: segStmt, toks: toks, off: j})
	}
	return segs, nil
}

// nextTag is the offset of the next "{{", "{%" or "{#" at or after i, len(src) when none.
func nextTag(src string, i int) int {
	for {
		k := strings.IndexByte(src[i:], '{')
		if k < 0 || i+k+1 >= len(src) {
			return len(src)
		}
		i += k
		if c := src[i+1]; c == '{' || c == '%' || c == '#' {
			return i
		}
		i++
	}
}

// lstrip removes the spaces and tabs that end text after its last newline (or all of text when
// it is only spaces and tabs), as lstrip_blocks does before a block tag.
func lstrip(text string) string {
	k := len(text)
	for k > 0 && (text[k-1] == ' ' || text[k-1] == '\t') {
		k--
	}
	if k == 0 || text[k-1] == '\n' {
		return text[:k]
	}
	return text
}

// rawBody finds the {% endraw %} after i: the text between, the offset after the tag, and whether
// the tag asked to strip the whitespace after it.
func rawBody(src string, i int, trimStart bool) (string, int, bool, error) {
	for k := i; ; {
		j := strings.Index(src[k:], "{%")
		if j < 0 {
			return "", 0, false, fmt.Errorf("unclosed raw block")
		}
		j += k
		p := j + 2
		minus := p < len(src) && src[p] == '-'
		if p < len(src) && (src[p] == '-' || src[p] == '+') {
			p++
		}
		rest := strings.TrimLeft(src[p:], " \t\r\n")
		if strings.HasPrefix(rest, "endraw") {
			q := len(src) - len(rest) + len("endraw")
			tail := strings.TrimLeft(src[q:], " \t\r\n")
			trim := strings.HasPrefix(tail, "-%}")
			if trim || strings.HasPrefix(tail, "%}") {
				body := src[i:j]
				if trimStart {
					body = strings.TrimLeft(body, " \t\r\n")
				}
				if minus {
					body = strings.TrimRight(body, " \t\r\n")
				} else {
					body = lstrip(body)
				}
				end := len(src) - len(tail) + 2
				if trim {
					end++
				}
				return body, end, trim, nil
			}
		}
		k = j + 2
	}
}

// ops are the operators, longest first.
var ops = []string{"**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">", "=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "|"}

// tokenize reads the tokens of a tag from k up to its closer ("}}" or "%}", possibly preceded by
// "-"), returning them and the offset of the closer's "-" or first character.
func tokenize(src string, k int, closer string) ([]token, int, error) {
	var toks []token
	depth := 0
	start := k
	for {
		for k < len(src) && strings.IndexByte(" \t\r\n", src[k]) >= 0 {
			k++
		}
		if k >= len(src) {
			return nil, 0, errAt(start, "unclosed tag")
		}
		if depth == 0 || closer == "%}" {
			if strings.HasPrefix(src[k:], closer) {
				return toks, k, nil
			}
			if strings.HasPrefix(src[k:], "-"+closer) || strings.HasPrefix(src[k:], "+"+closer) {
				if src[k] == '+' {
					return toks, k + 1, nil
				}
				return toks, k, nil
			}
		}
		c := src[k]
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := k
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			toks = append(toks, token{kind: tName, s: src[k:j], off: k})
			k = j
		case c >= '0' && c <= '9':
			j := k
			kind := tInt
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '_') {
				j++
			}
			if j+1 < len(src) && src[j] == '.' && src[j+1] >= '0' && src[j+1] <= '9' {
				kind = tFloat
				j++
				for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '_') {
					j++
				}
			}
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				e := j + 1
				if e < len(src) && (src[e] == '+' || src[e] == '-') {
					e++
				}
				if e < len(src) && src[e] >= '0' && src[e] <= '9' {
					kind = tFloat
					for j = e; j < len(src) && src[j] >= '0' && src[j] <= '9'; j++ {
					}
				}
			}
			toks = append(toks, token{kind: kind, s: strings.ReplaceAll(src[k:j], "_", ""), off: k})
			k = j
		case c == '\'' || c == '"':
			s, unknown, j, err := readString(src, k)
			if err != nil {
				return nil, 0, err
			}
			toks = append(toks, token{kind: tString, s: s, off: k, unknown: unknown})
			k = j
		default:
			found := false
			for _, op := range ops {
				if strings.HasPrefix(src[k:], op) {
					switch op {
					case "(", "[", "{":
						depth++
					case ")", "]", "}":
						depth--
					}
					toks = append(toks, token{kind: tOp, s: op, off: k})
					k += len(op)
					found = true
					break
				}
			}
			if !found {
				return nil, 0, errAt(k, "unexpected character %q", c)
			}
		}
	}
}

// readString reads the Python string literal at src[k] (quote included) and decodes its escapes as
// Jinja does (Python's unicode-escape codec). unknown is true when a \N{NAME} escape names a
// character outside asciiNames and controlNames: the string then holds U+FFFD in its place.
func readString(src string, k int) (s string, unknown bool, end int, err error) {
	q := src[k]
	var b strings.Builder
	j := k + 1
	for j < len(src) {
		c := src[j]
		switch {
		case c == q:
			return newlines(b.String()), unknown, j + 1, nil
		case c == '\\' && j+1 < len(src):
			e := src[j+1]
			j += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'a':
				b.WriteByte(7)
			case 'b':
				b.WriteByte(8)
			case 'f':
				b.WriteByte(12)
			case 'v':
				b.WriteByte(11)
			case '\n':
			case 'N':
				end := strings.IndexByte(src[j:], '}')
				if j >= len(src) || src[j] != '{' || end < 0 || strings.IndexByte(src[j:j+end], q) >= 0 {
					return "", false, 0, errAt(j, "malformed \\N character escape")
				}
				if r, ok := charName(src[j+1 : j+end]); ok {
					b.WriteRune(r)
				} else {
					b.WriteRune(utf8.RuneError)
					unknown = true
				}
				j += end + 1
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if j+n > len(src) {
					return "", false, 0, errAt(j, "truncated escape")
				}
				v, err := strconv.ParseUint(src[j:j+n], 16, 32)
				if err != nil || v > utf8.MaxRune {
					return "", false, 0, errAt(j, "bad escape")
				}
				b.WriteRune(rune(v))
				j += n
			default:
				if e >= '0' && e <= '7' { // octal
					v := int(e - '0')
					for n := 0; n < 2 && j < len(src) && src[j] >= '0' && src[j] <= '7'; n++ {
						v = v*8 + int(src[j]-'0')
						j++
					}
					b.WriteRune(rune(v))
					continue
				}
				if e == '\\' || e == '\'' || e == '"' {
					b.WriteByte(e)
				} else {
					b.WriteByte('\\')
					b.WriteByte(e)
				}
			}
		default:
			b.WriteByte(c)
			j++
		}
	}
	return "", false, 0, errAt(k, "unclosed string")
}

// controlNames are the names of the controls templates write, beside asciiNames, for \N{NAME}
// escapes.
var controlNames = map[string]rune{"NULL": 0, "NUL": 0, "CHARACTER TABULATION": '\t', "LINE FEED": '\n',
	"LF": '\n', "NEW LINE": '\n', "CARRIAGE RETURN": '\r', "CR": '\r'}

// charName is the ASCII character a \N{NAME} escape names (Python matches names in any case), or
// false for a name outside ASCII or unknown.
func charName(name string) (rune, bool) {
	name = strings.ToUpper(name)
	if r, ok := asciiNames[name]; ok {
		return r, true
	}
	r, ok := controlNames[name]
	return r, ok
}

// newlines turns \r\n and \r into \n, as Jinja does in text and string literals.
func newlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}
