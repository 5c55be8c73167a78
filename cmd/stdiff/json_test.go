package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/hash"
)

// TestReportsStreamAsEncoded: what the commands print with --json, streamed by textfmt.WriteJSON, is
// byte for byte what encoding/json writes.
func TestReportsStreamAsEncoded(t *testing.T) {
	values := map[string]any{}
	read := func(name string) *canon.Model {
		o, err := source.Open(t.Context(), filepath.Join("..", "..", "testdata", name), source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		return o.Model
	}
	var files []checkFileJSON
	for _, name := range []string{"base.safetensors", "nul-padded.safetensors", "repeated.safetensors", "truncated.safetensors", "hostile.safetensors"} {
		m := read(name)
		files = append(files, checkFileJSON{Path: name, Valid: m.Valid(), Findings: findingsJSON(m.Findings), FindingCounts: m.FindingCounts()})
	}
	values["check"] = filesJSON{Schema: "stdiff.check/v1", Files: files}
	for _, name := range []string{"lora.safetensors", "hostile.safetensors"} {
		in, err := inspectFile(context.Background(), source.Options{}, filepath.Join("..", "..", "testdata", name), false)
		if err != nil {
			t.Fatal(err)
		}
		values["inspect "+name] = (&inspectCmd{}).toJSON(in)
	}
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
