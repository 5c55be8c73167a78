package ggufw

import (
	"flag"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"
)

var update = flag.Bool("update", false, "rewrite the GGUF fixtures in ../../../testdata")

// TestFixtures keeps the GGUF files in ../../../testdata in step with Fixtures (-update rewrites them).
func TestFixtures(t *testing.T) {
	stfile.KeepFixtures(t, Fixtures(), "../../..", "./canon/gguf/ggufw", *update)
}
