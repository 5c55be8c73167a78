//go:build unix

package dupes

import (
	"github.com/stdiff/stdiff/canon/store"
	"path/filepath"
	"testing"
)

// TestManagedBy: paths are known as a store's by the store's layout alone.
func TestManagedBy(t *testing.T) {
	dir := t.TempDir()
	snap := hfRepo(t, filepath.Join(dir, "hub"), "org/repo", "x.safetensors", []byte("x"))
	blob, _ := filepath.EvalSymlinks(snap)
	ollama := ollamaBlob(t, filepath.Join(dir, "ollama", "models"), []byte("GGUF"))
	mustWrite(t, filepath.Join(dir, "models--look", "alike", "snapshots", "r", "x.safetensors"), []byte("x"))
	mustWrite(t, filepath.Join(dir, "loose", "blobs", filepath.Base(ollama)), []byte("GGUF"))
	for path, want := range map[string]store.Store{
		snap: store.HuggingFace, blob: store.HuggingFace, ollama: store.Ollama,
		filepath.Join(dir, "hub", "models--org--repo", "refs", "main"):                           "",
		filepath.Join(dir, "models--look", "alike", "snapshots", "r", "x.safetensors"):           "",
		filepath.Join(dir, "loose", "blobs", filepath.Base(ollama)):                              "",
		filepath.Join(dir, "lora", "x.safetensors"):                                              "",
		"https://huggingface.co/org/repo/resolve/main/models--a/snapshots/r/blobs/x.safetensors": "",
	} {
		if got := store.ManagedBy(path); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}
