package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// codeTypes are the types whose constants are codes scripts match: notes, categories, change and
// layout codes, the reference reader's error kinds, dupes' reasons.
var codeTypes = map[string]bool{"NoteCode": true, "Category": true, "Code": true, "ChangeKind": true, "RefKind": true,
	"KeepReason": true, "SkipReason": true, "Rule": true}

// codeName is how a finding code's constant is named, in every package that makes findings.
var codeName = regexp.MustCompile(`^Code[A-Z]`)

// libraryCodes are the codes the library declares (outside cmd/, tests aside): each string constant
// named Code… (finding codes) or of a type in codeTypes, by value, with where it is declared.
func libraryCodes(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "..")
	codes := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "cmd" || rel == "testdata" || d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				typ := ""
				switch x := vs.Type.(type) {
				case *ast.Ident:
					typ = x.Name
				case *ast.SelectorExpr:
					typ = x.Sel.Name
				}
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING || !(codeName.MatchString(name.Name) || codeTypes[typ]) {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						return err
					}
					codes[v] = filepath.ToSlash(filepath.Dir(rel)) + "." + name.Name
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return codes
}

// TestScriptingCodes fails when a code the library declares (a finding, note, category, change or
// layout code, a reference error kind, a dupes reason) is missing from the scripting contract,
// docs/scripting.md, which lists each in backquotes.
func TestScriptingCodes(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(docsDir, "scripting.md"))
	if err != nil {
		t.Fatal(err)
	}
	codes := libraryCodes(t)
	if len(codes) < 100 {
		t.Fatalf("found %d codes in the library, want more than 100: are they still declared as constants named Code… or of a code type?", len(codes))
	}
	for code, where := range codes {
		if !strings.Contains(string(page), "`"+code+"`") {
			t.Errorf("%s (%s) is not in docs/scripting.md: say there what it means", code, where)
		}
	}
}
