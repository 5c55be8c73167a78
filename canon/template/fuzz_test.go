package template

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzAnalyze: no template, however malformed, makes Parse or Analyze panic or run away.
func FuzzAnalyze(f *testing.F) {
	for _, p := range payloads {
		f.Add(p.src)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "real", "*.jinja"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Parse(src)
		Analyze(src)
		if err == nil {
			Render(tpl, Conversation(), Limits{Steps: 10000, Output: 1 << 16})
		}
	})
}
