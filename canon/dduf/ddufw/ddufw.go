// Package ddufw writes DDUF files for tests: zip archives made with archive/zip, their members
// stored (or, to test the rules, deflated, flagged encrypted, named twice or badly), and the same
// pipeline as a folder.
package ddufw

import (
	"bytes"
	"compress/flate"
	"hash/crc32"
	"os"
	"path/filepath"

	"archive/zip"

	"github.com/stdiff/stdiff/canon/stfile"
)

// Member is one file of the archive.
type Member struct {
	Name string
	Data []byte
	// Deflate compresses it; Encrypted sets the encrypted flag (the bytes stay as they are).
	Deflate, Encrypted bool
	// Extra is its extra field, in its local and central headers.
	Extra []byte
}

// Write makes an archive of members, in order, with archive/zip.
func Write(members []Member) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, m := range members {
		fh := &zip.FileHeader{Name: m.Name, Method: zip.Store, CRC32: crc32.ChecksumIEEE(m.Data),
			UncompressedSize64: uint64(len(m.Data)), Extra: m.Extra}
		data := m.Data
		if m.Deflate {
			var c bytes.Buffer
			fw, _ := flate.NewWriter(&c, flate.BestSpeed)
			fw.Write(m.Data)
			fw.Close()
			fh.Method, data = zip.Deflate, c.Bytes()
		}
		fh.CompressedSize64 = uint64(len(data))
		if m.Encrypted {
			fh.Flags |= 1
		}
		wr, err := w.CreateRaw(fh)
		if err != nil {
			panic(err)
		}
		wr.Write(data)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// Index is a model_index.json naming the components of Pipeline.
const Index = `{
  "_class_name": "StableDiffusionPipeline",
  "_diffusers_version": "0.32.0",
  "scheduler": ["diffusers", "PNDMScheduler"],
  "text_encoder": ["transformers", "CLIPTextModel"],
  "tokenizer": ["transformers", "CLIPTokenizer"],
  "unet": ["diffusers", "UNet2DConditionModel"],
  "vae": ["diffusers", "AutoencoderKL"],
  "safety_checker": [null, null]
}
`

// Weights are a component's safetensors weights: a few small tensors, seeded by the component's
// name and seed (another seed changes every tensor's values, nothing else).
func Weights(component string, seed int64) []byte {
	f := stfile.File{Seed: seed + int64(len(component))*7919}
	for _, n := range []string{"conv_in.weight", "conv_in.bias", "norm.weight"} {
		f.Tensors = append(f.Tensors, stfile.Tensor{Name: n, DType: "F32", Shape: []uint64{4, 2}})
	}
	if component == "text_encoder" {
		f.Tensors = append(f.Tensors, stfile.Tensor{Name: "embeddings.weight", DType: "F16", Shape: []uint64{16, 4}})
	}
	return f.Build()
}

// Pipeline is a small valid pipeline's members, as export_folder_as_dduf writes them (its files
// in path order): model_index.json, and per component its config and weights; the tokenizer's
// sentencepiece model is a .model member.
func Pipeline() []Member {
	return []Member{
		{Name: "model_index.json", Data: []byte(Index)},
		{Name: "scheduler/scheduler_config.json", Data: []byte(`{"_class_name": "PNDMScheduler", "num_train_timesteps": 1000}` + "\n")},
		{Name: "text_encoder/config.json", Data: []byte(`{"architectures": ["CLIPTextModel"], "hidden_size": 4}` + "\n")},
		{Name: "text_encoder/model.safetensors", Data: Weights("text_encoder", 1)},
		{Name: "tokenizer/special_tokens_map.json", Data: []byte(`{"bos_token": "<|startoftext|>"}` + "\n")},
		{Name: "tokenizer/spiece.model", Data: []byte("\x0a\x05hello sentencepiece")},
		{Name: "tokenizer/tokenizer_config.json", Data: []byte(`{"model_max_length": 77}` + "\n")},
		{Name: "tokenizer/vocab.txt", Data: []byte("a\nb\n")},
		{Name: "unet/config.json", Data: []byte(`{"_class_name": "UNet2DConditionModel", "in_channels": 4}` + "\n")},
		{Name: "unet/diffusion_pytorch_model.safetensors", Data: Weights("unet", 1)},
		{Name: "vae/config.json", Data: []byte(`{"_class_name": "AutoencoderKL", "latent_channels": 4}` + "\n")},
		{Name: "vae/diffusion_pytorch_model.safetensors", Data: Weights("vae", 1)},
	}
}

// WriteFolder writes members as files under dir: the pipeline as a folder.
func WriteFolder(dir string, members []Member) error {
	for _, m := range members {
		p := filepath.Join(dir, filepath.FromSlash(m.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, m.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
