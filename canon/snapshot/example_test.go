package snapshot_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stdiff/stdiff/canon/snapshot"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/diff"
	"github.com/stdiff/stdiff/hash"
)

// A release's snapshot, then the model compared with it: a changed tensor is named, with how its
// value summary moved.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "snapshot")
	defer os.RemoveAll(dir)
	model := filepath.Join(dir, "model.safetensors")
	f := stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{2}, Data: []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}}}}
	os.WriteFile(model, f.Build(), 0o644)

	s, files, _ := hash.Snapshot(ctx, model, filepath.Join(dir, "model.snap"), hash.Options{})
	if err := snapshot.WriteFile(ctx, filepath.Join(dir, "model.snap"), s, files...); err != nil {
		fmt.Println(err)
	}

	f.Tensors[0].Data = []byte{0, 0, 0x80, 0x3f, 0, 0, 0x40, 0x40} // 2 becomes 3
	os.WriteFile(model, f.Build(), 0o644)
	opt := source.Options{Snapshots: true}
	old, _ := source.Open(ctx, filepath.Join(dir, "model.snap"), opt)
	now, _ := source.Open(ctx, model, opt)
	defer now.Close()
	r, _ := diff.Models(ctx, old, now, diff.Options{})
	c := r.Tensors.Changed[0]
	fmt.Println(s.Of, c.Name, c.Fields, c.Summary.From.Mean, "→", c.Summary.To.Mean)
	// Output: model.safetensors w [data] 1.5 → 2
}
