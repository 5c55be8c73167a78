package inspect_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/stfile"
)

// TestCompanionsListed: a folder model's card lists the files beside its tensors (issue 33), each
// with its size and what it says (a config's model type and architectures, a tokenizer's sizes, a
// chat template, a pipeline's class), in text, Markdown and JSON; names from the folder are escaped;
// past inspect.FoldedCompanions files the text folds unless Full. A model named by its file lists
// none.
func TestCompanionsListed(t *testing.T) {
	dir := t.TempDir()
	f := stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{2}}}}
	model := write(t, dir, "model.safetensors", f.Build())
	write(t, dir, "config.json", []byte(`{"architectures": ["LlamaForCausalLM"], "model_type": "llama\u001b[31m", "rope_theta": 500000.0}`))
	write(t, dir, "tokenizer_config.json", []byte(`{"tokenizer_class": "PreTrainedTokenizerFast", "chat_template": "{{ messages }}"}`))
	write(t, dir, "tokenizer.json", []byte(`{"added_tokens":[{"id":3,"content":"<s>","special":true}],"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}}`))
	write(t, dir, "chat_template.jinja", []byte("{{ x }}\n"))
	write(t, dir, "generation_config.json", []byte(`{"a": `))
	card, err := inspect.Inspect(t.Context(), dir, inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := inspect.WriteText(&b, card, inspect.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\n  files       5 beside the tensors (",
		"\n    chat_template.jinja       8 B  chat template\n",
		"\n    config.json              96 B  llama\\x1b[31m · LlamaForCausalLM\n",
		"\n    generation_config.json    6 B  (not valid JSON: unexpected EOF)\n",
		"\n    tokenizer.json          127 B  BPE · 3 tokens · 1 merge · 1 added token\n",
		"\n    tokenizer_config.json    81 B  PreTrainedTokenizerFast · chat template\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text does not say %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Error("a control character from a file reached the terminal")
	}
	b.Reset()
	if err := inspect.WriteMarkdown(&b, card); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| file tokenizer\\_config.json | 81 B · PreTrainedTokenizerFast · chat template |") {
		t.Errorf("markdown:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "| file generation\\_config.json | 6 B · not valid JSON: unexpected EOF |") {
		t.Errorf("markdown does not give the problem:\n%s", b.String())
	}
	v := cardJSON(t, card)
	list, _ := v["companions"].([]any)
	if len(list) != 5 {
		t.Fatalf("companions %v", v["companions"])
	}
	cfg, tok := list[1].(map[string]any), list[3].(map[string]any)
	if cfg["path"] != "config.json" || cfg["kind"] != "json" || cfg["size"] != 96.0 || !strings.HasPrefix(cfg["digest"].(string), "b3:") ||
		cfg["model_type"] != "llama\x1b[31m" || fmt.Sprint(cfg["architectures"]) != "[LlamaForCausalLM]" {
		t.Errorf("config.json %v", cfg)
	}
	if tk, _ := tok["tokenizer"].(map[string]any); tok["path"] != "tokenizer.json" || fmt.Sprint(tk) != "map[added_tokens:1 merges:1 model:BPE vocab:3]" {
		t.Errorf("tokenizer.json %v", tok)
	}
	if gen := list[2].(map[string]any); gen["problem"] != "not valid JSON: unexpected EOF" {
		t.Errorf("generation_config.json %v", gen)
	}

	file, err := inspect.Inspect(t.Context(), model, inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cardJSON(t, file)["companions"]; ok || file.Companions != nil {
		t.Errorf("a model named by its file lists companions: %+v", file.Companions)
	}

	for i := range inspect.FoldedCompanions + 3 {
		write(t, dir, fmt.Sprintf("additional_chat_templates/t%02d.jinja", i), []byte("{{ y }}"))
	}
	card, err = inspect.Inspect(t.Context(), dir, inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	flags := func(option string) string { return map[string]string{"Full": "--full"}[option] }
	b.Reset()
	inspect.WriteText(&b, card, inspect.TextOptions{Flags: flags})
	if !strings.Contains(b.String(), "\n    … 8 more (--full lists all)\n") || strings.Contains(b.String(), "tokenizer.json ") {
		t.Errorf("folded:\n%s", b.String())
	}
	b.Reset()
	inspect.WriteText(&b, card, inspect.TextOptions{Full: true, Flags: flags})
	if strings.Contains(b.String(), "more (--full") || !strings.Contains(b.String(), "\n    tokenizer.json ") {
		t.Errorf("full:\n%s", b.String())
	}
}
