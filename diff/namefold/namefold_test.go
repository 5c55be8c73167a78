package namefold

import "testing"

func TestTemplateAndRanges(t *testing.T) {
	for name, want := range map[string]string{
		"layers.12.mlp.weight":                         "layers.{}.mlp.weight",
		"lora_unet_down_blocks_0_attentions_1_proj_in": "lora_unet_down_blocks_{}_attentions_{}_proj_in",
		"conv1d.weight":                                "conv1d.weight",
		"7":                                            "{}",
	} {
		if got, _ := Template(name); got != want {
			t.Errorf("template(%q) = %q, want %q", name, got, want)
		}
	}
	if got := ranges([]int{0, 1, 2, 3, 5, 7, 8, 10, 11, 12}); got != "0..3,5,7,8,10..12" {
		t.Errorf("ranges: %s", got)
	}
}
