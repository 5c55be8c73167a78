//go:build unix

package act

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/store"
	"github.com/stdiff/stdiff/hash/dupes"
)

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
	keep := dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Join(dir, "Lora")}
	for _, op := range []Options{{Delete: true, DryRun: true}, {Link: true}, {Delete: true}} {
		rep := findIn(t, dir, dupes.Options{Keep: keep, Level: dupes.LevelBytes})
		if len(rep.Groups) != 2 {
			t.Fatalf("groups %+v", rep.Groups)
		}
		if rep.Reclaimable != 0 {
			t.Errorf("reclaimable %d", rep.Reclaimable)
		}
		for _, g := range rep.Groups {
			m := g.Members[1]
			if m.Managed == "" || g.Reclaimable != 0 || !strings.Contains(text(t, rep), "left alone: managed by") {
				t.Errorf("group of %s: %+v", g.Keeper, g)
			}
		}
		if dry, err := Act(t.Context(), rep, Options{Delete: true, DryRun: true}); err != nil || len(dry.Deletable()) != 0 {
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
	rep := findIn(t, dir, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Join(dir, "hub")}, Level: dupes.LevelBytes})
	r, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Actions) != 1 || r.Actions[0].Reason != SkipManaged || r.Actions[0].Store != store.HuggingFace || r.Actions[0].Path != cp {
		t.Errorf("%+v", r.Actions)
	}
	if !exists(cp) || !exists(filepath.Join(dir, "Lora", "x.civitai.info")) || exists(strings.TrimSuffix(snap, ".safetensors")+".civitai.info") {
		t.Error("the copy or its sidecar moved")
	}
}

// TestCacheCopyLeftAloneExitsClean (issue 31, item 10): --delete --yes that deleted every copy it
// could, leaving a Hugging Face cache copy alone as always, answers Clean (exit 0), so that
// `dupes --delete --yes && next` goes on; a copy the user could still act on (its sidecar differs
// from the keeper's) answers Found.
func TestCacheCopyLeftAloneExitsClean(t *testing.T) {
	dir := t.TempDir()
	lora := loraFile(1, "hf").Build()
	hfRepo(t, filepath.Join(dir, "hub"), "org/repo", "x.safetensors", lora)
	lib := filepath.Join(dir, "Lora", "x.safetensors")
	mustWrite(t, lib, lora)
	mustWrite(t, filepath.Join(dir, "downloads", "x.safetensors"), lora)
	keep := dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Join(dir, "Lora")}
	rep := findIn(t, dir, dupes.Options{Keep: keep, Level: dupes.LevelBytes})
	r, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil || r.Deleted != 1 || r.Skipped != 1 || r.Left != 0 || r.Outcome() != 0 {
		t.Errorf("act: %v, %+v: outcome %v, want clean", err, r, r.Outcome())
	}
	mustWrite(t, filepath.Join(dir, "downloads", "x.safetensors"), lora)
	mustWrite(t, filepath.Join(dir, "downloads", "x.civitai.info"), []byte(`{"id": 1}`))
	mustWrite(t, filepath.Join(dir, "Lora", "x.civitai.info"), []byte(`{"id": 2}`))
	rep = findIn(t, dir, dupes.Options{Keep: keep, Level: dupes.LevelBytes})
	if r, err := Act(t.Context(), rep, Options{Delete: true}); err != nil || r.Left != 1 || r.Outcome() != 1 {
		t.Errorf("act: %v, %+v: outcome %v, want found", err, r, r.Outcome())
	}
}
