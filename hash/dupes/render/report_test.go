package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/delta"
	"github.com/stdiff/stdiff/canon/markdown/markdowntest"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/hash/dupes"
)

// TestWriteJSONL: one record per member of each group, each the member's fields in the JSON with its
// group's level, keeper and IDs, and the schema.
func TestWriteJSONL(t *testing.T) {
	dir, _ := plantedCollection(t)
	rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{Level: dupes.LevelStructure})
	if err != nil {
		t.Fatal(err)
	}
	var js, jsonl bytes.Buffer
	if err := Write(&js, rep, WriteOptions{Format: textfmt.JSON}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&jsonl, rep, WriteOptions{Format: textfmt.JSONL}); err != nil {
		t.Fatal(err)
	}
	var whole struct {
		Groups []map[string]any `json:"groups"`
	}
	if err := json.Unmarshal(js.Bytes(), &whole); err != nil {
		t.Fatal(err)
	}
	var want []map[string]any
	for _, g := range whole.Groups {
		for _, m := range g["members"].([]any) {
			rec := m.(map[string]any)
			rec["schema"] = dupes.Schema
			for _, k := range []string{"level", "keeper", "structure_id", "run"} {
				if v, ok := g[k]; ok {
					rec[k] = v
				}
			}
			want = append(want, rec)
		}
	}
	lines := strings.Split(strings.TrimSuffix(jsonl.String(), "\n"), "\n")
	if len(lines) != len(want) || len(want) != 15 {
		t.Fatalf("%d lines, %d members", len(lines), len(want))
	}
	for i, line := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(line, `{"schema":"`+dupes.Schema+`",`) || !reflect.DeepEqual(got, want[i]) {
			t.Errorf("record %d:\n got  %s\n want %v", i, line, want[i])
		}
	}
}

// TestWriteJSONStreamsAsEncoded: WriteJSON writes what encoding/json writes.
func TestWriteJSONStreamsAsEncoded(t *testing.T) {
	dir, _ := plantedCollection(t)
	rep, err := dupes.Find(t.Context(), []string{dir, filepath.Join(dir, "nowhere")}, dupes.Options{Level: dupes.LevelStructure})
	if err != nil {
		t.Fatal(err)
	}
	var got, want bytes.Buffer
	if err := Write(&got, rep, WriteOptions{Format: textfmt.JSON}); err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rep); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("WriteJSON\n%s\nencoding/json\n%s", got.Bytes(), want.Bytes())
	}
	if !bytes.HasPrefix(got.Bytes(), []byte("{\n  \"schema\": \"stdiff.dupes/v1\",\n")) {
		t.Errorf("the schema is not first:\n%.80s", got.Bytes())
	}
}

// hostile is a name no writer may let through as it is: an escape sequence, a bidirectional override,
// and Markdown that would make a link.
const hostile = "evil\x1b[31m\u202e*_[x](javascript:alert(1))_*"

// hostileReport is a report whose every name from a file is hostile.
func hostileReport() *dupes.Report {
	keeper := dupes.Member{Path: hostile + " keeper", Size: 100}
	d := noDifferences()
	d.Metadata.Added = []string{hostile, "a", "b", "c", "d"}
	d.Layout = []delta.Code{delta.Order}
	member := dupes.Member{Path: hostile + " member", Size: 100, Differences: d}
	copy := dupes.Member{Path: hostile + " copy", Size: 100, Differences: noDifferences(), IdenticalTo: keeper.Path}
	return &dupes.Report{Schema: dupes.Schema, Files: 3,
		Groups: []dupes.Group{{Level: dupes.LevelContent, Files: []string{keeper.Path, copy.Path, member.Path}, Keeper: keeper.Path,
			Members: []dupes.Member{keeper, copy, member}}},
		Notes:   []dupes.Note{{Code: dupes.NoteSharesFiles, Path: hostile + " set", With: []string{hostile + " 1", "2", "3", "4"}}},
		Skipped: []dupes.Skipped{{Path: hostile + " bad", Reason: hostile}},
	}
}

// TestWriteTextEscapes: metadata keys, paths, notes and reasons are escaped in text (a key with an
// escape sequence once reached the terminal as it was); lists are shortened unless Full.
func TestWriteTextEscapes(t *testing.T) {
	for _, full := range []bool{false, true} {
		var b bytes.Buffer
		if err := Write(&b, hostileReport(), WriteOptions{Full: full}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.ContainsAny(out, "\x1b\u202e") {
			t.Errorf("a control character reached the text:\n%q", out)
		}
		esc := textfmt.Escape(hostile)
		for _, want := range []string{"metadata: +" + esc + ", +a", "identical to " + esc + " keeper", "layout: tensor order",
			"  " + esc + " set: with " + esc + " 1, 2, 3", "  " + esc + " bad: " + esc + "\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("full %v: no %q in\n%s", full, want, out)
			}
		}
		if shortened := strings.Contains(out, "+c, … 1 more; layout") && strings.Contains(out, "3, 1 more\n"); shortened == full {
			t.Errorf("full %v:\n%s", full, out)
		}
	}
}

// TestWriteMarkdownHostile: rendered as GitHub does, the Markdown has no element, attribute or link
// the writer did not write, in groups, differences, notes and skipped models alike, and shows the
// hostile name whole. (The notes were once written as text, unescaped for Markdown.)
func TestWriteMarkdownHostile(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, hostileReport(), WriteOptions{Format: textfmt.Markdown}); err != nil {
		t.Fatal(err)
	}
	for _, p := range markdowntest.Problems(b.String()) {
		t.Error(p)
	}
	text := markdowntest.Text(markdowntest.HTML(b.String()))
	esc := textfmt.Escape(hostile)
	for _, want := range []string{esc + " set: with " + esc + " 1", esc + " bad: " + esc, "metadata: +" + esc} {
		if !strings.Contains(text, want) {
			t.Errorf("%q is not shown whole", want)
		}
	}
	if t.Failed() {
		t.Logf("markdown:\n%s", b.String())
	}
}

// failingWriter fails every write.
type failingWriter struct{}

var errFull = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errFull }

// TestWritersReturnErrors: a writer that cannot write says so.
func TestWritersReturnErrors(t *testing.T) {
	rep := hostileReport()
	for name, write := range map[string]func() error{
		"text":     func() error { return Write(failingWriter{}, rep, WriteOptions{}) },
		"markdown": func() error { return Write(failingWriter{}, rep, WriteOptions{Format: textfmt.Markdown}) },
		"json":     func() error { return Write(failingWriter{}, rep, WriteOptions{Format: textfmt.JSON}) },
		"jsonl":    func() error { return Write(failingWriter{}, rep, WriteOptions{Format: textfmt.JSONL}) },
	} {
		if err := write(); !errors.Is(err, errFull) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := len(rep.Records()); n != 3 {
		t.Errorf("%d records, want one per member", n)
	}
}
