package stfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
)

// baseModel is a small model in the shape of a real one: numbered layers, kohya-style metadata.
func baseModel() File {
	f := File{Seed: 1, Metadata: []KV{
		{Key: "ss_output_name", Value: "mychar"},
		{Key: "ss_base_model_version", Value: "sdxl_base_v1-0"},
		{Key: "ss_network_module", Value: "networks.lora"},
		{Key: "ss_network_dim", Value: "8"},
		{Key: "ss_network_alpha", Value: "4"},
		{Key: "ss_session_id", Value: "1234567890"},
		{Key: "ss_training_started_at", Value: "1700000000.5"},
		{Key: "ss_tag_frequency", Value: `{"10_mychar woman": {"mychar": 20, "woman": 18, "smile": 7}}`},
		{Key: "ss_training_comment", Value: "trained on 20 images\nbatch size 2\nlearning rate 1e-4\nnotes: first run"},
		{Key: "modelspec.title", Value: "My Character"},
	}}
	f.Tensors = append(f.Tensors, Tensor{Name: "embed.weight", DType: "F32", Shape: []uint64{32, 8}})
	for l := 0; l < 4; l++ {
		p := fmt.Sprintf("layers.%d.", l)
		f.Tensors = append(f.Tensors,
			Tensor{Name: p + "self_attn.q_proj.weight", DType: "F32", Shape: []uint64{8, 8}},
			Tensor{Name: p + "self_attn.k_proj.weight", DType: "F32", Shape: []uint64{8, 8}},
			Tensor{Name: p + "mlp.up.weight", DType: "F32", Shape: []uint64{16, 8}},
		)
	}
	f.Tensors = append(f.Tensors, Tensor{Name: "norm.weight", DType: "F32", Shape: []uint64{8}})
	return f
}

// changedModel is baseModel after a typical revision: a dtype conversion of every q_proj, a reshaped
// MLP, a removed and an added tensor, a rename, retrained bytes in one tensor, and metadata edits.
func changedModel() File {
	f := baseModel()
	base := f.Tensors
	f.Tensors = nil
	for _, t := range base {
		switch {
		case t.Name == "embed.weight":
			t.Name = "embed_tokens.weight" // renamed, same bytes
			t.Data = Fill(1, "embed.weight", ByteLen(t.DType, t.Shape))
		case t.Name == "norm.weight":
			continue // removed
		case filepath.Ext(t.Name) == ".weight" && bytes.Contains([]byte(t.Name), []byte("q_proj")):
			t.DType = "F16"
		case t.Name == "layers.2.mlp.up.weight":
			t.Shape = []uint64{24, 8}
		case t.Name == "layers.1.self_attn.k_proj.weight":
			t.Data = Fill(99, t.Name, ByteLen(t.DType, t.Shape)) // retrained
		}
		if t.Data == nil {
			t.Data = Fill(1, t.Name, ByteLen(t.DType, t.Shape))
		}
		f.Tensors = append(f.Tensors, t)
	}
	f.Tensors = append(f.Tensors, Tensor{Name: "lm_head.weight", DType: "F32", Shape: []uint64{32, 8}})
	meta := []KV{}
	for _, kv := range f.Metadata {
		switch kv.Key {
		case "modelspec.title":
			continue
		case "ss_session_id":
			kv.Value = "987654321"
		case "ss_training_started_at":
			kv.Value = "1700086400.25"
		case "ss_tag_frequency":
			kv.Value = `{"10_mychar woman": {"mychar": 20, "woman": 18, "smile": 9, "hat": 2}}`
		case "ss_training_comment":
			kv.Value = "trained on 20 images\nbatch size 4\nlearning rate 1e-4\nnotes: second run"
		}
		meta = append(meta, kv)
	}
	f.Metadata = append(meta, KV{Key: "ss_epoch", Value: "10"})
	return f
}

// reorderedModel is baseModel re-serialised: metadata keys in another order, tensors in another header
// order and data laid out backwards. Structure and content IDs must not change.
func reorderedModel() File {
	f := baseModel()
	sort.Slice(f.Metadata, func(i, j int) bool { return f.Metadata[i].Key > f.Metadata[j].Key })
	ts := append([]Tensor(nil), f.Tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	f.Tensors = ts
	f.DataOrder = make([]int, len(ts))
	for i := range ts {
		f.DataOrder[i] = len(ts) - 1 - i
	}
	f.NoPad = true
	return f
}

// retitledModel is baseModel with edited metadata only.
func retitledModel() File {
	f := baseModel()
	f.Metadata[len(f.Metadata)-1].Value = "My Character (v1.1)"
	return f
}

// retrainedModel is baseModel with new bytes in one tensor and nothing else changed.
func retrainedModel() File {
	f := baseModel()
	f.Tensors[5].Data = Fill(42, f.Tensors[5].Name, ByteLen(f.Tensors[5].DType, f.Tensors[5].Shape))
	return f
}

// hostileModel has names and values that would move the cursor or reorder text if printed raw.
func hostileModel() File {
	return File{Seed: 3,
		Metadata: []KV{{Key: "title\u202e", Value: "line1\nline2\x1b[2J"}},
		Tensors:  []Tensor{{Name: "evil\x1b[31mred\n.weight", DType: "F16", Shape: []uint64{2}}}}
}

// LoRA is a small kohya SD1 LoRA (rank 4) with the metadata a trainer writes, a wrong embedded
// hash (the SHA256 of empty input, as one trainer wrote into every file) and a cover image.
func LoRA() File {
	f := File{Seed: 5, Metadata: []KV{
		{Key: "ss_output_name", Value: "mychar_v1"},
		{Key: "ss_network_module", Value: "networks.lora"},
		{Key: "ss_network_dim", Value: "4"},
		{Key: "ss_network_alpha", Value: "1"},
		{Key: "ss_base_model_version", Value: "sd_v1"},
		{Key: "ss_tag_frequency", Value: `{"10_mychar woman": {"mychar woman": 30, "smile": 12, "outdoors": 5}}`},
		{Key: "sshs_model_hash", Value: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{Key: "ssmd_cover_images", Value: `["` + strings.Repeat("iVBORw0KGgo", 2000) + `"]`},
	}}
	for _, blk := range []string{"down_blocks_0_attentions_0", "up_blocks_1_attentions_2"} {
		base := "lora_unet_" + blk + "_transformer_blocks_0_attn2_to_k"
		f.Tensors = append(f.Tensors,
			Tensor{Name: base + ".alpha", DType: "F16", Shape: []uint64{}},
			Tensor{Name: base + ".lora_down.weight", DType: "F16", Shape: []uint64{4, 768}},
			Tensor{Name: base + ".lora_up.weight", DType: "F16", Shape: []uint64{320, 4}})
	}
	return f
}

// repeatedModel lists one empty tensor six times under one name: valid (the reference keeps the last
// entry), with five duplicate-tensor-name warnings, more than text output shows of one code.
func repeatedModel() File {
	var f File
	for range 6 {
		f.Tensors = append(f.Tensors, Tensor{Name: "a", DType: "U8", Shape: []uint64{0}})
	}
	return f
}

// Weights is a small model with weights as training leaves them: normal(0, 0.02) matrices and a
// norm near 1, in F32, for the comparisons by value.
func Weights() File {
	r := rand.New(rand.NewPCG(7, 8))
	f := File{Metadata: []KV{{Key: "format", Value: "pt"}}}
	add := func(name string, shape []uint64, mean, sd float64) {
		data := make([]byte, ByteLen("F32", shape))
		for i := 0; i < len(data); i += 4 {
			binary.LittleEndian.PutUint32(data[i:], math.Float32bits(float32(mean+sd*r.NormFloat64())))
		}
		f.Tensors = append(f.Tensors, Tensor{Name: name, DType: "F32", Shape: shape, Data: data})
	}
	add("embed.weight", []uint64{32, 16}, 0, 0.02)
	for l := range 4 {
		add(fmt.Sprintf("layers.%d.attn.weight", l), []uint64{16, 16}, 0, 0.02)
		add(fmt.Sprintf("layers.%d.mlp.weight", l), []uint64{32, 16}, 0, 0.02)
	}
	add("norm.weight", []uint64{16}, 1, 0.01)
	return f
}

// f32s and setF32s read and write the F32 values of a generated tensor.
func f32s(t Tensor) []float32 {
	v := make([]float32, len(t.Data)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return v
}

func setF32s(t *Tensor, v []float32) {
	t.Data = make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(x))
	}
}

// finetunedModel is Weights after a short fine-tune: every MLP nudged by normal(0, 0.001) noise,
// one attention weight moved by 0.05 at [5, 9], and a NaN in the norm.
func finetunedModel() File {
	f := Weights()
	r := rand.New(rand.NewPCG(9, 10))
	for i := range f.Tensors {
		t := &f.Tensors[i]
		v := f32s(*t)
		switch {
		case strings.HasSuffix(t.Name, "mlp.weight"):
			for k := range v {
				v[k] += float32(0.001 * r.NormFloat64())
			}
		case t.Name == "layers.2.attn.weight":
			v[5*16+9] += 0.05
		case t.Name == "norm.weight":
			v[3] = float32(math.NaN())
		}
		setF32s(t, v)
	}
	return f
}

// bf16Model is Weights converted to BF16, rounding to nearest even, except layers.3.mlp.weight,
// which a careless script truncated.
func bf16Model() File {
	f := Weights()
	for i := range f.Tensors {
		t := &f.Tensors[i]
		v := f32s(*t)
		t.DType, t.Data = "BF16", make([]byte, 2*len(v))
		for k, x := range v {
			b := math.Float32bits(x)
			if t.Name != "layers.3.mlp.weight" {
				b += 0x7FFF + (b >> 16 & 1)
			}
			binary.LittleEndian.PutUint16(t.Data[2*k:], uint16(b>>16))
		}
	}
	return f
}

// untrainedLoRA is a kohya LoRA saved before its first step: every lora_up weight is zero, so it
// changes nothing.
func untrainedLoRA() File {
	f := LoRA()
	for i := range f.Tensors {
		t := &f.Tensors[i]
		switch n := ByteLen(t.DType, t.Shape); {
		case strings.HasSuffix(t.Name, ".lora_up.weight"):
			t.Data = make([]byte, n)
		case strings.HasSuffix(t.Name, ".alpha"):
			t.Data = []byte{0x00, 0x3C} // 1.0
		default: // normal(0, 0.02), as lora_down starts
			r := rand.New(rand.NewPCG(11, uint64(i)))
			t.Data = make([]byte, n)
			for k := 0; k < len(t.Data); k += 2 {
				binary.LittleEndian.PutUint16(t.Data[k:], f16(0.02*r.NormFloat64()))
			}
		}
	}
	return f
}

// f16 converts a small normal value to F16 (round to nearest, ties away: good enough for fixtures).
func f16(x float64) uint16 {
	sign := uint16(0)
	if x < 0 {
		sign, x = 0x8000, -x
	}
	frac, exp := math.Frexp(x) // x = frac·2^exp, frac in [0.5, 1)
	e := exp - 1 + 15
	if e <= 0 {
		return sign
	}
	return sign | uint16(e)<<10 | uint16(math.Round((2*frac-1)*1024))&0x3FF
}

// Fixtures are the safetensors files of the project's testdata folder, by file name: small, generated,
// reviewable with stdiff itself. Tests of any package may build the one they need, or read the committed
// copy, which this package's TestFixtures keeps in step with this function (after changing it:
// go test ./canon/stfile -run TestFixtures -update, then review the files with stdiff).
func Fixtures() map[string][]byte {
	base := baseModel().Build()
	return map[string][]byte{
		"base.safetensors":              base,
		"changed.safetensors":           changedModel().Build(),
		"reordered.safetensors":         reorderedModel().Build(),
		"retitled.safetensors":          retitledModel().Build(),
		"retrained.safetensors":         retrainedModel().Build(),
		"hostile.safetensors":           hostileModel().Build(),
		"lora.safetensors":              LoRA().Build(),
		"nul-padded.safetensors":        baseModel().NulPadded(),
		"repeated.safetensors":          repeatedModel().Build(),
		"weights.safetensors":           Weights().Build(),
		"weights-finetuned.safetensors": finetunedModel().Build(),
		"weights-bf16.safetensors":      bf16Model().Build(),
		"lora-untrained.safetensors":    untrainedLoRA().Build(),
		"truncated.safetensors":         base[:len(base)-100],
		"lfs-pointer.safetensors": []byte("version https://git-lfs.github.com/spec/v1\n" +
			"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 4823449600\n"),
	}
}

// ShardedWeights is Weights as a safetensors shard set of n shards, as convert.py and save_pretrained
// write one (model.safetensors.index.json, model-0000K-of-0000N.safetensors, each with the metadata
// format=pt); the file names map to their bytes.
func ShardedWeights(n int) map[string][]byte {
	f := Weights()
	files := map[string][]byte{}
	weights := map[string]string{}
	total := 0
	per := (len(f.Tensors) + n - 1) / n
	for k := range n {
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", k+1, n)
		shard := File{Metadata: f.Metadata, Tensors: f.Tensors[min(k*per, len(f.Tensors)):min((k+1)*per, len(f.Tensors))]}
		for _, t := range shard.Tensors {
			weights[t.Name] = name
			total += len(t.Data)
		}
		files[name] = shard.Build()
	}
	files["model.safetensors.index.json"], _ = json.Marshal(map[string]any{"metadata": map[string]any{"total_size": total}, "weight_map": weights})
	return files
}
