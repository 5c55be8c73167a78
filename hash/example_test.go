package hash_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/hash"
)

// The structure ID of a model, from its header alone, and the content ID, from its bytes.
func Example() {
	o, err := source.Open(context.Background(), "../testdata/base.safetensors", source.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer o.Close()
	fmt.Println(canon.StructureID(o.Model))
	digests, err := hash.TensorDigests(context.Background(), o.Source, o.Model, hash.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(canon.ContentID(o.Model, digests))
	// Output:
	// st1:2214b9a31a162d668bd115a90d5485a33e3fbcd3838c341d69c8ac453b7b1170
	// ct1:ac1e89325965ec67dff36a176fbce0def6bc957fc25c723de0974c94662492f9
}

// Run computes what `stdiff hash` prints; the writers render it (here as a manifest), and Verify checks
// such a manifest, saying with a code what changed.
func ExampleRun() {
	r := hash.Run(context.Background(), []string{"../testdata/base.safetensors"}, hash.Options{Content: true})
	var manifest strings.Builder
	if err := hash.Write(&manifest, r, hash.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(manifest.String())
	edited := strings.Replace(manifest.String(), "ct1:ac", "ct1:00", 1)
	check, err := hash.Verify(context.Background(), strings.NewReader(edited), hash.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	f := check.Files[0]
	fmt.Println(f.OK, f.Code, f.Reason)
	// Output:
	// st1:2214b9a31a162d668bd115a90d5485a33e3fbcd3838c341d69c8ac453b7b1170  ../testdata/base.safetensors
	// ct1:ac1e89325965ec67dff36a176fbce0def6bc957fc25c723de0974c94662492f9  ../testdata/base.safetensors
	// false change.content tensor bytes changed; names, dtypes and shapes are the same
}
