package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stdiff/stdiff/canon"
)

// TestWalk: folders become the models under them, in path order; a shard set is its index; links to
// files count, links to folders are not followed; what is not a folder is kept as named; an unreadable
// folder is an error and the walk goes on.
func TestWalk(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"b.safetensors", "a/A.SAFETENSORS", "notes.txt", "set/m-00001-of-00002.safetensors",
		"set/m-00002-of-00002.safetensors", "set/extra.safetensors"} {
		write(n)
	}
	idx := filepath.Join(dir, "set", "m.safetensors.index.json")
	if err := os.WriteFile(idx, []byte(`{"weight_map": {"x": "m-00001-of-00002.safetensors", "y": "m-00002-of-00002.safetensors"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "b.safetensors"), filepath.Join(dir, "link.safetensors")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "a", "loop")); err != nil {
		t.Fatal(err)
	}
	got, errs := Walk(t.Context(), []string{dir, "missing.safetensors", "hf://org/repo"}, WalkOptions{})
	want := []string{filepath.Join(dir, "a", "A.SAFETENSORS"), filepath.Join(dir, "b.safetensors"), filepath.Join(dir, "link.safetensors"),
		filepath.Join(dir, "set", "extra.safetensors"), idx, "hf://org/repo", "missing.safetensors"}
	if !reflect.DeepEqual(got, want) || len(errs) != 0 {
		t.Errorf("walk: %q, %v\nwant %q", got, errs, want)
	}

	if os.Geteuid() != 0 {
		locked := filepath.Join(dir, "locked")
		if err := os.Mkdir(locked, 0o000); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(locked, 0o755)
		got, errs = Walk(t.Context(), []string{dir}, WalkOptions{})
		var re *canon.ReadError
		if len(got) != 5 || len(errs) != 1 || !errors.As(errs[0], &re) || re.Name != locked || !errors.Is(errs[0], os.ErrPermission) {
			t.Errorf("unreadable folder: %q, %v", got, errs)
		}
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, errs := Walk(ctx, []string{dir}, WalkOptions{}); len(errs) == 0 || !errors.Is(errs[len(errs)-1], context.Canceled) {
		t.Errorf("cancelled walk: %v", errs)
	}
}

// TestWalkProgress: Progress hears of the models found, every so often.
func TestWalkProgress(t *testing.T) {
	dir := t.TempDir()
	for i := range 600 {
		if err := os.WriteFile(filepath.Join(dir, string(rune('a'+i%26))+string(rune('a'+i/26))+".safetensors"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var seen []int
	got, _ := Walk(t.Context(), []string{dir}, WalkOptions{Progress: func(n int) { seen = append(seen, n) }})
	if len(got) != 600 || !reflect.DeepEqual(seen, []int{256, 512}) {
		t.Errorf("%d models, progress %v", len(got), seen)
	}
}

// TestWalkAllFormats: AllFormats lists PyTorch, NumPy and ONNX files too, a sharded PyTorch checkpoint
// as its index (its shards then not on their own); without it, none of them.
func TestWalkAllFormats(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.pt", "b.npy", "c.onnx", "notes.txt", "set/pytorch_model-00001-of-00002.bin", "set/pytorch_model-00002-of-00002.bin",
		"set/pytorch_model.bin.index.json"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(n)), 0o755); err != nil {
			t.Fatal(err)
		}
		b := []byte(`{"weight_map": {"x": "pytorch_model-00001-of-00002.bin", "y": "pytorch_model-00002-of-00002.bin"}}`)
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, errs := Walk(t.Context(), []string{dir}, WalkOptions{AllFormats: true})
	want := []string{filepath.Join(dir, "a.pt"), filepath.Join(dir, "b.npy"), filepath.Join(dir, "c.onnx"), filepath.Join(dir, "set", "pytorch_model.bin.index.json")}
	if !reflect.DeepEqual(got, want) || len(errs) != 0 {
		t.Errorf("walk: %q, %v\nwant %q", got, errs, want)
	}
	if got, _ := Walk(t.Context(), []string{dir}, WalkOptions{}); len(got) != 0 {
		t.Errorf("walk without AllFormats: %q", got)
	}
}
