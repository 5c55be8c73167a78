package textfmt

import (
	"slices"
	"testing"
)

// TestParagraphs: CivitAI's HTML descriptions read as text, a paragraph per <p>, list item or <br>;
// text without tags is kept as written, but for white space, an empty line ending a paragraph.
func TestParagraphs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"plain words", []string{"plain words"}},
		{"one\n\n  two  words\r\nthree\r\n \r\nfour", []string{"one", "two words three", "four"}},
		{"<p>Aria is a <strong>character</strong> LoRA.</p><p>Use weight 0.8 &amp; <em>clip skip 2</em>.</p>",
			[]string{"Aria is a character LoRA.", "Use weight 0.8 & clip skip 2."}},
		{`<h2 id="x">Usage</h2><ul><li>aria</li><li>silver hair</li></ul>line<br/>break<br>again<!-- note --><hr>`,
			[]string{"Usage", "aria", "silver hair", "line", "break", "again"}},
		{`<p><a href="https://evil.example" rel="ugc">link text</a> &lt;b&gt;</p>`, []string{"link text <b>"}},
		{"weight <0.8 & a > b", []string{"weight <0.8 & a > b"}}, // no tag: as written
		{"<P CLASS=x>upper</P>", []string{"upper"}},
	} {
		if got := Paragraphs(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Paragraphs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
