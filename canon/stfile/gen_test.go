package stfile

import (
	"os"
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
}
