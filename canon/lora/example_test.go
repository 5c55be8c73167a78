package lora_test

import (
	"context"
	"fmt"

	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/source"
)

// What a LoRA is, from its metadata, its sidecars and its tensors.
func ExampleDerive() {
	const path = "../../testdata/lora.safetensors"
	o, err := source.Open(context.Background(), path, source.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer o.Close()
	sidecars, _ := lora.LoadSidecars(context.Background(), path)
	in := lora.Derive(o.Model, sidecars, path)
	fmt.Println(in.Name, "·", in.Kind, in.Naming, in.Family, "rank", in.Rank)
	for _, t := range in.TriggerDetails {
		fmt.Printf("%s (guessed: %v)\n", t.Word, t.Derived)
	}
	fmt.Println(in.EmbeddedHashes["sshs_model_hash"][:12])
	// Output:
	// mychar_v1 · lora kohya sd1 rank 4
	// mychar woman (guessed: true)
	// smile (guessed: true)
	// outdoors (guessed: true)
	// e3b0c44298fc
}
