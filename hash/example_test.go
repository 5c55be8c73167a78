package hash_test

import (
	"context"
	"fmt"

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
	fmt.Println(hash.StructureID(o.Model))
	digests, err := hash.TensorDigests(context.Background(), o.Source, o.Model, hash.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(hash.ContentID(o.Model, digests))
	// Output:
	// st1:2214b9a31a162d668bd115a90d5485a33e3fbcd3838c341d69c8ac453b7b1170
	// ct1:ac1e89325965ec67dff36a176fbce0def6bc957fc25c723de0974c94662492f9
}
