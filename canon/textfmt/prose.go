package textfmt

import (
	"html"
	"regexp"
	"strings"
	"sync"
)

// The expressions are compiled at their first use, not at every start of stdiff.
var (
	// htmlTag matches an HTML tag or comment: what makes prose read from a file HTML.
	htmlTag = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`<!--[\s\S]*?-->|</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?/?>`)
	})
	// htmlBreak matches the tags that end a paragraph: <br>, and the start and end of a paragraph,
	// a heading, a list item, a quotation, a table row.
	htmlBreak = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)<(?:br|hr)\s*/?>|</?(?:p|div|h[1-6]|li|ul|ol|blockquote|pre|tr|table)(?:\s[^<>]*)?>`)
	})
	// emptyLine matches a line break, white space, and another: the end of a paragraph of text.
	emptyLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\r?\n[ \t\r]*\n`) })
)

// Paragraphs returns prose read from a file (a model's description; CivitAI's is HTML) as paragraphs
// of plain text, to show each on a line of its own or joined. When s holds HTML tags, they are
// removed, each <br>, paragraph, heading, list item or table row ending a paragraph, and character
// references (&amp;) are decoded; in text without tags, an empty line ends a paragraph and other
// characters are taken as they are. Runs of white space (line breaks within a paragraph too) become
// one space, and empty paragraphs are dropped. The paragraphs are not escaped (see Escape).
func Paragraphs(s string) []string {
	if htmlTag().MatchString(s) {
		s = htmlBreak().ReplaceAllString(s, "\n\n")
		s = html.UnescapeString(htmlTag().ReplaceAllString(s, ""))
	}
	var out []string
	for _, p := range emptyLine().Split(s, -1) {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			out = append(out, p)
		}
	}
	return out
}
