package ggufw_test

import (
	"os"
	"testing"

	"github.com/stdiff/stdiff/canon/gguf/ggufw"
)

// TestWriteBenchFile writes the GGUF benchmark file where STDIFF_BENCH_GGUF says (testdata/bench/gguf.sh
// uses it): 50,000 tensors and a tokenizer of 150,000 tokens, as ggufw.Synthetic makes them.
func TestWriteBenchFile(t *testing.T) {
	path := os.Getenv("STDIFF_BENCH_GGUF")
	if path == "" {
		t.Skip("STDIFF_BENCH_GGUF not set (used by testdata/bench/gguf.sh)")
	}
	if err := os.WriteFile(path, ggufw.Synthetic(50_000, 150_000).Build(), 0o644); err != nil {
		t.Fatal(err)
	}
}
