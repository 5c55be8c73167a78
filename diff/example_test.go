package diff_test

import (
	"context"
	"fmt"
	"os"

	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/diff"
)

// Compare two models once, then render the report (here its summary and as text).
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
	diff.Text(os.Stdout, r, diff.TextOptions{})
	// Output:
	// false tensors: 14 unchanged · metadata: 1 changed, 9 unchanged
	// --- ../testdata/base.safetensors
	// +++ ../testdata/retitled.safetensors
	//
	// metadata
	//   ~ modelspec.title  My Character → My Character (v1.1)
	//
	// notes
	//   tensor bytes not compared (use --content)
	//
	// tensors: 14 unchanged · metadata: 1 changed, 9 unchanged
}
