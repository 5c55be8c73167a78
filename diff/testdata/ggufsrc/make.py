#!/usr/bin/env python3
"""Makes the GGUF-against-source fixtures: tiny random Hugging Face models, saved with save_pretrained, and
their GGUF files as llama.cpp's own convert_hf_to_gguf.py writes them.

    python3 make.py LLAMA_CPP OUT [NAME...]

LLAMA_CPP holds convert_hf_to_gguf.py and gguf-py/ (a llama.cpp checkout); needs torch, transformers,
safetensors and numpy, and no network. Each model goes to OUT/NAME/ (model.safetensors, config.json) and
OUT/NAME-TYPE.gguf (every model, or the NAMEs given). Only the tokenizer step of the converter is replaced: the models have no tokenizer, so
every model class writes a vocabulary of vocab_size made-up tokens instead (set_vocab), and Gemma 3's
embedding trim reads that vocabulary. Everything else (names, permutations, +1, transposes, stacking,
quantisation) is the converter's own.

The files kept were made with llama.cpp's converter as of gguf-py 0.17.0 (mid-2025) under torch 2.11 and
transformers 5.17. That converter reads configs through transformers' AutoConfig, which in transformers 5
keeps rope_theta under rope_parameters (and drops other keys config.json has): the converter's hparams
get back every key config.json holds that AutoConfig left out, and a default rope_scaling is none, as
transformers 4 gave them. Without that phi3 fails (no rope_theta); Gemma 3's GGUF kept was made before it
and carries the converter's default rope base (1e6) where config.json says 10000, which stdiff reports.
phi3 and starcoder2 were made with it (python3 make.py LLAMA_CPP OUT phi3, then starcoder2).
"""
import json
import os
import shutil
import sys
import traceback

import importlib.util
import tempfile

import torch

LLAMA, OUT, ONLY = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path[:0] = [LLAMA, os.path.join(LLAMA, "gguf-py")]
# Modules the converter imports but these models never use: stand-ins where they are not installed.
STUBS = {"sentencepiece": "class SentencePieceProcessor:\n    pass\n",
         "yaml": "def safe_load(*a, **k):\n    return {}\n",
         "requests": ""}
stub_dir = tempfile.mkdtemp()
for mod, src in STUBS.items():
    if importlib.util.find_spec(mod) is None:
        with open(os.path.join(stub_dir, mod + ".py"), "w") as f:
            f.write(src)
sys.path.append(stub_dir)
import convert_hf_to_gguf as conv  # noqa: E402
import transformers  # noqa: E402

VOCAB = 64


def tiny_tokens(n):
    return [f"<t{i}>" for i in range(n)]


def set_vocab(self):
    n = self.hparams.get("vocab_size") or self.hparams.get("text_config", {}).get("vocab_size") or VOCAB
    self.gguf_writer.add_tokenizer_model("gpt2")
    self.gguf_writer.add_tokenizer_pre("default")
    self.gguf_writer.add_token_list(tiny_tokens(n))
    self.gguf_writer.add_token_types([1] * n)


def create_vocab_sentencepiece(self):
    n = self.hparams.get("vocab_size") or VOCAB
    return tiny_tokens(n), [0.0] * n, [1] * n


for classes in conv.ModelBase._model_classes.values():
    for cls in classes.values():
        cls.set_vocab = set_vocab
conv.TextModel._create_vocab_sentencepiece = create_vocab_sentencepiece
auto_hparams = conv.ModelBase.load_hparams


def load_hparams(dir_model, *args, **kwargs):
    """The converter's hparams as transformers 4 gave them: the keys of config.json that AutoConfig left out
    (transformers 5 moves rope_theta under rope_parameters), a default rope_scaling none."""
    config = auto_hparams(dir_model, *args, **kwargs)
    with open(os.path.join(dir_model, "config.json")) as f:
        for k, v in json.load(f).items():
            if config.get(k) is None:
                config[k] = v
    rs = config.get("rope_scaling")
    if isinstance(rs, dict) and rs.get("rope_type", rs.get("type")) in (None, "default"):
        config["rope_scaling"] = None
    return config


conv.ModelBase.load_hparams = staticmethod(load_hparams)

common = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=128, rope_theta=10000.0, rms_norm_eps=1e-5)
MODELS = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", dict(common, tie_word_embeddings=False), torch.bfloat16, ["f16", "q8_0", "bf16"]),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", dict(common, tie_word_embeddings=False), torch.bfloat16, ["f16", "q8_0"]),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", dict(common, head_dim=8, tie_word_embeddings=True), torch.bfloat16, ["f16", "q8_0"]),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", dict(common, head_dim=8, rms_norm_eps=1e-6), torch.bfloat16, ["f16", "q8_0"]),
    "gemma3": ("Gemma3TextConfig", "Gemma3ForCausalLM", dict(common, head_dim=8, rms_norm_eps=1e-6), torch.bfloat16, ["f16"]),
    "phi3": ("Phi3Config", "Phi3ForCausalLM", dict(common, num_key_value_heads=4, original_max_position_embeddings=128,
                                                   pad_token_id=0, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False), torch.bfloat16, ["f16", "q8_0"]),
    "mixtral": ("MixtralConfig", "MixtralForCausalLM", dict(common, num_local_experts=4, num_experts_per_tok=2, intermediate_size=32, head_dim=8,
                                                            tie_word_embeddings=False), torch.bfloat16, ["f16", "q8_0"]),
    "starcoder2": ("Starcoder2Config", "Starcoder2ForCausalLM", dict({k: v for k, v in common.items() if k != "rms_norm_eps"}, norm_epsilon=1e-5,
                                                                    use_bias=True, tie_word_embeddings=False), torch.bfloat16, ["f16", "q8_0"]),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", dict(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=128, n_ctx=128,
                                                   layer_norm_epsilon=1e-5), torch.float32, ["f16", "q8_0", "bf16"]),
}


def make(name, cfg_name, model_name, kw, dtype, types):
    torch.manual_seed(sum(map(ord, name)))
    cfg = getattr(transformers, cfg_name)(**kw)
    model = getattr(transformers, model_name)(cfg)
    with torch.no_grad():
        for n, p in model.named_parameters():
            p.copy_(torch.randn_like(p) * (0.5 if "norm" in n or "ln_" in n else 0.08))
    model = model.to(dtype)
    d = os.path.join(OUT, name)
    model.save_pretrained(d, safe_serialization=True)
    for extra in os.listdir(d):
        if extra not in ("model.safetensors", "config.json"):
            os.remove(os.path.join(d, extra))
    # Newer transformers write some keys elsewhere (rope_theta under rope_parameters) or not at all (GPT-2's
    # n_ctx, a null head_dim): config.json gets the keys given, as older versions wrote them.
    path = os.path.join(d, "config.json")
    with open(path) as f:
        saved = json.load(f)
    for k, v in kw.items():
        if saved.get(k) is None:
            saved[k] = v
    with open(path, "w") as f:
        json.dump(saved, f, indent=2, sort_keys=True)
    for t in types:
        out = os.path.join(OUT, f"{name}-{t}.gguf")
        sys.argv = ["convert_hf_to_gguf.py", d, "--outtype", t, "--outfile", out]
        conv.main()


failed = []
for name, spec in MODELS.items():
    if ONLY and name not in ONLY:
        continue
    try:
        make(name, *spec)
    except BaseException:
        traceback.print_exc()
        failed.append(name)
print("failed:", failed)
for root, _, files in os.walk(OUT):
    for f in sorted(files):
        p = os.path.join(root, f)
        print(os.path.getsize(p), p)
