package lora

import (
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon"
)

// Kind is what a model is, from its tensors.
type Kind string

// Kinds of model.
const (
	KindCheckpoint       Kind = "checkpoint"
	KindLoRA             Kind = "lora"
	KindLoCon            Kind = "locon" // a LoRA with convolution layers
	KindLoHa             Kind = "loha"
	KindLoKr             Kind = "lokr"
	KindPEFTAdapter      Kind = "peft-adapter"
	KindTextualInversion Kind = "textual-inversion"
	KindUnknown          Kind = "unknown"
)

// Naming is the scheme of a model's tensor names: which tool wrote them.
type Naming string

// Naming schemes.
const (
	NamingKohya        Naming = "kohya"
	NamingPEFT         Naming = "peft"
	NamingMLX          Naming = "mlx"
	NamingDiffusers    Naming = "diffusers"
	NamingLDM          Naming = "ldm" // the original Stable Diffusion checkpoints
	NamingTransformers Naming = "transformers"
	NamingUnknown      Naming = "unknown"
)

// Family is the base model family, where the tensors' names and shapes tell.
type Family string

// Base model families.
const (
	FamilySD1     Family = "sd1"
	FamilySD2     Family = "sd2"
	FamilySDXL    Family = "sdxl"
	FamilySD3     Family = "sd3"
	FamilyFlux    Family = "flux"
	FamilyLLM     Family = "llm"
	FamilyUnknown Family = "unknown"
)

// fromTensors works out what a model really is from its tensor names and shapes: its kind, the naming
// scheme, the base family (where the shapes tell), and the adapter rank.
func (in *Info) fromTensors(m *canon.Model) {
	var (
		kohya, peft, diffusers, mlx, ldm, hf int
		lora, conv, hada, lokr, ti           int
		flux, sd3, sdxl, llm                 int
		ranks                                = map[int]int{}
		contexts                             = map[uint64]int{}
		tiDim                                uint64
	)
	for i := range m.Tensors {
		t := &m.Tensors[i]
		name, shape := t.Name, t.Shape
		switch {
		case strings.HasPrefix(name, "lora_unet_") || strings.HasPrefix(name, "lora_te"):
			kohya++
			if strings.HasPrefix(name, "lora_te2_") {
				sdxl++
			}
		case strings.HasPrefix(name, "base_model.model.") || strings.HasPrefix(name, "base_model."):
			peft++
		case strings.HasPrefix(name, "unet.") || strings.HasPrefix(name, "text_encoder") || strings.HasPrefix(name, "transformer."):
			diffusers++
		case strings.HasPrefix(name, "model.diffusion_model.") || strings.HasPrefix(name, "first_stage_model.") || strings.HasPrefix(name, "cond_stage_model."):
			ldm++
		case strings.HasPrefix(name, "model.layers.") || strings.HasPrefix(name, "model.embed_tokens") || strings.HasPrefix(name, "transformer.h.") || strings.HasPrefix(name, "lm_head."):
			hf++
		}
		if strings.HasPrefix(name, "conditioner.embedders.1") {
			sdxl++
		}
		switch {
		case strings.Contains(name, "double_blocks") || strings.Contains(name, "single_blocks") || strings.Contains(name, "single_transformer_blocks"):
			flux++
		case strings.Contains(name, "joint_blocks"):
			sd3++
		case strings.Contains(name, "self_attn.q_proj") || strings.Contains(name, "mlp.gate_proj") || strings.Contains(name, "attn.c_attn"):
			llm++
		}
		isDown := strings.HasSuffix(name, ".lora_down.weight") || strings.HasSuffix(name, ".lora.down.weight") ||
			strings.HasSuffix(name, ".lora_A.weight") || strings.HasSuffix(name, ".lora_A.default.weight")
		switch {
		case isDown && len(shape) >= 2:
			lora++
			ranks[int(shape[0])]++
			if len(shape) == 4 && (shape[2] > 1 || shape[3] > 1) {
				conv++
			}
			if isCrossAttnKey(name) {
				contexts[shape[1]]++
			}
		case strings.HasSuffix(name, ".lora_a") && len(shape) == 2: // MLX: [in, rank]
			lora++
			mlx++
			ranks[int(shape[1])]++
		case strings.Contains(name, "hada_w1_b") && len(shape) >= 1:
			hada++
			ranks[int(shape[0])]++
		case strings.Contains(name, ".lokr_w"):
			lokr++
		case name == "emb_params" || strings.HasPrefix(name, "string_to_param") || name == "clip_l" || name == "clip_g":
			ti++
			if name == "clip_g" {
				sdxl++
			}
			if len(shape) >= 1 {
				tiDim = shape[len(shape)-1]
			}
		case strings.HasSuffix(name, "attn2.to_k.weight") && len(shape) == 2 && ldm > 0:
			contexts[shape[1]]++
		}
	}
	in.Sources["kind"], in.Sources["naming"], in.Sources["family"] = "tensors", "tensors", "tensors"

	switch {
	case hada > 0:
		in.Kind = KindLoHa
	case lokr > 0:
		in.Kind = KindLoKr
	case lora > 0 && conv > 0:
		in.Kind = KindLoCon
	case lora > 0:
		in.Kind = KindLoRA
	case peft > 0:
		in.Kind = KindPEFTAdapter
	case ti > 0 && len(m.Tensors) <= 4:
		in.Kind = KindTextualInversion
	case ldm > 0 || flux > 0 || sd3 > 0 || hf > 0 || len(m.Tensors) > 100:
		in.Kind = KindCheckpoint
	default:
		in.Kind = KindUnknown
	}

	switch {
	case kohya > 0:
		in.Naming = NamingKohya
	case peft > 0:
		in.Naming = NamingPEFT
	case mlx > 0:
		in.Naming = NamingMLX
	case diffusers > 0:
		in.Naming = NamingDiffusers
	case ldm > 0:
		in.Naming = NamingLDM
	case hf > 0:
		in.Naming = NamingTransformers
	default:
		in.Naming = NamingUnknown
	}

	ctx := mostCommon(contexts)
	switch {
	case flux > 0:
		in.Family = FamilyFlux
	case sd3 > 0:
		in.Family = FamilySD3
	case sdxl > 0 || ctx == 2048 || tiDim == 1280:
		in.Family = FamilySDXL
	case ctx == 1024 || (in.Kind == KindTextualInversion && tiDim == 1024):
		in.Family = FamilySD2
	case ctx == 768 || (in.Kind == KindTextualInversion && tiDim == 768):
		in.Family = FamilySD1
	case llm > 0 || hf > 0:
		in.Family = FamilyLLM
	default:
		in.Family = FamilyUnknown
	}

	if len(ranks) > 0 {
		in.Rank = mostCommonInt(ranks)
		in.Sources["rank"] = "tensors"
		if len(ranks) > 1 {
			for r := range ranks {
				in.Ranks = append(in.Ranks, r)
			}
			sort.Ints(in.Ranks)
		}
	}
}

// isCrossAttnKey reports whether a down projection is the key projection of a cross-attention layer,
// whose input width is the text encoder's context dimension (768 SD1, 1024 SD2, 2048 SDXL).
func isCrossAttnKey(name string) bool {
	return strings.Contains(name, "attn2_to_k.") || strings.Contains(name, "attn2.to_k.") || strings.Contains(name, "attn2.processor.to_k")
}

func mostCommon(m map[uint64]int) uint64 {
	var best uint64
	bestN := 0
	for k, n := range m {
		if n > bestN || (n == bestN && k > best) {
			best, bestN = k, n
		}
	}
	return best
}

func mostCommonInt(m map[int]int) int {
	best, bestN := 0, 0
	for k, n := range m {
		if n > bestN || (n == bestN && k > best) {
			best, bestN = k, n
		}
	}
	return best
}
