package scan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealTemplates: the chat templates of at least 40 popular model families (../testdata/real,
// their origin and family in ../testdata/real/SOURCES.md) parse, and none gives an issue.
func TestRealTemplates(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "real", "*.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	sources, err := os.ReadFile(filepath.Join("..", "testdata", "real", "SOURCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The table's rows: | file | repository | path | commit | family |.
	family := map[string]string{}
	for _, line := range strings.Split(string(sources), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) == 5 && strings.HasSuffix(cells[0], ".jinja") && cells[3] != "" {
			family[cells[0]] = cells[4]
		}
	}
	families := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fam, ok := family[filepath.Base(f)]
		if !ok {
			t.Errorf("%s: no origin in SOURCES.md", f)
		} else if fam != "ChatML (format)" {
			families[fam] = true
		}
		if issues := Analyze(string(b)); len(issues) > 0 {
			t.Errorf("%s: %+v", f, issues)
		}
	}
	if len(families) < 40 {
		t.Errorf("%d model families, want at least 40", len(families))
	}
}
