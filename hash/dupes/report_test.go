package dupes

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/delta"
	"github.com/stdiff/stdiff/canon/markdown/markdowntest"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// groupAt is the report's group of level, or fails the test.
func groupAt(t *testing.T, rep *Report, level Level) Group {
	t.Helper()
	for _, g := range rep.Groups {
		if g.Level == level {
			return g
		}
	}
	t.Fatalf("no %s group in %+v", level, rep.Groups)
	return Group{}
}

// TestDifferencesAreData: each member of a content group says how it differs from the keeper as keys
// and codes: nothing but identical_to for a byte copy, the changed keys for edited metadata, the layout
// codes for a re-saved file, the added and removed keys for a file with other keys.
func TestDifferencesAreData(t *testing.T) {
	dir, _ := plantedCollection(t)
	other := loraFile(1, "orig")
	other.Metadata = append(other.Metadata[1:], stfile.KV{Key: "extra", Value: "x"}) // no ss_output_name, an extra key
	if err := os.WriteFile(filepath.Join(dir, "c", "other-keys.safetensors"), other.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Find(t.Context(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := groupAt(t, rep, LevelContent)
	keeper := filepath.Join(dir, "a", "orig.safetensors")
	if g.Keeper != keeper || g.Members[0].Differences != nil || g.Members[0].IdenticalTo != "" {
		t.Fatalf("keeper %s: %+v", g.Keeper, g.Members[0])
	}
	none := []string{}
	want := map[string]struct {
		identical               bool
		added, removed, changed []string
		layout                  []delta.Code
	}{
		"copy of orig.safetensors": {identical: true, added: none, removed: none, changed: none, layout: []delta.Code{}},
		"renamed-meta.safetensors": {added: none, removed: none, changed: []string{"ss_output_name", "ss_session_id"}, layout: []delta.Code{}},
		"other-keys.safetensors":   {added: []string{"extra"}, removed: []string{"ss_output_name"}, changed: none, layout: []delta.Code{}},
		"resaved.safetensors":      {added: none, removed: none, changed: none, layout: []delta.Code{delta.HeaderSize, delta.Order, delta.Offsets}},
	}
	if len(g.Members) != len(want)+1 {
		t.Fatalf("members %+v", g.Members)
	}
	for _, m := range g.Members[1:] {
		w, d := want[filepath.Base(m.Path)], m.Differences
		if d == nil {
			t.Errorf("%s: no differences", m.Path)
			continue
		}
		if (m.IdenticalTo == keeper) != w.identical || (m.IdenticalTo != "" && !w.identical) {
			t.Errorf("%s: identical_to %q", m.Path, m.IdenticalTo)
		}
		if got := [][]string{d.Metadata.Added, d.Metadata.Removed, d.Metadata.Changed}; !reflect.DeepEqual(got, [][]string{w.added, w.removed, w.changed}) {
			t.Errorf("%s: metadata added, removed, changed %q", m.Path, got)
		}
		if !reflect.DeepEqual(d.Layout, w.layout) || d.Sidecars == nil || len(d.Sidecars) != 0 {
			t.Errorf("%s: layout %q, sidecars %q", m.Path, d.Layout, d.Sidecars)
		}
	}
	// In a bytes group only sidecars can differ.
	for i, m := range groupAt(t, rep, LevelBytes).Members {
		if d := m.Differences; m.IdenticalTo != "" || (i == 0) != (d == nil) || (d != nil && (!d.Empty() || d.Sidecars == nil)) {
			t.Errorf("bytes group member %s with differences %+v", m.Path, m)
		}
	}
}

// TestFindWalksFolders: Find takes folders as they are named and finds what it finds given the files;
// a path that does not exist is an error of the report (not a skipped model), and its outcome trouble.
func TestFindWalksFolders(t *testing.T) {
	dir, want := plantedCollection(t)
	rep, err := Find(t.Context(), []string{dir}, Options{Level: LevelStructure})
	if err != nil {
		t.Fatal(err)
	}
	if got := groupsOf(rep); !reflect.DeepEqual(got, want) || len(rep.Errors) != 0 || rep.Outcome() != canon.Found {
		t.Errorf("groups %v, errors %+v, outcome %v; want %v", got, rep.Errors, rep.Outcome(), want)
	}
	nowhere := filepath.Join(dir, "nowhere")
	rep, err = Find(t.Context(), []string{nowhere, filepath.Join(dir, "a")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 1 || rep.Errors[0].Path != nowhere || !errors.Is(rep.Errors[0].Err, fs.ErrNotExist) ||
		rep.Errors[0].Error != "no such file or folder" || rep.Errors[0].Err.Error() != nowhere+": no such file or folder" {
		t.Errorf("errors %+v", rep.Errors)
	}
	if len(rep.Skipped) != 0 || rep.Files != 1 || rep.Outcome() != canon.Trouble {
		t.Errorf("skipped %+v, %d models, outcome %v", rep.Skipped, rep.Files, rep.Outcome())
	}
	for _, sub := range []string{"g", "h"} { // unrelated files; an invalid file (read, and rejected)
		if rep, err = Find(t.Context(), []string{filepath.Join(dir, sub)}, Options{}); err != nil || rep.Outcome() != canon.Clean {
			t.Errorf("%s: %v, %+v", sub, err, rep)
		}
	}
}

// TestWriteJSONL: one record per member of each group, each the member's fields in the JSON with its
// group's level, keeper and IDs, and the schema.
func TestWriteJSONL(t *testing.T) {
	dir, _ := plantedCollection(t)
	rep, err := Find(t.Context(), []string{dir}, Options{Level: LevelStructure})
	if err != nil {
		t.Fatal(err)
	}
	var js, jsonl bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSONL(&jsonl, rep); err != nil {
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
			rec["schema"] = Schema
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
		if !strings.HasPrefix(line, `{"schema":"`+Schema+`",`) || !reflect.DeepEqual(got, want[i]) {
			t.Errorf("record %d:\n got  %s\n want %v", i, line, want[i])
		}
	}
}

// TestWriteJSONStreamsAsEncoded: WriteJSON writes what encoding/json writes.
func TestWriteJSONStreamsAsEncoded(t *testing.T) {
	dir, _ := plantedCollection(t)
	rep, err := Find(t.Context(), []string{dir, filepath.Join(dir, "nowhere")}, Options{Level: LevelStructure})
	if err != nil {
		t.Fatal(err)
	}
	var got, want bytes.Buffer
	if err := WriteJSON(&got, rep); err != nil {
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
func hostileReport() *Report {
	keeper := Member{Path: hostile + " keeper", Size: 100}
	d := noDifferences()
	d.Metadata.Added = []string{hostile, "a", "b", "c", "d"}
	d.Layout = []delta.Code{delta.Order}
	member := Member{Path: hostile + " member", Size: 100, Differences: d}
	copy := Member{Path: hostile + " copy", Size: 100, Differences: noDifferences(), IdenticalTo: keeper.Path}
	return &Report{Schema: Schema, Files: 3,
		Groups: []Group{{Level: LevelContent, Files: []string{keeper.Path, copy.Path, member.Path}, Keeper: keeper.Path,
			Members: []Member{keeper, copy, member}}},
		Notes:   []Note{{Code: NoteSharesFiles, Path: hostile + " set", With: []string{hostile + " 1", "2", "3", "4"}}},
		Skipped: []Skipped{{Path: hostile + " bad", Reason: hostile}},
	}
}

// TestWriteTextEscapes: metadata keys, paths, notes and reasons are escaped in text (a key with an
// escape sequence once reached the terminal as it was); lists are shortened unless Full.
func TestWriteTextEscapes(t *testing.T) {
	for _, full := range []bool{false, true} {
		var b bytes.Buffer
		if err := WriteText(&b, hostileReport(), TextOptions{Full: full}); err != nil {
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
	if err := WriteMarkdown(&b, hostileReport(), nil); err != nil {
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
		"text":     func() error { return WriteText(failingWriter{}, rep, TextOptions{}) },
		"markdown": func() error { return WriteMarkdown(failingWriter{}, rep, nil) },
		"json":     func() error { return WriteJSON(failingWriter{}, rep) },
		"jsonl":    func() error { return WriteJSONL(failingWriter{}, rep) },
	} {
		if err := write(); !errors.Is(err, errFull) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := len(rep.Records()); n != 3 {
		t.Errorf("%d records, want one per member", n)
	}
}
