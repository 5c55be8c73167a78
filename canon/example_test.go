package canon_test

import (
	"fmt"
	"os"

	"github.com/stdiff/stdiff/canon"
)

// Read a header and ask the reference reader's verdict and stdiff's findings. Read takes any
// io.ReaderAt and its size; package canon/source opens files, shard sets and URLs by name.
func ExampleRead() {
	f, err := os.Open("../testdata/nul-padded.safetensors")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := canon.Read(f, st.Size(), f.Name())
	if err != nil {
		fmt.Println(err) // unreadable: an I/O error
		return
	}
	fmt.Println(m.Valid(), m.RefErr.Kind, len(m.Tensors))
	for _, f := range m.Findings {
		fmt.Println(f.Code, f.Offset, f.Fixable)
	}
	// Output:
	// false InvalidHeaderDeserialization 14
	// nul-padding 1669 true
}
