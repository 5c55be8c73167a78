package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/markdown/markdowntest"
	"github.com/stdiff/stdiff/canon/stfile"
)

// breakout escapes Markdown that does not escape backslashes: `\|` becomes a cell separator and
// `\<img…>` raw HTML.
const breakout = `n\|x\<img src=x onerror=alert(1)>`

// acting would ping someone, link somewhere or reference an issue if a writer let it through to GitHub.
const acting = "@octocat see https://evil.example/x, www.evil.example and #1 (mail a@evil.example)"

// hostileNames would add markup, HTML, links, list items or cells if a writer let them through.
var hostileNames = []string{breakout, "</details>", "```", "a`b|c", "*_[x](javascript:alert(1))_*", "- item",
	"<!-- x", "&lt;b&gt;", "~~del~~", "1. one", "# h", "\\", acting}

// hostilePair writes two models whose tensor names, metadata keys and values, and file names are
// hostile, and which differ in every way a diff shows: removed, added, changed, renamed tensors; removed,
// added, changed and multi-line metadata (with ``` and </details> lines).
func hostilePair(t *testing.T, dir string) (a, b string) {
	meta := []stfile.KV{
		{Key: "ss_output_name", Value: breakout},
		{Key: "ss_base_model_version", Value: breakout},
		{Key: "ss_tag_frequency", Value: `{"10_` + breakout + `": {"` + breakout + `": 5, "</details>": 2}}`},
		{Key: breakout, Value: breakout},
		{Key: breakout, Value: "again"}, // a duplicate key: a finding whose message names it
		{Key: "</details>", Value: "one\n```\n</details>\n<img src=x onerror=alert(1)>\nfour"},
		{Key: "ssmd_description", Value: "<p>" + acting + "</p>"}, {Key: "ssmd_keywords", Value: acting},
		{Key: acting, Value: "1"}, {Key: acting, Value: "2"}, // a duplicate key: a finding whose message names it
	}
	fa := stfile.File{Seed: 1, Metadata: meta}
	for _, n := range hostileNames {
		fa.Tensors = append(fa.Tensors, stfile.Tensor{Name: n, DType: "F16", Shape: []uint64{4}})
	}
	fa.Tensors = append(fa.Tensors, stfile.Tensor{Name: breakout + ".removed", DType: "F32", Shape: []uint64{3}})
	fb := stfile.File{Seed: 1, Metadata: append(append([]stfile.KV(nil), meta[:3]...),
		stfile.KV{Key: breakout, Value: breakout + " changed"},
		stfile.KV{Key: "</details>", Value: "one\n```\n</details>\n<img src=x onerror=alert(2)>\nfour"},
		stfile.KV{Key: "- " + breakout, Value: "```"}, stfile.KV{Key: "ss_training_comment", Value: acting})}
	for i, n := range hostileNames {
		tb := stfile.Tensor{Name: n, DType: "F16", Shape: []uint64{4}}
		switch i {
		case 1:
			tb.DType = "F32"
		case 2:
			tb.Name = breakout + ".renamed"
			tb.Data = stfile.Fill(1, n, 8)
		}
		fb.Tensors = append(fb.Tensors, tb)
	}
	fb.Tensors = append(fb.Tensors, stfile.Tensor{Name: breakout + ".added", DType: "F32", Shape: []uint64{5}})
	a, b = filepath.Join(dir, breakout+" a.safetensors"), filepath.Join(dir, "~~"+breakout+"~~ b.safetensors")
	for path, f := range map[string]stfile.File{a: fa, b: fb} {
		if err := os.WriteFile(path, f.Build(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// TestMarkdownHostile renders every Markdown output of every command for hostile files through a
// CommonMark/GFM renderer: no element, attribute or link the writer did not write, no link, mention or
// issue reference from a file, every table row with its table's number of cells, and the hostile name
// shown whole.
func TestMarkdownHostile(t *testing.T) {
	t.Setenv("STDIFF_CACHE_DIR", t.TempDir())
	dir := filepath.Join(t.TempDir(), "*"+breakout)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a, b := hostilePair(t, dir)
	// Duplicates for dupes: a copy, and a copy with edited (hostile) metadata.
	raw, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"copy " + breakout + ".safetensors", "| " + breakout + " |.safetensors", "@octocat #1 www.evil.example.safetensors"} {
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	retitled := strings.Replace(string(raw), "again", "agaiN", 1)
	if err := os.WriteFile(filepath.Join(dir, "retitled "+breakout+".safetensors"), []byte(retitled), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "<b>"+breakout+".safetensors")
	if err := os.WriteFile(bad, []byte("\x10\x00\x00\x00\x00\x00\x00\x00{\""+breakout+"\":1}     "), 0o644); err != nil {
		t.Fatal(err)
	}
	// A manifest whose first file no longer matches, naming a file that is gone.
	gone := filepath.Join(dir, breakout+" gone.safetensors")
	if err := os.WriteFile(gone, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var manifest bytes.Buffer
	run([]string{"hash", "--content", a, b, gone}, &manifest, new(bytes.Buffer))
	os.Remove(gone)
	lines := strings.Replace(manifest.String(), "st1:", "st1:0", 1)
	manifestPath := filepath.Join(dir, "manifest")
	if err := os.WriteFile(manifestPath, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{
		{"diff", a, b}, {"diff", "--content", a, b}, {"diff", "--full", b, a},
		{"check", a, b, bad, filepath.Join(dir, breakout+" missing")},
		{"inspect", a, b, bad}, {"inspect", "--short", dir},
		{"dupes", dir}, {"dupes", "--level", "structure", dir},
		{"hash", a, b}, {"hash", "--content", a, b}, {"hash", "--check", manifestPath},
	} {
		name := args[0]
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "--") {
				name += " " + a
			}
		}
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			run(append([]string{"--format", "markdown"}, args...), &stdout, &stderr)
			out := stdout.String()
			if out == "" {
				t.Fatalf("no output; stderr: %s", stderr.String())
			}
			for _, p := range markdowntest.Problems(out) {
				t.Error(p)
			}
			if text := markdowntest.Text(markdowntest.HTML(out)); !strings.Contains(text, breakout) {
				t.Errorf("%q is not shown whole:\n%s", breakout, text)
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}
