package hfmap

import (
	"slices"
	"strings"
	"testing"
)

// The expected names are what gguf-py's TensorNameMap(arch, n_blocks).get_name(name, try_suffixes=(".weight",
// ".bias")) returns for them (gguf-py at ggml-org/llama.cpp@0024aa7, the table's source).
var cases = []struct{ arch, hf, gguf string }{
	{"llama", "model.embed_tokens.weight", "token_embd.weight"},
	{"llama", "model.norm.weight", "output_norm.weight"},
	{"llama", "lm_head.weight", "output.weight"},
	{"llama", "model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight"},
	{"llama", "model.layers.1.self_attn.k_proj.weight", "blk.1.attn_k.weight"},
	{"llama", "model.layers.1.self_attn.v_proj.weight", "blk.1.attn_v.weight"},
	{"llama", "model.layers.1.self_attn.o_proj.weight", "blk.1.attn_output.weight"},
	{"llama", "model.layers.1.mlp.gate_proj.weight", "blk.1.ffn_gate.weight"},
	{"llama", "model.layers.1.mlp.up_proj.weight", "blk.1.ffn_up.weight"},
	{"llama", "model.layers.1.mlp.down_proj.weight", "blk.1.ffn_down.weight"},
	{"llama", "model.layers.1.input_layernorm.weight", "blk.1.attn_norm.weight"},
	{"llama", "model.layers.12.post_attention_layernorm.weight", "blk.12.ffn_norm.weight"},
	{"llama", "model.layers.1.block_sparse_moe.gate.weight", "blk.1.ffn_gate_inp.weight"},
	// mistral converts as llama, its consolidated names too
	{"llama", "layers.1.attention.wq.weight", "blk.1.attn_q.weight"},
	{"qwen2", "model.layers.1.self_attn.q_proj.bias", "blk.1.attn_q.bias"},
	{"qwen2", "model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight"},
	{"qwen2", "model.norm.weight", "output_norm.weight"},
	{"qwen2", "model.embed_tokens.weight", "token_embd.weight"},
	{"qwen3", "model.layers.1.self_attn.q_norm.weight", "blk.1.attn_q_norm.weight"},
	{"qwen3", "model.layers.1.self_attn.k_norm.weight", "blk.1.attn_k_norm.weight"},
	{"qwen3", "lm_head.weight", "output.weight"},
	{"gemma", "model.embed_tokens.weight", "token_embd.weight"},
	{"gemma", "model.layers.1.input_layernorm.weight", "blk.1.attn_norm.weight"},
	{"gemma", "model.layers.1.post_attention_layernorm.weight", "blk.1.ffn_norm.weight"},
	{"gemma", "model.norm.weight", "output_norm.weight"},
	{"gemma2", "model.layers.1.post_attention_layernorm.weight", "blk.1.post_attention_norm.weight"},
	{"gemma2", "model.layers.1.pre_feedforward_layernorm.weight", "blk.1.ffn_norm.weight"},
	{"gemma2", "model.layers.1.post_feedforward_layernorm.weight", "blk.1.post_ffw_norm.weight"},
	{"gemma2", "model.layers.1.input_layernorm.weight", "blk.1.attn_norm.weight"},
	{"gemma2", "model.embed_tokens.weight", "token_embd.weight"},
	{"gemma3", "model.layers.1.self_attn.q_norm.weight", "blk.1.attn_q_norm.weight"},
	{"gemma3", "model.layers.1.post_attention_layernorm.weight", "blk.1.post_attention_norm.weight"},
	{"gemma3", "model.layers.1.pre_feedforward_layernorm.weight", "blk.1.ffn_norm.weight"},
	{"gemma3", "model.norm.weight", "output_norm.weight"},
	{"phi3", "model.layers.1.self_attn.qkv_proj.weight", "blk.1.attn_qkv.weight"},
	{"phi3", "model.layers.1.mlp.gate_up_proj.weight", "blk.1.ffn_up.weight"},
	{"phi3", "model.layers.1.self_attn.o_proj.weight", "blk.1.attn_output.weight"},
	{"phi3", "model.layers.1.mlp.down_proj.weight", "blk.1.ffn_down.weight"},
	{"phi3", "model.embed_tokens.weight", "token_embd.weight"},
	{"phi3", "lm_head.weight", "output.weight"},
	{"phi3", "model.norm.weight", "output_norm.weight"},
	{"starcoder2", "model.layers.1.mlp.c_fc.weight", "blk.1.ffn_up.weight"},
	{"starcoder2", "model.layers.1.mlp.c_proj.bias", "blk.1.ffn_down.bias"},
	{"starcoder2", "model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight"},
	{"starcoder2", "model.layers.1.input_layernorm.bias", "blk.1.attn_norm.bias"},
	{"starcoder2", "model.norm.weight", "output_norm.weight"},
	{"starcoder2", "model.embed_tokens.weight", "token_embd.weight"},
	{"gpt2", "transformer.wte.weight", "token_embd.weight"},
	{"gpt2", "transformer.wpe.weight", "position_embd.weight"},
	{"gpt2", "transformer.ln_f.weight", "output_norm.weight"},
	{"gpt2", "transformer.h.1.attn.c_attn.weight", "blk.1.attn_qkv.weight"},
	{"gpt2", "transformer.h.1.attn.c_proj.bias", "blk.1.attn_output.bias"},
	{"gpt2", "transformer.h.1.ln_1.weight", "blk.1.attn_norm.weight"},
	{"gpt2", "transformer.h.1.ln_2.bias", "blk.1.ffn_norm.bias"},
	{"gpt2", "transformer.h.1.mlp.c_fc.weight", "blk.1.ffn_up.weight"},
	{"gpt2", "transformer.h.1.mlp.c_proj.weight", "blk.1.ffn_down.weight"},
	{"gpt2", "lm_head.weight", "output.weight"},
	{"gpt2", "h.1.attn.c_attn.weight", "blk.1.attn_qkv.weight"},
	// Upstream has these; the fork the table was first generated from (gguf-py 0.17.0) did not.
	{"deepseek2", "model.layers.1.self_attn.k_proj.weight", "blk.1.attn_k.weight"},
	{"gemma4", "model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight"},
	{"qwen35", "model.layers.1.linear_attn.in_proj_qkv.weight", "blk.1.attn_qkv.weight"},
}

func TestNamesBothWays(t *testing.T) {
	for _, c := range cases {
		a, ok := Lookup(c.arch)
		if !ok {
			t.Fatalf("Lookup(%q) found nothing", c.arch)
		}
		got, ok := a.ToGGUF(c.hf)
		if !ok || got.GGUF != c.gguf || got.Expert != -1 {
			t.Errorf("%s: ToGGUF(%q) = %+v, %v; want %q", c.arch, c.hf, got, ok, c.gguf)
		}
		if back := a.FromGGUF(c.gguf); !slices.Contains(back, c.hf) {
			t.Errorf("%s: FromGGUF(%q) = %q, lacks %q", c.arch, c.gguf, back, c.hf)
		}
	}
}

func TestExperts(t *testing.T) {
	a, _ := Lookup("llama")
	got, ok := a.ToGGUF("model.layers.3.block_sparse_moe.experts.5.w1.weight")
	if !ok || got != (Name{GGUF: "blk.3.ffn_gate_exps.weight", Expert: 5}) {
		t.Errorf("ToGGUF of a Mixtral expert = %+v, %v", got, ok)
	}
	q, _ := Lookup("qwen2moe")
	got, ok = q.ToGGUF("model.layers.0.mlp.experts.7.down_proj.weight")
	if !ok || got != (Name{GGUF: "blk.0.ffn_down_exps.weight", Expert: 7}) {
		t.Errorf("ToGGUF of a Qwen2-MoE expert = %+v, %v", got, ok)
	}
}

func TestUnknown(t *testing.T) {
	if _, ok := Lookup("no-such-arch"); ok {
		t.Error("Lookup of an unknown architecture succeeded")
	}
	a, _ := Lookup("llama")
	for _, n := range []string{"model.layers.1.self_attn.no_such.weight", "model.layers.x.self_attn.q_proj.weight", "", "transformer.h.1.attn.c_attn.weight"} {
		if g, ok := a.ToGGUF(n); ok {
			t.Errorf("llama: ToGGUF(%q) = %+v", n, g)
		}
	}
}

// Every architecture of the table builds, and every name it maps to is one of its tensors' formats.
func TestEveryArch(t *testing.T) {
	src, commit, lic := Source()
	if src == "" || commit == "" || !strings.Contains(lic, "MIT") {
		t.Errorf("Source() = %q, %q, %q", src, commit, lic)
	}
	if !strings.HasPrefix(commit, "ggml-org/llama.cpp@") { // upstream, not a fork's additions
		t.Errorf("the table comes from %q, not upstream llama.cpp", commit)
	}
	all := Archs()
	if len(all) < 60 {
		t.Fatalf("%d architectures", len(all))
	}
	for _, name := range all {
		a, ok := Lookup(name)
		if !ok {
			t.Fatalf("Lookup(%q) failed", name)
		}
		for _, tn := range load().Archs[name] { // a GGUF name maps to itself, as in gguf-py
			if !inCfg(tn) {
				continue
			}
			g := strings.ReplaceAll(load().TensorNames[tn], "{bid}", "7") + ".weight"
			if got, ok := a.ToGGUF(g); !ok || got.GGUF != g {
				t.Errorf("%s: ToGGUF(%q) = %+v, %v", name, g, got, ok)
			}
		}
	}
}

// inCfg reports whether tensor tn has Hugging Face names in the table (gguf-py maps only those).
func inCfg(tn string) bool {
	for _, cs := range [][]cfg{load().Mappings, load().BlockMappings} {
		for _, c := range cs {
			if c.Tensor == tn {
				return true
			}
		}
	}
	return false
}
