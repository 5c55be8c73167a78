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

// TestShardNotNamed: a file named like a shard joins the index beside it only when the index names
// it. The corpus's own names (fluxml-sharded-model-0000K-of-00006.safetensors beside
// fluxml-sharded-model.safetensors.index.json, which names model-0000K-of-00006.safetensors) are the
// six files of a set by their names alone: valid, 36 tensors, no missing shard (was: INVALID, the
// index's 6 shards missing). OpenOne reads one shard as the file it is.
func TestShardNotNamed(t *testing.T) {
	// An index naming other files does not take in a.safetensors's shards.
	dir := t.TempDir()
	for k, name := range ShardNames("a", 2) {
		if err := os.WriteFile(filepath.Join(dir, name), stfile.File{Tensors: []stfile.Tensor{{Name: "t" + string(rune('0'+k)), DType: "U8", Shape: []uint64{1}, Data: []byte{1}}}}.Build(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx := `{"metadata":{},"weight_map":{"x":"model-00001-of-00002.safetensors","y":"model-00002-of-00002.safetensors"}}`
	if err := os.WriteFile(filepath.Join(dir, "a.safetensors.index.json"), []byte(idx), 0o644); err != nil {
		t.Fatal(err)
	}
	o2, err := Open(context.Background(), filepath.Join(dir, ShardNames("a", 2)[0]), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o2.Close()
	if m := o2.Model; len(m.Tensors) != 2 || m.MissingShards() != nil || !m.Valid() {
		t.Errorf("made: %d tensors, missing %v, valid %v, findings %+v", len(m.Tensors), m.MissingShards(), m.Valid(), m.Findings)
	}

	// The corpus's own files.
	real := filepath.Join("..", "..", "..", "shared", "corpus", "real")
	if _, err := os.Stat(real); err != nil {
		t.Skipf("real corpus not found: %v", err)
	}
	spec := filepath.Join(real, "fluxml-sharded-model-00002-of-00006.safetensors")
	o, err := Open(context.Background(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if m := o.Model; !m.Valid() || m.HasErrors() || len(m.Tensors) != 36 || len(m.Shards) != 6 || m.MissingShards() != nil {
		t.Errorf("%d tensors, valid %v, findings %+v, %d shards, missing %v", len(m.Tensors), m.Valid(), m.Findings, len(m.Shards), m.MissingShards())
	}
	one, err := OpenOne(context.Background(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	if len(one.Model.Shards) != 0 || len(one.Model.Tensors) != 1 || !one.Model.Valid() {
		t.Errorf("one shard: %d tensors, %d shards, valid %v", len(one.Model.Tensors), len(one.Model.Shards), one.Model.Valid())
	}
}
