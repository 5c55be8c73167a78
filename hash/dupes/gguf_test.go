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
	"github.com/stdiff/stdiff/canon/stfile"
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

// vocabOnly is a GGUF file without tensors (as llama.cpp's vocab-only files are): a tokenizer and a
// chat template.
func vocabOnly(name, template string) []byte {
	return ggufw.File{KVs: []ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("llama")}, {Key: "general.name", Val: ggufw.Str(name)},
		{Key: "tokenizer.ggml.model", Val: ggufw.Str("gpt2")}, {Key: "tokenizer.ggml.tokens", Val: ggufw.Strs("a", "b", "ab")},
		{Key: "tokenizer.chat_template", Val: ggufw.Str(template)}}}.Build()
}

// metadataOnly is a safetensors file without tensors: its metadata is all it holds.
func metadataOnly(kv ...string) []byte {
	var f stfile.File
	for i := 0; i+1 < len(kv); i += 2 {
		f.Metadata = append(f.Metadata, stfile.KV{Key: kv[i], Value: kv[i+1]})
	}
	return f.Build()
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

// ggufWith is ggufFile("tiny") with more key-value pairs.
func ggufWith(kvs ...ggufw.KV) []byte {
	f := ggufw.File{KVs: append([]ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("llama")}, {Key: "general.name", Val: ggufw.Str("tiny")}}, kvs...)}
	for i := range 4 {
		f.Tensors = append(f.Tensors, ggufw.Tensor{Name: fmt.Sprintf("blk.%d.attn_q.weight", i), Type: gguf.TypeQ4_K, Dims: []int64{256, 2}})
	}
	return f.Build()
}

// TestGGUFRuntimeKeysAreContent: GGUF files with the same tensors but other keys llama.cpp reads (the
// tokenizer's merges, the chat template, a hyperparameter) run differently: they are no content copies.
// Files that differ in descriptive keys alone (general.name, the author, the licence) are.
func TestGGUFRuntimeKeysAreContent(t *testing.T) {
	merges := ggufw.KV{Key: "tokenizer.ggml.merges", Val: ggufw.Strs("a b", "ab c")}
	long := strings.Repeat("{% for m in messages %}{{ m.content }}{% endfor %}", 20) // longer than what is kept inline
	for _, c := range []struct {
		name string
		a, b []byte
		want map[Level][]string
	}{
		{"merges", ggufWith(merges), ggufWith(), map[Level][]string{}},
		{"chat template", ggufWith(ggufw.KV{Key: "tokenizer.chat_template", Val: ggufw.Str(long + "a")}),
			ggufWith(ggufw.KV{Key: "tokenizer.chat_template", Val: ggufw.Str(long + "b")}), map[Level][]string{}},
		{"hyperparameter", ggufWith(ggufw.KV{Key: "llama.rope.freq_base", Val: ggufw.F32(10000)}),
			ggufWith(ggufw.KV{Key: "llama.rope.freq_base", Val: ggufw.F32(500000)}), map[Level][]string{}},
		{"descriptive keys", ggufWith(merges, ggufw.KV{Key: "general.author", Val: ggufw.Str("me")}),
			ggufWith(ggufw.KV{Key: "general.license", Val: ggufw.Str("mit")}, merges),
			map[Level][]string{LevelContent: {"a.gguf", "b.gguf"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := scanFiles(t, LevelRenamed, map[string][]byte{"a.gguf": c.a, "b.gguf": c.b})
			if got := groupsOf(rep); fmt.Sprint(got) != fmt.Sprint(c.want) || len(rep.Skipped) != 0 {
				t.Errorf("groups %v, want %v; skipped %+v", got, c.want, rep.Skipped)
			}
			r, err := Act(t.Context(), rep, ActOptions{Delete: true})
			if err != nil || r.Failed > 0 || (len(c.want) == 0) != (r.Deleted == 0) {
				t.Errorf("act: %v, %+v", err, r)
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
	cachePath := filepath.Join(t.TempDir(), CacheFile)
	for run, forget := range []bool{false, false, true} {
		c, err := OpenCache(cachePath)
		if err != nil {
			t.Fatal(err)
		}
		if forget { // as a cache written before identities were kept
			for k, e := range c.entries {
				e.Ident = ""
				c.entries[k] = e
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
