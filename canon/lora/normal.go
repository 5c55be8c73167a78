package lora

import "strings"

// The parts of a model a LoRA's tensor names start with, as each naming scheme writes them, and the
// part they name.
var componentPrefixes = []struct{ prefix, part string }{
	{"lora_unet_", "unet"}, {"lora_te1_", "te1"}, {"lora_te2_", "te2"}, {"lora_te3_", "te3"}, {"lora_te_", "te1"},
	{"unet.", "unet"}, {"transformer.", "unet"}, {"text_encoder_2.", "te2"}, {"text_encoder_3.", "te3"}, {"text_encoder.", "te1"},
}

// The endings of a LoRA's low-rank pairs in each naming scheme (lower-cased), longest first, and the
// role they name: kohya's lora_down/lora_up, PEFT's and diffusers' lora_A/lora_B (with PEFT's
// adapter name "default"), the older diffusers attention processors' to_k_lora.down.
var roleSuffixes = []struct{ suffix, role string }{
	{"_lora.down.weight", ".down"}, {"_lora.up.weight", ".up"},
	{".lora_a.default.weight", ".down"}, {".lora_b.default.weight", ".up"},
	{".lora_down.weight", ".down"}, {".lora_up.weight", ".up"},
	{".lora.down.weight", ".down"}, {".lora.up.weight", ".up"},
	{".lora_a.weight", ".down"}, {".lora_b.weight", ".up"},
	{".alpha", ".alpha"},
}

// NormalName maps a tensor's name to a form that its kohya, diffusers and PEFT names share, so that a
// model re-keyed from one scheme to another can be recognised (`stdiff dupes` finds such renamed
// copies): lower case; PEFT's base_model.model. dropped; the part of the model named as "unet/",
// "te1/", "te2/" (kohya's lora_unet_ and lora_te1_, diffusers' unet. and text_encoder.); the
// low-rank pair's role as ".down" or ".up" (lora_down, lora_A, lora.down); the module's path with its
// dots as underscores, as kohya writes it ("down_blocks.0.attn1" and "down_blocks_0_attn1" are one).
// Names of no LoRA scheme keep their whole path that way. Two names of one model never map to one
// form unless the model names one module twice.
func NormalName(name string) string {
	n := strings.ToLower(name)
	n = strings.TrimPrefix(n, "base_model.model.")
	part := ""
	for _, p := range componentPrefixes {
		if rest, ok := strings.CutPrefix(n, p.prefix); ok {
			part, n = p.part, rest
			break
		}
	}
	role := ""
	for _, r := range roleSuffixes {
		if rest, ok := strings.CutSuffix(n, r.suffix); ok {
			role, n = r.role, rest
			break
		}
	}
	n = strings.ReplaceAll(n, ".processor.", ".")
	return part + "/" + strings.ReplaceAll(n, ".", "_") + role
}
