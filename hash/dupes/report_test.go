package dupes

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/delta"
	"github.com/stdiff/stdiff/canon/stfile"
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
