package check_test

import (
	"context"
	"fmt"
	"os"

	"github.com/stdiff/stdiff/canon/check"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// Check models as `stdiff check` does, and render the report.
func ExampleRun() {
	r := check.Run(context.Background(), []string{"../../testdata/base.safetensors", "../../testdata/nul-padded.safetensors"}, check.Options{})
	for _, f := range r.Files {
		fmt.Println(f.Valid, f.FindingCounts)
	}
	fmt.Println(r.Outcome()) // the CLI exits with int(r.Outcome()): 0, 1 or 2
	check.Write(os.Stdout, r, check.WriteOptions{Format: textfmt.Markdown})
	// Output:
	// true map[]
	// false map[nul-padding:1]
	// found
	// | file | verdict | findings |
	// |---|---|---|
	// | ../../testdata/base.safetensors | valid |  |
	// | ../../testdata/nul-padded.safetensors | **invalid** (InvalidHeaderDeserialization) | **error** `nul-padding` at byte 1669: the header is padded with 3 NUL bytes instead of spaces (a writer that zero-fills its buffer) |
}
