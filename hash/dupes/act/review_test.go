//go:build unix

package act

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/hash/dupes"
)

// ggufDerived is a GGUF file holding derivedModel(seed, dtype, false)'s tensors (F32 or F16) under
// their own names (as city96's diffusion-model GGUFs keep them), with kvs.
func ggufDerived(seed uint64, dtype string, kvs ...ggufw.KV) []byte {
	f := ggufw.File{KVs: kvs}
	typ := map[string]gguf.GGMLType{"F32": gguf.TypeF32, "F16": gguf.TypeF16}[dtype]
	rng := rand.New(rand.NewPCG(seed, 37))
	for _, prefix := range []string{"model", "model_ema"} {
		for _, name := range []string{"a.weight", "b.weight"} {
			vals := make([]float64, 32)
			for i := range vals {
				vals[i] = float64(float32(rng.NormFloat64() / 8))
			}
			f.Tensors = append(f.Tensors, ggufw.Tensor{Name: prefix + "." + name, Type: typ, Dims: []int64{8, 4}, Data: encode(dtype, vals)})
		}
	}
	return f.Build()
}

// TestReviewDerivedGGUFKeepsItsKVs: a GGUF file whose tensors are the F16 rounding of an original's
// is a derived copy, but its key-value pairs that llama.cpp reads (a chat template, a tokenizer, the
// architecture) are a part of the model (DESIGN: dupes never deletes a file whose loss loses any of
// them): --level derived --delete leaves it (not-derived) unless its original is a GGUF file with the
// same ones (general.file_type aside, and descriptive keys, reported as lost).
func TestReviewDerivedGGUFKeepsItsKVs(t *testing.T) {
	arch, tmpl := ggufw.KV{Key: "general.architecture", Val: ggufw.Str("flux")}, ggufw.KV{Key: "tokenizer.chat_template", Val: ggufw.Str("{{ messages }}")}
	f32, f16 := ggufw.KV{Key: "general.file_type", Val: ggufw.U32(0)}, ggufw.KV{Key: "general.file_type", Val: ggufw.U32(1)}
	name := ggufw.KV{Key: "general.name", Val: ggufw.Str("the f16 one")}
	for _, c := range []struct {
		name    string
		orig    []byte
		copy    []byte
		deleted bool
	}{
		{"safetensors original", derivedModel(1, "F32", false), ggufDerived(1, "F16", arch, tmpl), false},
		{"GGUF original without the template", ggufDerived(1, "F32", arch, f32), ggufDerived(1, "F16", arch, tmpl, f16), false},
		{"GGUF original with another template", ggufDerived(1, "F32", arch, f32, ggufw.KV{Key: "tokenizer.chat_template", Val: ggufw.Str("{{ other }}")}),
			ggufDerived(1, "F16", arch, tmpl, f16), false},
		{"GGUF original with the same", ggufDerived(1, "F32", arch, tmpl, f32), ggufDerived(1, "F16", arch, tmpl, f16, name), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			orig, copy := filepath.Join(dir, "flux.gguf"), filepath.Join(dir, "flux-f16.gguf")
			if c.orig[0] != 'G' {
				orig = filepath.Join(dir, "flux.safetensors")
			}
			mustWrite(t, orig, c.orig)
			mustWrite(t, copy, c.copy)
			rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{Level: dupes.LevelDerived})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Groups) != 1 || rep.Groups[0].Level != dupes.LevelDerived || rep.Groups[0].Keeper != orig {
				t.Fatalf("want one derived group kept by %s: %+v", orig, rep.Groups)
			}
			r, err := Act(t.Context(), rep, Options{Delete: true, Derived: true})
			if err != nil || len(r.Actions) != 1 {
				t.Fatalf("%v, %+v", err, r)
			}
			a := r.Actions[0]
			_, serr := os.Stat(copy)
			if c.deleted && (a.Op != OpDelete || serr == nil || !slices.Equal(a.MetadataLost, []string{"general.name", "general.file_type"})) {
				t.Errorf("want the copy deleted, general.name and general.file_type lost: %+v, %v", a, serr)
			}
			if !c.deleted && (a.Op != OpSkip || a.Reason != SkipNotDerived || serr != nil) {
				t.Errorf("the GGUF copy and its key-value pairs went: %+v, %v", a, serr)
			}
		})
	}
}

// TestReviewCopyReplacedAfterLastCheck: a copy replaced (a new file renamed over it, as a download
// finishing does) after Act's checks, while it moves the copy's sidecar next to the keeper, stays:
// Act checks again immediately before the unlink. It deleted the new file, unread.
func TestReviewCopyReplacedAfterLastCheck(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.safetensors"), filepath.Join(dir, "b.safetensors")
	mtime := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{a, b} {
		mustWrite(t, p, loraFile(1, "").Build())
		os.Chtimes(p, mtime, mtime)
	}
	mustWrite(t, filepath.Join(dir, "b.civitai.info"), []byte(`{"id": 1}`))
	rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{Level: dupes.LevelBytes, Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: a}})
	if err != nil || len(rep.Groups) != 1 {
		t.Fatalf("%v %+v", err, rep)
	}
	fresh := loraFile(2, "").Build()
	actHook = func(stage string) {
		if stage == "act" {
			tmp := filepath.Join(dir, ".download")
			mustWrite(t, tmp, fresh)
			os.Rename(tmp, b)
		}
	}
	defer func() { actHook = nil }()
	got, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil || got.Deleted != 0 {
		t.Errorf("%v %+v", err, got.Actions)
	}
	if on, err := os.ReadFile(b); err != nil || string(on) != string(fresh) {
		t.Errorf("the file renamed over the copy went: %v", err)
	}
}

// TestReviewSetThroughLinkedFolder: a downloaded set whose index names its shards in a subfolder
// ("sub/…", which the index rules allow) that is a symbolic link to a folder outside the roots
// scanned: deleting the set as a copy must not delete the files of that other folder, which the user
// never named (another program's model, say); the set is left alone.
func TestReviewSetThroughLinkedFolder(t *testing.T) {
	dir := t.TempDir()
	keep := writeSet(t, filepath.Join(dir, "keep"), 1, 2, "")
	s1, s2, _ := shardSet(1, 2, "")
	precious := filepath.Join(dir, "precious")
	mustWrite(t, filepath.Join(precious, setShard1), s1)
	mustWrite(t, filepath.Join(precious, setShard2), s2)
	dl := filepath.Join(dir, "dl")
	if err := os.MkdirAll(dl, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(precious, filepath.Join(dl, "sub")); err != nil {
		t.Skip(err)
	}
	b, err := os.ReadFile(keep)
	if err != nil {
		t.Fatal(err)
	}
	idx := strings.NewReplacer(`"`+setShard1+`"`, `"sub/`+setShard1+`"`, `"`+setShard2+`"`, `"sub/`+setShard2+`"`).Replace(string(b))
	mustWrite(t, filepath.Join(dl, "model.safetensors.index.json"), []byte(idx))
	rep, err := dupes.Find(t.Context(), []string{filepath.Join(dir, "keep"), dl}, dupes.Options{Level: dupes.LevelContent, Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: keep}})
	if err != nil {
		t.Fatal(err)
	}
	dry, err := Act(t.Context(), rep, Options{Delete: true, DryRun: true})
	if err != nil || len(dry.Deletable()) != 0 || dry.Failed != 1 {
		t.Errorf("a dry run plans to delete %v: %v", dry.Deletable(), err)
	}
	r, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Deleted != 0 || r.Failed != 1 || r.Outcome() != 2 {
		t.Errorf("want the deletion refused (exit 2): %+v", r)
	}
	for _, name := range []string{setShard1, setShard2} {
		if _, err := os.Stat(filepath.Join(precious, name)); err != nil {
			t.Errorf("a file outside the roots went through a linked folder: %v", err)
		}
	}
}
