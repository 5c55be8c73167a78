//go:build unix

package dupes

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hfRepo lays out a model in a Hugging Face cache repository folder under hub, as the cache does:
// blobs/<sha256>, snapshots/<rev>/<name> a link to it, refs/main. It returns the snapshot's path.
func hfRepo(t *testing.T, hub, repo, name string, b []byte) string {
	t.Helper()
	dir := filepath.Join(hub, "models--"+strings.ReplaceAll(repo, "/", "--"))
	blob := fmt.Sprintf("%x", sha256.Sum256(b))
	mustWrite(t, filepath.Join(dir, "blobs", blob), b)
	rev := fmt.Sprintf("%040x", sha256.Sum256([]byte(repo)))[:40]
	mustWrite(t, filepath.Join(dir, "refs", "main"), []byte(rev))
	snap := filepath.Join(dir, "snapshots", rev, name)
	mustSymlink(t, filepath.Join("..", "..", "blobs", blob), snap)
	return snap
}

// ollamaBlob puts b in an ollama models folder as its blob, named in a manifest; it returns the blob.
func ollamaBlob(t *testing.T, models string, b []byte) string {
	t.Helper()
	digest := fmt.Sprintf("sha256-%x", sha256.Sum256(b))
	mustWrite(t, filepath.Join(models, "manifests", "registry.ollama.ai", "library", "m", "latest"),
		[]byte(`{"layers": [{"digest": "`+strings.Replace(digest, "-", ":", 1)+`"}]}`))
	p := filepath.Join(models, "blobs", digest)
	mustWrite(t, p, b)
	return p
}

// TestManagedBy: paths are known as a store's by the store's layout alone.
func TestManagedBy(t *testing.T) {
	dir := t.TempDir()
	snap := hfRepo(t, filepath.Join(dir, "hub"), "org/repo", "x.safetensors", []byte("x"))
	blob, _ := filepath.EvalSymlinks(snap)
	ollama := ollamaBlob(t, filepath.Join(dir, "ollama", "models"), []byte("GGUF"))
	mustWrite(t, filepath.Join(dir, "models--look", "alike", "snapshots", "r", "x.safetensors"), []byte("x"))
	mustWrite(t, filepath.Join(dir, "loose", "blobs", filepath.Base(ollama)), []byte("GGUF"))
	for path, want := range map[string]Store{
		snap: StoreHuggingFace, blob: StoreHuggingFace, ollama: StoreOllama,
		filepath.Join(dir, "hub", "models--org--repo", "refs", "main"):                           "",
		filepath.Join(dir, "models--look", "alike", "snapshots", "r", "x.safetensors"):           "",
		filepath.Join(dir, "loose", "blobs", filepath.Base(ollama)):                              "",
		filepath.Join(dir, "lora", "x.safetensors"):                                              "",
		"https://huggingface.co/org/repo/resolve/main/models--a/snapshots/r/blobs/x.safetensors": "",
	} {
		if got := ManagedBy(path); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}

// TestManagedStoresAreLeftAlone: a LoRA both in the Hugging Face cache (a snapshot link to a blob)
// and in the user's folder, and a GGUF both in ollama's blobs and in the user's folder: whatever
// --keep says, the store's files are never deleted or replaced; the group says so, and they free
// nothing.
func TestManagedStoresAreLeftAlone(t *testing.T) {
	dir := t.TempDir()
	lora, gguf := loraFile(1, "hf").Build(), ggufFile("ollama")
	snap := hfRepo(t, filepath.Join(dir, "hub"), "org/repo", "x.safetensors", lora)
	blob, _ := filepath.EvalSymlinks(snap)
	mustWrite(t, filepath.Join(dir, "Lora", "x.safetensors"), lora)
	oblob := ollamaBlob(t, filepath.Join(dir, "ollama", "models"), gguf)
	mustWrite(t, filepath.Join(dir, "Lora", "m.gguf"), gguf)
	keep := KeepRule{Kind: KeepPath, Prefix: filepath.Join(dir, "Lora")}
	for _, op := range []ActOptions{{Delete: true, DryRun: true}, {Link: true}, {Delete: true}} {
		rep := findIn(t, dir, Options{Keep: keep, Level: LevelBytes})
		if len(rep.Groups) != 2 {
			t.Fatalf("groups %+v", rep.Groups)
		}
		if rep.Reclaimable != 0 {
			t.Errorf("reclaimable %d", rep.Reclaimable)
		}
		for _, g := range rep.Groups {
			m := g.Members[1]
			if m.Managed == "" || g.Reclaimable != 0 || !strings.Contains(describe(g, 1, false, nil), "left alone: managed by") {
				t.Errorf("group of %s: %+v", g.Keeper, g)
			}
		}
		if dry, err := Act(t.Context(), rep, ActOptions{Delete: true, DryRun: true}); err != nil || len(dry.Deletable()) != 0 {
			t.Errorf("deletable %q, %v", dry.Deletable(), err)
		}
		r, err := Act(t.Context(), rep, op)
		if err != nil {
			t.Fatal(err)
		}
		if r.Skipped != 2 || r.Deleted+r.Linked+r.Failed != 0 || r.Freed != 0 {
			t.Errorf("%+v: %+v", op, r.Actions)
		}
		for _, a := range r.Actions {
			if a.Reason != SkipManaged || a.Store == "" {
				t.Errorf("%+v: %+v", op, a)
			}
		}
		if got, err := os.ReadFile(snap); err != nil || !bytes.Equal(got, lora) {
			t.Errorf("%+v: the snapshot no longer resolves: %v", op, err)
		}
		if got, _ := os.Readlink(snap); filepath.Join(filepath.Dir(snap), got) != blob {
			t.Errorf("%+v: the snapshot link was replaced", op)
		}
		for _, p := range []string{blob, oblob} {
			if st, err := os.Stat(p); err != nil || st.Sys() == nil {
				t.Errorf("%+v: %s: %v", op, p, err)
			} else if _, _, nlink := fileID(st); nlink != 1 {
				t.Errorf("%+v: %s linked (%d links)", op, p, nlink)
			}
		}
	}
}

// TestNoSidecarMovesIntoAStore: a keeper in the Hugging Face cache gets no sidecar: the copy whose
// sidecar would have to move into the cache stays, with it.
func TestNoSidecarMovesIntoAStore(t *testing.T) {
	dir := t.TempDir()
	lora := loraFile(1, "hf").Build()
	snap := hfRepo(t, filepath.Join(dir, "hub"), "org/repo", "x.safetensors", lora)
	cp := filepath.Join(dir, "Lora", "x.safetensors")
	mustWrite(t, cp, lora)
	mustWrite(t, filepath.Join(dir, "Lora", "x.civitai.info"), []byte(`{"id": 5}`))
	rep := findIn(t, dir, Options{Keep: KeepRule{Kind: KeepPath, Prefix: filepath.Join(dir, "hub")}, Level: LevelBytes})
	r, err := Act(t.Context(), rep, ActOptions{Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Actions) != 1 || r.Actions[0].Reason != SkipManaged || r.Actions[0].Store != StoreHuggingFace || r.Actions[0].Path != cp {
		t.Errorf("%+v", r.Actions)
	}
	if !exists(cp) || !exists(filepath.Join(dir, "Lora", "x.civitai.info")) || exists(strings.TrimSuffix(snap, ".safetensors")+".civitai.info") {
		t.Error("the copy or its sidecar moved")
	}
}
