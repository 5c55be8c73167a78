package torchw

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the PyTorch fixtures in ../../../testdata")

// TestFixtures keeps the PyTorch checkpoints in ../../../testdata in step with Fixtures (-update rewrites them).
func TestFixtures(t *testing.T) {
	for name, want := range Fixtures() {
		path := filepath.Join("..", "..", "..", "testdata", name)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./canon/torch/torchw -run TestFixtures -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("testdata/%s differs from its generator (run go test ./canon/torch/torchw -run TestFixtures -update and review the diff)", name)
		}
	}
}
