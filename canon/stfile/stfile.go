// Package stfile builds safetensors files in memory, for tests, fixtures and benchmarks. It writes what
// the reference writer writes by default (compact JSON, `__metadata__` first, space padding to a multiple
// of 8, contiguous offsets in tensor order) and can deviate from it on purpose. It never touches the
// file system: callers write what Build returns.
package stfile

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"time"
	"unicode/utf16"
)

// Tensor is one tensor to write. Data may be nil: it is then filled with deterministic bytes derived from
// Seed and the tensor's name.
type Tensor struct {
	Name  string
	DType string
	Shape []uint64
	Data  []byte
}

// KV is one metadata entry.
type KV struct{ Key, Value string }

// File describes a file to build.
type File struct {
	Metadata []KV
	// NullMetadata writes `"__metadata__":null` (as MLX does) when Metadata is empty.
	NullMetadata bool
	Tensors      []Tensor
	// Pad is the padding byte (default ' '); NulPadded gives the NUL padding some JS writers produce.
	Pad byte
	// NoPad leaves the header unpadded.
	NoPad bool
	// DataOrder, when set, lays out the data in this order of tensor indices (the header order stays).
	DataOrder []int
	// Seed varies the generated tensor bytes.
	Seed int64
	// Trailing bytes appended after the data.
	Trailing []byte
	// Indent pretty-prints the header.
	Indent bool
}

// ByteLen is the byte length of a dtype and shape (sub-byte dtypes rounded up).
func ByteLen(dtype string, shape []uint64) uint64 {
	bits := map[string]uint64{"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8,
		"F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16,
		"F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64}[dtype]
	n := uint64(1)
	for _, d := range shape {
		n *= d
	}
	return (n*bits + 7) / 8
}

// Build returns the file's bytes.
func (f File) Build() []byte {
	data := make([][]byte, len(f.Tensors))
	lens := make([]uint64, len(f.Tensors))
	for i, t := range f.Tensors {
		if t.Data != nil {
			data[i] = t.Data
		} else {
			data[i] = Fill(f.Seed, t.Name, ByteLen(t.DType, t.Shape))
		}
		lens[i] = uint64(len(data[i]))
	}
	out := f.header(lens)
	for _, i := range f.order() {
		out = append(out, data[i]...)
	}
	return append(out, f.Trailing...)
}

// HeaderBytes returns the 8-byte length and the header of the file whose tensors hold ByteLen bytes
// each, for writers that stream the data themselves (in DataOrder, or header order).
func (f File) HeaderBytes() []byte {
	lens := make([]uint64, len(f.Tensors))
	for i, t := range f.Tensors {
		lens[i] = ByteLen(t.DType, t.Shape)
	}
	return f.header(lens)
}

func (f File) order() []int {
	order := f.DataOrder
	if order == nil {
		order = make([]int, len(f.Tensors))
		for i := range order {
			order[i] = i
		}
	}
	return order
}

// header builds the length and header for tensors of the given data lengths.
func (f File) header(lens []uint64) []byte {
	offs := make([][2]uint64, len(f.Tensors))
	var pos uint64
	for _, i := range f.order() {
		offs[i] = [2]uint64{pos, pos + lens[i]}
		pos += lens[i]
	}
	var h strings.Builder
	nl, sp := "", ""
	if f.Indent {
		nl, sp = "\n  ", " "
	}
	h.WriteString("{")
	first := true
	sep := func() {
		if !first {
			h.WriteString(",")
		}
		first = false
		h.WriteString(nl)
	}
	if len(f.Metadata) > 0 {
		sep()
		h.WriteString(`"__metadata__":` + sp + "{")
		for i, kv := range f.Metadata {
			if i > 0 {
				h.WriteString(",")
			}
			h.WriteString(jsonString(kv.Key) + ":" + sp + jsonString(kv.Value))
		}
		h.WriteString("}")
	} else if f.NullMetadata {
		sep()
		h.WriteString(`"__metadata__":` + sp + "null")
	}
	for i, t := range f.Tensors {
		sep()
		shape := make([]string, len(t.Shape))
		for k, d := range t.Shape {
			shape[k] = fmt.Sprint(d)
		}
		fmt.Fprintf(&h, `%s:%s{"dtype":%s,"shape":[%s],"data_offsets":[%d,%d]}`,
			jsonString(t.Name), sp, jsonString(t.DType), strings.Join(shape, ","), offs[i][0], offs[i][1])
	}
	if f.Indent {
		h.WriteString("\n")
	}
	h.WriteString("}")
	header := []byte(h.String())
	if !f.NoPad {
		pad := f.Pad
		if pad == 0 {
			pad = ' '
		}
		for len(header)%8 != 0 {
			header = append(header, pad)
		}
	}
	out := make([]byte, 8, 8+len(header)+int(pos)+len(f.Trailing))
	binary.LittleEndian.PutUint64(out, uint64(len(header)))
	return append(out, header...)
}

// NulPadded returns the file's bytes with NUL padding instead of spaces (at least one NUL byte).
func (f File) NulPadded() []byte {
	f.NoPad = true
	b := f.Build()
	n := binary.LittleEndian.Uint64(b[:8])
	pad := 8 - int(n%8)
	header := append([]byte(nil), b[8:8+n]...)
	for i := 0; i < pad; i++ {
		header = append(header, 0)
	}
	out := make([]byte, 8, len(b)+pad)
	binary.LittleEndian.PutUint64(out, uint64(len(header)))
	out = append(out, header...)
	return append(out, b[8+n:]...)
}

// Fill returns n deterministic pseudo-random bytes for a tensor.
func Fill(seed int64, name string, n uint64) []byte {
	var h int64 = seed
	for _, c := range name {
		h = h*31 + int64(c)
	}
	b := make([]byte, n)
	rand.New(rand.NewSource(h)).Read(b)
	return b
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ManyTensors returns a file shaped like a large transformer checkpoint's header: n tensors with
// realistic names (about 110 header bytes each) and tiny data, so the header dominates.
func ManyTensors(n int) File {
	f := File{Metadata: []KV{{Key: "format", Value: "pt"}}}
	kinds := []string{"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
		"self_attn.o_proj.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight",
		"input_layernorm.weight", "post_attention_layernorm.weight", "self_attn.rotary_emb.inv_freq"}
	for i := 0; i < n; i++ {
		f.Tensors = append(f.Tensors, Tensor{
			Name:  fmt.Sprintf("model.language_model.layers.%d.%s", i/len(kinds), kinds[i%len(kinds)]),
			DType: "BF16", Shape: []uint64{1, uint64(1 + i%3)},
			Data: make([]byte, 2*(1+i%3)),
		})
	}
	return f
}

// KohyaSDXL returns the i-th of a collection of kohya (sd-scripts) SDXL LoRAs: the module names,
// metadata keys and JSON-in-string values (ss_tag_frequency, ss_dataset_dirs, ss_bucket_info) that
// sd-scripts writes, a header of about 110 KB (some 75 KB of tensor entries for a LoRA of a subset of
// the U-Net's blocks, some 35 KB of metadata, most of it the tag frequencies), and rank-1 tensors, so
// that the data stays small (about 1 MB) and the header dominates. Files of other i differ in
// their metadata, rank-free shapes and tags, deterministically.
func KohyaSDXL(i int) File {
	rng := rand.New(rand.NewSource(int64(i)*7919 + 1))
	// The U-Net's transformer blocks, as kohya names their modules: input_blocks 4, 5 (640 wide, 2
	// blocks each), 7, 8 (1280, 10 blocks), middle_block 1 (10) and output_blocks 0-2 (10), 3-5 (2).
	type group struct {
		prefix string
		width  uint64
		blocks int
	}
	var groups []group
	for _, b := range []int{4, 5} {
		groups = append(groups, group{fmt.Sprintf("lora_unet_input_blocks_%d_1", b), 640, 2})
	}
	for _, b := range []int{7, 8} {
		groups = append(groups, group{fmt.Sprintf("lora_unet_input_blocks_%d_1", b), 1280, 10})
	}
	groups = append(groups, group{"lora_unet_middle_block_1", 1280, 10})
	for b := 0; b < 6; b++ {
		g := group{fmt.Sprintf("lora_unet_output_blocks_%d_1", b), 1280, 10}
		if b >= 3 {
			g.width, g.blocks = 640, 2
		}
		groups = append(groups, g)
	}
	var f File
	add := func(module string, in, out uint64) {
		f.Tensors = append(f.Tensors,
			Tensor{Name: module + ".alpha", DType: "F16", Shape: []uint64{}},
			Tensor{Name: module + ".lora_down.weight", DType: "F16", Shape: []uint64{1, in}},
			Tensor{Name: module + ".lora_up.weight", DType: "F16", Shape: []uint64{out, 1}})
	}
	const tensorBytes = 75 << 10
	header := 0
	for _, g := range groups {
		for blk := 0; blk < g.blocks && header < tensorBytes; blk++ {
			w := g.width
			for _, m := range []struct {
				name    string
				in, out uint64
			}{{"attn1_to_q", w, w}, {"attn1_to_k", w, w}, {"attn1_to_v", w, w}, {"attn1_to_out_0", w, w},
				{"attn2_to_q", w, w}, {"attn2_to_k", 2048, w}, {"attn2_to_v", 2048, w}, {"attn2_to_out_0", w, w},
				{"ff_net_0_proj", w, 8 * w}, {"ff_net_2", 4 * w, w}} {
				name := fmt.Sprintf("%s_transformer_blocks_%d_%s", g.prefix, blk, m.name)
				add(name, m.in, m.out)
				header += 3*len(name) + 3*70
			}
		}
	}
	// As the reference writer (which kohya uses) saves them: sorted by name.
	sort.Slice(f.Tensors, func(a, b int) bool { return f.Tensors[a].Name < f.Tensors[b].Name })

	words := []string{"1girl", "solo", "long hair", "looking at viewer", "smile", "blue eyes", "brown hair",
		"simple background", "white background", "shirt", "dress", "outdoors", "sky", "cloud", "day",
		"holding", "standing", "sitting", "upper body", "full body", "jewelry", "earrings", "hat", "bow",
		"ribbon", "hair ornament", "closed mouth", "open mouth", "blush", "short hair", "black hair",
		"red eyes", "green eyes", "flower", "tree", "water", "night", "indoors", "window", "café",
		"школа", "from side", "portrait", "close-up", "medium breasts", "jacket", "skirt", "boots",
		"gloves", "scarf", "glasses", "food", "cup", "book", "sword", "armor", "cape", "wings"}
	char := fmt.Sprintf("char%04d", i)
	dir := fmt.Sprintf("10_%s woman", char)
	images := 30 + rng.Intn(70)
	var tf strings.Builder
	fmt.Fprintf(&tf, "{%s: {%s: %d", pyString(dir), pyString(char), images)
	seen := map[string]bool{}
	for tf.Len() < 24<<10 {
		tag := words[rng.Intn(len(words))] + " " + words[rng.Intn(len(words))]
		if rng.Intn(4) == 0 {
			tag += fmt.Sprintf(" %d", rng.Intn(100))
		}
		if seen[tag] {
			continue
		}
		seen[tag] = true
		fmt.Fprintf(&tf, ", %s: %d", pyString(tag), 1+rng.Intn(images))
	}
	tf.WriteString("}}")
	var buckets strings.Builder
	buckets.WriteString(`{"buckets": {`)
	for b := 0; b < 12; b++ {
		if b > 0 {
			buckets.WriteString(", ")
		}
		fmt.Fprintf(&buckets, `"%d": {"resolution": [%d, %d], "count": %d}`, b, 640+64*b, 1536-64*b, 10+rng.Intn(40))
	}
	fmt.Fprintf(&buckets, `}, "mean_img_ar_error": 0.0%d}`, rng.Intn(99999))
	started := 1700000000 + rng.Intn(30000000)
	steps := images * 10 * (4 + rng.Intn(8))
	f.Metadata = []KV{
		{"ss_session_id", fmt.Sprint(rng.Int63n(1 << 31))},
		{"ss_training_started_at", fmt.Sprintf("%d.%06d", started, rng.Intn(1000000))},
		{"ss_output_name", char},
		{"ss_learning_rate", "0.0001"}, {"ss_text_encoder_lr", "5e-05"}, {"ss_unet_lr", "0.0001"},
		{"ss_num_train_images", fmt.Sprint(images * 10)}, {"ss_num_reg_images", "0"},
		{"ss_num_batches_per_epoch", fmt.Sprint(images * 10 / 2)}, {"ss_num_epochs", "10"}, {"ss_epoch", "10"},
		{"ss_batch_size_per_device", "2"}, {"ss_total_batch_size", "2"}, {"ss_gradient_checkpointing", "True"},
		{"ss_gradient_accumulation_steps", "1"}, {"ss_max_train_steps", fmt.Sprint(steps)},
		{"ss_lr_warmup_steps", "0"}, {"ss_lr_scheduler", "cosine_with_restarts"},
		{"ss_network_module", "networks.lora"}, {"ss_network_dim", "1"}, {"ss_network_alpha", "1.0"},
		{"ss_network_dropout", "None"}, {"ss_mixed_precision", "bf16"}, {"ss_full_fp16", "False"},
		{"ss_v2", "False"}, {"ss_base_model_version", "sdxl_base_v1-0"}, {"ss_clip_skip", "None"},
		{"ss_max_token_length", "225"}, {"ss_cache_latents", "True"}, {"ss_seed", fmt.Sprint(rng.Intn(1 << 30))},
		{"ss_lowram", "False"}, {"ss_noise_offset", "0.0357"}, {"ss_multires_noise_iterations", "None"},
		{"ss_multires_noise_discount", "0.3"}, {"ss_adaptive_noise_scale", "None"}, {"ss_zero_terminal_snr", "False"},
		{"ss_training_comment", fmt.Sprintf("trigger: %s. trained on %d images, captions by WD14 tagger", char, images)},
		{"ss_sd_scripts_commit_hash", fmt.Sprintf("%040x", rng.Uint64())},
		{"ss_optimizer", "bitsandbytes.optim.adamw.AdamW8bit(weight_decay=0.01,betas=(0.9, 0.99))"},
		{"ss_max_grad_norm", "1.0"}, {"ss_caption_dropout_rate", "0.0"}, {"ss_caption_dropout_every_n_epochs", "0"},
		{"ss_caption_tag_dropout_rate", "0.0"}, {"ss_face_crop_aug_range", "None"}, {"ss_prior_loss_weight", "1.0"},
		{"ss_min_snr_gamma", "5.0"}, {"ss_scale_weight_norms", "None"}, {"ss_ip_noise_gamma", "None"},
		{"ss_debiased_estimation", "False"}, {"ss_sd_model_name", "sd_xl_base_1.0.safetensors"},
		{"ss_vae_name", "sdxl_vae.safetensors"}, {"ss_resolution", "(1024, 1024)"}, {"ss_enable_bucket", "True"},
		{"ss_min_bucket_reso", "256"}, {"ss_max_bucket_reso", "2048"}, {"ss_bucket_no_upscale", "False"},
		{"ss_bucket_info", buckets.String()}, {"ss_keep_tokens", "1"},
		{"ss_dataset_dirs", fmt.Sprintf(`{%s: {"n_repeats": 10, "img_count": %d}}`, pyString(dir), images)},
		{"ss_reg_dataset_dirs", "{}"}, {"ss_tag_frequency", tf.String()},
		{"ss_sd_model_hash", fmt.Sprintf("%08x", rng.Uint32())}, {"ss_new_sd_model_hash", fmt.Sprintf("%064x", rng.Uint64())},
		{"ss_new_vae_hash", fmt.Sprintf("%064x", rng.Uint64())}, {"ss_shuffle_caption", "True"},
		{"ss_color_aug", "False"}, {"ss_flip_aug", "False"}, {"ss_random_crop", "False"},
		{"sshs_model_hash", fmt.Sprintf("%064x", rng.Uint64())}, {"sshs_legacy_hash", fmt.Sprintf("%08x", rng.Uint32())},
		{"modelspec.sai_model_spec", "1.0.0"}, {"modelspec.architecture", "stable-diffusion-xl-v1-base/lora"},
		{"modelspec.implementation", "https://github.com/Stability-AI/generative-models"},
		{"modelspec.title", char}, {"modelspec.resolution", "1024x1024"},
		{"modelspec.date", time.Unix(int64(started), 0).UTC().Format("2006-01-02T15:04:05")},
	}
	sort.Slice(f.Metadata, func(a, b int) bool { return f.Metadata[a].Key < f.Metadata[b].Key })
	return f
}

// pyString is s as Python's json.dumps writes it (ASCII only, \uXXXX escapes), as sd-scripts does.
func pyString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
