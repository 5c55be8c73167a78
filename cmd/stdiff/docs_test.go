package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/alecthomas/kong"
)

// docsDir holds a page per command, made from the CLI's kong model and its examples (help.go) by
// TestDocs, beside the hand-written pages (docsGuides).
const docsDir = "docs"

// docsGuides are the hand-written pages beside the generated ones: what does not fit a command's
// help. The index links each; a command's page links its own (docsGuideOf).
var docsGuides = []struct{ file, what string }{
	{"scripting.md", "the scripting contract: exit statuses, JSON schemas and fields, finding, note and category codes"},
	{"models.md", "what a MODEL may be (folders, shard sets, diffusers pipelines, URLs), output formats, colour"},
	{"remote.md", "remote models: HTTP ranges, hf:// addresses, the token, time limits, retries"},
	{"diff-guide.md", "diff in depth: value statistics, tolerances, categories, renames, text diffs"},
	{"check-guide.md", "check in depth: the reference reader's verdict, findings, --fix, --values"},
	{"inspect-guide.md", "inspect in depth: LoRA info, sidecars, folders as a table"},
	{"dupes-guide.md", "dupes in depth: levels, the keeper, acting on copies, the cache"},
	{"identities.md", "structure and content IDs, ecosystem hashes, manifests, and the canonical forms byte for byte"},
	{"snapshots.md", "snapshots: what the file records and how diff, inspect and hash --check use it"},
	{"gguf.md", "GGUF: llama.cpp's verdict, quantisation, tokenizers, a GGUF against its source model"},
	{"formats.md", "ONNX, PyTorch checkpoints, NumPy and DDUF"},
	{"pages.md", "the HTML pages of --format html"},
	{"ci.md", "CI: the pre-commit hook and the GitHub action"},
	{"at-scale.md", "millions of files: batch runners and JSONL records"},
	{"library.md", "the Go packages"},
	{"testing.md", "testing stdiff: golden files, oracles, fuzz targets, benchmarks"},
}

// docsGuideOf names the hand-written page of a command, if it has one.
var docsGuideOf = map[string]string{
	"diff": "diff-guide.md", "check": "check-guide.md", "inspect": "inspect-guide.md", "dupes": "dupes-guide.md",
	"hash": "identities.md", "snapshot": "snapshots.md",
}

// TestDocs fails when a generated page in docs/ is not what the CLI's model and examples make today
// (-update writes them), when a guide the index links is missing, and when an example does not parse.
func TestDocs(t *testing.T) {
	pages := docPages(t)
	for name, want := range pages {
		path := filepath.Join(docsDir, name)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale (the CLI's flags, help or examples changed): go test ./cmd/stdiff -run TestDocs -update", path)
		}
	}
	for _, g := range docsGuides {
		if _, err := os.Stat(filepath.Join(docsDir, g.file)); err != nil {
			t.Errorf("the index links %s: %v", g.file, err)
		}
	}
	// Every .md in docs/ is generated or a guide: none is left behind when a command goes.
	entries, err := os.ReadDir(docsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		_, generated := pages[e.Name()]
		if !generated && !slices.ContainsFunc(docsGuides, func(g struct{ file, what string }) bool { return g.file == e.Name() }) {
			t.Errorf("%s: neither generated nor a guide the index links", filepath.Join(docsDir, e.Name()))
		}
	}
}

// docPages makes the pages: stdiff.md (the index) and one per command, by file name.
func docPages(t *testing.T) map[string][]byte {
	t.Helper()
	var c cli
	parser, err := newParser(&c, io.Discard, io.Discard, "stdiff dev")
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string][]byte{"stdiff.md": docIndex(parser.Model)}
	for _, n := range parser.Model.Children {
		if n.Hidden {
			continue
		}
		pages[n.Name+".md"] = docCommand(n)
	}
	return pages
}

const docsGenerated = "<!-- Made by `go test ./cmd/stdiff -run TestDocs -update` from the CLI's model (main.go, help.go): do not edit. -->\n\n"

// docIndex is stdiff.md: the commands, the flags every command takes, the overview's examples, the
// exit statuses, and the guides.
func docIndex(app *kong.Application) []byte {
	var b bytes.Buffer
	b.WriteString(docsGenerated)
	fmt.Fprintf(&b, "# stdiff\n\n%s\n\n```\n%s\n```\n\n## Commands\n\n| command | does |\n|---|---|\n", app.Help, "stdiff "+strings.TrimSpace(app.Summary()))
	for _, n := range app.Children {
		if !n.Hidden {
			fmt.Fprintf(&b, "| [`stdiff %s`](%s.md) | %s |\n", n.Summary(), n.Name, docEscape(n.Help))
		}
	}
	b.WriteString("\n## Flags every command takes\n\n")
	docFlags(&b, app.Flags)
	docEnd(&b, overviewHelp{}.helpEnd())
	b.WriteString("\n## Guides\n\n")
	for _, g := range docsGuides {
		fmt.Fprintf(&b, "- [%s](%s): %s\n", strings.TrimSuffix(g.file, ".md"), g.file, docEscape(g.what))
	}
	return b.Bytes()
}

// docCommand is the page of one command: its usage, arguments, flags, examples and exit statuses.
func docCommand(n *kong.Node) []byte {
	var b bytes.Buffer
	b.WriteString(docsGenerated)
	fmt.Fprintf(&b, "# stdiff %s\n\n%s\n\n```\nstdiff %s\n```\n", n.Name, docEscape(n.Help), n.Summary())
	if len(n.Positional) > 0 {
		b.WriteString("\n## Arguments\n\n| argument | |\n|---|---|\n")
		for _, p := range n.Positional {
			fmt.Fprintf(&b, "| `%s` | %s |\n", p.Summary(), docEscape(p.Help))
		}
	}
	if slices.ContainsFunc(n.Flags, func(f *kong.Flag) bool { return !f.Hidden }) {
		b.WriteString("\n## Flags\n\n")
		docFlags(&b, n.Flags)
	}
	b.WriteString("\nAnd the [flags every command takes](stdiff.md#flags-every-command-takes) (`--format`, `--json`, `--color`, `--timeout`).\n")
	if end, ok := n.Target.Addr().Interface().(helpEnd); ok {
		docEnd(&b, end.helpEnd())
	}
	if g := docsGuideOf[n.Name]; g != "" {
		fmt.Fprintf(&b, "\nMore: [%s](%s). Scripts: [scripting.md](scripting.md).\n", strings.TrimSuffix(g, ".md"), g)
	}
	return b.Bytes()
}

// docFlags writes a table of flags as --help shows them: short and long name, placeholder, default.
func docFlags(b *bytes.Buffer, flags []*kong.Flag) {
	b.WriteString("| flag | default | |\n|---|---|---|\n")
	for _, f := range flags {
		if f.Hidden {
			continue
		}
		name := "--" + f.Name
		switch {
		case f.IsBool() || f.IsCounter():
		case f.PlaceHolder == "" && f.HasDefault: // kong would show the default, quoted: it has its own column
			name += "=" + strings.ToUpper(f.Name)
		default:
			name += "=" + f.FormatPlaceHolder()
		}
		if f.Short != 0 {
			name = "-" + string(f.Short) + ", " + name
		}
		def := ""
		if f.HasDefault && f.Default != "" {
			def = "`" + f.Default + "`"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", name, def, docEscape(f.Help))
	}
}

// docEnd writes a command's examples, exit statuses and what a model may be.
func docEnd(b *bytes.Buffer, h commandHelp) {
	b.WriteString("\n## Examples\n\n```sh\n")
	for _, e := range h.examples {
		fmt.Fprintf(b, "# %s\n%s\n", e.what, e.line)
	}
	fmt.Fprintf(b, "```\n\n## Exit status\n\n%s.\n\n%s\n", docEscape(oneLine(h.exits)), docEscape(oneLine(modelHelp)))
}

// oneLine joins text broken for the terminal.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// docEscape escapes what Markdown (and a table cell) would read as markup.
func docEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "<", `\<`, ">", `\>`, "|", `\|`, "[", `\[`, "]", `\]`).Replace(s)
}

// docsExampleFiles stands the fixtures in for the files the examples name, so the examples run.
var docsExampleFiles = map[string]string{
	"old.safetensors": "base.safetensors", "new.safetensors": "changed.safetensors",
	"model.safetensors": "nul-padded.safetensors", "./model": "weights.safetensors",
	"model-Q4_K_M.gguf": "llama.gguf", "model-Q6_K.gguf": "requant.gguf", "~/loras": "loras",
	"./hf-model": "base.safetensors", "model-f16.gguf": "changed.safetensors",
}

// TestDocsExamples parses every example of every command (a renamed or removed flag fails it), and
// runs each one that needs no shell, network or home folder against the fixtures, in order, in one
// folder: none may end in trouble (exit status 2).
func TestDocsExamples(t *testing.T) {
	dir := t.TempDir()
	for name, b := range fixtures() {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "loras"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"lora.safetensors", "base.safetensors", "retitled.safetensors"} {
		if err := os.Link(filepath.Join(dir, name), filepath.Join(dir, "loras", name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("STDIFF_CACHE_DIR", t.TempDir()) // dupes keeps its cache there, not in the user's
	t.Setenv("NO_COLOR", "1")
	ran := 0
	ends := []helpEnd{overviewHelp{}, &diffCmd{}, &checkCmd{}, &inspectCmd{}, &hashCmd{}, &dupesCmd{}, &snapshotCmd{}}
	for _, end := range ends {
		for _, e := range end.helpEnd().examples {
			shell := strings.ContainsAny(e.line, "|;&>$")
			runnable := !shell
			for _, cmdline := range strings.FieldsFunc(e.line, func(r rune) bool { return strings.ContainsRune("|;&", r) }) {
				words := strings.Fields(cmdline)
				if len(words) == 0 || words[0] != "stdiff" {
					continue
				}
				if i := slices.Index(words, ">"); i >= 0 {
					words = words[:i]
				}
				var c cli
				parser, err := newParser(&c, io.Discard, io.Discard, "stdiff dev")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := parser.Parse(words[1:]); err != nil {
					t.Errorf("example %q: %v", e.line, err)
				}
				var args []string
				for _, w := range words[1:] {
					if f, ok := docsExampleFiles[w]; ok {
						w = f
					}
					if strings.Contains(w, "*") {
						matches, _ := filepath.Glob(w)
						args = append(args, matches...)
						continue
					}
					if strings.HasPrefix(w, "hf://") || strings.HasPrefix(w, "~") {
						runnable = false
					}
					args = append(args, w)
				}
				if !runnable {
					continue
				}
				ran++
				var stdout, stderr bytes.Buffer
				if code := run(args, &stdout, &stderr); code == exitTrouble {
					t.Errorf("example %q, run as stdiff %s: exit status 2\n%s", e.line, strings.Join(args, " "), stderr.String())
				}
			}
		}
	}
	if ran < 15 {
		t.Errorf("%d examples ran against the fixtures, want at least 15: an example stopped standing in for them", ran)
	}
}

// TestDocsLinks fails when a relative link of the README, a page in docs/ or the benchmarks' README
// points to a file that is not there, or to a heading its page does not have.
func TestDocsLinks(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join(docsDir, "*.md"))
	pages = append(pages, filepath.Join("..", "..", "README.md"), filepath.Join("..", "..", "testdata", "bench", "README.md"))
	fence := regexp.MustCompile("(?s)```.*?```")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(fence.ReplaceAllString(string(b), ""), -1) {
			target, anchor, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") {
				continue
			}
			path := page
			if target != "" {
				path = filepath.Join(filepath.Dir(page), target)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links %s: %v", page, m[1], err)
				continue
			}
			if anchor != "" && !slices.Contains(headingAnchors(t, path), anchor) {
				t.Errorf("%s links %s: %s has no such heading", page, m[1], path)
			}
		}
	}
}

// headingAnchors are the anchors GitHub gives the headings of a Markdown page: lower case, spaces as
// hyphens, punctuation but hyphens and underscores left out.
func headingAnchors(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var anchors []string
	inFence := false
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		heading := strings.TrimLeft(line, "#")
		if inFence || heading == line || !strings.HasPrefix(heading, " ") {
			continue
		}
		anchor := strings.Map(func(r rune) rune {
			switch {
			case r == ' ':
				return '-'
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				return unicode.ToLower(r)
			}
			return -1
		}, strings.TrimSpace(heading))
		anchors = append(anchors, anchor)
	}
	return anchors
}
