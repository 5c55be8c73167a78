package stfile

import (
	"flag"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the safetensors fixtures in ../../testdata")

// TestFixtures keeps the safetensors files in ../../testdata in step with Fixtures (-update rewrites them).
func TestFixtures(t *testing.T) {
	KeepFixtures(t, Fixtures(), "../..", "./canon/stfile", *update)
}
