//go:build unix

package act

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/hash/dupes"
	"github.com/stdiff/stdiff/hash/dupes/internal/dupetest"
)

// TestGGUFRuntimeKeysAreContent: GGUF files with the same tensors but other keys llama.cpp reads (the
// tokenizer's merges, the chat template, a hyperparameter) run differently: they are no content copies.
// Files that differ in descriptive keys alone (general.name, the author, the licence) are.
func TestGGUFRuntimeKeysAreContent(t *testing.T) {
	merges := ggufw.KV{Key: "tokenizer.ggml.merges", Val: ggufw.Strs("a b", "ab c")}
	long := strings.Repeat("{% for m in messages %}{{ m.content }}{% endfor %}", 20) // longer than what is kept inline
	for _, c := range []struct {
		name string
		a, b []byte
		want map[dupes.Level][]string
	}{
		{"merges", ggufWith(merges), ggufWith(), map[dupes.Level][]string{}},
		{"chat template", ggufWith(ggufw.KV{Key: "tokenizer.chat_template", Val: ggufw.Str(long + "a")}),
			ggufWith(ggufw.KV{Key: "tokenizer.chat_template", Val: ggufw.Str(long + "b")}), map[dupes.Level][]string{}},
		{"hyperparameter", ggufWith(ggufw.KV{Key: "llama.rope.freq_base", Val: ggufw.F32(10000)}),
			ggufWith(ggufw.KV{Key: "llama.rope.freq_base", Val: ggufw.F32(500000)}), map[dupes.Level][]string{}},
		{"descriptive keys", ggufWith(merges, ggufw.KV{Key: "general.author", Val: ggufw.Str("me")}),
			ggufWith(ggufw.KV{Key: "general.license", Val: ggufw.Str("mit")}, merges),
			map[dupes.Level][]string{dupes.LevelContent: {"a.gguf", "b.gguf"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := scanFiles(t, dupes.LevelRenamed, map[string][]byte{"a.gguf": c.a, "b.gguf": c.b})
			if got := groupsOf(rep); fmt.Sprint(got) != fmt.Sprint(c.want) || len(rep.Skipped) != 0 {
				t.Errorf("groups %v, want %v; skipped %+v", got, c.want, rep.Skipped)
			}
			r, err := Act(t.Context(), rep, Options{Delete: true})
			if err != nil || r.Failed > 0 || (len(c.want) == 0) != (r.Deleted == 0) {
				t.Errorf("act: %v, %+v", err, r)
			}
		})
	}
}

// TestSetsWithoutIndexAreOneModel: a split GGUF model and a set of shards without an index are each one
// model: a copy of either is a copy of the whole, kept or deleted whole, so that whichever file of the
// copies is newer, --delete leaves one complete copy.
func TestSetsWithoutIndexAreOneModel(t *testing.T) {
	for _, c := range []struct {
		name, ext string
		files     [][]byte
	}{
		{"split GGUF", "gguf", splitGGUF(3, "tiny", 1)},
		{"shards without an index", "safetensors", splitSafetensors(2, 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			a := writeSplit(t, filepath.Join(dir, "a"), "model", c.ext, c.files)
			b := writeSplit(t, filepath.Join(dir, "b"), "model", c.ext, c.files)
			// Each set has a newest file: by files, --keep newest would keep a file of each.
			old := time.Now().Add(-time.Hour)
			for i := range a {
				os.Chtimes(a[i], old, old.Add(time.Duration(i)*time.Minute))
				os.Chtimes(b[i], old, old.Add(time.Duration(len(b)-1-i)*time.Minute))
			}
			rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepNewest}})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Files != 2 || len(rep.Groups) != 1 || rep.Groups[0].Level != dupes.LevelBytes || rep.Groups[0].Members[0].Shards != len(c.files) ||
				len(rep.Groups[0].Members[1].Files) != len(c.files) {
				t.Fatalf("%d models, groups %+v", rep.Files, rep.Groups)
			}
			r, err := Act(t.Context(), rep, Options{Delete: true})
			if err != nil || r.Failed > 0 || r.Deleted != 1 {
				t.Errorf("act: %v, %+v", err, r)
			}
			if ca, cb := complete(a), complete(b); ca == cb {
				t.Errorf("after --delete: a complete %v, b complete %v", ca, cb)
			}
			for _, p := range append(a, b...) {
				if _, err := os.Stat(p); err != nil && (complete(a) && filepath.Dir(p) == filepath.Join(dir, "a") || complete(b) && filepath.Dir(p) == filepath.Join(dir, "b")) {
					t.Errorf("%s gone", p)
				}
			}
		})
	}
	// Split GGUF models that differ in a key llama.cpp reads only as text (general.name) are content
	// copies, not identical files: every file's header counts.
	dir := t.TempDir()
	writeSplit(t, filepath.Join(dir, "a"), "model", "gguf", splitGGUF(2, "tiny", 1))
	writeSplit(t, filepath.Join(dir, "b"), "model", "gguf", splitGGUF(2, "tiny, renamed", 1))
	if got := groupsOf(scan(t, dir)); fmt.Sprint(got) != fmt.Sprint(map[dupes.Level][]string{dupes.LevelContent: {"model-00001-of-00002.gguf", "model-00001-of-00002.gguf"}}) {
		t.Errorf("groups %v", got)
	}
}

// TestActOnFormats: deleting the copies of a content group of one model in several formats deletes
// the PyTorch copies (flat dicts of tensors) of a safetensors keeper, each checked again by its
// tensors; the ONNX model (its graph) and the checkpoint whose pickle torch refuses (more than its
// tensors) are no copies, and stay.
func TestActOnFormats(t *testing.T) {
	dir := t.TempDir()
	st := loraFile(1, "x").Build()
	keeper := filepath.Join(dir, "a", "model.safetensors")
	mustWrite(t, keeper, st)
	for _, f := range dupetest.Formats {
		mustWrite(t, filepath.Join(dir, "b", f+".bin"), dupetest.InFormat(f, st))
	}
	rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Join(dir, "a")}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil || r.Failed > 0 || r.Deleted != 2 || r.Skipped != 0 || r.Freed != rep.Reclaimable {
		t.Fatalf("act: %v, %+v", err, r)
	}
	for _, f := range []string{"onnx", "unsafe-pt"} {
		if _, err := os.Stat(filepath.Join(dir, "b", f+".bin")); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(keeper); err != nil {
		t.Error(err)
	}
}

// TestEveryLostKeyIsReported (issue 31, item 9): deleting a copy whose metadata has keys the keeper
// lacks reports each, "format" (writer bookkeeping, which transformers needs) included.
func TestEveryLostKeyIsReported(t *testing.T) {
	dir := t.TempDir()
	keeper, cp := loraFile(1, "x"), loraFile(1, "x")
	keeper.Metadata = append(keeper.Metadata, stfile.KV{Key: "a", Value: "1"}, stfile.KV{Key: "b", Value: "2"})
	cp.Metadata = append(cp.Metadata, stfile.KV{Key: "format", Value: "pt"})
	mustWrite(t, filepath.Join(dir, "keeper.safetensors"), keeper.Build())
	mustWrite(t, filepath.Join(dir, "copy.safetensors"), cp.Build())
	rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Act(t.Context(), rep, Options{Delete: true, DryRun: true})
	if err != nil || len(r.Actions) != 1 || r.Actions[0].Keeper != filepath.Join(dir, "keeper.safetensors") ||
		fmt.Sprint(r.Actions[0].MetadataLost) != "[format]" {
		t.Errorf("act: %v, %+v", err, r.Actions)
	}
}
