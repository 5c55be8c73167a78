package companion_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/companion"
)

// TestReadDir: the files a loader reads are found at a folder's top, in additional_chat_templates/,
// and in a pipeline's component folders; others are not; JSON is identified by its canonical form
// (whitespace and key order do not change the digest), and the ID changes with any file.
func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.json", `{"b": 1, "a": {"rope_theta": 10000.0}}`)
	write("model_index.json", `{"_class_name": "P", "unet": ["diffusers", "U"]}`)
	write("unet/config.json", `{"x": 1}`)
	write("scheduler/scheduler_config.json", `{"beta": 0.1}`)
	write("README.md", "not a companion")
	write("chat_template.jinja", "{{ x }}\n")
	write("additional_chat_templates/tool_use.jinja", "{{ tools }}\n")
	write("tokenizer.json", `{"version":"1.0","added_tokens":[{"id":3,"content":"<s>","special":true}],"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":[["a","b"]]}}`)
	files, err := companion.ReadDir(dir, companion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	want := "additional_chat_templates/tool_use.jinja chat_template.jinja config.json model_index.json scheduler/scheduler_config.json tokenizer.json unet/config.json"
	if got := strings.Join(paths, " "); got != want {
		t.Fatalf("files %s, want %s", got, want)
	}
	cfg := files[2]
	if cfg.Kind != companion.KindJSON || cfg.Text != `{"a":{"rope_theta":10000.0},"b":1}` {
		t.Errorf("config.json %+v", cfg)
	}
	tok := files[5].Tokenizer
	if tok == nil || tok.Vocab != 3 || tok.Merges != 1 || len(tok.AddedTokens) != 1 || !tok.AddedTokens[0].Special || files[5].Full.Merges[0] != "a b" {
		t.Errorf("tokenizer %+v", tok)
	}
	id := companion.ID(files)
	write("config.json", "{\n  \"a\": {\"rope_theta\": 10000.0},\n  \"b\": 1\n}\n")
	again, _ := companion.ReadDir(dir, companion.Options{})
	if companion.ID(again) != id {
		t.Error("reformatted config.json changed the ID")
	}
	write("config.json", `{"a": {"rope_theta": 500000.0}, "b": 1}`)
	again, _ = companion.ReadDir(dir, companion.Options{})
	if companion.ID(again) == id {
		t.Error("rope_theta changed, the ID did not")
	}
	if companion.ID(nil) == "" {
		t.Error("a folder without companion files has no ID")
	}
}

// TestParseNeverFails: what does not parse is a File with Problem, compared by its digest.
func TestParseNeverFails(t *testing.T) {
	for _, c := range []struct {
		kind companion.Kind
		in   string
	}{{companion.KindJSON, `{"a":`}, {companion.KindTokenizer, `[]`}, {companion.KindTokenizer, `{"model":{"vocab":7}}`}, {companion.KindText, "\xff\x00"}} {
		f := companion.File{Path: "x", Kind: c.kind}
		companion.Parse(&f, []byte(c.in))
		if f.Problem == "" || !strings.HasPrefix(f.Digest, "b3:") {
			t.Errorf("%s %q: %+v", c.kind, c.in, f)
		}
	}
}

// FuzzParse: any bytes, as any kind, parse without a panic into a File with a digest.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"model":{"type":"Unigram","vocab":[["a",-1.5],["b",-2]]},"added_tokens":[]}`), uint8(2))
	f.Add([]byte(`{"a":[1,2,{"b":null}]}`), uint8(0))
	f.Add([]byte("{{ x }}"), uint8(1))
	kinds := []companion.Kind{companion.KindJSON, companion.KindText, companion.KindTokenizer, companion.KindBinary}
	f.Fuzz(func(t *testing.T, b []byte, k uint8) {
		file := companion.File{Path: "f", Kind: kinds[int(k)%len(kinds)]}
		companion.Parse(&file, b)
		if !strings.HasPrefix(file.Digest, "b3:") {
			t.Fatalf("digest %q", file.Digest)
		}
	})
}
