package derived

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
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

var update = flag.Bool("update", false, "rewrite the golden files of TestInheritShort")

// TestInheritShort: `inspect --short` (the table) and its HTML gallery, with InheritRows, show the
// .half() copy and the pruned half .pt (no sidecars of their own) with the name, base model, CivitAI
// ids and trigger words of dreamy_v3.safetensors, marked "(from dreamy_v3)", and in the gallery its
// preview image, the copies having none; the unrelated model of the same shapes and the original
// itself are shown as they are. Golden files testdata/short.txt and testdata/short.html (-update).
func TestInheritShort(t *testing.T) {
	dir := t.TempDir()
	src, err := filepath.Abs(filepath.Join("..", "testdata", "derived"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"dreamy_v3.safetensors", "dreamy_v3-fp16.safetensors", "dreamy_v3-pruned-fp16.pt", "unrelated-fp16.safetensors"} {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec := `{"id": 222, "modelId": 111, "name": "v3", "model": {"name": "Dreamy"}, "baseModel": "SD 1.5", "trainedWords": ["dreamy style"]}`
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	for n, b := range map[string][]byte{"dreamy_v3.civitai.info": []byte(rec), "dreamy_v3.preview.png": png} {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	inherit := func(ctx context.Context, r *inspect.ShortReport) { InheritRows(ctx, r, source.Options{}, 2) }
	for _, c := range []struct {
		name   string
		images bool
		write  func(io.Writer, *inspect.ShortReport) error
	}{
		{"short.txt", false, func(w io.Writer, r *inspect.ShortReport) error {
			return inspect.WriteShort(w, r, inspect.WriteOptions{Width: 120})
		}},
		{"short.html", true, func(w io.Writer, r *inspect.ShortReport) error {
			return inspect.WriteShort(w, r, inspect.WriteOptions{Format: textfmt.HTML})
		}},
	} {
		r := inspect.Short(t.Context(), []string{"."}, inspect.Options{Images: c.images, InheritShort: inherit})
		for _, f := range r.Files {
			want := map[string]string{"dreamy_v3-fp16.safetensors": "dreamy_v3.safetensors", "dreamy_v3-pruned-fp16.pt": "dreamy_v3.safetensors"}[f.Path]
			if f.DerivedFrom != want || (want != "" && (f.Name != "Dreamy" || f.CivitAI.ModelID != 111 || len(f.Triggers) != 1)) {
				t.Errorf("%s: derived from %q (want %q), %+v", f.Path, f.DerivedFrom, want, f)
			}
			if want != "" && c.images && f.Preview != "dreamy_v3.preview.png" {
				t.Errorf("%s: preview %q", f.Path, f.Preview)
			}
		}
		var b strings.Builder
		if err := c.write(&b, r); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(golden, c.name)
		if *update {
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if b.String() != string(want) {
			t.Errorf("%s differs (go test -run TestInheritShort -update rewrites it):\n%s", c.name, b.String())
		}
	}
}
