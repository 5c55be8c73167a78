package source

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/torch/torchw"
)

// TestTorchShardSet: a sharded PyTorch checkpoint is one model named by its index, its folder or any
// shard: its tensors in the index's shard order, each one's bytes in row-major order where the set's
// Source has them (a transposed view and a storage offset gathered); a missing shard leaves the set
// known in part, as a safetensors set is.
func TestTorchShardSet(t *testing.T) {
	rows := func(n int, seed byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = seed + byte(i)
		}
		return b
	}
	ts := []torchw.Tensor{
		{Name: "a.weight", DType: "F32", Shape: []uint64{3, 4}, Data: rows(48, 1)},
		{Name: "a.bias", DType: "F32", Shape: []uint64{4}, Data: rows(16, 100)},
		{Name: "b.weight", DType: "I16", Shape: []uint64{2, 5}, Data: rows(20, 150)},
	}
	want := [][]byte{ts[0].Data, ts[1].Data, ts[2].Data}
	ts[0], ts[1] = torchw.Strided(ts[0], 2), torchw.Strided(ts[1], 3)
	dir := t.TempDir()
	for name, b := range torchw.Sharded(ts, 2) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	index := filepath.Join(dir, "pytorch_model.bin.index.json")
	for _, spec := range []string{dir, index, filepath.Join(dir, "pytorch_model-00002-of-00002.bin")} {
		o, err := Open(t.Context(), spec, Options{})
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		m := o.Model
		if m.Format != canon.FormatPyTorch || len(m.Shards) != 2 || !m.Valid() || m.HasErrors() || len(m.Tensors) != 3 || m.Name != spec {
			t.Fatalf("%s: %s, %d shards, %d tensors, findings %+v", spec, m.Format, len(m.Shards), len(m.Tensors), m.Findings)
		}
		for i, tn := range m.Tensors {
			got := make([]byte, tn.Len())
			if _, err := o.Source.ReadAt(got, m.DataOffset()+int64(tn.Begin)); err != nil || tn.Name != ts[i].Name || !bytes.Equal(got, want[i]) {
				t.Errorf("%s: tensor %d %s: %v % x, want %s % x", spec, i, tn.Name, err, got, ts[i].Name, want[i])
			}
		}
		if files := o.Files(); len(files) != 3 || files[0] != index {
			t.Errorf("%s: files %v", spec, files)
		}
		o.Close()
	}
	os.Remove(filepath.Join(dir, "pytorch_model-00002-of-00002.bin"))
	o, err := Open(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if !slices.Equal(o.Model.MissingShards(), []string{"pytorch_model-00002-of-00002.bin"}) || !o.Model.HasErrors() || len(o.Model.Tensors) != 3 {
		t.Errorf("missing shard: %v %+v", o.Model.MissingShards(), o.Model.Findings)
	}
}
