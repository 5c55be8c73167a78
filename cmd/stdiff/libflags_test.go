package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// cliFlag is a long flag in a string: "--" after a character that cannot be part of a word.
var cliFlag = regexp.MustCompile(`(?:^|[^A-Za-z0-9_-])--([a-z][a-z0-9-]*)`)

// TestLibraryNamesNoFlags fails when a string literal of the library (outside cmd/, tests and comments
// aside) names a flag of stdiff's CLI: the library's errors, notes and reports carry codes and values,
// and cmd/stdiff words them with its flags (a Go program using the library has no flags).
func TestLibraryNamesNoFlags(t *testing.T) {
	var c cli
	k, err := newParser(&c, io.Discard, io.Discard, "stdiff dev")
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]bool{}
	for _, group := range k.Model.AllFlags(true) {
		for _, f := range group {
			flags[f.Name] = true
		}
	}
	for _, n := range k.Model.Children {
		for _, f := range n.Flags {
			flags[f.Name] = true
		}
	}
	delete(flags, "help") // --help is every program's
	// The words stdiff gives the library's options are its flags.
	for option, flag := range optionFlags {
		if !flags[strings.TrimPrefix(flag, "--")] {
			t.Errorf("optionFlags names %s %s, which is no flag of stdiff", option, flag)
		}
	}
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "cmd" || d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, m := range cliFlag.FindAllStringSubmatch(s, -1) {
				if flags[m[1]] {
					t.Errorf("%s: a library string names the CLI flag --%s: give the error or note a code (or an option its writer takes) and let cmd/stdiff word it", fset.Position(lit.Pos()), m[1])
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
