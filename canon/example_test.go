package canon_test

import (
	"context"
	"fmt"

	"github.com/stdiff/stdiff/canon"
)

// Read a header and ask the reference reader's verdict and stdiff's findings.
func ExampleOpenModel() {
	o, err := canon.OpenModel(context.Background(), "../testdata/nul-padded.safetensors")
	if err != nil {
		fmt.Println(err) // unreadable: missing, not a regular file, I/O error
		return
	}
	defer o.Close()
	m := o.Model
	fmt.Println(m.Valid(), m.RefErr.Kind, len(m.Tensors))
	for _, f := range m.Findings {
		fmt.Println(f.Code, f.Offset, f.Fixable)
	}
	// Output:
	// false InvalidHeaderDeserialization 14
	// nul-padding 1669 true
}
