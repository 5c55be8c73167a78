package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayering keeps the packages' direction (as crane's depcheck test does): canon/* reads models and
// imports neither hash nor diff; hash/* computes identities and duplicates and never imports diff;
// no library package imports cmd; canon/finding, which every format uses, imports nothing of stdiff;
// a format package (canon/safetensors) does not import canon, which adapts its header into Model; nor
// does diff/ggufsrc import diff, which adapts its result into Report.
// A banned path bans the packages under it too, unless it ends in "$" (that package alone). Test files
// may import what they need.
func TestLayering(t *testing.T) {
	const module = "github.com/stdiff/stdiff/"
	rules := []struct {
		from   string
		banned []string
		why    string
	}{
		{"canon", []string{"hash", "diff", "cmd"}, "reading models (canon) comes before identities (hash) and comparisons (diff)"},
		{"hash", []string{"diff", "cmd"}, "identities and duplicates (hash) come before comparisons (diff)"},
		{"diff", []string{"cmd"}, "the library never depends on the command line"},
		{"canon/finding", []string{"canon", "hash", "diff", "cmd"}, "a finding is vocabulary every format package uses: it depends on none"},
		{"canon/safetensors", []string{"canon$", "hash", "diff", "cmd"}, "a format package returns its own header type, which canon adapts into Model"},
		{"diff/ggufsrc", []string{"diff$", "hash", "cmd"}, "the GGUF-against-source comparison returns its own result types, which diff adapts into its Report"},
		{"diff/onnxsrc", []string{"diff$", "hash", "cmd"}, "the ONNX-against-source pairing returns its own result types, which diff adapts into its Report"},
	}
	root := filepath.Join("..", "..")
	for _, r := range rules {
		err := filepath.WalkDir(filepath.Join(root, r.from), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				rel, ok := strings.CutPrefix(p, module)
				if !ok {
					continue
				}
				for _, b := range r.banned {
					only, exact := strings.CutSuffix(b, "$")
					if rel == only || !exact && strings.HasPrefix(rel, b+"/") {
						file, _ := filepath.Rel(root, path)
						t.Errorf("%s imports %s: %s", file, rel, r.why)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestPackageSize keeps every package small enough for a reviewer to hold in mind: no more than
// 4,000 lines of Go without its tests (issue 21). A package that grows past it splits, as diff/ggufsrc
// and hash/dupes/act did.
func TestPackageSize(t *testing.T) {
	const limit = 4000
	root := filepath.Join("..", "..")
	lines := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		lines[dir] += bytes.Count(b, []byte("\n"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, n := range lines {
		if n > limit {
			t.Errorf("package %s has %d lines without its tests, over %d: split it", dir, n, limit)
		}
	}
	if lines["diff"] == 0 {
		t.Error("package diff not counted")
	}
}
