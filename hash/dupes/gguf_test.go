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

	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/hash/dupes/dupecache"
)

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
	// A reason built from an error that holds a newline (errors.Join) is one line, and so is one that
	// names a path with a newline in it.
	if r := reasonOf(errors.Join(ErrInvalid, errors.New("string-length"))); strings.ContainsAny(r, "\n\r") {
		t.Errorf("reason %q", r)
	}
	odd := filepath.Join(dir, "odd\nname.gguf")
	if err := os.WriteFile(odd, ggufFile("tiny"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(odd, filepath.Join(dir, "link.gguf")); err != nil {
		t.Skip(err)
	}
	rep, err = Find(t.Context(), []string{odd, filepath.Join(dir, "link.gguf")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Skipped {
		if strings.ContainsAny(s.Reason, "\n\r") {
			t.Errorf("reason %q", s.Reason)
		}
	}
	if len(rep.Skipped) != 1 {
		t.Errorf("skipped %+v", rep.Skipped)
	}
}

// scanFiles writes files (name → bytes) into a fresh folder and scans them at level.
func scanFiles(t *testing.T, level Level, files map[string][]byte) *Report {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	rep, err := Find(t.Context(), paths, Options{Level: level})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestTensorlessModelsAreNoContentCopies: models without tensors hold nothing but their metadata, so
// two of them are never content copies, whatever their formats: only identical files group, as bytes.
func TestTensorlessModelsAreNoContentCopies(t *testing.T) {
	empty := metadataOnly()
	for _, c := range []struct {
		name  string
		files map[string][]byte
		want  map[Level][]string
	}{
		{"metadata-only safetensors", map[string][]byte{"a.safetensors": metadataOnly("note", "a"), "b.safetensors": metadataOnly("note", "b")}, map[Level][]string{}},
		{"kv-only GGUF and empty safetensors", map[string][]byte{"kv.gguf": ggufw.File{KVs: []ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("llama")}}}.Build(),
			"empty.safetensors": empty}, map[Level][]string{}},
		{"vocab-only GGUFs, other templates", map[string][]byte{"a.gguf": vocabOnly("v", "{{ a }}"), "b.gguf": vocabOnly("v", "{{ b }}")}, map[Level][]string{}},
		{"identical files", map[string][]byte{"a.safetensors": metadataOnly("note", "a"), "b.safetensors": metadataOnly("note", "a"),
			"c.gguf": vocabOnly("v", "t"), "d.gguf": vocabOnly("v", "t"), "e.gguf": vocabOnly("w", "t")},
			map[Level][]string{LevelBytes: {"a.safetensors", "b.safetensors"}, LevelBytes + " (2nd)": {"c.gguf", "d.gguf"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, level := range []Level{LevelContent, LevelStructure} {
				rep := scanFiles(t, level, c.files)
				if got := groupsOf(rep); fmt.Sprint(got) != fmt.Sprint(c.want) || len(rep.Skipped) != 0 {
					t.Errorf("%s: groups %v, want %v; skipped %+v", level, got, c.want, rep.Skipped)
				}
			}
		})
	}
}

// TestIdentitiesCached: a scan with the cache tells GGUF files that differ in their tokenizer and
// metadata-only files apart as the first did, whether the cache kept their identities or comes from a
// version that did not (the header is read again then).
func TestIdentitiesCached(t *testing.T) {
	files := map[string][]byte{"a.gguf": ggufWith(ggufw.KV{Key: "tokenizer.ggml.merges", Val: ggufw.Strs("a b")}), "b.gguf": ggufWith(),
		"c.gguf": ggufWith(), "m1.safetensors": metadataOnly("note", "1"), "m2.safetensors": metadataOnly("note", "2")}
	dir := t.TempDir()
	var paths []string
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	want := fmt.Sprint(map[Level][]string{LevelBytes: {"b.gguf", "c.gguf"}})
	cachePath := filepath.Join(t.TempDir(), dupecache.CacheFile)
	for run, forget := range []bool{false, false, true} {
		c, err := dupecache.OpenCache(cachePath)
		if err != nil {
			t.Fatal(err)
		}
		if forget { // as a cache written before identities were kept
			for _, p := range paths {
				if e, ok := c.Get(p); ok {
					e.Ident = ""
					c.Put(p, e)
				}
			}
		}
		rep, err := Find(t.Context(), paths, Options{Cache: c})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(groupsOf(rep)); got != want {
			t.Errorf("run %d: groups %s, want %s", run, got, want)
		}
		if err := c.Save(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}
