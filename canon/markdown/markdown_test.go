package markdown_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/markdown/markdowntest"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// hostile are names and values a file could carry to break out of Markdown.
var hostile = []string{
	`n\|x\<img src=x onerror=alert(1)>`, "plain", "", " ", "   ", " lead", "trail ", " both ",
	"a|b", `a\|b`, `a\\|b`, `\`, `x\`, `\\`, "|", "||", `\|\|`, "`", "``a``", " ` ", "`|`", "a`b``c",
	"*bold*", "_em_", "__x__", "**", "****", "***", "---", "===", "- item", "+ item", "* item", "1. item",
	"12) item", "123456789. x", "1234567890. x", "1.5", "-x", "+", "-", "--", "> quote", "# h", "### h ###", "x #", "    code", "\tcode",
	"[link](javascript:alert(1))", "![img](x)", "[x]: http://evil", "[ ] task", "[x] done",
	"<script>alert(1)</script>", "</details>", "<details><summary>x", "<!-- c -->", "<http://x>",
	"<a href=x>y</a>", "&lt;b&gt;", "&amp;", "&#60;script&#62;", "&", "~~del~~", "~~~", "```", "```diff",
	"$x$", "$$", "line1\nline2", "a\r\nb", "\x1b[31mred", "a\u202eb", "\xff\xfe", "\x00",
	"http://example.com/a_b*c*", "www.example.com", "user@example.com", `\*`, "\\`", `\<`, "a\\\n",
	"@octocat", "cc @org/team please", "(@x)", "@", "a @ b", "#123", "fixes owner/repo#12", "#x", "HTTPS://EVIL.example/p?q=1",
	"see https://a.example/x|y and www.b.example", `a\|https://x.example/\|y`, "ftp://f.example", "https://", "<p>Hi @you</p>",
}

// TestTextAndCode renders every hostile string as text and as code in a table cell, a list item, a
// heading and bold text, through a CommonMark/GFM renderer: no element or cell appears that the Markdown
// around it did not write, no link, mention or issue reference, and what a reader sees is what the text
// output shows (textfmt.Escape).
func TestTextAndCode(t *testing.T) {
	for _, s := range hostile {
		want := textfmt.Escape(s)
		text, code := markdown.Text(s), markdown.Code(s)
		doc := "| a | b |\n|---|---|\n| " + text + " | " + code + " |\n\n- " + text + "\n- " + code + "\n\n### " + text + "\n\n**x" + text + "x**\n"
		if p := markdowntest.Problems(doc); p != nil {
			t.Errorf("%q: %s\n%s", s, strings.Join(p, "\n"), doc)
			continue
		}
		// A reader sees no zero-width space (written after an @ or a # that would act on GitHub).
		h := strings.ReplaceAll(markdowntest.HTML(doc), "\u200b", "")
		cells := markdowntest.Cells(h)
		if len(cells) != 2 || len(cells[1]) != 2 || cells[1][0] != want {
			t.Errorf("%q: table cells %q, want [%q …]\n%s", s, cells, want, h)
		}
		wantCode := "<code>" + escapeHTML(want) + "</code>"
		if want == "" {
			wantCode = "<code> </code>"
		}
		if !strings.Contains(want, `\|`) && !strings.Contains(h, "<td>"+wantCode+"</td>") {
			t.Errorf("%q: no cell %s\n%s", s, wantCode, h)
		}
		items := inner(h, "li")
		if want != "" && (len(items) != 2 || items[0] != want) {
			t.Errorf("%q: list items %q, want [%q …]\n%s", s, items, want, h)
		}
		if heads := inner(h, "h3"); want != "" && (len(heads) != 1 || heads[0] != want) {
			t.Errorf("%q: heading %q, want %q\n%s", s, heads, want, h)
		}
		if bold := inner(h, "strong"); len(bold) != 1 || bold[0] != "x"+want+"x" {
			t.Errorf("%q: bold %q, want %q\n%s", s, bold, "x"+want+"x", h)
		}
	}
}

// inner returns the text of each element named tag in rendered HTML.
func inner(h, tag string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?s)<`+tag+`>(.*?)</`+tag+`>`).FindAllStringSubmatch(h, -1) {
		out = append(out, markdowntest.Text(m[1]))
	}
	return out
}

// escapeHTML escapes as goldmark does: &, <, > and ".
func escapeHTML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// TestHTML: a key in a <summary> line stays text and on its line.
func TestHTML(t *testing.T) {
	for _, s := range hostile {
		doc := "<details><summary><code>" + markdown.HTML(s) + "</code></summary>\n\n</details>\n"
		if p := markdowntest.Problems(doc); p != nil {
			t.Errorf("%q: %s\n%s", s, strings.Join(p, "\n"), doc)
		}
		if got := markdowntest.Text(markdowntest.HTML(doc)); strings.TrimRight(got, "\n") != textfmt.Escape(s) {
			t.Errorf("%q: summary reads %q", s, got)
		}
	}
}

// TestFence: no line of the body closes the block, whatever backticks it holds.
func TestFence(t *testing.T) {
	for _, body := range []string{"", "x", "```", "````", "a ``` b", "`", "``````````", "~~~"} {
		f := markdown.Fence(body)
		doc := f + "diff\n" + body + "\n" + f + "\n\nafter\n"
		h := markdowntest.HTML(doc)
		if !strings.Contains(h, `<pre><code class="language-diff">`+escapeHTML(body)) || !strings.Contains(h, "<p>after</p>") {
			t.Errorf("%q: %s", body, h)
		}
		if len(f) < 3 || strings.Trim(f, "`") != "" {
			t.Errorf("%q: fence %q", body, f)
		}
	}
}

func TestExamples(t *testing.T) {
	for _, c := range []struct{ in, text, code string }{
		{`n\|x\<img src=x onerror=alert(1)>`, `n\\\|x\\\<img src=x onerror=alert(1)\>`, `n\\\|x\\\<img src=x onerror=alert(1)\>`},
		{"layers.0.weight", "layers.0.weight", "`layers.0.weight`"},
		{"a|b", `a\|b`, "`a\\|b`"},
		{"a`b", "a\\`b", "``a`b``"},
		{"`x", "\\`x", "`` `x ``"},
		{" x ", "&#32;x&#32;", "`  x  `"},
		{"- x", `\- x`, "`- x`"},
		{"1. x", `1\. x`, "`1. x`"},
		{"a\nb", `a\\nb`, "`a\\nb`"},
	} {
		if got := markdown.Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := markdown.Code(c.in); got != c.code {
			t.Errorf("Code(%q) = %q, want %q", c.in, got, c.code)
		}
	}
}
