package inspect_test

import (
	"context"
	"fmt"

	"github.com/stdiff/stdiff/canon/inspect"
)

// What a model is: its card.
func ExampleInspect() {
	card, err := inspect.Inspect(context.Background(), "../../testdata/lora.safetensors", inspect.Options{})
	if err != nil {
		fmt.Println(err) // unreadable: missing, not a regular file, an I/O or network error
		return
	}
	fmt.Println(card.Info.Name, card.Info.Kind, card.Info.Family, "rank", card.Info.Rank, "declared", *card.Info.DeclaredRank)
	fmt.Println(card.Valid, card.TensorCount, len(card.Metadata))
	// Output:
	// mychar_v1 lora sd1 rank 4 declared 4
	// true 6 8
}

// Folders (and files) as a table, one row per model, in path order.
func ExampleShort() {
	r := inspect.Short(context.Background(), []string{"../../testdata/lora.safetensors", "../../testdata/lfs-pointer.safetensors"}, inspect.Options{})
	for _, row := range r.Files {
		fmt.Println(row.Name, row.Kind, row.Rank, row.Valid)
	}
	fmt.Println(r.Outcome())
	// Output:
	// lfs-pointer unknown 0 false
	// mychar_v1 lora 4 true
	// found
}
