package lora

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
)

// tensors builds a file of F16 tensors from name, shape pairs.
func tensors(specs ...any) stfile.File {
	var f stfile.File
	for i := 0; i < len(specs); i += 2 {
		f.Tensors = append(f.Tensors, stfile.Tensor{Name: specs[i].(string), DType: "F16", Shape: specs[i+1].([]uint64)})
	}
	return f
}

func deriveBytes(name string, f stfile.File) Info {
	return Derive(canon.ReadBytes(name, f.Build()), nil, name)
}

// The SD1 UNet's cross-attention key projection in the namings that adapt it.
const (
	kohyaK = "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k"
	peftQ  = "base_model.model.model.layers.0.self_attn.q_proj"
)

// TestInfoFormats: every adapter format people have, from its tensor layout (names and shapes as the
// writers named in each case produce them), gets its kind, naming, family and rank, or unknown.
func TestInfoFormats(t *testing.T) {
	cases := []struct {
		name   string
		f      stfile.File
		kind   Kind
		naming Naming
		family Family
		rank   int
	}{
		// DoRA: kohya / LyCORIS dora_scale, PEFT lora_magnitude_vector (with and without .weight).
		{"dora kohya", tensors(kohyaK+".lora_down.weight", []uint64{8, 768}, kohyaK+".lora_up.weight", []uint64{320, 8},
			kohyaK+".dora_scale", []uint64{1, 768}, kohyaK+".alpha", []uint64{}), KindDoRA, NamingKohya, FamilySD1, 8},
		{"dora peft", tensors(peftQ+".lora_A.weight", []uint64{16, 4096}, peftQ+".lora_B.weight", []uint64{4096, 16},
			peftQ+".lora_magnitude_vector", []uint64{4096}), KindDoRA, NamingPEFT, FamilyLLM, 16},
		{"dora peft .weight", tensors(peftQ+".lora_A.weight", []uint64{16, 4096}, peftQ+".lora_B.weight", []uint64{4096, 16},
			peftQ+".lora_magnitude_vector.weight", []uint64{4096}), KindDoRA, NamingPEFT, FamilyLLM, 16},
		// OFT: kohya (oft_unet_ prefix, blocks [n, b, b]), LyCORIS diag-OFT, LyCORIS's older oft_diag, PEFT oft_R;
		// no widths tell the family, but kohya's names of SD 1.x UNet blocks do.
		{"oft kohya", tensors("oft_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k.oft_blocks", []uint64{4, 80, 80},
			"oft_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k.alpha", []uint64{}), KindOFT, NamingKohya, FamilySD1, 0},
		{"oft lycoris", tensors(kohyaK+".oft_blocks", []uint64{80, 4, 4}, kohyaK+".alpha", []uint64{}), KindOFT, NamingKohya, FamilySD1, 0},
		{"oft lycoris old", tensors(kohyaK+".oft_diag", []uint64{80, 4, 4}), KindOFT, NamingKohya, FamilySD1, 0},
		{"oft peft", tensors(peftQ+".oft_R.weight", []uint64{128, 496}), KindOFT, NamingPEFT, FamilyLLM, 0},
		// BOFT: LyCORIS blocks of 4 dimensions [m, n, b, b], PEFT boft_R + boft_s.
		{"boft lycoris", tensors(kohyaK+".oft_blocks", []uint64{2, 40, 8, 8}, kohyaK+".alpha", []uint64{}), KindBOFT, NamingKohya, FamilySD1, 0},
		{"boft peft", tensors(peftQ+".boft_R", []uint64{2, 512, 8, 8}, peftQ+".boft_s", []uint64{4096, 1}), KindBOFT, NamingPEFT, FamilyLLM, 0},
		// IA3: LyCORIS weight + on_input, PEFT ia3_l.
		{"ia3 lycoris", tensors(kohyaK+".weight", []uint64{320}, kohyaK+".on_input", []uint64{}), KindIA3, NamingKohya, FamilySD1, 0},
		{"ia3 peft", tensors(peftQ+".ia3_l", []uint64{1024, 1}), KindIA3, NamingPEFT, FamilyLLM, 0},
		// GLoRA: a1 [in, r], a2 [r, in], b1 [out, r], b2 [r, in].
		{"glora", tensors(kohyaK+".a1.weight", []uint64{768, 4}, kohyaK+".a2.weight", []uint64{4, 768},
			kohyaK+".b1.weight", []uint64{320, 4}, kohyaK+".b2.weight", []uint64{4, 768}, kohyaK+".alpha", []uint64{}), KindGLoRA, NamingKohya, FamilySD1, 4},
		// LyCORIS full: whole-weight differences only; the key projection's width still tells SD1.
		{"lycoris full", tensors(kohyaK+".diff", []uint64{320, 768},
			"lora_unet_down_blocks_0_attentions_0_proj_in.diff", []uint64{320, 320, 1, 1}, "lora_unet_down_blocks_0_attentions_0_proj_in.diff_b", []uint64{320},
			"lora_unet_down_blocks_0_attentions_0_norm.w_norm", []uint64{320}, "lora_unet_down_blocks_0_attentions_0_norm.b_norm", []uint64{320}),
			KindLyCORISFull, NamingKohya, FamilySD1, 0},
		// LyCORIS extraction: low-rank where it pays, whole differences or sparse bias corrections elsewhere.
		{"lycoris diff", tensors(kohyaK+".lora_down.weight", []uint64{8, 768}, kohyaK+".lora_up.weight", []uint64{320, 8}, kohyaK+".alpha", []uint64{},
			"lora_unet_down_blocks_0_resnets_0_conv1.diff", []uint64{320, 320, 3, 3}), KindLyCORISDiff, NamingKohya, FamilySD1, 8},
		{"lycoris diff sparse bias", tensors(kohyaK+".lora_down.weight", []uint64{8, 768}, kohyaK+".lora_up.weight", []uint64{320, 8},
			kohyaK+".bias_indices", []uint64{2, 100}, kohyaK+".bias_values", []uint64{100}, kohyaK+".bias_size", []uint64{2}), KindLyCORISDiff, NamingKohya, FamilySD1, 8},
		// LoKr: the factors give the layer's width (w1 [a, c] ⊗ w2 [b, d] is [a·b, c·d]) and the rank.
		{"lokr w1 whole, w2 low-rank", tensors(kohyaK+".lokr_w1", []uint64{4, 8}, kohyaK+".lokr_w2_a", []uint64{80, 8}, kohyaK+".lokr_w2_b", []uint64{8, 96},
			kohyaK+".alpha", []uint64{}), KindLoKr, NamingKohya, FamilySD1, 8},
		{"lokr both low-rank (LyCORIS history)", tensors(kohyaK+".lokr_w1_a", []uint64{20, 4}, kohyaK+".lokr_w1_b", []uint64{4, 32},
			kohyaK+".lokr_w2_a", []uint64{16, 4}, kohyaK+".lokr_w2_b", []uint64{4, 24}), KindLoKr, NamingKohya, FamilySD1, 4},
		{"lokr tucker conv", tensors("lora_unet_down_blocks_0_resnets_0_conv1.lokr_w1", []uint64{4, 4}, "lora_unet_down_blocks_0_resnets_0_conv1.lokr_t2", []uint64{8, 8, 3, 3},
			"lora_unet_down_blocks_0_resnets_0_conv1.lokr_w2_a", []uint64{8, 80}, "lora_unet_down_blocks_0_resnets_0_conv1.lokr_w2_b", []uint64{8, 80}), KindLoKr, NamingKohya, FamilySD1, 8},
		{"lokr full dimension", tensors("lycoris_single_transformer_blocks_0_attn_to_q.lokr_w1", []uint64{4, 4},
			"lycoris_single_transformer_blocks_0_attn_to_q.lokr_w2", []uint64{768, 768}), KindLoKr, NamingLyCORIS, FamilyFlux, 0},
		{"loha tucker", tensors("lora_unet_down_blocks_0_resnets_0_conv1.hada_t1", []uint64{4, 4, 3, 3}, "lora_unet_down_blocks_0_resnets_0_conv1.hada_w1_a", []uint64{4, 320},
			"lora_unet_down_blocks_0_resnets_0_conv1.hada_w1_b", []uint64{4, 320}), KindLoHa, NamingKohya, FamilySD1, 4},
		{"loha sd1", tensors(kohyaK+".hada_w1_a", []uint64{320, 8}, kohyaK+".hada_w1_b", []uint64{8, 768},
			kohyaK+".hada_w2_a", []uint64{320, 8}, kohyaK+".hada_w2_b", []uint64{8, 768}), KindLoHa, NamingKohya, FamilySD1, 8},
		{"locon tucker", tensors("lora_unet_down_blocks_0_resnets_0_conv1.lora_down.weight", []uint64{8, 320, 1, 1},
			"lora_unet_down_blocks_0_resnets_0_conv1.lora_mid.weight", []uint64{8, 8, 3, 3}, "lora_unet_down_blocks_0_resnets_0_conv1.lora_up.weight", []uint64{320, 8, 1, 1}),
			KindLoCon, NamingKohya, FamilySD1, 8},
		// diffusers' attention-processor LoRA of early 2023.
		{"diffusers attn processor", tensors("unet.down_blocks.0.attentions.0.transformer_blocks.0.attn2.processor.to_k_lora.down.weight", []uint64{4, 768},
			"unet.down_blocks.0.attentions.0.transformer_blocks.0.attn2.processor.to_k_lora.up.weight", []uint64{320, 4}), KindLoRA, NamingDiffusers, FamilySD1, 4},
		{"peft with adapter name", tensors(peftQ+".lora_A.default.weight", []uint64{8, 4096}, peftQ+".lora_B.default.weight", []uint64{4096, 8}), KindLoRA, NamingPEFT, FamilyLLM, 8},
		// Textual inversion: A1111's layouts and diffusers' {"<token>": embedding}.
		{"ti a1111 sd2", tensors("string_to_param.*", []uint64{2, 1024}), KindTextualInversion, NamingA1111, FamilySD2, 0},
		{"ti diffusers sd1", tensors("<cat-toy>", []uint64{768}), KindTextualInversion, NamingDiffusers, FamilySD1, 0},
		{"ti diffusers sd2", tensors("<cat-toy>", []uint64{3, 1024}), KindTextualInversion, NamingDiffusers, FamilySD2, 0},
		{"ti diffusers odd width", tensors("<x>", []uint64{4096}), KindTextualInversion, NamingDiffusers, FamilyUnknown, 0},
		// Not a guess: one plain tensor is nothing stdiff can name.
		{"lone tensor", tensors("weight", []uint64{768}), KindUnknown, NamingUnknown, FamilyUnknown, 0},
		{"token beside a checkpoint", tensors("<x>", []uint64{768}, "model.diffusion_model.out.2.weight", []uint64{4, 320, 3, 3}), KindCheckpoint, NamingLDM, FamilyUnknown, 0},
	}
	for _, c := range cases {
		in := deriveBytes(c.name, c.f)
		if in.Kind != c.kind || in.Naming != c.naming || in.Family != c.family || in.Rank != c.rank {
			t.Errorf("%s: %s %s %s rank %d; want %s %s %s %d", c.name, in.Kind, in.Naming, in.Family, in.Rank, c.kind, c.naming, c.family, c.rank)
		}
	}
}

// TestSplitPart: every adapter ending is found through the index, with its module, also behind PEFT's
// adapter name; other names are no part.
func TestSplitPart(t *testing.T) {
	for _, ps := range partSuffixes {
		for _, name := range []string{"unet.mid_block.attn2.to_k" + ps.suffix, "to_k" + strings.Replace(ps.suffix, ".weight", ".default.weight", 1)} {
			want := strings.TrimSuffix(strings.Replace(name, ".default", "", 1), ps.suffix)
			if mod, p := splitPart(name); p != ps.p || mod != want {
				t.Errorf("%s: module %q part %d; want %q %d", name, mod, p, want, ps.p)
			}
		}
	}
	for _, name := range []string{"model.layers.0.self_attn.q_proj.weight", "diff", "lora_down.weight", "x.lora_down.weight.bias", ""} {
		if mod, p := splitPart(name); p != pNone {
			t.Errorf("%s: module %q part %d", name, mod, p)
		}
	}
}

// loraDiffusionSD1 builds a LoRA in cloneofsimo's lora_diffusion layout of early 2023, as its
// save_safeloras_with_embeds writes one for SD 1.5 (the shapes and names of the repository's
// example_loras/lora_disney.safetensors and analog_svd_rank4.safetensors): the 12 CLIP layers' q, k, v,
// out projections (text_encoder:0…47), then per UNet transformer block attn1 q, k, v, out, the GEGLU
// projection and attn2 q, k, v, out (unet:0…143), each <model>:<i>:down [rank, in] and
// <model>:<i>:up [out, rank] with <model>:<i>:rank in the metadata, the adapted layer classes under
// <model>, and each pivotal-tuning token a [768] tensor marked "<embed>".
func loraDiffusionSD1(rank uint64, dtype string, tokens ...string) stfile.File {
	var f stfile.File
	for _, tok := range tokens {
		f.Metadata = append(f.Metadata, stfile.KV{Key: tok, Value: "<embed>"})
		f.Tensors = append(f.Tensors, stfile.Tensor{Name: tok, DType: "F32", Shape: []uint64{768}})
	}
	add := func(model string, i int, in, out uint64) {
		f.Metadata = append(f.Metadata, stfile.KV{Key: fmt.Sprintf("%s:%d:rank", model, i), Value: fmt.Sprint(rank)})
		f.Tensors = append(f.Tensors,
			stfile.Tensor{Name: fmt.Sprintf("%s:%d:down", model, i), DType: dtype, Shape: []uint64{rank, in}},
			stfile.Tensor{Name: fmt.Sprintf("%s:%d:up", model, i), DType: dtype, Shape: []uint64{out, rank}})
	}
	f.Metadata = append(f.Metadata, stfile.KV{Key: "text_encoder", Value: `["CLIPAttention"]`})
	for i := range 48 {
		add("text_encoder", i, 768, 768)
	}
	f.Metadata = append(f.Metadata, stfile.KV{Key: "unet", Value: `["CrossAttention", "Attention", "GEGLU"]`})
	i := 0
	for _, ch := range []uint64{320, 320, 640, 640, 1280, 1280, 1280, 1280, 1280, 1280, 640, 640, 640, 320, 320, 320} {
		for _, io := range [][2]uint64{{ch, ch}, {ch, ch}, {ch, ch}, {ch, ch}, {ch, 8 * ch}, {ch, ch}, {768, ch}, {768, ch}, {ch, ch}} {
			add("unet", i, io[0], io[1])
			i++
		}
	}
	return f
}

// TestInfoLoRADiffusion: cloneofsimo's lora_diffusion LoRAs were "checkpoint · diffusers · rank 0"; they
// are LoRAs of their own naming, SD1 from the cross-attention widths, and their pivotal-tuning tokens
// are their trigger words.
func TestInfoLoRADiffusion(t *testing.T) {
	disney := loraDiffusionSD1(1, "F32", "<s1>", "<s2>")
	if n := len(disney.Tensors); n != 386 {
		t.Fatalf("fixture has %d tensors; lora_disney.safetensors has 386", n)
	}
	in := deriveBytes("lora_disney.safetensors", disney)
	if in.Kind != KindLoRA || in.Naming != NamingLoRADiffusion || in.Family != FamilySD1 || in.Rank != 1 || len(in.Ranks) != 0 {
		t.Errorf("lora_disney: %s %s %s rank %d %v", in.Kind, in.Naming, in.Family, in.Rank, in.Ranks)
	}
	if !reflect.DeepEqual(in.EmbeddedTokens, []string{"<s1>", "<s2>"}) || !reflect.DeepEqual(in.Triggers, []string{"<s1>", "<s2>"}) ||
		in.TriggerDetails[0].Source != "tensors (embedded tokens)" || in.TriggerDetails[0].Derived {
		t.Errorf("lora_disney tokens: %v triggers %v %+v", in.EmbeddedTokens, in.Triggers, in.TriggerDetails)
	}

	svd := deriveBytes("analog_svd_rank4.safetensors", loraDiffusionSD1(4, "F16"))
	if svd.Kind != KindLoRA || svd.Naming != NamingLoRADiffusion || svd.Family != FamilySD1 || svd.Rank != 4 ||
		len(svd.EmbeddedTokens) != 0 || len(svd.Triggers) != 0 {
		t.Errorf("analog_svd_rank4: %+v", svd)
	}

	// Tokens alone (lora_diffusion can save only the embeddings): a textual inversion of that naming.
	var ti stfile.File
	ti.Metadata = []stfile.KV{{Key: "<s1>", Value: "<embed>"}}
	ti.Tensors = []stfile.Tensor{{Name: "<s1>", DType: "F32", Shape: []uint64{768}}}
	if in := deriveBytes("ti", ti); in.Kind != KindTextualInversion || in.Naming != NamingLoRADiffusion || in.Family != FamilySD1 ||
		!reflect.DeepEqual(in.Triggers, []string{"<s1>"}) {
		t.Errorf("tokens alone: %+v", in)
	}
}

// TestInfoEmbeddedTokens: a LoRA bundled with embeddings (bundle_emb.NAME.…, as A1111 loads and
// LyCORIS's pack_bundle writes) carries its tokens as trigger words; a tensor named <token> in a LoRA
// is not one unless marked.
func TestInfoEmbeddedTokens(t *testing.T) {
	f := tensors(kohyaK+".lora_down.weight", []uint64{8, 768}, kohyaK+".lora_up.weight", []uint64{320, 8},
		"bundle_emb.pepper.string_to_param.*", []uint64{2, 768}, "bundle_emb.carrot.emb_params", []uint64{1, 768})
	in := deriveBytes("bundle", f)
	if in.Kind != KindLoRA || in.Family != FamilySD1 || !reflect.DeepEqual(in.EmbeddedTokens, []string{"pepper", "carrot"}) ||
		!reflect.DeepEqual(in.Triggers, []string{"pepper", "carrot"}) {
		t.Errorf("bundle: %+v", in)
	}
	f = tensors(kohyaK+".lora_down.weight", []uint64{8, 768}, kohyaK+".lora_up.weight", []uint64{320, 8}, "<x>", []uint64{768})
	if in := deriveBytes("unmarked", f); len(in.EmbeddedTokens) != 0 || len(in.Triggers) != 0 {
		t.Errorf("unmarked <x> taken for a token: %+v", in)
	}
}

// smartFalconLoKr builds a LyCORIS LoKr of rank 4 trained with kohya's scripts, in the layout of
// KohakuBlueleaf/LyCORIS's result/smart_falcon_4_lokr.safetensors (April 2023): both Kronecker factors
// low-rank (lokr_w1_a/b, lokr_w2_a/b), convolutions flattened to 2 dimensions, and kohya's metadata.
func smartFalconLoKr() stfile.File {
	f := stfile.File{Metadata: []stfile.KV{
		{Key: "ss_network_module", Value: "lycoris.kohya"}, {Key: "ss_network_dim", Value: "4"}, {Key: "ss_network_alpha", Value: "4.0"},
		{Key: "ss_network_args", Value: `{"conv_rank": "4", "conv_alpha": "4", "algo": "lokr"}`},
		{Key: "ss_output_name", Value: "smart_falcon_lokr_3.0e-4"}, {Key: "ss_sd_model_name", Value: "animefull-final-pruned.safetensors"},
		{Key: "ss_dataset_dirs", Value: `{"16_smf girl": {"n_repeats": 16, "img_count": 43}, "4_smf girl": {"n_repeats": 4, "img_count": 45}}`},
		{Key: "ss_tag_frequency", Value: `{"16_smf girl": {"smart falcon \\(umamusume\\)": 43, "hair bow": 43, "open mouth": 26}}`},
		{Key: "ss_training_comment", Value: `trigger word is smart falcon \(umamusume\)`},
		{Key: "sshs_legacy_hash", Value: "e3b0c442"}, {Key: "ss_v2", Value: "False"},
	}}
	add := func(mod string, w1a, w1b, w2a, w2b [2]uint64) {
		for _, p := range []struct {
			part  string
			shape []uint64
		}{{"alpha", nil}, {"lokr_w1_a", w1a[:]}, {"lokr_w1_b", w1b[:]}, {"lokr_w2_a", w2a[:]}, {"lokr_w2_b", w2b[:]}} {
			f.Tensors = append(f.Tensors, stfile.Tensor{Name: mod + "." + p.part, DType: "F16", Shape: p.shape})
		}
	}
	add("lora_te_text_model_encoder_layers_0_mlp_fc1", [2]uint64{64, 4}, [2]uint64{4, 32}, [2]uint64{48, 4}, [2]uint64{4, 24})
	add("lora_te_text_model_encoder_layers_0_self_attn_k_proj", [2]uint64{32, 4}, [2]uint64{4, 32}, [2]uint64{24, 4}, [2]uint64{4, 24})
	add("lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k", [2]uint64{20, 4}, [2]uint64{4, 32}, [2]uint64{16, 4}, [2]uint64{4, 24})
	add("lora_unet_down_blocks_1_attentions_0_transformer_blocks_0_attn2_to_k", [2]uint64{32, 4}, [2]uint64{4, 32}, [2]uint64{20, 4}, [2]uint64{4, 24})
	add("lora_unet_mid_block_attentions_0_transformer_blocks_0_attn2_to_k", [2]uint64{40, 4}, [2]uint64{4, 32}, [2]uint64{32, 4}, [2]uint64{4, 24})
	add("lora_unet_down_blocks_0_resnets_0_conv1", [2]uint64{20, 4}, [2]uint64{4, 60}, [2]uint64{16, 4}, [2]uint64{4, 48})
	return f
}

// TestInfoLyCORISLoKr: real LoKr files of LyCORIS's history were family unknown and rank 0; the factors
// give each layer's width (the key projections' 32·24 = 768: SD1) and the rank, which agrees with
// ss_network_dim. The folder name is a guess, the training comment is not parsed.
func TestInfoLyCORISLoKr(t *testing.T) {
	in := deriveBytes("smart_falcon_4_lokr.safetensors", smartFalconLoKr())
	if in.Kind != KindLoKr || in.Naming != NamingKohya || in.Family != FamilySD1 || in.Rank != 4 || len(in.Ranks) != 0 {
		t.Errorf("kind %s naming %s family %s rank %d %v", in.Kind, in.Naming, in.Family, in.Rank, in.Ranks)
	}
	if len(in.Findings) != 0 {
		t.Errorf("findings: %+v", in.Findings)
	}
	if in.NetworkModule != "lycoris.kohya" || in.DeclaredRank != "4" || len(in.Triggers) != 0 || in.GuessedTriggers[0] != "smf girl" {
		t.Errorf("info: %+v", in)
	}
}

// BenchmarkDeriveCheckpoint: the info of a 50,000-tensor checkpoint header, every name matched against
// the adapter endings.
func BenchmarkDeriveCheckpoint(b *testing.B) {
	m := canon.ReadBytes("many", stfile.ManyTensors(50000).Build())
	b.ResetTimer()
	for b.Loop() {
		Derive(m, nil, "many.safetensors")
	}
}

// TestDeriveKohyaMemory: deriving a kohya LoRA's info allocates nothing per tensor or per tag: its
// modules go in a table kept for the next file, its tag frequency is read without a map.
func TestDeriveKohyaMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations mean nothing under the race detector")
	}
	m := canon.ReadBytes("kohya", stfile.KohyaSDXL(1).Build())
	in := Derive(m, nil, "kohya.safetensors")
	if in.Kind != KindLoRA || in.Family != FamilySDXL || len(in.GuessedTriggers) < 5 {
		t.Fatalf("kind %s family %s guessed %q", in.Kind, in.Family, in.GuessedTriggers)
	}
	var before, after runtime.MemStats
	const runs = 20
	runtime.ReadMemStats(&before)
	for range runs {
		Derive(m, nil, "kohya.safetensors")
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 16<<10 {
		t.Errorf("Derive allocates %d bytes a call for %d tensors, want at most 16 KiB", per, len(m.Tensors))
	}
}

// BenchmarkDeriveKohya: the info of a kohya SDXL LoRA as sd-scripts saves it (600 tensors, metadata
// with a tag frequency of about a thousand tags): what `inspect --short` derives of each file, its
// layout surveyed once (BenchmarkDeriveKohyaSurveyed surveys it each time).
func BenchmarkDeriveKohya(b *testing.B) {
	m := canon.ReadBytes("kohya", stfile.KohyaSDXL(1).Build())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Derive(m, nil, "kohya.safetensors")
	}
}

// BenchmarkDeriveLoRADiffusion: the info of a lora_diffusion LoRA (386 tensors, 195 metadata keys).
func BenchmarkDeriveLoRADiffusion(b *testing.B) {
	m := canon.ReadBytes("disney", loraDiffusionSD1(1, "F32", "<s1>", "<s2>").Build())
	b.ResetTimer()
	for b.Loop() {
		Derive(m, nil, "lora_disney.safetensors")
	}
}

// FuzzPart: survey.part, which skips names by their last two bytes and tries the last parts' endings
// first, says what splitPart says of every name in a sequence of names.
func FuzzPart(f *testing.F) {
	f.Add("lora_unet_a_to_k.alpha\nlora_unet_a_to_k.lora_down.weight\nlora_unet_a_to_k.lora_up.weight\nx.lora.up.weight\nx_lora.up.weight\nunet:0:up\nt.lokr_w1_a\nt.lokr_w1\nb.oft_R.weight\nb.boft_R\nm.lora_magnitude_vector.weight\nm.default.lora_A.default.weight\nw\n")
	var all strings.Builder
	for _, ps := range partSuffixes {
		all.WriteString("m" + ps.suffix + "\nm" + ps.suffix[:len(ps.suffix)-1] + "\n")
	}
	f.Add(all.String())
	f.Fuzz(func(t *testing.T, names string) {
		sv := &survey{endings: make([]int, 0, 4)}
		for _, name := range strings.Split(names, "\n") {
			mod, p := sv.part(name)
			if wantMod, want := splitPart(name); mod != wantMod || p != want {
				t.Fatalf("part(%q) = %q, %d; splitPart: %q, %d", name, mod, p, wantMod, want)
			}
		}
	})
}

// FuzzCountName: survey.countName, which works out what the part of a name up to its first '.' says
// once for the names that share it, counts what countNaming counts, name after name.
func FuzzCountName(f *testing.F) {
	var kohya strings.Builder
	for _, tn := range stfile.KohyaSDXL(1).Tensors[:30] {
		kohya.WriteString(tn.Name + "\n")
	}
	f.Add(kohya.String())
	f.Add("lora_te_text_model_encoder_layers_11_mlp_fc1.alpha\nlora_te_text_model_encoder_layers_11_mlp_fc1.lora_up.weight\nlora_te2_x.alpha\n" +
		"lora_unet_double_blocks_0_img_attn.lora_down.weight\nlora_unet_double_blocks_0_img_attn.x.single_blocks.y\n" +
		"x.joint_blocks.0\nx.double_blocks\nmodel.layers.0.self_attn.q_proj.weight\nmodel.layers.0.self_attn.q_proj.lora_A.weight\n" +
		"base_model.model.x.lora_A.weight\nconditioner.embedders.1.model\nunet.down\ntransformer.h.0.attn.c_attn.weight\n" +
		"a.self_attn.q_proj\na.mlp.gate_proj\nlora_unet_down_blocks_0.x\nlora_unet_down_blocks_.x\nlora_te_text_model_encoder_layers_7.x\n" +
		"double_blocks.x\nx_double.x\nq.x\n.x\nx.\n..\n" +
		"x_self_attn.q_proj.weight\nmlp.gate_proj\nh_attn.c_attn\nself_attn.q_projx\nself_attn.\nmlp.g\nx.y.default\n")
	f.Fuzz(func(t *testing.T, names string) {
		var memo, each survey
		for _, name := range strings.Split(names, "\n") {
			memo.countName(name)
			each.countNaming(name)
			if memo.nameCounts != each.nameCounts || memo.flux != each.flux || memo.sd3 != each.sd3 || memo.llm != each.llm {
				t.Fatalf("after %q: countName %+v %d %d %d, countNaming %+v %d %d %d", name, memo.nameCounts, memo.flux, memo.sd3, memo.llm,
					each.nameCounts, each.flux, each.sd3, each.llm)
			}
		}
	})
}
