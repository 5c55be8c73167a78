package diff_test

import (
	"context"
	"fmt"
	"os"

	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/diff"
)

// Open two models (each a file, a shard set, a URL or hf://), compare them, bytes too, and write the
// report as text (or with WriteJSON, WriteJSONL, WriteMarkdown).
func ExampleModels() {
	ctx := context.Background()
	a, err := source.Open(ctx, "../testdata/base.safetensors", source.Options{})
	if err != nil {
		panic(err)
	}
	defer a.Close()
	b, err := source.Open(ctx, "../testdata/retrained.safetensors", source.Options{})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	r, err := diff.Models(ctx, a, b, diff.Options{Content: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Outcome(), diff.Summary(r))
	if err := diff.WriteText(os.Stdout, r, diff.TextOptions{}); err != nil {
		panic(err)
	}
	// Output:
	// found tensors: 1 changed, 13 unchanged · metadata: 10 unchanged
	// --- ../testdata/base.safetensors
	// +++ ../testdata/retrained.safetensors
	//
	// tensors
	//   ~ layers.1.self_attn.k_proj.weight  data: blake3 7d61a749c41b… → 55cf38a23369…
	//
	// tensors: 1 changed, 13 unchanged · metadata: 10 unchanged
}

// Compare two models read already: headers only, so renames are likely, not confirmed.
func ExampleCompare() {
	open := func(path string) diff.Side {
		o, err := source.Open(context.Background(), path, source.Options{})
		if err != nil {
			panic(err)
		}
		defer o.Close()
		return diff.Side{Model: o.Model}
	}
	r := diff.Compare(open("../testdata/base.safetensors"), open("../testdata/retitled.safetensors"), diff.Options{})
	fmt.Println(r.Identical, diff.Summary(r))
	// Output:
	// false tensors: 14 unchanged · metadata: 1 changed, 9 unchanged
}
