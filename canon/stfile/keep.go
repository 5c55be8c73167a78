package stfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// KeepFixtures keeps the committed fixture files in the project's testdata folder in step with their
// generator's files (name → bytes): with update it rewrites them, otherwise it fails t for each file that
// is missing or differs. root is the project's root from the calling test's folder; pkg the calling
// package's path from there (./canon/stfile), named in the message that says how to regenerate.
func KeepFixtures(t testing.TB, files map[string][]byte, root, pkg string, update bool) {
	t.Helper()
	regenerate := "go test " + pkg + " -run TestFixtures -update"
	for name, want := range files {
		path := filepath.Join(root, "testdata", name)
		if update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run %s)", err, regenerate)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("testdata/%s differs from its generator (run %s and review the diff)", name, regenerate)
		}
	}
}
