package source_test

import (
	"context"
	"fmt"
	"os"

	"github.com/stdiff/stdiff/canon/source"
)

// Open a model by name: a file, a shard set (its index, its folder or any shard), an http(s) URL or
// an hf:// address. The options carry what the CLI takes from the environment.
func ExampleOpen() {
	opt := source.Options{Endpoint: os.Getenv("HF_ENDPOINT"), Token: os.Getenv("HF_TOKEN")}
	o, err := source.Open(context.Background(), "../../testdata/nul-padded.safetensors", opt)
	if err != nil {
		fmt.Println(err) // unreadable: missing, not a regular file, an I/O or network error
		return
	}
	defer o.Close()
	m := o.Model
	fmt.Println(m.Valid(), m.RefErr.Kind, len(m.Tensors), o.Source.Size() == m.FileSize)
	// Output:
	// false InvalidHeaderDeserialization 14 true
}
