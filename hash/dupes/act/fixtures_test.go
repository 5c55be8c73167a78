package act

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/hash/dupes"
	"github.com/stdiff/stdiff/hash/dupes/internal/diskfile"
	"github.com/stdiff/stdiff/hash/dupes/internal/dupetest"
	"github.com/stdiff/stdiff/hash/dupes/render"
)

// The fixtures these tests share with package act's (dupetest).
var (
	loraFile         = dupetest.LoraFile
	ggufFile         = dupetest.GGUFFile
	ggufWith         = dupetest.GGUFWith
	vocabOnly        = dupetest.VocabOnly
	metadataOnly     = dupetest.MetadataOnly
	splitGGUF        = dupetest.SplitGGUF
	splitSafetensors = dupetest.SplitSafetensors
	writeSplit       = dupetest.WriteSplit
	hfRepo           = dupetest.HFRepo
	ollamaBlob       = dupetest.OllamaBlob
	mustWrite        = dupetest.MustWrite
	mustSymlink      = dupetest.MustSymlink
	shardSet         = dupetest.ShardSet
	writeSet         = dupetest.WriteSet
	complete         = dupetest.Complete
)

const (
	setShard1 = dupetest.SetShard1
	setShard2 = dupetest.SetShard2
	setIndex  = dupetest.SetIndex
)

var (
	fileID = diskfile.ID
)

// scanFiles writes files (name → bytes) in a new folder and scans them at level.
func scanFiles(t *testing.T, level dupes.Level, files map[string][]byte) *dupes.Report {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	rep, err := dupes.Find(t.Context(), paths, dupes.Options{Level: level})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// groupsOf are the report's groups as level → sorted base names.
func groupsOf(rep *dupes.Report) map[dupes.Level][]string {
	got := map[dupes.Level][]string{}
	for _, g := range rep.Groups {
		var names []string
		for _, f := range g.Members {
			names = append(names, filepath.Base(f.Path))
		}
		sort.Strings(names)
		if _, dup := got[g.Level]; dup {
			got[g.Level+" (2nd)"] = names
			continue
		}
		got[g.Level] = names
	}
	return got
}

// plantedCollection is dupetest.PlantedCollection, its groups by Level.
func plantedCollection(t *testing.T) (string, map[dupes.Level][]string) {
	dir, want := dupetest.PlantedCollection(t)
	out := map[dupes.Level][]string{}
	for level, names := range want {
		out[dupes.Level(level)] = names
	}
	return dir, out
}

// text is the report as render.Write writes it.
func text(t *testing.T, rep *dupes.Report) string {
	t.Helper()
	var b strings.Builder
	if err := render.Write(&b, rep, render.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
