//go:build unix

package dupes

import (
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"
)

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
