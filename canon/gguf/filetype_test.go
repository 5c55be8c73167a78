package gguf_test

import (
	"testing"

	"github.com/stdiff/stdiff/canon/gguf"
)

// TestFileTypeName: llama.cpp's file types by the names llama-quantize gives them; guessed ones say so;
// unknown and unused numbers are named by their number.
func TestFileTypeName(t *testing.T) {
	for n, want := range map[uint64]string{0: "F32", 1: "F16", 7: "Q8_0", 15: "Q4_K_M", 17: "Q5_K_M", 18: "Q6_K",
		32: "BF16", 38: "MXFP4_MOE", 1024 + 15: "Q4_K_M (guessed)"} {
		if got, ok := gguf.FileTypeName(n); got != want || !ok {
			t.Errorf("%d: %q %v, want %q", n, got, ok, want)
		}
	}
	for n, want := range map[uint64]string{99: "file type 99", 1024: "file type 1024", 1024 + 99: "file type 1123"} {
		if got, ok := gguf.FileTypeName(n); got != want || ok {
			t.Errorf("%d: %q %v, want %q", n, got, ok, want)
		}
	}
}
