package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/hash/dupes"
	"github.com/stdiff/stdiff/hash/dupes/act"
	"github.com/stdiff/stdiff/hash/dupes/render"
)

// dupesCollection copies fixtures into a folder: a copy, edited metadata, a re-saved file, other
// weights, an invalid file.
func dupesCollection(t *testing.T) string {
	dir := t.TempDir()
	for name, from := range map[string]string{"a/mychar.safetensors": "base", "b/copy.safetensors": "base",
		"b/retitled.safetensors": "retitled", "b/resaved.safetensors": "reordered", "a/v2.safetensors": "retrained",
		"a/broken.safetensors": "truncated"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", from+".safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDupesIsTheLibrarys: what `stdiff dupes` prints is dupes.Find's report through its writer, byte
// for byte, in every format; -q prints nothing and answers with the same exit status.
func TestDupesIsTheLibrarys(t *testing.T) {
	dir := dupesCollection(t)
	missing := filepath.Join(dir, "missing")
	rep, err := dupes.Find(t.Context(), []string{dir, missing}, dupes.Options{Level: dupes.LevelStructure})
	if err != nil {
		t.Fatal(err)
	}
	for format, write := range map[string]func(*bytes.Buffer) error{
		"json": func(b *bytes.Buffer) error { return render.Write(b, rep, render.WriteOptions{Format: textfmt.JSON}) },
		"markdown": func(b *bytes.Buffer) error {
			return render.Write(b, rep, render.WriteOptions{Format: textfmt.Markdown, Knobs: dupesKnobs})
		},
		"text": func(b *bytes.Buffer) error { return render.Write(b, rep, render.WriteOptions{Knobs: dupesKnobs}) },
	} {
		var want, stdout, stderr bytes.Buffer
		if err := write(&want); err != nil {
			t.Fatal(err)
		}
		args := []string{"--format", format, "--color", "never", "dupes", "--no-cache", "--level", "structure", dir, missing}
		if code := run(args, &stdout, &stderr); code != exitTrouble || !bytes.Equal(stdout.Bytes(), want.Bytes()) {
			t.Errorf("%s: exit %d, stdout\n%s\nwant\n%s", format, code, stdout.Bytes(), want.Bytes())
		}
		if want := "stdiff: " + missing + ": no such file or folder\n"; stderr.String() != want {
			t.Errorf("%s: stderr %q, want %q", format, stderr.String(), want)
		}
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"dupes", "-q", "--no-cache", dir}, exitFound},
		{[]string{"dupes", "--quiet", "--no-cache", filepath.Join(dir, "a")}, exitOK},
		{[]string{"--json", "dupes", "-q", "--no-cache", dir, missing}, exitTrouble},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c.args, &stdout, &stderr); code != c.code || stdout.Len() != 0 {
			t.Errorf("%v: exit %d (want %d), stdout %q", c.args, code, c.code, stdout.String())
		}
	}
}

// TestDupesActIsTheLibrarys: what `stdiff dupes --delete --dry-run` prints is dupes.Act's report
// through its writer, byte for byte, and `--print-deletable` is act.Write's with Deletable.
func TestDupesActIsTheLibrarys(t *testing.T) {
	dir := dupesCollection(t)
	keep := "path:" + filepath.Join(dir, "b")
	rule, _ := dupes.ParseKeepRule(keep)
	rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{Keep: rule})
	if err != nil {
		t.Fatal(err)
	}
	done, err := act.Act(t.Context(), rep, act.Options{Delete: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		write func(*bytes.Buffer) error
	}{
		{[]string{"--json", "dupes", "--no-cache", "--keep", keep, "--delete", "--dry-run", dir}, func(b *bytes.Buffer) error { return act.Write(b, done, act.WriteOptions{Format: textfmt.JSON}) }},
		{[]string{"--format", "jsonl", "dupes", "--no-cache", "--keep", keep, "--delete", "--dry-run", dir}, func(b *bytes.Buffer) error { return act.Write(b, done, act.WriteOptions{Format: textfmt.JSONL}) }},
		{[]string{"--color", "never", "dupes", "--no-cache", "--keep", keep, "--link", "--dry-run", dir}, func(b *bytes.Buffer) error {
			link, err := act.Act(t.Context(), rep, act.Options{Link: true, DryRun: true})
			if err != nil {
				return err
			}
			return act.Write(b, link, act.WriteOptions{})
		}},
		{[]string{"dupes", "--no-cache", "--keep", keep, "--print-deletable", "-0", dir}, func(b *bytes.Buffer) error { return act.Write(b, done, act.WriteOptions{Deletable: true, Null: true}) }},
	} {
		var want, stdout, stderr bytes.Buffer
		if err := c.write(&want); err != nil {
			t.Fatal(err)
		}
		if code := run(c.args, &stdout, &stderr); code != exitFound || !bytes.Equal(stdout.Bytes(), want.Bytes()) || stderr.Len() > 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout\n%s\nwant\n%s", c.args, code, stderr.String(), stdout.Bytes(), want.Bytes())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "mychar.safetensors")); err != nil {
		t.Errorf("a dry run deleted: %v", err)
	}
}

// TestDupesActError: an error dupes.Act returns reaches the user, on one line, with exit 2 (here
// options the flags cannot give: both --delete and --link).
func TestDupesActError(t *testing.T) {
	dir := dupesCollection(t)
	var stdout, stderr bytes.Buffer
	o := &out{ctx: t.Context(), w: textfmt.NewSyncWriter(&stdout), errw: &stderr, format: "text"}
	c := &dupesCmd{Level: "renamed", Keep: "most-info", Delete: true, Link: true, Yes: true, NoCache: true, Paths: []string{dir}}
	if code := c.run(o); code != exitTrouble {
		t.Errorf("exit %d, want %d", code, exitTrouble)
	}
	if got := stderr.String(); !strings.HasPrefix(got, "stdiff: ") || strings.Count(got, "\n") != 1 {
		t.Errorf("stderr %q", got)
	}
}
