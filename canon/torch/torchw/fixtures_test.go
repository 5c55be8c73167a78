package torchw

import (
	"flag"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"
)

var update = flag.Bool("update", false, "rewrite the PyTorch fixtures in ../../../testdata")

// TestFixtures keeps the PyTorch checkpoints in ../../../testdata in step with Fixtures (-update rewrites them).
func TestFixtures(t *testing.T) {
	stfile.KeepFixtures(t, Fixtures(), "../../..", "./canon/torch/torchw", *update)
}
