package onnxw

import (
	"flag"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"
)

var update = flag.Bool("update", false, "rewrite the ONNX fixtures in ../../../testdata")

// TestFixtures keeps the ONNX models in ../../../testdata in step with Fixtures (-update rewrites them).
func TestFixtures(t *testing.T) {
	stfile.KeepFixtures(t, Fixtures(), "../../..", "./canon/onnx/onnxw", *update)
}
