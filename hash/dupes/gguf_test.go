package dupes

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
)

// ggufFile is a small GGUF model; name goes into general.name.
func ggufFile(name string) []byte {
	f := ggufw.File{KVs: []ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("llama")}, {Key: "general.name", Val: ggufw.Str(name)}}}
	for i := range 4 {
		f.Tensors = append(f.Tensors, ggufw.Tensor{Name: fmt.Sprintf("blk.%d.attn_q.weight", i), Type: gguf.TypeQ4_K, Dims: []int64{256, 2}})
	}
	return f.Build()
}

// TestGGUFCopies: byte-identical GGUF files are a bytes group (their headers hash alike, from the
// magic to the data section), inside the content group that a copy with other metadata joins.
func TestGGUFCopies(t *testing.T) {
	dir := t.TempDir()
	orig := ggufFile("tiny")
	files := map[string][]byte{"a.gguf": orig, "copy.gguf": orig, "renamed.gguf": ggufFile("tiny, renamed")}
	var paths []string
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	rep, err := Find(t.Context(), paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[Level][]string{LevelBytes: {"a.gguf", "copy.gguf"}, LevelContent: {"a.gguf", "copy.gguf", "renamed.gguf"}}
	if got := groupsOf(rep); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("groups:\n got  %v\n want %v", got, want)
	}
	for _, g := range rep.Groups {
		for _, m := range g.Members {
			if m.Header == "" {
				t.Errorf("%s: no header hash", m.Path)
			}
		}
	}
}
