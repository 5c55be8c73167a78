// Package markdowntest renders Markdown as GitHub does, for tests of Markdown writers: CommonMark with
// GitHub's extensions (tables, strikethrough, autolinks, task lists), raw HTML passed through, by
// github.com/yuin/goldmark. It then says what a hostile name or value could have broken: an element
// the writer did not write, an event handler, a hidden link, a table row with too many or too few
// cells. Only tests import it.
package markdowntest

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	rhtml "github.com/yuin/goldmark/renderer/html"
)

var md = goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(rhtml.WithUnsafe()))

// HTML renders Markdown to HTML. Raw HTML is kept, so that any that got through shows.
func HTML(source string) string {
	var b bytes.Buffer
	if err := md.Convert([]byte(source), &b); err != nil {
		panic(err) // writing to a bytes.Buffer does not fail
	}
	return b.String()
}

// Allowed are the elements stdiff's Markdown writers produce, and the attributes each may carry.
var Allowed = map[string][]string{
	"h3": nil, "p": nil, "strong": nil, "em": nil, "code": {"class"}, "pre": nil, "ul": nil, "li": nil,
	"table": nil, "thead": nil, "tbody": nil, "tr": nil, "th": nil, "td": nil,
	"details": nil, "summary": nil, "br": nil,
}

// tag matches an HTML tag or comment; goldmark escapes every "<" of text, so each "<" starts one.
var (
	tag     = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9-]*|!--)([^>]*)>`)
	attr    = regexp.MustCompile(`([a-zA-Z_:][-a-zA-Z0-9_:.]*)(\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>` + "`" + `]+))?`)
	delimit = regexp.MustCompile(`^\|?(\s*:?-+:?\s*\|)*\s*:?-+:?\s*\|?$`)
	rowRe   = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	cellRe  = regexp.MustCompile(`(?s)<t[hd]>(.*?)</t[hd]>`)
)

// Problems renders source and lists what is wrong with it: elements or attributes outside Allowed (a link
// too, an autolink included: a file's URL must not become one), what GitHub would read as a mention, an e-mail
// address or an issue reference outside code, and table rows whose number of cells differs from
// their table's, counted both as GitHub and goldmark split rows and by backslash parity, as some other
// renderers do. Nothing wrong: nil.
func Problems(source string) []string {
	var out []string
	h := HTML(source)
	for _, m := range tag.FindAllStringSubmatch(h, -1) {
		name := strings.ToLower(m[2])
		attrs, ok := Allowed[name]
		if !ok {
			out = append(out, fmt.Sprintf("element %q", m[0]))
			continue
		}
		for _, a := range attr.FindAllStringSubmatch(m[3], -1) {
			if !slices.Contains(attrs, strings.ToLower(a[1])) {
				out = append(out, fmt.Sprintf("attribute %q in %q", a[1], m[0]))
			}
		}
		if name == "code" && strings.Contains(m[3], "class") && !strings.HasPrefix(strings.TrimSpace(m[3]), `class="language-`) {
			out = append(out, fmt.Sprintf("code class in %q", m[0]))
		}
	}
	for _, m := range mention.FindAllString(Text(code.ReplaceAllString(h, "")), -1) {
		out = append(out, fmt.Sprintf("mention or reference %q", m))
	}
	return append(out, rowProblems(source)...)
}

// code matches code spans and blocks, in which GitHub finds no mention or reference; mention matches
// what it reads outside them as a mention (@user, @org/team), an e-mail address or an issue reference
// (#123, owner/repo#123).
var (
	code    = regexp.MustCompile(`(?s)<code[^>]*>.*?</code>`)
	mention = regexp.MustCompile(`@[A-Za-z0-9]|#[0-9]`)
)

// rowProblems checks that each row of each table in source has as many cells as its delimiter row.
func rowProblems(source string) []string {
	var out []string
	lines := strings.Split(source, "\n")
	for i := 1; i < len(lines); i++ {
		if !delimit.MatchString(lines[i]) || !strings.Contains(lines[i-1], "|") {
			continue
		}
		want := len(splitRow(lines[i], false))
		for j := i - 1; j < len(lines) && strings.TrimSpace(lines[j]) != ""; j++ {
			if j == i {
				continue
			}
			for _, parity := range []bool{false, true} {
				if got := len(splitRow(lines[j], parity)); got != want {
					out = append(out, fmt.Sprintf("row %d has %d cells, not %d (parity %v): %q", j+1, got, want, parity, lines[j]))
				}
			}
		}
	}
	return out
}

// splitRow splits a table row into cells. A pipe right after a backslash does not split (as in GitHub's
// cmark-gfm and goldmark), or, with parity, a pipe after an odd number of backslashes does not.
func splitRow(line string, parity bool) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !escaped(line, len(line)-1, parity) {
		line = line[:len(line)-1]
	}
	var cells []string
	start := 0
	for i := 0; i < len(line); i++ {
		if line[i] == '|' && !escaped(line, i, parity) {
			cells = append(cells, line[start:i])
			start = i + 1
		}
	}
	return append(cells, line[start:])
}

func escaped(line string, i int, parity bool) bool {
	n := 0
	for i-n-1 >= 0 && line[i-n-1] == '\\' {
		n++
	}
	if parity {
		return n%2 == 1
	}
	return n > 0
}

// Text is what a reader sees of rendered HTML: the tags removed, character references decoded.
func Text(h string) string {
	return html.UnescapeString(tag.ReplaceAllString(h, ""))
}

// Cells returns the text of the cells of each row of the tables in rendered HTML, header rows included.
func Cells(h string) [][]string {
	var rows [][]string
	for _, tr := range rowRe.FindAllStringSubmatch(h, -1) {
		var row []string
		for _, td := range cellRe.FindAllStringSubmatch(tr[1], -1) {
			row = append(row, Text(td[1]))
		}
		rows = append(rows, row)
	}
	return rows
}
