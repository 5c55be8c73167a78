package scan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealTemplates: the chat templates of popular model families (../testdata/real, their origin in
// ../testdata/real/SOURCES.md) parse, and none gives an issue.
func TestRealTemplates(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "real", "*.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("%d real templates, want at least 40", len(files))
	}
	sources, err := os.ReadFile(filepath.Join("..", "testdata", "real", "SOURCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(sources), "| "+filepath.Base(f)+" |") {
			t.Errorf("%s: no origin in SOURCES.md", f)
		}
		if issues := Analyze(string(b)); len(issues) > 0 {
			t.Errorf("%s: %+v", f, issues)
		}
	}
}
