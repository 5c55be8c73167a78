package textfmt

import (
	"fmt"
	"strconv"
	"strings"
)

// Thousands formats n with comma separators: 1,234,567.
func Thousands(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Plural is n and word, with an s unless n is 1: "1 file", "3 files".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Shorten returns s on one line (runs of white space become one space), escaped, and cut to max
// characters; when it cuts, it says how long s was: "first words… (12.0 KiB)".
func Shorten(s string, max int) string {
	one := strings.Join(strings.Fields(s), " ")
	r := []rune(one)
	if len(r) <= max {
		return Escape(one)
	}
	return Escape(string(r[:max])) + fmt.Sprintf("… (%s)", Bytes(uint64(len(s))))
}

// MaxLine is the longest line a value may have and still be shown: a value with a longer one is a blob
// (a base64 cover image, a thumbnail), which writers summarise by its size and never print.
const MaxLine = 16 << 10

// IsBlob reports whether s has a line longer than MaxLine.
func IsBlob(s string) bool {
	for len(s) > MaxLine {
		i := strings.IndexByte(s, '\n')
		if i < 0 || i > MaxLine {
			return true
		}
		s = s[i+1:]
	}
	return false
}
