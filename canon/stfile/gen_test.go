package stfile

import (
	"os"
	"strings"
	"testing"
)

// TestWriteBenchFile writes the 50,000-tensor benchmark file where STDIFF_BENCH_FILE says (benchmark scripts use it).
func TestWriteBenchFile(t *testing.T) {
	path := os.Getenv("STDIFF_BENCH_FILE")
	if path == "" {
		t.Skip("STDIFF_BENCH_FILE not set (used by testdata/bench scripts)")
	}
	if err := os.WriteFile(path, ManyTensors(50000).Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	// A revision of it for diff benchmarks: every q_proj converted to F16 and every k_proj renamed.
	f := ManyTensors(50000)
	for i := range f.Tensors {
		switch t := &f.Tensors[i]; {
		case strings.HasSuffix(t.Name, "q_proj.weight"):
			t.DType = "F16"
		case strings.HasSuffix(t.Name, "k_proj.weight"):
			t.Name = strings.Replace(t.Name, "k_proj", "key_proj", 1)
		}
	}
	if err := os.WriteFile(strings.TrimSuffix(path, ".safetensors")+".changed.safetensors", f.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
}
