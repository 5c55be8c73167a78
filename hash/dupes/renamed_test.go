package dupes

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/hash/dupes/dupecache"
)

// kohyaLoRA is a kohya LoRA of n modules (alpha, lora_down, lora_up each) whose tensor bytes come from
// seed; peft is the same weights under PEFT's names (unet.….lora_A.weight) without the alphas.
func kohyaLoRA(seed int64, n int) (kohya, peft stfile.File) {
	kohya = stfile.File{Seed: seed, Metadata: []stfile.KV{{Key: "ss_output_name", Value: "pepper"}, {Key: "ss_network_dim", Value: "4"}}}
	peft = stfile.File{Metadata: []stfile.KV{{Key: "format", Value: "pt"}}}
	for i := 0; i < n; i++ {
		base := fmt.Sprintf("down_blocks_%d_attentions_0_to_k", i)
		kohya.Tensors = append(kohya.Tensors,
			stfile.Tensor{Name: "lora_unet_" + base + ".alpha", DType: "F16", Shape: []uint64{}},
			stfile.Tensor{Name: "lora_unet_" + base + ".lora_down.weight", DType: "F16", Shape: []uint64{4, 64 + uint64(i%3)*32}},
			stfile.Tensor{Name: "lora_unet_" + base + ".lora_up.weight", DType: "F16", Shape: []uint64{64, 4}})
	}
	b := kohya.Build()
	m := readBytes(b)
	for _, t := range m.Tensors {
		if strings.HasSuffix(t.Name, ".alpha") {
			continue
		}
		base, role, _ := strings.Cut(strings.TrimPrefix(t.Name, "lora_unet_"), ".")
		name := "unet." + strings.Replace(strings.Replace(base, "_attentions_", ".attentions.", 1), "down_blocks_", "down_blocks.", 1) +
			map[string]string{"lora_down.weight": ".lora_A.weight", "lora_up.weight": ".lora_B.weight"}[role]
		name = strings.Replace(name, "_to_k.", ".to_k.", 1)
		peft.Tensors = append(peft.Tensors, stfile.Tensor{Name: name, DType: string(t.DType), Shape: t.Shape,
			Data: b[m.DataOffset()+int64(t.Begin) : m.DataOffset()+int64(t.End)]})
	}
	sort.Slice(peft.Tensors, func(i, j int) bool { return peft.Tensors[i].Name < peft.Tensors[j].Name })
	return kohya, peft
}

// TestFindRenamed: a kohya LoRA re-keyed to PEFT's names is a renamed copy, reported with the name
// mapping and kohya's alphas as on one side only; a checkpoint saved with a prefix is one too; a
// re-keyed copy with one changed weight is none; the cache remembers, so a second scan reads nothing.
func TestFindRenamed(t *testing.T) {
	dir := t.TempDir()
	kohya, peft := kohyaLoRA(5, 12)
	mustWrite(t, filepath.Join(dir, "kohya.safetensors"), kohya.Build())
	mustWrite(t, filepath.Join(dir, "peft", "adapter_model.safetensors"), peft.Build())
	other, _ := kohyaLoRA(6, 12) // same shapes, other weights
	mustWrite(t, filepath.Join(dir, "other.safetensors"), other.Build())
	_, changed := kohyaLoRA(5, 12)
	changed.Tensors[3].Data = append([]byte(nil), changed.Tensors[3].Data...)
	changed.Tensors[3].Data[5] ^= 1
	mustWrite(t, filepath.Join(dir, "changed", "adapter_model.safetensors"), changed.Build())
	ckpt := stfile.File{Seed: 9}
	prefixed := stfile.File{}
	for i := 0; i < 6; i++ {
		ckpt.Tensors = append(ckpt.Tensors, stfile.Tensor{Name: fmt.Sprintf("layers.%d.weight", i), DType: "F32", Shape: []uint64{8, 8}})
	}
	cb := ckpt.Build()
	cm := readBytes(cb)
	for _, t := range cm.Tensors {
		prefixed.Tensors = append(prefixed.Tensors, stfile.Tensor{Name: "model.diffusion_model." + t.Name, DType: string(t.DType), Shape: t.Shape,
			Data: cb[cm.DataOffset()+int64(t.Begin) : cm.DataOffset()+int64(t.End)]})
	}
	mustWrite(t, filepath.Join(dir, "ckpt.safetensors"), cb)
	mustWrite(t, filepath.Join(dir, "ckpt-prefixed.safetensors"), prefixed.Build())

	cache, _ := dupecache.OpenCache(filepath.Join(t.TempDir(), dupecache.CacheFile))
	for run := 0; run < 2; run++ {
		rep, err := Find(t.Context(), []string{dir}, Options{Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		cache.Save(t.Context())
		var renamed []Group
		for _, g := range rep.Groups {
			if g.Level == LevelRenamed {
				renamed = append(renamed, g)
			} else {
				t.Errorf("run %d: a %s group: %v", run, g.Level, g.Files)
			}
		}
		if len(renamed) != 2 {
			t.Fatalf("run %d: renamed groups %+v", run, renamed)
		}
		lora, ck := renamed[1], renamed[0]
		if lora.Keeper != filepath.Join(dir, "kohya.safetensors") || lora.KeeperReason != ReasonMostInfo || len(lora.Members) != 2 ||
			lora.Members[1].Path != filepath.Join(dir, "peft", "adapter_model.safetensors") {
			t.Fatalf("run %d: LoRA group %+v", run, lora)
		}
		r := lora.Members[1].Differences.Renamed
		if len(r.Mapping) != 24 || r.Mapping[0] != (RenamePair{"lora_unet_down_blocks_0_attentions_0_to_k.lora_down.weight", "unet.down_blocks.0.attentions.0.to_k.lora_A.weight"}) ||
			len(r.OnlyInKeeper) != 12 || !strings.HasSuffix(r.OnlyInKeeper[0], ".alpha") || len(r.OnlyHere) != 0 {
			t.Errorf("run %d: renaming %+v", run, r)
		}
		if len(ck.Files) != 2 || len(ck.Members[1].Differences.Renamed.Mapping) != 6 {
			t.Errorf("run %d: checkpoint group %+v", run, ck)
		}
		if run == 1 && rep.TensorBytesRead != 0 {
			t.Errorf("second scan read %d tensor bytes", rep.TensorBytesRead)
		}
		if rep.Reclaimable != 0 {
			t.Errorf("renamed copies counted as reclaimable: %d", rep.Reclaimable)
		}
	}
	// Only renamed groups: acting (package act) does nothing.
	rep, _ := Find(t.Context(), []string{dir}, Options{})
	for i := range rep.Groups {
		if rep.ActsOn(&rep.Groups[i], false) || rep.ActsOn(&rep.Groups[i], true) {
			t.Errorf("acts on renamed copies: %+v", rep.Groups[i])
		}
	}
	if rep, _ := Find(t.Context(), []string{dir}, Options{Level: LevelContent}); len(rep.Groups) != 0 {
		t.Errorf("--level content: %+v", rep.Groups)
	}
}

// readBytes reads a whole file held in memory.
func readBytes(b []byte) *canon.Model { return canon.ReadBytes("x", b) }
