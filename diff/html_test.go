package diff

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/canon/values"
	companiondiff "github.com/stdiff/stdiff/diff/companion"
	"github.com/stdiff/stdiff/diff/linediff"
)

// TestHTMLShowsNaNAndRounding: a tensor with five new NaNs (rel L2 0 over its finite values) stands
// out, says so and sorts first, and a comparison across dtypes says whether it is the exact rounding
// (before: "rel L2 0", an empty bar, no NaN count unless the counts differ, no rounding verdict).
func TestHTMLShowsNaNAndRounding(t *testing.T) {
	yes, no := true, false
	r := &Report{Schema: Schema, A: "a.safetensors", B: "b.safetensors", Categories: []Category{CategoryValues, CategoryNaN},
		Tensors: TensorReport{Changed: []Change{
			{Name: "bf16.weight", Fields: []string{"dtype"}, Old: Tensor{DType: "F32"}, New: Tensor{DType: "BF16"},
				Values: &values.Diff{Count: 8, Differing: 8, RelL2: 0.001, ExactRounding: &yes, Rounding: &values.Rounding{From: "F32", To: "BF16", Narrow: "b"}}},
			{Name: "half.weight", Fields: []string{"dtype"}, Old: Tensor{DType: "F32"}, New: Tensor{DType: "F16"},
				Values: &values.Diff{Count: 8, Differing: 8, RelL2: 0.01, ExactRounding: &no, Rounding: &values.Rounding{From: "F32", To: "F16", Narrow: "b", Mismatches: 3}}},
			{Name: "nan.weight", Fields: []string{"data"}, Values: &values.Diff{Count: 100, Differing: 5, NaNB: 5, RelL2: 0}},
			{Name: "other.weight", Fields: []string{"data"}, Values: &values.Diff{Count: 100, Differing: 1, RelL2: 0.5}},
		}}}
	var b bytes.Buffer
	if err := Write(&b, r, WriteOptions{Format: textfmt.HTML}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<tr data-name="nan.weight" data-rel="1e300" class="alarm" data-new-nan="5 new NaN">`,
		`<strong class="bad">5 new NaN</strong>`, `NaN 0 → 5`,
		`<span class="good">exact BF16 rounding of the F32 values</span>`,
		`<span class="bad">not F16 rounding of the F32 values (3 elements off)</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Count(page, `class="alarm"`) != 1 {
		t.Errorf("%d rows stand out, want the one with new NaNs", strings.Count(page, `class="alarm"`))
	}
}

// TestHTMLShowsCompanionFiles: the files beside the tensors have a section on the page as they have
// in the text, JSON and Markdown: config.json by key path (old → new), a chat template as a line
// diff, a file on one side only; a hostile key or value from a file is escaped (before: the page
// showed nothing of them, so a rope_theta 10000 → 500000 change was invisible there).
func TestHTMLShowsCompanionFiles(t *testing.T) {
	file := func(path string, kind companion.Kind, s string) companion.File {
		f := companion.File{Path: path, Kind: kind}
		companion.Parse(&f, []byte(s))
		return f
	}
	a := []companion.File{
		file("chat_template.jinja", companion.KindText, "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\n"),
		file("config.json", companion.KindJSON, `{"rope_theta": 10000, "<script>alert(1)</script>": "x"}`),
	}
	b := []companion.File{
		file("chat_template.jinja", companion.KindText, "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\n<script>bad()</script>\n"),
		file("config.json", companion.KindJSON, `{"rope_theta": 500000, "<script>alert(1)</script>": "<script>alert(2)</script>"}`),
		file("generation_config.json", companion.KindJSON, `{"do_sample": true}`),
	}
	r := &Report{Schema: Schema, A: "a", B: "b", Categories: []Category{CategoryCompanion},
		Companions: companiondiff.Compare(a, b, true, true)}
	var buf bytes.Buffer
	if err := Write(&buf, r, WriteOptions{Format: textfmt.HTML}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		`<h2>Files beside the tensors</h2>`,
		`<td class="mono">rope_theta</td><td><span class="bad">10000</span> → <span class="good">500000</span></td>`,
		`<td class="mono">generation_config.json</td><td class="good">added</td>`,
		`<h3 class="mono">chat_template.jinja</h3>`,
		`<span class="bad">- line 8</span>`,
		`<span class="good">&#43; &lt;script&gt;bad()&lt;/script&gt;</span>`,
		`<span class="muted">… `, // the unchanged lines 1-5 folded
		`&lt;script&gt;alert(1)&lt;/script&gt;`,
		`&#34;&lt;script&gt;alert(2)&lt;/script&gt;&#34;`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<script>bad") {
		t.Error("a value from a companion file is on the page unescaped")
	}
}

// TestHTMLAndMarkdownShowPromptDiff: a changed chat template's prompt diff (--render) is on the HTML
// page and in the Markdown as it is in the text (before: only the text and JSON had it).
func TestHTMLAndMarkdownShowPromptDiff(t *testing.T) {
	r := &Report{Schema: Schema, A: "a", B: "b", Categories: []Category{CategoryMetadata},
		Metadata: MetadataReport{Changed: []MetaChange{{Key: "tokenizer.chat_template", Kind: "text",
			Lines:  []linediff.Line{{Op: "-", Text: "{{ m.content }}"}, {Op: "+", Text: "<|{{ m.role }}|>{{ m.content }}"}},
			Prompt: &PromptChange{Lines: []linediff.Line{{Op: "-", Text: "Hello⏎"}, {Op: "+", Text: "<|user|>Hello⏎"}}}}}}}
	var h, m bytes.Buffer
	if err := Write(&h, r, WriteOptions{Format: textfmt.HTML}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&m, r, WriteOptions{Format: textfmt.Markdown}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`prompt diff (rendered on a fixed conversation`, `<span class="good">&#43; &lt;|user|&gt;Hello⏎</span>`} {
		if !strings.Contains(h.String(), want) {
			t.Errorf("page lacks %s", want)
		}
	}
	for _, want := range []string{"@@ prompt diff (rendered on a fixed conversation", "\n+ <|user|>Hello⏎\n", "\n- Hello⏎\n"} {
		if !strings.Contains(m.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, m.String())
		}
	}
}
