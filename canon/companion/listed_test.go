package companion_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/companion"
)

// TestSelectAsReadDir: from a repository's listing, Select picks the files ReadDir reads in the same
// folder on disk, and ReadAt gives each the digest ReadFile gives: an hf:// repository and its clone
// have the same companion files.
func TestSelectAsReadDir(t *testing.T) {
	dir := t.TempDir()
	tree := map[string]string{
		"config.json":                                  `{"b": 1, "a": {"rope_theta": 10000.0}}`,
		"model_index.json":                             `{"_class_name": "P", "unet": ["diffusers", "U"]}`,
		"unet/config.json":                             `{"x": 1}`,
		"unet/additional_chat_templates/a.jinja":       "{{ a }}",
		"unet/deeper/config.json":                      `{"not": "read"}`,
		"scheduler/scheduler_config.json":              `{"beta": 0.1}`,
		".hidden/config.json":                          `{}`,
		".gitattributes":                               "*.safetensors filter=lfs",
		"README.md":                                    "not a companion",
		"model.safetensors":                            "not a companion",
		"chat_template.jinja":                          "{{ x }}\n",
		"additional_chat_templates/tool_use.jinja":     "{{ tools }}\n",
		"additional_chat_templates/notes.txt":          "not a template",
		"tokenizer.json":                               `{"version":"1.0","added_tokens":[],"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":[["a","b"]]}}`,
		"tokenizer.model":                              "\x00\x01binary",
		"text_encoder/tokenizer/tokenizer_config.json": `{"not": "read: two folders down"}`,
	}
	var listing []string
	for rel, s := range tree {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		listing = append(listing, rel)
	}
	local, err := companion.ReadDir(dir, companion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	picked, err := companion.Select(listing)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range local {
		paths = append(paths, f.Path)
	}
	if !slices.Equal(picked, paths) {
		t.Fatalf("Select picked %q, ReadDir read %q", picked, paths)
	}
	for i, rel := range picked {
		b := []byte(tree[rel])
		f, err := companion.ReadAt(strings.NewReader(string(b)), int64(len(b)), rel)
		if err != nil {
			t.Fatal(err)
		}
		if f.Digest != local[i].Digest || f.Kind != local[i].Kind || f.Size != local[i].Size || f.Text != local[i].Text {
			t.Errorf("%s: ReadAt gives %+v, ReadFile %+v", rel, f, local[i])
		}
	}
}

// zeros is size zero bytes, or fewer than it claims (short): a server that announced more than it sends.
type zeros struct{ size, short int64 }

func (z zeros) ReadAt(p []byte, off int64) (int, error) {
	end := z.size
	if z.short > 0 {
		end = z.short
	}
	if off >= end {
		return 0, io.EOF
	}
	n := min(int64(len(p)), end-off)
	clear(p[:n])
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// TestReadAtLimits: a file that sends fewer bytes than announced is an error; one over MaxSize is
// hashed a piece at a time (the digest a local file of the same bytes gets) and not parsed; one over
// MaxHashed is an error at once, nothing read.
func TestReadAtLimits(t *testing.T) {
	if _, err := companion.ReadAt(zeros{size: 100, short: 60}, 100, "config.json"); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a short file: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := companion.ReadAt(zeros{size: companion.MaxSize + 9, short: companion.MaxSize + 1}, companion.MaxSize+9, "tokenizer.json"); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a large short file: %v, want io.ErrUnexpectedEOF", err)
	}
	f, err := companion.ReadAt(zeros{size: 1 << 50}, 1<<50, "tokenizer.json")
	if err == nil || !strings.Contains(err.Error(), "over the 1024 MiB") {
		t.Errorf("a file of 1 PiB: %+v, %v; want an error", f, err)
	}
	if testing.Short() {
		t.Skip("hashes 128 MiB")
	}
	size := int64(companion.MaxSize + 1)
	p := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	local, err := companion.ReadFile(p, "tokenizer.json", companion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := companion.ReadAt(zeros{size: size}, size, "tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != local.Digest || got.Problem != local.Problem || got.Size != size || got.Tokenizer != nil {
		t.Errorf("ReadAt of %d bytes: %+v; ReadFile: %+v", size, got, local)
	}
}

// TestSummary: one short line of what each file says, from what was read.
func TestSummary(t *testing.T) {
	for _, c := range []struct{ rel, text, want string }{
		{"config.json", `{"model_type": "llama", "architectures": ["LlamaForCausalLM"]}`, "llama · LlamaForCausalLM"},
		{"unet/config.json", `{"_class_name": "UNet2DConditionModel"}`, "UNet2DConditionModel"},
		{"tokenizer_config.json", `{"tokenizer_class": "LlamaTokenizer", "chat_template": "{{ x }}"}`, "LlamaTokenizer · chat template"},
		{"tokenizer_config.json", `{"chat_template": [{"name": "default", "template": "x"}, {"name": "tool_use", "template": "y"}]}`, "2 chat templates"},
		{"tokenizer_config.json", `{}`, "no chat template"},
		{"tokenizer.json", `{"added_tokens":[{"id":3,"content":"<s>","special":true}],"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}}`, "BPE, 3 tokens, 1 merges, 1 added token"},
		{"adapter_config.json", `{"peft_type": "LORA", "r": 8, "base_model_name_or_path": "org/base"}`, "LORA · r 8 · org/base"},
		{"model_index.json", `{"_class_name": "StableDiffusionPipeline"}`, "StableDiffusionPipeline"},
		{"generation_config.json", `{"eos_token_id": 2}`, ""},
		{"chat_template.jinja", `{{ x }}`, ""},
		{"config.json", `{"model_type": `, "not valid JSON: unexpected EOF"},
	} {
		f, err := companion.ReadAt(strings.NewReader(c.text), int64(len(c.text)), c.rel)
		if err != nil {
			t.Fatal(err)
		}
		if got := companion.Summary(f); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.rel, c.text, got, c.want)
		}
	}
}

// FuzzSelectSummary: Select of any listing (one path a line) picks only companion files of it, in
// order, and Summary of any file as ReadAt reads it says one line, without a panic.
func FuzzSelectSummary(f *testing.F) {
	f.Add("model_index.json\nunet/config.json\n.x/config.json\nadditional_chat_templates/a.jinja", "config.json", []byte(`{"model_type": "llama", "architectures": ["A", 1]}`))
	f.Add("config.json", "tokenizer_config.json", []byte(`{"chat_template": [1, {}]}`))
	f.Add("", "adapter_config.json", []byte(`{"r": {"x": []}, "peft_type": 3}`))
	f.Add("", "tokenizer.json", []byte(`{"model": {"vocab": {"a": 0}, "merges": [["a", "b"]]}}`))
	f.Fuzz(func(t *testing.T, listing, rel string, b []byte) {
		files := strings.Split(listing, "\n")
		picked, err := companion.Select(files)
		if err == nil {
			if !slices.IsSorted(picked) {
				t.Errorf("not in order: %q", picked)
			}
			for _, p := range picked {
				if !companion.Is(p) || !slices.Contains(files, p) {
					t.Errorf("picked %q", p)
				}
			}
		}
		if !companion.Is(rel) {
			return
		}
		file, err := companion.ReadAt(strings.NewReader(string(b)), int64(len(b)), rel)
		if err != nil {
			t.Fatal(err)
		}
		if s := companion.Summary(file); strings.ContainsAny(s, "\n\r") {
			t.Errorf("summary of %s %q: %q", rel, b, s)
		}
	})
}
