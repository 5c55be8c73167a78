package dupes

import (
	"context"
	"testing"

	"github.com/stdiff/stdiff/hash/dupes/internal/diskfile"
	"github.com/stdiff/stdiff/hash/dupes/internal/dupetest"
)

// The fixtures these tests share with package act's (dupetest).
var (
	loraFile         = dupetest.LoraFile
	ggufFile         = dupetest.GGUFFile
	ggufWith         = dupetest.GGUFWith
	vocabOnly        = dupetest.VocabOnly
	metadataOnly     = dupetest.MetadataOnly
	splitSafetensors = dupetest.SplitSafetensors
	hfRepo           = dupetest.HFRepo
	ollamaBlob       = dupetest.OllamaBlob
	mustWrite        = dupetest.MustWrite
)

// plantedCollection is dupetest.PlantedCollection, its groups by Level.
func plantedCollection(t *testing.T) (string, map[Level][]string) {
	dir, want := dupetest.PlantedCollection(t)
	out := map[Level][]string{}
	for level, names := range want {
		out[Level(level)] = names
	}
	return dir, out
}

var reasonOf = diskfile.Reason

// scan scans paths at LevelStructure.
func scan(t *testing.T, paths ...string) *Report {
	t.Helper()
	rep, err := Find(context.Background(), paths, Options{Level: LevelStructure})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
