package canon_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestIDsComputedOnce: the structure and content IDs are hashed in one place, canon/id.go: no other
// file of the module (tests aside) hashes a canonical form itself, as canon/snapshot once did with a
// copy of hash's code.
func TestIDsComputedOnce(t *testing.T) {
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		if filepath.ToSlash(path) == "../canon/id.go" {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || calls(call) != "Sum256" {
				return true
			}
			for _, a := range call.Args {
				if inner, ok := a.(*ast.CallExpr); ok && (calls(inner) == "Canonical" || calls(inner) == "CanonicalContent") {
					t.Errorf("%s hashes a canonical form itself: call canon.StructureID or canon.ContentID", path)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// calls is the name of the function call calls (pkg.Name or Name), "" for anything else.
func calls(call *ast.CallExpr) string {
	switch f := call.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}
