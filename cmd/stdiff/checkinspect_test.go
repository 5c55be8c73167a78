package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/check"
	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/canon/values"
)

// testdata names fixtures of ../../testdata.
func testdata(names ...string) []string {
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = filepath.Join("..", "..", "testdata", n)
	}
	return paths
}

// cliJSON runs the CLI in-process with --json and returns what it printed on stdout.
func cliJSON(t *testing.T, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	run(append([]string{"--json"}, args...), &stdout, &stderr)
	if stdout.Len() == 0 {
		t.Fatalf("%v: no output; stderr: %s", args, stderr.String())
	}
	return stdout.Bytes()
}

// TestJSONIsTheLibrarys: what check, inspect and inspect --short print with --json is, byte for
// byte, what their library function and JSON writer give: nothing a library user would need is
// left in the CLI.
func TestJSONIsTheLibrarys(t *testing.T) {
	ctx := t.Context()
	t.Run("check", func(t *testing.T) {
		specs := testdata("base.safetensors", "nul-padded.safetensors", "repeated.safetensors", "truncated.safetensors", "hostile.safetensors", "missing.safetensors", "broken.gguf", "llama.gguf")
		var lib bytes.Buffer
		if err := check.Write(&lib, check.Run(ctx, specs, check.Options{}), check.WriteOptions{Format: textfmt.JSON}); err != nil {
			t.Fatal(err)
		}
		if got := cliJSON(t, append([]string{"check"}, specs...)...); !bytes.Equal(got, lib.Bytes()) {
			t.Errorf("CLI\n%s\nlibrary\n%s", got, lib.Bytes())
		}
	})
	t.Run("check --values", func(t *testing.T) {
		specs := testdata("weights-finetuned.safetensors", "lora-untrained.safetensors", "weights-bf16.safetensors", "truncated.safetensors", "missing.safetensors")
		var lib bytes.Buffer
		if err := check.Write(&lib, check.Run(ctx, specs, check.Options{Values: check.ScanValues(values.Options{})}), check.WriteOptions{Format: textfmt.JSON}); err != nil {
			t.Fatal(err)
		}
		if got := cliJSON(t, append([]string{"check", "--values"}, specs...)...); !bytes.Equal(got, lib.Bytes()) {
			t.Errorf("CLI\n%s\nlibrary\n%s", got, lib.Bytes())
		}
	})
	t.Run("inspect", func(t *testing.T) {
		specs := testdata("lora.safetensors", "hostile.safetensors", "lfs-pointer.safetensors", "base.safetensors", "llama.gguf", "odd.gguf")
		var lib bytes.Buffer
		for _, spec := range specs {
			card, err := inspect.Inspect(ctx, spec, inspect.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := inspect.Write(&lib, card, inspect.WriteOptions{Format: textfmt.JSON}); err != nil {
				t.Fatal(err)
			}
		}
		if got := cliJSON(t, append([]string{"inspect"}, specs...)...); !bytes.Equal(got, lib.Bytes()) {
			t.Errorf("CLI\n%s\nlibrary\n%s", got, lib.Bytes())
		}
	})
	t.Run("inspect --short", func(t *testing.T) {
		roots := append(testdata("."), testdata("missing.safetensors")...)
		var lib bytes.Buffer
		if err := inspect.WriteShort(&lib, inspect.Short(ctx, roots, inspect.Options{}), inspect.WriteOptions{Format: textfmt.JSON}); err != nil {
			t.Fatal(err)
		}
		if got := cliJSON(t, append([]string{"inspect", "--short"}, roots...)...); !bytes.Equal(got, lib.Bytes()) {
			t.Errorf("CLI\n%s\nlibrary\n%s", got, lib.Bytes())
		}
	})
}
