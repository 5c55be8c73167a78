package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// leaks match what Go prints for a value nobody formatted for a reader: a nil, a fmt verb error, a
// pointer, a map or struct dump, the zero time. None of them can come from a file's names or values
// in the outputs scanned here.
var leaks = []*regexp.Regexp{
	regexp.MustCompile(`<nil>`),
	regexp.MustCompile(`%!`),                             // %!v(MISSING), %!d(string=…), %!(EXTRA …)
	regexp.MustCompile(`\b0x0\b|\b0xc0[0-9a-f]{8}\b`),    // a nil or heap pointer printed with %p or %v
	regexp.MustCompile(`map\[`),                          // a map printed with %v
	regexp.MustCompile(`&\{`),                            // a pointer to a struct printed with %v
	regexp.MustCompile(`\{[A-Z][A-Za-z]*:`),              // a struct printed with %+v
	regexp.MustCompile(`\b[a-z]+\.[A-Z][A-Za-z]*\{`),     // a value printed with %#v
	regexp.MustCompile(`0001-01-01|1970-01-01T00:00:00`), // a zero time
}

// proseLeaks are leaks only where no JSON is expected: an empty struct printed with %v.
var proseLeaks = []*regexp.Regexp{regexp.MustCompile(`(^|[^"\w])\{\}`)}

// mdEscape is a Markdown backslash escape.
var mdEscape = regexp.MustCompile("\\\\([!-/:-@[-`{-~])")

func findLeaks(out string, prose bool) []string {
	var found []string
	pats := leaks
	if prose {
		pats = append(append([]*regexp.Regexp(nil), leaks...), proseLeaks...)
	}
	for _, re := range pats {
		for _, loc := range re.FindAllStringIndex(out, 3) {
			lo, hi := max(loc[0]-60, 0), min(loc[1]+60, len(out))
			found = append(found, fmt.Sprintf("%s in %q", re, out[lo:hi]))
		}
	}
	return found
}

// TestNoLeaksInGoldens scans the expected outputs the project keeps: the CLI specs and the diff goldens.
func TestNoLeaksInGoldens(t *testing.T) {
	var files []string
	for _, glob := range []string{"testdata/script/*.txtar", "../../diff/testdata/*"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() { // diff/testdata/ggufsrc holds models, not outputs
				files = append(files, f)
			}
		}
	}
	if len(files) < 10 {
		t.Fatalf("found only %d golden files", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range findLeaks(string(b), false) {
			t.Errorf("%s: %s", f, l)
		}
	}
}

// TestNoLeaksInOutput runs every command in every format over the fixtures, the awkward cases (a lone
// shard, a missing file, a folder without a model, a changed manifest) and the real files in the
// shared corpus when they are there, and scans stdout and stderr for Go values that leaked.
func TestNoLeaksInOutput(t *testing.T) {
	t.Setenv("STDIFF_CACHE_DIR", t.TempDir())
	dir := t.TempDir()
	fx := fixtures()
	var files []string
	for name, b := range fx {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	sort.Strings(files)
	lone := filepath.Join(dir, "lone", "m-00001-of-00002.safetensors")
	empty := filepath.Join(dir, "empty")
	for _, d := range []string{filepath.Dir(lone), empty} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(lone, fx["base.safetensors"], 0o644); err != nil {
		t.Fatal(err)
	}
	odd := []string{lone, filepath.Join(dir, "missing.safetensors"), empty}
	dirs := []string{dir}
	if _, err := os.Stat(corpusDir); err == nil {
		corpus, _ := filepath.Glob(filepath.Join(corpusDir, "*"))
		sort.Strings(corpus)
		files = append(files, corpus...)
		dirs = append(dirs, corpusDir)
	} else {
		t.Logf("no corpus at %s: fixtures only", corpusDir)
	}

	// A manifest of every fixture, one of whose lines no longer matches.
	var manifest bytes.Buffer
	run(append([]string{"hash", "--content", "--all"}, files[:len(fx)]...), &manifest, new(bytes.Buffer))
	changed := strings.Replace(manifest.String(), "st1:", "st1:0", 1)
	manifestPath := filepath.Join(dir, "manifest")
	if err := os.WriteFile(manifestPath, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}

	all := append(append([]string(nil), files...), odd...)
	var runs [][]string
	for _, format := range []string{"text", "json", "jsonl", "markdown"} {
		add := func(args ...string) { runs = append(runs, append([]string{"--format", format}, args...)) }
		add(append([]string{"check"}, all...)...)
		add(append([]string{"inspect"}, all...)...)
		add(append([]string{"inspect", "--short"}, append(dirs, odd...)...)...)
		add(append([]string{"hash"}, all...)...)
		add(append([]string{"hash", "--content", "--all"}, all...)...)
		add("hash", "--check", manifestPath)
		add(append([]string{"dupes"}, dirs...)...)
		add(append([]string{"dupes", "--level", "structure", "--no-cache"}, append(dirs, odd...)...)...)
		for i, b := range all[1:] { // every file on each side once
			add("diff", all[i], b)
		}
		for _, b := range files[1:len(fx)] { // the fixtures against base.safetensors, bytes compared
			add("diff", "--content", files[0], b)
		}
	}
	for _, args := range runs {
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		short := make([]string, 0, 6)
		for _, a := range args {
			if len(short) == 6 {
				short = append(short, "…")
				break
			}
			short = append(short, filepath.Base(a))
		}
		cmd := "stdiff " + strings.Join(short, " ")
		if code < 0 || code > 2 {
			t.Errorf("%s: exit %d", cmd, code)
		}
		prose, got := !strings.HasPrefix(args[1], "json"), stdout.String()
		if args[1] == "markdown" { // \<nil\> is <nil> once rendered
			got = mdEscape.ReplaceAllString(got, "$1")
		}
		for _, l := range findLeaks(got, prose) {
			t.Errorf("%s: stdout: %s", cmd, l)
		}
		for _, l := range findLeaks(stderr.String(), true) {
			t.Errorf("%s: stderr: %s", cmd, l)
		}
	}
}
