package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/check"
	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/hash"
)

// TestReportsStreamAsEncoded: what the commands print with --json, streamed by textfmt.WriteJSON, is
// byte for byte what encoding/json writes.
func TestReportsStreamAsEncoded(t *testing.T) {
	values := map[string]any{}
	var specs []string
	for _, name := range []string{"base.safetensors", "nul-padded.safetensors", "repeated.safetensors", "truncated.safetensors", "hostile.safetensors", "missing.safetensors"} {
		specs = append(specs, filepath.Join("..", "..", "testdata", name))
	}
	values["check"] = check.Run(t.Context(), specs, check.Options{})
	for _, name := range []string{"lora.safetensors", "hostile.safetensors", "llama.gguf"} {
		card, err := inspect.Inspect(t.Context(), filepath.Join("..", "..", "testdata", name), inspect.Options{})
		if err != nil {
			t.Fatal(err)
		}
		values["inspect "+name] = card
	}
	values["inspect --short"] = inspect.Short(t.Context(), []string{filepath.Join("..", "..", "testdata")}, inspect.Options{})
	values["hash"] = hash.Run(t.Context(), []string{filepath.Join("..", "..", "testdata", "lora.safetensors"), "z"}, hash.Options{All: true})
	for name, v := range values {
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := textfmt.WriteJSON(&got, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: streamed\n%s\nencoding/json\n%s", name, got.Bytes(), want.Bytes())
		}
	}
}
