// Package markdown escapes names and values read from files for Markdown output (CommonMark with
// GitHub's tables), so that nothing in a file can add markup, raw HTML, a link, an image or a table
// cell. It is the project's one Markdown escaper: every Markdown writer uses it. It never writes
// markup of its own: the writers do.
//
// Each function first applies textfmt.Escape (control characters, newlines, bidirectional overrides and
// invalid UTF-8 become visible escapes such as \n), so the rendered text is what the text output
// shows. Text also keeps a file's words from acting on GitHub, where a report is often pasted into a
// pull request: a zero-width space (written as a character reference, so that no renderer's pattern
// sees through it) breaks each bare URL's "://" or "www." so that it is no link, and follows each @
// and each # before a digit, so that @user pings no one (nor is user@host a mail link) and #123
// references no issue. The text reads the same; only a copy of it holds the invisible spaces. Code
// spans need none of this: GitHub finds no link, mention or reference in them.
package markdown

import (
	"html"
	"regexp"
	"strings"
	"sync"

	"github.com/stdiff/stdiff/canon/textfmt"
)

// bareURL matches the start of what a renderer that autolinks (GitHub's extended autolinks) would make
// a link of; compiled at its first use.
var bareURL = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(?:https?://|ftp://|www\.)`) })

// zeroWidthSpace is written inside a bare URL's "://" or "www.", and after an @ or a # that GitHub
// would read as a mention or an issue reference: it renders as nothing, but what it breaks is no
// longer a link, a mention or a reference.
const zeroWidthSpace = "&#8203;"

// inlineSpecial are the characters escaped with a backslash wherever they are in Text: the escape
// character itself, code spans, emphasis, links and images, raw HTML and autolinks, entities, table
// cells, strikethrough, headings and GitHub's math.
const inlineSpecial = "\\`*_[]<>&|~#$"

// Text returns s as Markdown inline text that renders as textfmt.Escape(s) (with the zero-width spaces
// that keep it from acting on GitHub: see the package doc), anywhere on a line: in a table cell, a
// list item, a heading or a paragraph. Backslashes are escaped first, then the characters
// Markdown or GitHub give a meaning to; at the start, what would open a block (a list marker, an
// ordered list number) is escaped too, and spaces at either end are character references, so that
// they neither indent nor get trimmed.
func Text(s string) string {
	s = textfmt.Escape(s)
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	// At the start of a line, "- ", "+ ", "1. " and "1) " open a list ("---" a rule) and spaces indent;
	// spaces at either end of a cell or a line would be trimmed. textfmt.Escape has turned tabs into \t.
	lead := len(s) - len(strings.TrimLeft(s, " "))
	b.WriteString(strings.Repeat("&#32;", lead))
	s = s[lead:]
	trail := len(s) - len(strings.TrimRight(s, " "))
	s = s[:len(s)-trail]
	if n := leadingDigits(s); n > 0 && n < 10 && n < len(s) && (s[n] == '.' || s[n] == ')') && spaceOrEnd(s, n+1) {
		b.WriteString(s[:n])
		b.WriteByte('\\')
		s = s[n:]
	} else if s != "" && (s[0] == '-' || s[0] == '+') && (spaceOrEnd(s, 1) || s[1] == s[0]) {
		b.WriteByte('\\')
	}
	// A zero-width space goes before each byte at breaks: in each bare URL's "://" or "www.", so that
	// the address is no link, and after each @ or # that GitHub would read as a mention or a reference.
	breaks := map[int]bool{}
	for _, at := range bareURL().FindAllStringIndex(s, -1) {
		if s[at[1]-1] == '/' {
			breaks[at[1]-2] = true // "https:" zero-width space "//"
		} else {
			breaks[at[1]-1] = true // "www" zero-width space "."
		}
	}
	for i := 0; i < len(s); i++ {
		if breaks[i] {
			b.WriteString(zeroWidthSpace)
		}
		if strings.IndexByte(inlineSpecial, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
		// At the end too: the writer may go on with a word of its own.
		if next := byte(0); s[i] == '@' || s[i] == '#' {
			if i+1 < len(s) {
				next = s[i+1]
			}
			if s[i] == '@' && next != ' ' || s[i] == '#' && (next == 0 || next >= '0' && next <= '9') {
				b.WriteString(zeroWidthSpace)
			}
		}
	}
	b.WriteString(strings.Repeat("&#32;", trail))
	return b.String()
}

// Code returns s as an inline code span that renders as textfmt.Escape(s), in a table cell too: the
// fence is longer than any run of backticks inside, and pipes are escaped as GitHub's tables require.
// A backslash right before a pipe cannot be written in a code span in a way every renderer reads
// alike, so such a string is returned as Text instead.
func Code(s string) string {
	s = textfmt.Escape(s)
	if strings.Contains(s, `\|`) {
		return Text(s)
	}
	if s == "" {
		return "` `" // a code span of one space: empty, but visible as code
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	pad := ""
	// A space is stripped from each end of a code span when both ends have one, and a backtick at
	// either end would join the fence: pad with a space, which the renderer strips again.
	if s[0] == '`' || s[len(s)-1] == '`' || (s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != "") {
		pad = " "
	}
	return fence + pad + strings.ReplaceAll(s, "|", `\|`) + pad + fence
}

// HTML returns s escaped for raw HTML inside Markdown (such as a <summary> line): textfmt.Escape, then
// &, <, >, ' and " as character references. The result has no newline, so it cannot end an HTML block.
func HTML(s string) string {
	return html.EscapeString(textfmt.Escape(s))
}

// Fence returns the backtick fence for a fenced code block holding body: at least three backticks,
// and more than the longest run of backticks in body, so that no line of body can close the block.
func Fence(body string) string {
	return strings.Repeat("`", max(3, longestRun(body, '`')+1))
}

func longestRun(s string, c byte) int {
	longest, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			longest = max(longest, n)
		} else {
			n = 0
		}
	}
	return longest
}

func leadingDigits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

func spaceOrEnd(s string, i int) bool { return i >= len(s) || s[i] == ' ' }
