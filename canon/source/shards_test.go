package source

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
)

// fluxSet lays out the real FluxML shard set from the shared corpus in a temp folder under the names
// its index uses (the corpus renames them), and returns the folder.
func fluxSet(t *testing.T) string {
	t.Helper()
	real := filepath.Join("..", "..", "..", "shared", "corpus", "real")
	if _, err := os.Stat(real); err != nil {
		t.Skipf("real corpus not found: %v", err)
	}
	dir := t.TempDir()
	copyFile := func(from, to string) {
		b, err := os.ReadFile(filepath.Join(real, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile("fluxml-sharded-model.safetensors.index.json", "model.safetensors.index.json")
	for k := 1; k <= 6; k++ {
		name := ShardNames("model", 6)[k-1]
		copyFile("fluxml-sharded-"+name, name)
	}
	return dir
}

func TestShardSetReal(t *testing.T) {
	dir := fluxSet(t)
	for _, spec := range []string{dir, filepath.Join(dir, "model.safetensors.index.json"), filepath.Join(dir, "model-00003-of-00006.safetensors")} {
		o, err := Open(context.Background(), spec, Options{})
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		m := o.Model
		if len(m.Tensors) != 36 || !m.Valid() || m.HasErrors() || len(m.Shards) != 6 || m.DataLen() != 4305 {
			t.Errorf("%s: %d tensors, valid %v, findings %+v, %d shards, %d data bytes", spec, len(m.Tensors), m.Valid(), m.Findings, len(m.Shards), m.DataLen())
		}
		// Every tensor's bytes come from the right shard: compare with the shard's file.
		var got []byte
		for _, tn := range m.Tensors {
			if tn.Name == "float32_357" { // the only tensor of shard 2, says the index
				got = make([]byte, tn.Len())
				if _, err := o.Source.ReadAt(got, m.DataOffset()+int64(tn.Begin)); err != nil {
					t.Fatal(err)
				}
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, "model-00002-of-00006.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		n := int(b[0]) | int(b[1])<<8
		if want := b[8+n:]; len(got) == 0 || string(got) != string(want) {
			t.Errorf("%s: shard 2's tensor read wrongly", spec)
		}
		o.Close()
	}
}

func TestShardSetDefects(t *testing.T) {
	write := func(dir, name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shard := func(names ...string) []byte {
		var f stfile.File
		for _, n := range names {
			f.Tensors = append(f.Tensors, stfile.Tensor{Name: n, DType: "F32", Shape: []uint64{2}})
		}
		return f.Build()
	}
	dir := t.TempDir()
	write(dir, "m-00001-of-00002.safetensors", shard("a", "b", "dup"))
	write(dir, "m-00002-of-00002.safetensors", shard("c", "dup", "extra"))
	write(dir, "m.safetensors.index.json", []byte(`{"metadata": {"total_size": 999}, "weight_map": {
		"a": "m-00001-of-00002.safetensors", "b": "m-00002-of-00002.safetensors", "c": "m-00002-of-00002.safetensors",
		"dup": "m-00001-of-00002.safetensors", "ghost": "m-00001-of-00002.safetensors"}}`))
	o, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]int{}
	for _, f := range o.Model.Findings {
		codes[f.Code]++
	}
	want := map[string]int{canon.CodeTensorInTwoShards: 1, canon.CodeIndexTensorMissing: 2, canon.CodeTensorNotInIndex: 1, canon.CodeIndexTotalSize: 1}
	for code, n := range want {
		if codes[code] != n {
			t.Errorf("%s: %d findings, want %d (all: %+v)", code, codes[code], n, o.Model.Findings)
		}
	}
	if !o.Model.Valid() || !o.Model.HasErrors() {
		t.Error("each shard is valid for the reference, but the set has errors")
	}

	// A missing shard: the set is known in part (TestIndexWithoutShards says more).
	os.Remove(filepath.Join(dir, "m-00002-of-00002.safetensors"))
	o, err = Open(context.Background(), dir, Options{})
	if err != nil || !slices.Equal(o.Model.MissingShards(), []string{"m-00002-of-00002.safetensors"}) {
		t.Errorf("missing shard: %v", err)
	}
	// A shard named alone, the rest missing: the set, known in part, as through its index.
	o, err = Open(context.Background(), filepath.Join(dir, "m-00001-of-00002.safetensors"), Options{})
	if err != nil || !slices.Equal(o.Model.MissingShards(), []string{"m-00002-of-00002.safetensors"}) || !o.Model.HasErrors() {
		t.Errorf("lone shard: %v %+v", err, o)
	}
	// Without the index, the missing shard's tensors are unknown, and it is an error all the same.
	os.Remove(filepath.Join(dir, "m.safetensors.index.json"))
	o, err = Open(context.Background(), filepath.Join(dir, "m-00001-of-00002.safetensors"), Options{})
	if err != nil || len(o.Model.Tensors) != 3 || !slices.Equal(o.Model.MissingShards(), []string{"m-00002-of-00002.safetensors"}) ||
		o.Model.Findings[len(o.Model.Findings)-1].Code != canon.CodeMissingShards || !o.Model.HasErrors() || !o.Model.Valid() {
		t.Errorf("lone shard without an index: %v %+v", err, o.Model.Findings)
	}
}
