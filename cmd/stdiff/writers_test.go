package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOneWriterPerReport: a report package has one exported writer per report, Write(w, report,
// WriteOptions) (or WriteShort, WriteVerify, WriteHubMatch for its second and third reports), which
// writes the format its options name; the renderers of each format are its own, unexported. #34 found
// 42 exported Write* functions in these packages (WriteText, WriteJSON, WriteJSONL, WriteMarkdown,
// WriteHTML per report, and more), and cmd/stdiff picking one by --format; they are 10 now: a report's
// writer each, and check.WriteFindings (the findings block inspect's card shares). A ratchet: the test
// fails when there are more, and is to be lowered when there are fewer.
func TestOneWriterPerReport(t *testing.T) {
	const most = 10
	root := filepath.Join("..", "..")
	var found []string
	for _, pkg := range []string{"canon/check", "canon/inspect", "diff", "hash", "hash/dupes", "hash/dupes/render", "hash/dupes/act"} {
		files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", pkg, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.IsExported() && strings.HasPrefix(fn.Name.Name, "Write") {
					found = append(found, pkg+"."+fn.Name.Name)
				}
			}
		}
	}
	slices.Sort(found)
	if len(found) > most {
		t.Errorf("%d exported writers in the report packages, at most %d: a report has one, Write with WriteOptions.Format (see #34):\n%s",
			len(found), most, strings.Join(found, "\n"))
	} else if len(found) < most {
		t.Logf("%d exported writers, fewer than %d: lower the ratchet", len(found), most)
	}
}
