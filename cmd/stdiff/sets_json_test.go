package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/diff"
)

// TestSetsJSONIsTheLibrarys: for an index whose shards are missing and for a diffusers pipeline, what
// inspect and diff print with --json (the tensors' shards, tensors.moved, the new notes) is, byte for
// byte, what the library gives.
func TestSetsJSONIsTheLibrarys(t *testing.T) {
	dir := t.TempDir()
	write := func(p string, b []byte) {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fx := fixtures()
	write("v1/model.safetensors.index.json", []byte(`{"weight_map": {"a": "m-00001-of-00002.safetensors", "b": "m-00002-of-00002.safetensors"}}`))
	write("v2/model.safetensors.index.json", []byte(`{"weight_map": {"a": "m-00002-of-00002.safetensors", "c": "m-00002-of-00002.safetensors"}}`))
	write("pipe/model_index.json", []byte(`{"_class_name": "P", "unet": ["diffusers", "U"], "vae": ["diffusers", "V"], "tokenizer": ["transformers", "T"]}`))
	write("pipe/unet/diffusion_pytorch_model.safetensors", fx["base.safetensors"])
	write("pipe/vae/diffusion_pytorch_model.safetensors", fx["lora.safetensors"])
	write("pipe2/model_index.json", []byte(`{"_class_name": "P", "unet": ["diffusers", "U"], "vae": ["diffusers", "V"]}`))
	write("pipe2/unet/diffusion_pytorch_model.safetensors", fx["changed.safetensors"])
	write("pipe2/vae/diffusion_pytorch_model.safetensors", fx["lora.safetensors"])
	at := func(p string) string { return filepath.Join(dir, p) }

	for _, spec := range []string{at("v1"), at("pipe")} {
		card, err := inspect.Inspect(t.Context(), spec, inspect.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var lib bytes.Buffer
		if err := inspect.Write(&lib, card, inspect.WriteOptions{Format: textfmt.JSON}); err != nil {
			t.Fatal(err)
		}
		if got := cliJSON(t, "inspect", spec); !bytes.Equal(got, lib.Bytes()) {
			t.Errorf("inspect %s: CLI\n%s\nlibrary\n%s", spec, got, lib.Bytes())
		}
	}
	for _, pair := range [][2]string{{at("v1"), at("v2")}, {at("pipe"), at("pipe2")}} {
		a, err := source.Open(t.Context(), pair[0], source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := source.Open(t.Context(), pair[1], source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := diff.Models(t.Context(), a, b, diff.Options{})
		a.Close()
		b.Close()
		if err != nil {
			t.Fatal(err)
		}
		var lib bytes.Buffer
		if err := diff.Write(&lib, r, diff.WriteOptions{Format: textfmt.JSON}); err != nil {
			t.Fatal(err)
		}
		if got := cliJSON(t, "diff", pair[0], pair[1]); !bytes.Equal(got, lib.Bytes()) {
			t.Errorf("diff %s: CLI\n%s\nlibrary\n%s", pair, got, lib.Bytes())
		}
		if pair[0] == at("v1") && !bytes.Contains(lib.Bytes(), []byte(`"moved": [`)) {
			t.Errorf("no moves in\n%s", lib.Bytes())
		}
	}
}
