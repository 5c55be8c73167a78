package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/onnx/onnxw"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/torch/torchw"
)

var update = flag.Bool("update", false, "regenerate golden files and the fixtures in ../../testdata")

// fixtureSets are the generators of the files in ../../testdata, each beside the writer of its format
// (whose TestFixtures keeps that format's files in step), by the package that owns them.
var fixtureSets = map[string]func() map[string][]byte{
	"canon/stfile":       stfile.Fixtures,
	"canon/gguf/ggufw":   ggufw.Fixtures,
	"canon/torch/torchw": torchw.Fixtures,
	"canon/onnx/onnxw":   onnxw.Fixtures,
}

// fixtures are the files in ../../testdata: small, generated, reviewable with stdiff itself.
func fixtures() map[string][]byte {
	m := map[string][]byte{}
	for _, set := range fixtureSets {
		for name, b := range set() {
			m[name] = b
		}
	}
	return m
}

// TestFixtures: every file at the top of ../../testdata is made by exactly one format's generator and
// is what it makes (-update rewrites them all, as each format's own TestFixtures does its own).
func TestFixtures(t *testing.T) {
	owner := map[string]string{}
	for pkg, set := range fixtureSets {
		for name := range set() {
			if o, ok := owner[name]; ok {
				t.Errorf("testdata/%s is made by both %s and %s", name, o, pkg)
			}
			owner[name] = pkg
		}
	}
	for name, want := range fixtures() {
		path := filepath.Join("..", "..", "testdata", name)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./%s -run TestFixtures -update)", err, owner[name])
		}
		if !bytes.Equal(got, want) {
			t.Errorf("testdata/%s differs from its generator in %s (run go test ./%s -run TestFixtures -update and review the diff)", name, owner[name], owner[name])
		}
	}
	entries, err := os.ReadDir(filepath.Join("..", "..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() && owner[e.Name()] == "" {
			t.Errorf("testdata/%s is made by no generator: add it to its format's Fixtures, or remove it", e.Name())
		}
	}
}
