package diff_test

import (
	"context"
	"fmt"
	"os"

	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/diff"
)

// Open two models (each a file, a shard set, a URL or hf://), compare them by value, and write the
// report as text (or with WriteJSON, WriteJSONL, WriteMarkdown). With FailOn, only the categories
// listed make the outcome Found: here a fine-tune passes unless NaN or Inf appeared, or a dtype or a
// shape changed.
func ExampleModels() {
	ctx := context.Background()
	a, err := source.Open(ctx, "../testdata/weights.safetensors", source.Options{})
	if err != nil {
		panic(err)
	}
	defer a.Close()
	b, err := source.Open(ctx, "../testdata/weights-finetuned.safetensors", source.Options{})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	r, err := diff.Models(ctx, a, b, diff.Options{FailOn: []diff.Category{diff.CategoryDType, diff.CategoryShape, diff.CategoryNaN}})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Outcome(), r.Categories)
	c := r.Tensors.Changed[0]
	fmt.Printf("%s: max |a-b| %.3g at %d, relative L2 %.3g\n", c.Name, c.Values.MaxAbsDiff, c.Values.MaxAbsDiffIndex, c.Values.RelL2)
	if err := diff.Write(os.Stdout, r, diff.WriteOptions{Top: 2}); err != nil {
		panic(err)
	}
	// Output:
	// found [data values nan]
	// layers.0.mlp.weight: max |a-b| 0.00286 at 294, relative L2 0.0471
	// --- ../testdata/weights.safetensors
	// +++ ../testdata/weights-finetuned.safetensors
	//
	// tensors
	//   ~ layers.{0..3}.mlp.weight  values: rel L2 0.0496, max |a−b| 0.00308 (most changed: layers.3.mlp.weight)  (4 tensors)
	//   ~ layers.2.attn.weight      values: rel L2 0.158, max |a−b| 0.05
	//   ~ norm.weight               values: rel L2 0, max |a−b| 0, NaN 0 → 1
	//
	// most changed (rel L2 = ‖a−b‖/‖a‖, a the old values)
	//   layers.2.attn.weight  rel L2 0.158   max |a−b| 0.05     at [5, 9]    mean |a−b| 0.000195  cos 0.987759  0.4% differ
	//   layers.3.mlp.weight   rel L2 0.0496  max |a−b| 0.00308  at [20, 13]  mean |a−b| 0.000779  cos 0.998774  100.0% differ
	//   … and 4 more
	//
	// tensors: 6 changed, 4 unchanged · metadata: no change
}

// Compare two models read already: headers only (no digests in the Sides), so renames are likely,
// not confirmed, and the summary says the tensor data was not compared.
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
	fmt.Println(r.Identical, diff.Summary(r, nil))
	// Output:
	// false tensors: 14 unchanged · metadata: 1 changed, 9 unchanged · tensor data not compared
}
