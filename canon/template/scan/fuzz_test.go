package scan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/template"
)

// FuzzAnalyze: no template, however malformed, makes Parse, Analyze or Render panic or run away.
func FuzzAnalyze(f *testing.F) {
	for _, p := range payloads {
		f.Add(p.src)
	}
	for _, p := range bypasses {
		f.Add(p.src)
	}
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "real", "*.jinja"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := template.Parse(src)
		Analyze(src)
		if err == nil {
			template.Render(tpl, template.Conversation(), template.Limits{Steps: 10000, Output: 1 << 16})
		}
	})
}
