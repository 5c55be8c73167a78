package source_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/source"
)

// hfCache lays out a model's folder of the Hugging Face cache as huggingface_hub writes it: blobs/
// named by their hashes, refs/main and refs/v1 holding commit hashes, and snapshots/<commit>/ whose
// files are relative links into ../../blobs. Commit 1 has the weights and a config.json with
// rope_theta 10000; commit 2 (main) the same weights and rope_theta 500000.
func hfCache(t *testing.T) (dir, c1, c2 string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "models--org--tiny")
	weights, err := os.ReadFile(filepath.Join("..", "..", "testdata", "base.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 = strings.Repeat("1a", 20), strings.Repeat("2b", 20)
	blobs := map[string][]byte{"w0": weights, "cfg1": []byte(`{"rope_theta": 10000}`), "cfg2": []byte(`{"rope_theta": 500000}`)}
	for name, b := range blobs {
		mustWrite(t, filepath.Join(dir, "blobs", name), b)
	}
	for commit, cfg := range map[string]string{c1: "cfg1", c2: "cfg2"} {
		snap := filepath.Join(dir, "snapshots", commit)
		if err := os.MkdirAll(snap, 0o755); err != nil {
			t.Fatal(err)
		}
		for file, blob := range map[string]string{"model.safetensors": "w0", "config.json": cfg} {
			if err := os.Symlink(filepath.Join("..", "..", "blobs", blob), filepath.Join(snap, file)); err != nil {
				t.Fatal(err)
			}
		}
	}
	mustWrite(t, filepath.Join(dir, "refs", "main"), []byte(c2))
	mustWrite(t, filepath.Join(dir, "refs", "v1"), []byte(c1+"\n"))
	return dir, c1, c2
}

func mustWrite(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOpenHFCacheFolder: the cache's folder of a model is the model refs/main points to (it was "a
// folder without a model"); DIR@REV opens refs/REV or a commit (in full or by a prefix); its
// config.json is among its companion files, read through the links into blobs/.
func TestOpenHFCacheFolder(t *testing.T) {
	dir, c1, c2 := hfCache(t)
	for spec, want := range map[string]string{dir: c2, dir + "@main": c2, dir + "@v1": c1, dir + "@" + c1: c1, dir + "@" + c2[:8]: c2} {
		o, err := source.Open(t.Context(), spec, source.Options{})
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if filepath.Base(o.Folder) != want || len(o.Model.Tensors) == 0 || len(o.Companions) != 1 || o.Companions[0].Path != "config.json" {
			t.Errorf("%s: folder %s (want snapshot %s), %d tensors, companions %+v", spec, o.Folder, want, len(o.Model.Tensors), o.Companions)
		}
		theta := "500000"
		if want == c1 {
			theta = "10000"
		}
		if !strings.Contains(o.Companions[0].Text, theta) {
			t.Errorf("%s: config.json %q, want rope_theta %s", spec, o.Companions[0].Text, theta)
		}
		o.Close()
	}
	if _, err := source.Open(t.Context(), dir+"@v9", source.Options{}); err == nil || !strings.Contains(err.Error(), "no revision v9") {
		t.Errorf("an unknown revision: %v", err)
	}
	if _, err := source.Open(t.Context(), dir+"@../../etc", source.Options{}); err == nil {
		t.Error("a revision climbing out of refs/: no error")
	}
}

// TestHFCacheLinkOutNotFollowed: a snapshot's link that leads out of the cache folder is not
// followed: opening the model is an error wrapping ErrLinkOut.
func TestHFCacheLinkOutNotFollowed(t *testing.T) {
	dir, _, c2 := hfCache(t)
	outside := filepath.Join(t.TempDir(), "secret.json")
	mustWrite(t, outside, []byte(`{"a": 1}`))
	link := filepath.Join(dir, "snapshots", c2, "generation_config.json")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if _, err := source.Open(t.Context(), dir, source.Options{}); !errors.Is(err, source.ErrLinkOut) {
		t.Errorf("a link out of the cache: %v, want ErrLinkOut", err)
	}
}
