package derived

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/source"
)

// TestInherit: on the files python3-torch wrote (hash/dupes/testdata/derived/make.py), copied beside a
// CivitAI record of the F32 original, inspect of the .half() copy and of the pruned half .pt shows the
// original's name, ids, base model and trigger words, saying they come from dreamy_v3.safetensors and
// how; the unrelated model of the same shapes inherits nothing, nor does the original itself.
func TestInherit(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "testdata", "derived")
	for _, n := range []string{"dreamy_v3.safetensors", "dreamy_v3.pt", "dreamy_v3-fp16.safetensors", "dreamy_v3-pruned-fp16.pt", "unrelated-fp16.safetensors"} {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec := `{"id": 222, "modelId": 111, "name": "v3", "model": {"name": "Dreamy"}, "baseModel": "SD 1.5", "trainedWords": ["dreamy style"]}`
	if err := os.WriteFile(filepath.Join(dir, "dreamy_v3.civitai.info"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := inspect.Options{Inherit: func(ctx context.Context, c *inspect.Card, spec string) { Inherit(ctx, c, spec, source.Options{}) }}
	for name, want := range map[string]string{
		"dreamy_v3-fp16.safetensors": "derived from dreamy_v3.safetensors (rounded to F16)",
		"dreamy_v3-pruned-fp16.pt":   "derived from dreamy_v3.safetensors (3 tensors left out, rounded to F16)",
		"unrelated-fp16.safetensors": "",
	} {
		c, err := inspect.Inspect(t.Context(), filepath.Join(dir, name), opt)
		if err != nil {
			t.Fatal(err)
		}
		in := c.Info
		if want == "" {
			if in.Sources["derived_from"] != "" || in.CivitAI.ModelID != 0 {
				t.Errorf("%s inherited: %+v", name, in.Sources)
			}
			continue
		}
		if in.Name != "Dreamy" || in.BaseModel != "SD 1.5" || in.CivitAI.ModelID != 111 || in.CivitAI.VersionID != 222 ||
			len(in.Triggers) != 1 || in.Triggers[0] != "dreamy style" {
			t.Errorf("%s: %+v", name, in.Info)
		}
		for _, f := range []string{"name", "base_model", "civitai", "triggers", "derived_from"} {
			if in.Sources[f] != want {
				t.Errorf("%s: sources[%s] = %q, want %q", name, f, in.Sources[f], want)
			}
		}
	}
}
