package hash

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
)

// TestMissingShardsHaveNoIDs: a shard set read without some of its shards knows those tensors by name
// only, so it has no structure or content ID (an ID of the names alone would pass for the model's);
// its record says why, and the outcome is Found (exit 1), not Trouble.
func TestMissingShardsHaveNoIDs(t *testing.T) {
	dir := t.TempDir()
	index := filepath.Join(dir, "model.safetensors.index.json")
	if err := os.WriteFile(index, []byte(`{"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model-00001-of-00002.safetensors"), sample().Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Run(t.Context(), []string{index}, Options{Content: true})
	f := r.Files[0]
	if f.Err != nil || f.StructureID != "" || f.ContentID == nil || *f.ContentID != "" || r.Outcome() != canon.Found {
		t.Fatalf("record %+v, outcome %v", f, r.Outcome())
	}
	d := f.Diagnostics(false)
	if len(d) != 1 || !strings.Contains(d[0].Message, "1 of the set's 2 shards are missing (model-00002-of-00002.safetensors): their tensors are known by name only; no structure ID or content ID") {
		t.Errorf("diagnostics %+v", d)
	}
	o, err := source.Open(t.Context(), index, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := TensorDigests(t.Context(), o.Source, o.Model, Options{}); err == nil {
		t.Error("digests of a set with a shard missing: no error")
	}
}
