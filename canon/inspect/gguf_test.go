package inspect_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// TestGGUFCard: a GGUF model's card says what llama.cpp's keys say (the format, the file type, the
// quantisation mix, the hyperparameters, the tokenizer, a summary of the chat template, the licence
// and links) and takes its name, author, kind and family from the general.* keys.
func TestGGUFCard(t *testing.T) {
	c, err := inspect.Inspect(t.Context(), fixture("llama.gguf"), inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := c.GGUF
	if g == nil {
		t.Fatal("no GGUF section")
	}
	if g.Format != "GGUF v3" || g.Architecture != "llama" || g.FileType == nil || g.FileType.Name != "Q4_K_M" || g.FileType.ID != 15 ||
		g.QuantizationVersion == nil || *g.QuantizationVersion != 2 || g.License != "apache-2.0" || g.QuantizedBy != "stdiff" {
		t.Errorf("general: %+v", g)
	}
	var mix []string
	sum := 0.0
	for _, ts := range g.Types {
		mix = append(mix, string(ts.DType))
		sum += ts.Share
	}
	if strings.Join(mix, " ") != "Q4_K Q6_K F32" || g.Types[0].Bytes != 1728 || g.Types[0].Tensors != 5 || sum < 0.9999 || sum > 1.0001 {
		t.Errorf("mix: %+v", g.Types)
	}
	if g.ContextLength.N != 4096 || g.EmbeddingLength.N != 256 || g.BlockCount.N != 2 || g.HeadCount.N != 4 || g.HeadCountKV.N != 2 ||
		g.ExpertCount != nil || g.Rope.DimensionCount.N != 64 || *g.Rope.FreqBase != 500000 || g.Rope.ScalingFactor != nil {
		t.Errorf("hyperparameters: %+v", g)
	}
	if tk := g.Tokenizer; tk == nil || tk.Model != "llama" || tk.VocabSize != 24 || tk.SpecialTokens["bos"] != 1 || tk.SpecialTokens["eos"] != 2 {
		t.Errorf("tokenizer: %+v", tk)
	}
	if ct := g.ChatTemplate; ct == nil || ct.Lines != 6 || ct.Bytes != 206 || strings.Join(ct.Markers, " ") != "<|im_start|> <|im_end|>" {
		t.Errorf("chat template: %+v", ct)
	}
	in := c.Info
	if in.Name != "Tiny Llama" || in.Sources["name"] != "metadata general.name" || in.Author != "stdiff fixtures" ||
		in.Kind != lora.KindCheckpoint || in.Family != lora.FamilyLLM {
		t.Errorf("info: %+v", in)
	}

	j := cardJSON(t, c)["gguf"].(map[string]any)
	if j["context_length"] != 4096.0 || j["expert_count"] != nil || j["file_type"].(map[string]any)["name"] != "Q4_K_M" {
		t.Errorf("JSON: %v", j)
	}
	var text, full, md bytes.Buffer
	inspect.Write(&text, c, inspect.WriteOptions{Flags: func(option string) string { return map[string]string{"Full": "--full"}[option] }}) // as the CLI names it
	inspect.Write(&full, c, inspect.WriteOptions{Full: true})
	inspect.Write(&md, c, inspect.WriteOptions{Format: textfmt.Markdown})
	for _, want := range []string{"  format      GGUF v3 · llama · Q4_K_M (file type 15)\n", "  types       Q4_K 54% · Q6_K 40% · F32 6%  (share of tensor bytes)\n",
		"  model       context 4,096 · embedding 256 · 2 blocks · feed-forward 512 · heads 4, kv 2\n", "  rope        dimensions 64 · base 500,000\n",
		"  tokenizer   llama · 24 tokens · bos 1 · eos 2\n", "  chat        206 B, 6 lines · <|im_start|>, <|im_end|>  (--full shows it)\n", "  licence     apache-2.0\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.Contains(full.String(), "    │ {% if add_generation_prompt %}\n") || strings.Contains(text.String(), "add_generation_prompt %}\n") {
		t.Errorf("--full shows the template, the card does not:\n%s", full.String())
	}
	if !strings.Contains(md.String(), "| format | GGUF v3 · llama · Q4\\_K\\_M (file type 15) |\n") {
		t.Errorf("Markdown:\n%s", md.String())
	}

	st, err := inspect.Inspect(t.Context(), fixture("base.safetensors"), inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cardJSON(t, st)["gguf"]; ok || st.GGUF != nil {
		t.Error("a safetensors card has a gguf section")
	}
}

// TestGGUFCardEdges: per-layer head counts (an array) are a JSON array and a range in text; a rope
// scaling; a LoRA adapter is a lora; a diffusion model's architecture names its family; a file with
// no tokenizer has none; a vocabulary-only file is not called a checkpoint.
func TestGGUFCardEdges(t *testing.T) {
	dir := t.TempDir()
	tensor := []ggufw.Tensor{{Name: "blk.0.attn_q.weight", Type: gguf.TypeF16, Dims: []int64{4, 4}}}
	files := map[string]ggufw.File{
		"layers.gguf": {KVs: []ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("openelm")},
			{Key: "openelm.attention.head_count", Val: ggufw.U32s(12, 16, 20)}, {Key: "openelm.rope.scaling.type", Val: ggufw.Str("yarn")},
			{Key: "openelm.rope.scaling.factor", Val: ggufw.F32(4)}, {Key: "openelm.rope.scaling.original_context_length", Val: ggufw.U32(32768)},
			{Key: "general.file_type", Val: ggufw.U32(1024 + 7)}}, Tensors: tensor},
		"adapter.gguf": {KVs: []ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("llama")}, {Key: "general.type", Val: ggufw.Str("adapter")},
			{Key: "adapter.type", Val: ggufw.Str("lora")}}, Tensors: tensor},
		"flux.gguf":  {KVs: []ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("flux")}}, Tensors: tensor},
		"vocab.gguf": {KVs: []ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("llama")}, {Key: "tokenizer.ggml.tokens", Val: ggufw.Strs("a", "b")}}},
	}
	cards := map[string]*inspect.Card{}
	for name, f := range files {
		c, err := inspect.Inspect(t.Context(), write(t, dir, name, f.Build()), inspect.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cards[name] = c
	}
	l := cards["layers.gguf"]
	if l.GGUF.HeadCount == nil || len(l.GGUF.HeadCount.PerLayer) != 3 || l.GGUF.Tokenizer != nil || l.GGUF.FileType.Name != "Q8_0 (guessed)" {
		t.Errorf("layers: %+v", l.GGUF)
	}
	if hc := cardJSON(t, l)["gguf"].(map[string]any)["head_count"].([]any); len(hc) != 3 || hc[2] != 20.0 {
		t.Errorf("head_count JSON: %v", hc)
	}
	var text bytes.Buffer
	inspect.Write(&text, l, inspect.WriteOptions{})
	for _, want := range []string{"heads 12–20 per layer", "rope        scaling yarn ×4 from 32,768"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if in := cards["adapter.gguf"].Info; in.Kind != lora.KindLoRA || in.Family != lora.FamilyLLM {
		t.Errorf("adapter: %s %s", in.Kind, in.Family)
	}
	if in := cards["flux.gguf"].Info; in.Kind != lora.KindCheckpoint || in.Family != lora.FamilyFlux {
		t.Errorf("flux: %s %s", in.Kind, in.Family)
	}
	if v := cards["vocab.gguf"]; v.Info.Kind != lora.KindUnknown || v.GGUF.Tokenizer.VocabSize != 2 || len(v.GGUF.Types) != 0 {
		t.Errorf("vocab: %s %+v", v.Info.Kind, v.GGUF)
	}
}
