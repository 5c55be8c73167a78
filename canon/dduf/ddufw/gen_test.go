package ddufw

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGen writes the pipeline as a DDUF file and a folder under $DDUFW_OUT (for trying the CLI by hand).
func TestGen(t *testing.T) {
	out := os.Getenv("DDUFW_OUT")
	if out == "" {
		t.Skip("DDUFW_OUT not set: nothing to write")
	}
	if err := os.WriteFile(filepath.Join(out, "p.dduf"), Write(Pipeline()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFolder(filepath.Join(out, "p"), Pipeline()); err != nil {
		t.Fatal(err)
	}
}
