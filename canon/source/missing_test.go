package source

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/stfile"
)

// twoShardIndex names tensors a and b in m-00001-of-00002.safetensors, c and d in the second shard.
const twoShardIndex = `{"metadata": {"total_size": 32}, "weight_map": {"d": "m-00002-of-00002.safetensors",
	"a": "m-00001-of-00002.safetensors", "c": "m-00002-of-00002.safetensors", "b": "m-00001-of-00002.safetensors"}}`

// shardOf is a shard holding F32 tensors of the given names.
func shardOf(names ...string) []byte {
	var f stfile.File
	for _, n := range names {
		f.Tensors = append(f.Tensors, stfile.Tensor{Name: n, DType: "F32", Shape: []uint64{2}})
	}
	return f.Build()
}

// TestIndexWithoutShards: an index whose shards are not there is still a model: the tensors its
// weight map names, by name only, per shard, with a missing-shards error finding for each missing
// shard; shards that are there are read. A shard that is there but cannot be opened is still an error,
// and a shard named on its own still stands for the whole set.
func TestIndexWithoutShards(t *testing.T) {
	dir := t.TempDir()
	index := filepath.Join(dir, "m.safetensors.index.json")
	if err := os.WriteFile(index, []byte(twoShardIndex), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, m *canon.Model, known []string, missing []string) {
		t.Helper()
		var names, shards, nameOnly []string
		for i := range m.Tensors {
			names = append(names, m.Tensors[i].Name)
			if m.Tensors[i].NameOnly() {
				nameOnly = append(nameOnly, m.Tensors[i].Name)
			}
		}
		shards = m.TensorShards()
		wantShards := []string{"m-00001-of-00002.safetensors", "m-00001-of-00002.safetensors", "m-00002-of-00002.safetensors", "m-00002-of-00002.safetensors"}
		if !slices.Equal(names, []string{"a", "b", "c", "d"}) || !slices.Equal(shards, wantShards) {
			t.Errorf("tensors %v in shards %v", names, shards)
		}
		var wantNameOnly []string
		for _, n := range names {
			if !slices.Contains(known, n) {
				wantNameOnly = append(wantNameOnly, n)
			}
		}
		if !slices.Equal(nameOnly, wantNameOnly) || !slices.Equal(m.MissingShards(), missing) {
			t.Errorf("known by name only %v, want %v; missing shards %v, want %v", nameOnly, wantNameOnly, m.MissingShards(), missing)
		}
		var found []string
		for _, f := range m.Findings {
			if f.Code == canon.CodeMissingShards && f.Severity == finding.SevError && f.Hint != "" {
				found = append(found, f.Message)
			} else if f.Severity != finding.SevInfo {
				t.Errorf("finding %+v", f)
			}
		}
		if len(found) != len(missing) || (len(missing) > 0 && !strings.HasPrefix(found[0], missing[0]+" is missing: the index puts 2 tensors in it")) {
			t.Errorf("missing-shards findings %q", found)
		}
		if _, total := m.Params(); total.Tensors != len(known) {
			t.Errorf("params count %d tensors, want the %d known", total.Tensors, len(known))
		}
		if !m.HeaderParsed {
			t.Error("the header of a set known in part counts as read")
		}
	}
	both := []string{"m-00001-of-00002.safetensors", "m-00002-of-00002.safetensors"}
	for _, spec := range []string{dir, index} {
		o, err := Open(t.Context(), spec, Options{})
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		check(t, o.Model, nil, both)
		o.Close()
	}

	if err := os.WriteFile(filepath.Join(dir, both[0]), shardOf("a", "b"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := Open(t.Context(), index, Options{})
	if err != nil {
		t.Fatal(err)
	}
	check(t, o.Model, []string{"a", "b"}, both[1:])
	o.Close()

	// Remotely, a shard the server does not have is missing too; a shard named alone is the whole set.
	srv := httptest.NewServer(&server{files: map[string][]byte{"/m.safetensors.index.json": []byte(twoShardIndex),
		"/" + both[0]: shardOf("a", "b")}, ranges: true})
	defer srv.Close()
	o, err = Open(t.Context(), srv.URL+"/m.safetensors.index.json", Options{})
	if err != nil {
		t.Fatal(err)
	}
	check(t, o.Model, []string{"a", "b"}, both[1:])
	o.Close()
	if _, err := Open(t.Context(), srv.URL+"/"+both[0], Options{}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a remote shard of an incomplete set: %v, want the 404 of the missing shard", err)
	}

	// A shard that is there but cannot be read is an error, as ever.
	if err := os.Mkdir(filepath.Join(dir, both[1]), 0o755); err != nil {
		t.Fatal(err)
	}
	if o, err := Open(t.Context(), index, Options{}); err == nil {
		o.Close()
		t.Error("a shard that is a folder: no error")
	}
}
