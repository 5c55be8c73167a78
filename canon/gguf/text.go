package gguf

import (
	"strconv"
	"unicode/utf8"
)

// maxQuoted is the most bytes of a name or key quoted in a message.
const maxQuoted = 80

// quote quotes s for a message, escaping control characters and invalid UTF-8, cutting long strings.
func quote(s string) string {
	if len(s) > maxQuoted {
		cut := maxQuoted
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

func quoteBytes(b []byte) string { return quote(string(b)) }

func itoa(i int64) string { return strconv.FormatInt(i, 10) }
