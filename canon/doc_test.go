package canon_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocumented: the go doc of every package of the module opens on a package comment, and every
// exported name (constant, variable, function, type, method) has a doc comment. Constants and
// variables declared in a group may share the group's comment.
func TestDocumented(t *testing.T) {
	root := ".."
	pkgs := map[string][]*ast.File{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && p != root)) {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		pkgs[filepath.Dir(p)] = append(pkgs[filepath.Dir(p)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("only %d packages found under %s", len(pkgs), root)
	}
	for dir, files := range pkgs {
		p, err := doc.NewFromFiles(fset, files, dir)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(p.Doc) == "" {
			t.Errorf("%s: no package comment", dir)
		}
		if p.Name == "main" {
			continue
		}
		undocumented := func(what, name, docText string) {
			if strings.TrimSpace(docText) == "" {
				t.Errorf("%s: %s %s has no doc comment", dir, what, name)
			}
		}
		values := func(vs []*doc.Value) {
			for _, v := range vs {
				if strings.TrimSpace(v.Doc) != "" {
					continue
				}
				for _, spec := range v.Decl.Specs {
					vs := spec.(*ast.ValueSpec)
					for _, n := range vs.Names {
						if n.IsExported() && vs.Doc.Text() == "" && vs.Comment.Text() == "" {
							undocumented("value", n.Name, "")
						}
					}
				}
			}
		}
		values(p.Consts)
		values(p.Vars)
		for _, f := range p.Funcs {
			undocumented("func", f.Name, f.Doc)
		}
		for _, ty := range p.Types {
			undocumented("type", ty.Name, ty.Doc)
			values(ty.Consts)
			values(ty.Vars)
			for _, f := range ty.Funcs {
				undocumented("func", f.Name, f.Doc)
			}
			for _, m := range ty.Methods {
				undocumented("method", ty.Name+"."+m.Name, m.Doc)
			}
		}
	}
}
