package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLayering keeps the packages' direction (as crane's depcheck test does): canon/* reads models and
// imports neither hash nor diff; hash/* computes identities and duplicates and never imports diff;
// no library package imports cmd; canon/finding, which every format uses, imports nothing of stdiff;
// a format package (canon/safetensors) does not import canon, which adapts its header into Model; the
// Tensor type both share (canon/tensor) imports neither; nor
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
		{"canon/tensor", []string{"canon$", "canon/safetensors", "canon/torch", "canon/onnx", "canon/dduf", "hash", "diff", "cmd"}, "the one Tensor type, which format packages fill and canon's Model holds: a leaf below both (it may import canon/gguf, for ggml's types)"},
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

// TestFormatImports: the packages that answer the commands (what diff, hash, dupes, inspect and check
// say), and the packages under them, reach formats through canon's Model and the format registry, not
// by a format package's name (#34: adding a format is its package plus one registration line). None of
// the commands imports one; a package under them may only where it is about that one format by nature
// (byNature, with why).
func TestFormatImports(t *testing.T) {
	const module = "github.com/stdiff/stdiff/"
	commands := []string{"cmd/stdiff", "diff", "hash", "hash/dupes", "hash/dupes/act", "canon/inspect", "canon/check"}
	formats := []string{"canon/gguf", "canon/onnx", "canon/torch", "canon/safetensors", "canon/pickle", "canon/dduf", "canon/zipdir"}
	byNature := map[string]string{ // package under a command → format package: why
		"diff/ggufsrc → canon/gguf":                 "compares a GGUF file with the model it was converted from, in ggml's terms",
		"diff/onnxsrc → canon/onnx":                 "pairs an ONNX export's initializers with its source through the graph",
		"hash/dupes/internal/dupetest → canon/gguf": "writes the GGUF files dupes' tests group",
	}
	root := filepath.Join("..", "..")
	dirs := map[string]bool{} // the commands and every package under them
	for _, c := range commands {
		if err := filepath.WalkDir(filepath.Join(root, c), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			rel, _ := filepath.Rel(root, path)
			dirs[filepath.ToSlash(rel)] = true
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if slices.Contains(commands, dir) && len(files) == 0 {
			t.Fatalf("%s: no Go files", dir)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				rel, ok := strings.CutPrefix(p, module)
				if !ok || !slices.Contains(formats, rel) {
					continue
				}
				pair := dir + " → " + rel
				seen[pair] = true
				if _, ok := byNature[pair]; !ok || slices.Contains(commands, dir) {
					file, _ := filepath.Rel(root, path)
					t.Errorf("%s imports the format package %s: reach the format through canon's Model (see #34)", file, rel)
				}
			}
		}
	}
	for pair := range byNature {
		if !seen[pair] {
			t.Errorf("%s is gone: take it off byNature", pair)
		}
	}
}

// TestNoAliases keeps one name per concept (#34 item 2): no library or command file re-exports another
// stdiff package's name, as a type alias (type Finding = finding.Finding) or as a constant or variable
// whose value is just that package's identifier (const CodeX = safetensors.CodeX, var ErrX = pkg.ErrX).
// Callers name the defining package; where a command may not import it (a format package, see
// TestFormatImports), the concept belongs in a package both can import (canon/finding holds the
// safetensors codes and reference kinds). Names of the standard library (syscall's per-platform
// constants) are not re-exports of stdiff's. An alias that cannot go is listed in allowed, with why.
func TestNoAliases(t *testing.T) {
	const module = "github.com/stdiff/stdiff/"
	allowed := map[string]string{ // "file: name" → why it stays
	}
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	files := 0
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
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		ours := map[string]string{} // the name a stdiff package is imported under → its path
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(p, module)
			if !ok {
				continue
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			ours[name] = rel
		}
		// reexport says which stdiff package's name e is, when it is just that: pkg.Name.
		reexport := func(e ast.Expr) (string, bool) {
			sel, ok := e.(*ast.SelectorExpr)
			if !ok {
				return "", false
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok || ours[x.Name] == "" || !sel.Sel.IsExported() {
				return "", false
			}
			return ours[x.Name] + "." + sel.Sel.Name, true
		}
		file, _ := filepath.Rel(root, path)
		file = filepath.ToSlash(file)
		report := func(name, what, of string) {
			key := file + ": " + name
			if _, ok := allowed[key]; ok {
				seen[key] = true
				return
			}
			t.Errorf("%s: %s %s is another name for %s: name the defining package instead (one name per concept, #34)", file, what, name, of)
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range g.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if of, ok := reexport(s.Type); ok && s.Assign.IsValid() {
						report(s.Name.Name, "type", of)
					}
				case *ast.ValueSpec:
					for i, v := range s.Values {
						if of, ok := reexport(v); ok && i < len(s.Names) {
							report(s.Names[i].Name, g.Tok.String(), of)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files, want more than 100: is the walk still at the repository root?", files)
	}
	for key := range allowed {
		if !seen[key] {
			t.Errorf("%s is allowed as an alias but is gone: take it off the list", key)
		}
	}
}
