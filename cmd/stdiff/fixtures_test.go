package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"
)

var update = flag.Bool("update", false, "regenerate golden files and the fixtures in ../../testdata")

// baseModel is a small model in the shape of a real one: numbered layers, kohya-style metadata.
func baseModel() stfile.File {
	f := stfile.File{Seed: 1, Metadata: []stfile.KV{
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
	f.Tensors = append(f.Tensors, stfile.Tensor{Name: "embed.weight", DType: "F32", Shape: []uint64{32, 8}})
	for l := 0; l < 4; l++ {
		p := fmt.Sprintf("layers.%d.", l)
		f.Tensors = append(f.Tensors,
			stfile.Tensor{Name: p + "self_attn.q_proj.weight", DType: "F32", Shape: []uint64{8, 8}},
			stfile.Tensor{Name: p + "self_attn.k_proj.weight", DType: "F32", Shape: []uint64{8, 8}},
			stfile.Tensor{Name: p + "mlp.up.weight", DType: "F32", Shape: []uint64{16, 8}},
		)
	}
	f.Tensors = append(f.Tensors, stfile.Tensor{Name: "norm.weight", DType: "F32", Shape: []uint64{8}})
	return f
}

// changedModel is baseModel after a typical revision: a dtype conversion of every q_proj, a reshaped
// MLP, a removed and an added tensor, a rename, retrained bytes in one tensor, and metadata edits.
func changedModel() stfile.File {
	f := baseModel()
	base := f.Tensors
	f.Tensors = nil
	for _, t := range base {
		switch {
		case t.Name == "embed.weight":
			t.Name = "embed_tokens.weight" // renamed, same bytes
			t.Data = stfile.Fill(1, "embed.weight", stfile.ByteLen(t.DType, t.Shape))
		case t.Name == "norm.weight":
			continue // removed
		case filepath.Ext(t.Name) == ".weight" && bytes.Contains([]byte(t.Name), []byte("q_proj")):
			t.DType = "F16"
		case t.Name == "layers.2.mlp.up.weight":
			t.Shape = []uint64{24, 8}
		case t.Name == "layers.1.self_attn.k_proj.weight":
			t.Data = stfile.Fill(99, t.Name, stfile.ByteLen(t.DType, t.Shape)) // retrained
		}
		if t.Data == nil {
			t.Data = stfile.Fill(1, t.Name, stfile.ByteLen(t.DType, t.Shape))
		}
		f.Tensors = append(f.Tensors, t)
	}
	f.Tensors = append(f.Tensors, stfile.Tensor{Name: "lm_head.weight", DType: "F32", Shape: []uint64{32, 8}})
	meta := []stfile.KV{}
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
	f.Metadata = append(meta, stfile.KV{Key: "ss_epoch", Value: "10"})
	return f
}

// reorderedModel is baseModel re-serialised: metadata keys in another order, tensors in another header
// order and data laid out backwards. Structure and content IDs must not change.
func reorderedModel() stfile.File {
	f := baseModel()
	sort.Slice(f.Metadata, func(i, j int) bool { return f.Metadata[i].Key > f.Metadata[j].Key })
	ts := append([]stfile.Tensor(nil), f.Tensors...)
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
func retitledModel() stfile.File {
	f := baseModel()
	f.Metadata[len(f.Metadata)-1].Value = "My Character (v1.1)"
	return f
}

// retrainedModel is baseModel with new bytes in one tensor and nothing else changed.
func retrainedModel() stfile.File {
	f := baseModel()
	f.Tensors[5].Data = stfile.Fill(42, f.Tensors[5].Name, stfile.ByteLen(f.Tensors[5].DType, f.Tensors[5].Shape))
	return f
}

// hostileModel has names and values that would move the cursor or reorder text if printed raw.
func hostileModel() stfile.File {
	return stfile.File{Seed: 3,
		Metadata: []stfile.KV{{Key: "title\u202e", Value: "line1\nline2\x1b[2J"}},
		Tensors:  []stfile.Tensor{{Name: "evil\x1b[31mred\n.weight", DType: "F16", Shape: []uint64{2}}}}
}

// loraModel is a small kohya SD1 LoRA (rank 4) with the metadata a trainer writes, a wrong embedded
// hash (the SHA256 of empty input, as one trainer wrote into every file) and a cover image.
func loraModel() stfile.File {
	f := stfile.File{Seed: 5, Metadata: []stfile.KV{
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
			stfile.Tensor{Name: base + ".alpha", DType: "F16", Shape: []uint64{}},
			stfile.Tensor{Name: base + ".lora_down.weight", DType: "F16", Shape: []uint64{4, 768}},
			stfile.Tensor{Name: base + ".lora_up.weight", DType: "F16", Shape: []uint64{320, 4}})
	}
	return f
}

// repeatedModel lists one empty tensor six times under one name: valid (the reference keeps the last
// entry), with five duplicate-tensor-name warnings, more than text output shows of one code.
func repeatedModel() stfile.File {
	var f stfile.File
	for range 6 {
		f.Tensors = append(f.Tensors, stfile.Tensor{Name: "a", DType: "U8", Shape: []uint64{0}})
	}
	return f
}

// fixtures are the files in ../../testdata: small, generated, reviewable with stdiff itself.
func fixtures() map[string][]byte {
	base := baseModel().Build()
	m := map[string][]byte{
		"base.safetensors":       base,
		"changed.safetensors":    changedModel().Build(),
		"reordered.safetensors":  reorderedModel().Build(),
		"retitled.safetensors":   retitledModel().Build(),
		"retrained.safetensors":  retrainedModel().Build(),
		"hostile.safetensors":    hostileModel().Build(),
		"lora.safetensors":       loraModel().Build(),
		"nul-padded.safetensors": baseModel().NulPadded(),
		"repeated.safetensors":   repeatedModel().Build(),
		"truncated.safetensors":  base[:len(base)-100],
		"lfs-pointer.safetensors": []byte("version https://git-lfs.github.com/spec/v1\n" +
			"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 4823449600\n"),
	}
	for name, b := range ggufFixtures() {
		m[name] = b
	}
	return m
}

// TestFixtures keeps ../../testdata in step with the generators above (-update rewrites them).
func TestFixtures(t *testing.T) {
	for name, want := range fixtures() {
		path := filepath.Join("..", "..", "testdata", name)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./cmd/stdiff -run TestFixtures -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("testdata/%s differs from its generator (run with -update and review the diff)", name)
		}
	}
}
