package dupes

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestInvalidGGUFReason: a GGUF file its reference rejects is skipped as not valid GGUF (never as
// safetensors), and a reason is one line, whatever the error it comes from.
func TestInvalidGGUFReason(t *testing.T) {
	dir := t.TempDir()
	b := ggufFile("tiny")
	i := bytes.Index(b, []byte("general.name"))
	binary.LittleEndian.PutUint64(b[i+len("general.name")+4:], 1<<40) // the value's string length
	p := filepath.Join(dir, "broken.gguf")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Find(t.Context(), []string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 1 || !errors.Is(rep.Skipped[0].Err, ErrInvalid) || !strings.HasPrefix(rep.Skipped[0].Reason, "not valid GGUF (") {
		t.Errorf("skipped %+v", rep.Skipped)
	}
	// A reason built from an error that holds a newline (errors.Join) is one line.
	if r := reasonOf(errors.Join(ErrInvalid, errors.New("string-length"))); strings.ContainsAny(r, "\n\r") {
		t.Errorf("reason %q", r)
	}
}
