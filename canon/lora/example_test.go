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

// The metadata keys a card shows, in order, and how many it folds; the trigger words by source.
func ExampleSplitMetadata() {
	const path = "../../testdata/lora.safetensors"
	o, err := source.Open(context.Background(), path, source.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer o.Close()
	shown, folded := lora.SplitMetadata(o.Model.Metadata)
	for _, e := range shown {
		fmt.Println(e.Key, "=", e.Value[:min(len(e.Value), 16)])
	}
	fmt.Println(folded, "more")
	in := lora.Derive(o.Model, nil, path)
	for _, g := range in.TriggerGroups() {
		fmt.Printf("%q from %s (guessed: %v)\n", g.Words, g.Source, g.Derived)
	}
	// Output:
	// ss_output_name = mychar_v1
	// ss_base_model_version = sd_v1
	// ss_network_module = networks.lora
	// ss_network_dim = 4
	// ss_network_alpha = 1
	// sshs_model_hash = e3b0c44298fc1c14
	// ssmd_cover_images = ["iVBORw0KGgoiVB
	// 1 more
	// ["mychar woman"] from folder name 10_mychar woman (guessed: true)
	// ["smile" "outdoors"] from metadata ss_tag_frequency (most frequent tags) (guessed: true)
}
