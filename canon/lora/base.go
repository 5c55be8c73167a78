package lora

import "strings"

// baseNames map what trainers, sidecars and hubs call a base model to the name people use for it, by
// words it contains (lower case, "_" and "-" read as spaces), most specific first: Pony and Illustrious
// are SDXL models, but their LoRAs are kept apart.
var baseNames = []struct {
	words []string
	name  string
}{
	{[]string{"pony"}, "Pony"},
	{[]string{"illustrious"}, "Illustrious"},
	{[]string{"noob"}, "NoobAI"},
	{[]string{"flux"}, "Flux"},
	{[]string{"sd3", "sd 3", "stable diffusion 3"}, "SD 3"},
	{[]string{"sdxl", "sd xl", "stable diffusion xl", "xl base"}, "SDXL"},
	{[]string{"sd 2", "sd2", "sd v2", "stable diffusion 2", "v2 1", "768 v ema"}, "SD 2"},
	{[]string{"sd 1", "sd1", "sd v1", "stable diffusion v1", "v1 5", "v1 4", "sd15"}, "SD 1.5"},
	{[]string{"hunyuan"}, "Hunyuan"},
	{[]string{"wan"}, "Wan"},
	{[]string{"pixart"}, "PixArt"},
	{[]string{"kolors"}, "Kolors"},
	{[]string{"auraflow"}, "AuraFlow"},
}

// NormalBase is the name people use for a base model however a file or sidecar spells it ("sd_v1",
// "SD 1.5", "runwayml/stable-diffusion-v1-5" → "SD 1.5"; "sdxl_base_v1-0", "SDXL 1.0" → "SDXL";
// "Pony" → "Pony"), the text as it is (trimmed) when it names none of these, "" for "".
func NormalBase(base string) string {
	b := strings.TrimSpace(base)
	l := " " + strings.NewReplacer("_", " ", "-", " ", ".", " ", "/", " ").Replace(strings.ToLower(b)) + " "
	for _, n := range baseNames {
		for _, w := range n.words {
			if strings.Contains(l, w) && (w != "wan" || strings.Contains(l, " wan ")) {
				return n.name
			}
		}
	}
	return b
}
