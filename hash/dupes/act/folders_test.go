package act

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/torch/torchw"
	"github.com/stdiff/stdiff/hash/dupes"
	"github.com/stdiff/stdiff/hash/dupes/internal/dupetest"
)

// TestModelFolderIsOneMember (issue 31, item 3; issue 33, item 2): save_pretrained folders whose
// model.safetensors files are byte-identical but whose config.json differ are no copies: --delete
// leaves both whole. A folder whose every other file is the keeper's, byte for byte, is a copy, and
// goes whole (weights, config, tokenizer, the folder itself); a loose file of the same weights is no
// copy of a folder (nor a folder of it). A folder that holds two models (model.safetensors and
// pytorch_model.bin of the same tensors) keeps both: each is the other's companion.
func TestModelFolderIsOneMember(t *testing.T) {
	dir := t.TempDir()
	st := loraFile(1, "x").Build()
	folder := func(name, config string, extra map[string][]byte) string {
		mustWrite(t, filepath.Join(dir, name, "model.safetensors"), st)
		mustWrite(t, filepath.Join(dir, name, "config.json"), []byte(config))
		mustWrite(t, filepath.Join(dir, name, "tokenizer.json"), []byte(`{"model": {}}`))
		for n, b := range extra {
			mustWrite(t, filepath.Join(dir, name, n), b)
		}
		return filepath.Join(dir, name, "model.safetensors")
	}
	a := folder("a", `{"rope_theta": 10000}`, nil)
	b := folder("b", `{"rope_theta": 500000}`, nil)
	c := folder("c", `{"rope_theta": 10000}`, nil)
	both := folder("both", `{"rope_theta": 10000}`, map[string][]byte{"pytorch_model.bin": dupetest.InFormat("pt", st)})
	loose := filepath.Join(dir, "loose", "x.safetensors")
	mustWrite(t, loose, st)
	rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Join(dir, "a")}})
	if err != nil {
		t.Fatal(err)
	}
	var acted []dupes.Group
	for _, g := range rep.Groups {
		if rep.ActsOn(&g, false) {
			acted = append(acted, g)
		}
	}
	if len(acted) != 1 || acted[0].Keeper != a || !slices.Equal(acted[0].Files, []string{a, c}) ||
		len(acted[0].Members[1].Companions) != 2 {
		t.Fatalf("groups acted on %+v, want a's folder kept over its copy c", acted)
	}
	if got := text(t, rep); !strings.Contains(got, "model folder: with 2 other files") {
		t.Errorf("the text does not say the folder goes whole:\n%s", got)
	}
	r, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil || r.Failed > 0 || r.Deleted != 1 {
		t.Fatalf("act: %v, %+v", err, r)
	}
	if _, err := os.Stat(filepath.Join(dir, "c")); err == nil {
		t.Errorf("the copied folder c is still there")
	}
	for _, p := range []string{a, b, both, loose, filepath.Join(dir, "both", "pytorch_model.bin")} {
		for _, f := range []string{p, filepath.Join(filepath.Dir(p), "config.json")} {
			if _, err := os.Stat(f); err != nil && filepath.Dir(p) != filepath.Join(dir, "loose") {
				t.Errorf("%s went: %v", f, err)
			}
		}
	}
	if _, err := os.Stat(loose); err != nil {
		t.Error(err)
	}
	// Changed after the scan, the copy's config is checked again: the folder stays.
	folder("c", `{"rope_theta": 10000}`, nil)
	rep, _ = dupes.Find(t.Context(), []string{dir}, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Join(dir, "a")}})
	mustWrite(t, filepath.Join(dir, "c", "config.json"), []byte(`{"rope_theta": 10001}`))
	if r, err := Act(t.Context(), rep, Options{Delete: true}); err != nil || r.Deleted != 0 {
		t.Errorf("act on a folder whose config changed: %v, %+v", err, r)
	}
}

// TestActChecksWhatACopyHolds: a report that calls an ONNX model or a checkpoint with an epoch a
// content copy of a safetensors file of their tensors (an older stdiff's, or one edited by hand) is
// checked again by Act: neither is deleted (not-a-copy).
func TestActChecksWhatACopyHolds(t *testing.T) {
	dir := t.TempDir()
	st := loraFile(1, "x").Build()
	keeper := filepath.Join(dir, "model.safetensors")
	mustWrite(t, keeper, st)
	ts := torchTensors(st)
	copies := map[string][]byte{"graph.onnx": dupetest.InFormat("onnx", st), "epoch.ckpt": torchw.Zip("a", torchw.StateDict(ts, "epoch", "3"), ts)}
	g := dupes.Group{Level: dupes.LevelContent, Keeper: keeper}
	for _, p := range append([]string{keeper}, "epoch.ckpt", "graph.onnx") {
		if b, ok := copies[p]; ok {
			p = filepath.Join(dir, p)
			mustWrite(t, p, b)
		}
		st, _ := os.Stat(p)
		g.Files = append(g.Files, p)
		g.Members = append(g.Members, dupes.Member{Path: p, Size: st.Size(), ModTime: st.ModTime()})
	}
	r, err := Act(t.Context(), &dupes.Report{Groups: []dupes.Group{g}}, Options{Delete: true})
	if err != nil || r.Deleted != 0 || r.Skipped != 2 || r.Actions[0].Reason != SkipNotACopy || r.Actions[1].Reason != SkipNotACopy {
		t.Errorf("act: %v, %+v", err, r.Actions)
	}
}

// torchTensors are the tensors of the safetensors file st, as torchw writes them.
func torchTensors(st []byte) []torchw.Tensor {
	m := canon.ReadBytes("st", st)
	var ts []torchw.Tensor
	for _, t := range m.Tensors {
		ts = append(ts, torchw.Tensor{Name: t.Name, DType: string(t.DType), Shape: t.Shape, Data: st[m.DataOffset()+int64(t.Begin) : m.DataOffset()+int64(t.End)]})
	}
	return ts
}

// TestRealFoldersWithOtherConfigs: the sharded save_pretrained folder transformers wrote
// (../shared/corpus/real/writers-2026-11; skipped where absent), copied whole and copied with
// rope_theta edited in its config.json: the whole copy is a copy and goes whole, the edited one stays.
func TestRealFoldersWithOtherConfigs(t *testing.T) {
	src := filepath.Join("..", "..", "..", "..", "shared", "corpus", "real", "writers-2026-11", "transformers-5.17", "hf-llama-sharded")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Skipf("no real corpus: %v", err)
	}
	dir := t.TempDir()
	for _, sub := range []string{"a", "copy", "edited"} {
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if sub == "edited" && e.Name() == "config.json" {
				b = bytes.Replace(b, []byte(`"rope_theta"`), []byte(`"rope_theta": 500000, "x_rope_theta"`), 1)
			}
			mustWrite(t, filepath.Join(dir, sub, e.Name()), b)
		}
	}
	rep, err := dupes.Find(t.Context(), []string{filepath.Join(dir, "a"), filepath.Join(dir, "copy"), filepath.Join(dir, "edited")}, dupes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil || r.Deleted != 1 || r.Actions[0].Path != filepath.Join(dir, "copy", "model.safetensors.index.json") {
		t.Fatalf("act: %v, %+v", err, r.Actions)
	}
	if _, err := os.Stat(filepath.Join(dir, "copy")); err == nil {
		t.Errorf("the whole copy's folder is still there")
	}
	for _, sub := range []string{"a", "edited"} {
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(dir, sub, e.Name())); err != nil {
				t.Error(err)
			}
		}
	}
}
