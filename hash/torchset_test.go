package hash

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/torch/torchw"
)

// TestTorchSetSharesIDs: a sharded PyTorch checkpoint (pytorch_model.bin.index.json and its shards),
// named by its index, its folder or a shard, has the structure and content IDs of one safetensors
// file of the same tensors, its views (storage offsets, transposes) read in row-major order; a
// changed byte in a shard changes the content ID.
func TestTorchSetSharesIDs(t *testing.T) {
	f := stfile.File{Seed: 3, Tensors: []stfile.Tensor{
		{Name: "a.weight", DType: "F32", Shape: []uint64{3, 5}},
		{Name: "a.bias", DType: "F32", Shape: []uint64{5}},
		{Name: "b.weight", DType: "F16", Shape: []uint64{2, 3, 4}},
		{Name: "c.ids", DType: "I64", Shape: []uint64{4}},
		{Name: "d.weight", DType: "BF16", Shape: []uint64{6, 2}},
	}}
	st := f.Build()
	m := canon.ReadBytes("st", st)
	var ts []torchw.Tensor
	for i, tn := range m.Tensors {
		tt := torchw.Tensor{Name: tn.Name, DType: string(tn.DType), Shape: tn.Shape, Data: st[m.DataOffset()+int64(tn.Begin) : m.DataOffset()+int64(tn.End)]}
		if i%2 == 0 { // a view: a storage offset and column-major strides
			tt = torchw.Strided(tt, uint64(i+1))
		}
		ts = append(ts, tt)
	}
	root := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	single := write("model.safetensors", st)
	for name, b := range torchw.Sharded(ts, 3) {
		write(filepath.Join("set", name), b)
	}
	set := filepath.Join(root, "set")
	changed := append([]torchw.Tensor(nil), ts...)
	changed[3].Data = append([]byte(nil), ts[3].Data...)
	changed[3].Data[5] ^= 1 // c.ids, in shard 2
	for name, b := range torchw.Sharded(changed, 3) {
		write(filepath.Join("changed", name), b)
	}

	rep := Run(t.Context(), []string{single, filepath.Join(set, "pytorch_model.bin.index.json"), set,
		filepath.Join(set, "pytorch_model-00003-of-00003.bin"), filepath.Join(root, "changed")}, Options{Content: true})
	want := rep.Files[0]
	if want.Err != nil || want.StructureID == "" || want.ContentID == nil {
		t.Fatalf("safetensors: %+v", want)
	}
	for _, f := range rep.Files[1:4] {
		if f.Err != nil || f.StructureID != want.StructureID || f.ContentID == nil || *f.ContentID != *want.ContentID {
			t.Errorf("%s: %v %s %v; want the safetensors file's %s %s", f.Path, f.Err, f.StructureID, f.ContentID, want.StructureID, *want.ContentID)
		}
	}
	if f := rep.Files[4]; f.Err != nil || f.StructureID != want.StructureID || f.ContentID == nil || *f.ContentID == *want.ContentID {
		t.Errorf("a changed byte: %v %s %v", f.Err, f.StructureID, f.ContentID)
	}
}
