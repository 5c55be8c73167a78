//go:build unix

package dupes

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/stfile"
)

// splitGGUF is a GGUF model split in n files as llama.cpp's gguf-split writes them (two tensors each):
// name goes into general.name, seed varies the weights.
func splitGGUF(n int, name string, seed byte) [][]byte {
	var out [][]byte
	for k := range n {
		kvs := []ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("llama")}, {Key: "general.name", Val: ggufw.Str(name)},
			{Key: gguf.SplitNoKey, Val: ggufw.U16(uint16(k))}, {Key: gguf.SplitCountKey, Val: ggufw.U16(uint16(n))},
			{Key: gguf.SplitTensorsKey, Val: ggufw.I32(int32(2 * n))}}
		f := ggufw.File{KVs: kvs}
		for i := range 2 {
			data := make([]byte, 256*4)
			for j := range data {
				data[j] = byte(j) ^ seed ^ byte(k*2+i)
			}
			f.Tensors = append(f.Tensors, ggufw.Tensor{Name: fmt.Sprintf("blk.%d.ffn.weight", k*2+i), Type: gguf.TypeF32, Dims: []int64{256}, Data: data})
		}
		out = append(out, f.Build())
	}
	return out
}

// splitSafetensors is a set of n shards without an index (two tensors each); seed varies the weights.
func splitSafetensors(n int, seed int64) [][]byte {
	var out [][]byte
	for k := range n {
		f := stfile.File{Seed: seed + int64(k)}
		for i := range 2 {
			f.Tensors = append(f.Tensors, stfile.Tensor{Name: fmt.Sprintf("layers.%d.weight", k*2+i), DType: "F16", Shape: []uint64{8, 16}})
		}
		out = append(out, f.Build())
	}
	return out
}

// writeSplit writes files as prefix-0000K-of-0000N.ext in dir and returns their paths.
func writeSplit(t *testing.T, dir, prefix, ext string, files [][]byte) []string {
	t.Helper()
	var paths []string
	for k, b := range files {
		p := filepath.Join(dir, fmt.Sprintf("%s-%05d-of-%05d.%s", prefix, k+1, len(files), ext))
		mustWrite(t, p, b)
		paths = append(paths, p)
	}
	return paths
}

// complete reports whether every file of paths exists.
func complete(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

// TestSetsWithoutIndexAreOneModel: a split GGUF model and a set of shards without an index are each one
// model: a copy of either is a copy of the whole, kept or deleted whole, so that whichever file of the
// copies is newer, --delete leaves one complete copy.
func TestSetsWithoutIndexAreOneModel(t *testing.T) {
	for _, c := range []struct {
		name, ext string
		files     [][]byte
	}{
		{"split GGUF", "gguf", splitGGUF(3, "tiny", 1)},
		{"shards without an index", "safetensors", splitSafetensors(2, 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			a := writeSplit(t, filepath.Join(dir, "a"), "model", c.ext, c.files)
			b := writeSplit(t, filepath.Join(dir, "b"), "model", c.ext, c.files)
			// Each set has a newest file: by files, --keep newest would keep a file of each.
			old := time.Now().Add(-time.Hour)
			for i := range a {
				os.Chtimes(a[i], old, old.Add(time.Duration(i)*time.Minute))
				os.Chtimes(b[i], old, old.Add(time.Duration(len(b)-1-i)*time.Minute))
			}
			rep, err := Find(t.Context(), []string{dir}, Options{Keep: KeepRule{Kind: KeepNewest}})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Files != 2 || len(rep.Groups) != 1 || rep.Groups[0].Level != LevelBytes || rep.Groups[0].Members[0].Shards != len(c.files) ||
				len(rep.Groups[0].Members[1].Files) != len(c.files) {
				t.Fatalf("%d models, groups %+v", rep.Files, rep.Groups)
			}
			r, err := Act(t.Context(), rep, ActOptions{Delete: true})
			if err != nil || r.Failed > 0 || r.Deleted != 1 {
				t.Errorf("act: %v, %+v", err, r)
			}
			if ca, cb := complete(a), complete(b); ca == cb {
				t.Errorf("after --delete: a complete %v, b complete %v", ca, cb)
			}
			for _, p := range append(a, b...) {
				if _, err := os.Stat(p); err != nil && (complete(a) && filepath.Dir(p) == filepath.Join(dir, "a") || complete(b) && filepath.Dir(p) == filepath.Join(dir, "b")) {
					t.Errorf("%s gone", p)
				}
			}
		})
	}
	// Split GGUF models that differ in a key llama.cpp reads only as text (general.name) are content
	// copies, not identical files: every file's header counts.
	dir := t.TempDir()
	writeSplit(t, filepath.Join(dir, "a"), "model", "gguf", splitGGUF(2, "tiny", 1))
	writeSplit(t, filepath.Join(dir, "b"), "model", "gguf", splitGGUF(2, "tiny, renamed", 1))
	if got := groupsOf(scan(t, dir)); fmt.Sprint(got) != fmt.Sprint(map[Level][]string{LevelContent: {"model-00001-of-00002.gguf", "model-00001-of-00002.gguf"}}) {
		t.Errorf("groups %v", got)
	}
}

// TestPartsOfModelsStay: a file that is one part of a model made of several (a diffusers pipeline's
// component, a shard whose set is not all there) may be the kept copy of a group, never a copy to
// delete: two identical pipelines are no duplicates file by file, and a loose copy of a component goes,
// never the component.
func TestPartsOfModelsStay(t *testing.T) {
	dir := t.TempDir()
	unet := stfile.File{Seed: 1, Tensors: []stfile.Tensor{{Name: "conv_in.weight", DType: "F16", Shape: []uint64{8, 8}}}}
	vae := stfile.File{Seed: 2, Tensors: []stfile.Tensor{{Name: "decoder.weight", DType: "F16", Shape: []uint64{8, 8}}}}
	for _, p := range []string{"p1", "p2"} {
		mustWrite(t, filepath.Join(dir, p, "model_index.json"), []byte(`{"_class_name": "StableDiffusionPipeline", "unet": ["diffusers", "UNet2DConditionModel"], "vae": ["diffusers", "AutoencoderKL"]}`))
		mustWrite(t, filepath.Join(dir, p, "unet", "diffusion_pytorch_model.safetensors"), unet.Build())
		mustWrite(t, filepath.Join(dir, p, "vae", "diffusion_pytorch_model.safetensors"), vae.Build())
	}
	mustWrite(t, filepath.Join(dir, "loose", "vae.safetensors"), vae.Build())
	shards := splitSafetensors(2, 5)
	mustWrite(t, filepath.Join(dir, "half", "model-00001-of-00002.safetensors"), shards[0])
	mustWrite(t, filepath.Join(dir, "half2", "model-00001-of-00002.safetensors"), shards[0])
	rep := scan(t, dir)
	if len(rep.Groups) != 1 || rep.Groups[0].Level != LevelBytes || rep.Groups[0].Keeper != filepath.Join(dir, "p1", "vae", "diffusion_pytorch_model.safetensors") ||
		rep.Groups[0].KeeperReason != ReasonPartOfModel || rep.Groups[0].Members[1].Path != filepath.Join(dir, "loose", "vae.safetensors") {
		t.Errorf("groups %+v", rep.Groups)
	}
}
