package ggufw

import (
	"encoding/binary"
	"math"

	"github.com/stdiff/stdiff/canon/gguf"
)

// chatTemplate is a ChatML-style chat template, as many GGUF files carry one.
const chatTemplate = `{% for message in messages %}
{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}
{% endfor %}
{% if add_generation_prompt %}
{{ '<|im_start|>assistant\n' }}
{% endif %}`

// llamaTokens is a tiny tokenizer vocabulary: special tokens first, then pieces.
var llamaTokens = []string{"<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "▁the", "▁a", "▁model",
	"▁is", "▁small", "er", "ing", "ed", "▁of", "▁to", "▁and", "s", "t", "e", "a", "o", "i", "n", "r"}

// llamaGGUF is a small GGUF file in the shape of a quantised llama model (what llama-quantize calls
// Q4_K_M: mostly Q4_K, some Q6_K, norms in F32), with the metadata convert_hf_to_gguf.py writes.
func llamaGGUF() File {
	types := make([]int32, len(llamaTokens))
	for i := range types {
		types[i] = 1
		if i < 5 {
			types[i] = 3
		}
	}
	f := File{KVs: []KV{
		{Key: "general.architecture", Val: Str("llama")},
		{Key: "general.type", Val: Str("model")},
		{Key: "general.name", Val: Str("Tiny Llama")},
		{Key: "general.author", Val: Str("stdiff fixtures")},
		{Key: "general.license", Val: Str("apache-2.0")},
		{Key: "general.url", Val: Str("https://example.com/tiny-llama")},
		{Key: "general.source.url", Val: Str("https://huggingface.co/stdiff/tiny-llama")},
		{Key: "general.quantized_by", Val: Str("stdiff")},
		{Key: "general.file_type", Val: U32(15)},
		{Key: "general.quantization_version", Val: U32(2)},
		{Key: "llama.context_length", Val: U32(4096)},
		{Key: "llama.embedding_length", Val: U32(256)},
		{Key: "llama.block_count", Val: U32(2)},
		{Key: "llama.feed_forward_length", Val: U32(512)},
		{Key: "llama.attention.head_count", Val: U32(4)},
		{Key: "llama.attention.head_count_kv", Val: U32(2)},
		{Key: "llama.attention.layer_norm_rms_epsilon", Val: F32(1e-5)},
		{Key: "llama.rope.dimension_count", Val: U32(64)},
		{Key: "llama.rope.freq_base", Val: F32(500000)},
		{Key: "tokenizer.ggml.model", Val: Str("llama")},
		{Key: "tokenizer.ggml.tokens", Val: Strs(llamaTokens...)},
		{Key: "tokenizer.ggml.token_type", Val: I32s(types...)},
		{Key: "tokenizer.ggml.bos_token_id", Val: U32(1)},
		{Key: "tokenizer.ggml.eos_token_id", Val: U32(2)},
		{Key: "tokenizer.chat_template", Val: Str(chatTemplate)},
	}}
	t := func(name string, typ gguf.GGMLType, dims ...int64) {
		f.Tensors = append(f.Tensors, Tensor{Name: name, Type: typ, Dims: dims})
	}
	t("token_embd.weight", gguf.TypeQ4_K, 256, 6)
	for _, b := range []string{"blk.0.", "blk.1."} {
		t(b+"attn_norm.weight", gguf.TypeF32, 16)
		t(b+"attn_q.weight", gguf.TypeQ4_K, 256, 2)
		t(b+"attn_k.weight", gguf.TypeQ4_K, 256, 1)
		t(b+"attn_v.weight", gguf.TypeQ6_K, 256, 1)
		t(b+"ffn_down.weight", gguf.TypeQ6_K, 256, 1)
	}
	t("output_norm.weight", gguf.TypeF32, 16)
	t("output.weight", gguf.TypeQ6_K, 256, 2)
	return f
}

// requantGGUF is llamaGGUF after a typical revision: attn_q requantised from Q4_K to Q6_K, two
// tokens added and one changed, the chat template edited, a longer context.
func requantGGUF() File {
	f := llamaGGUF()
	tokens := append([]string(nil), llamaTokens...)
	tokens[6] = "▁an"
	tokens = append(tokens, "<|tool_call|>", "<|tool_result|>")
	types := make([]int32, len(tokens))
	for i := range types {
		types[i] = 1
	}
	for i := range f.KVs {
		switch kv := &f.KVs[i]; kv.Key {
		case "llama.context_length":
			kv.Val = U32(8192)
		case "tokenizer.ggml.tokens":
			kv.Val = Strs(tokens...)
		case "tokenizer.ggml.token_type":
			kv.Val = I32s(types...)
		case "tokenizer.chat_template":
			kv.Val = Str(chatTemplate + "\n{{ '<|tool_call|>' if tools else '' }}")
		}
	}
	for i := range f.Tensors {
		if t := &f.Tensors[i]; t.Type == gguf.TypeQ4_K && t.Name != "token_embd.weight" && len(t.Dims) == 2 && t.Dims[1] == 2 {
			t.Type = gguf.TypeQ6_K
		}
	}
	return f
}

// brokenGGUF is a small GGUF file with defects llama.cpp rejects files for: a key written twice and
// a tensor whose data offset is not a multiple of the alignment.
func brokenGGUF() File {
	return File{
		KVs: []KV{
			{Key: "general.architecture", Val: Str("llama")},
			{Key: "general.name", Val: Str("broken")},
			{Key: "general.name", Val: Str("broken again")},
		},
		Tensors: []Tensor{
			{Name: "a.weight", Type: gguf.TypeF32, Dims: []int64{16}},
			{Name: "b.weight", Type: gguf.TypeF32, Dims: []int64{16}},
		},
		Offsets:  []uint64{0, 72},
		Trailing: make([]byte, 8), // so that the misplaced tensor still ends within the file
	}
}

// overlapGGUF names a tensor twice and lets the data of one tensor overlap the one before.
func overlapGGUF() File {
	return File{
		KVs: []KV{{Key: "general.architecture", Val: Str("llama")}},
		Tensors: []Tensor{
			{Name: "a.weight", Type: gguf.TypeF32, Dims: []int64{16}},
			{Name: "b.weight", Type: gguf.TypeF32, Dims: []int64{16}},
			{Name: "a.weight", Type: gguf.TypeF32, Dims: []int64{16}},
		},
		Offsets: []uint64{0, 32, 128},
	}
}

// trailingGGUF is valid, with bytes after its data that llama.cpp ignores.
func trailingGGUF() File {
	f := brokenGGUF()
	f.KVs, f.Offsets, f.Trailing = f.KVs[:2], nil, []byte("leftover bytes")
	return f
}

// oddGGUF has an alignment that is not a power of two and a tensor of a type ggml does not know.
func oddGGUF() File {
	return File{
		KVs: []KV{
			{Key: "general.architecture", Val: Str("llama")},
			{Key: "general.alignment", Val: U32(48)},
		},
		Tensors: []Tensor{{Name: "a.weight", Type: 99, Dims: []int64{16}, NoData: true}},
	}
}

// Weights is a small quantised model for the comparison by value, as it was (tuned false) and
// after a short fine-tune (tuned true): its Q4_K embedding stored again with one byte changed (ggml's
// block-quantised types are compared by their bytes, never decoded) and two values of its F32 norm
// moved (compared by value). Its Q6_K and its other F32 tensor stay as they were.
func Weights(tuned bool) File {
	embd := make([]byte, 4*144) // 4 rows of one Q4_K block
	for i := range embd {
		embd[i] = byte(i * 31)
	}
	norm, outNorm := make([]float32, 16), make([]float32, 16)
	for i := range norm {
		norm[i], outNorm[i] = 1+float32(i)/64, 1-float32(i)/128
	}
	if tuned {
		embd[100] ^= 0xFF
		norm[5] += 0.01
		norm[9] -= 0.02
	}
	f32 := func(v []float32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		return b
	}
	return File{
		KVs: []KV{
			{Key: "general.architecture", Val: Str("llama")},
			{Key: "general.name", Val: Str("Tiny Weights")},
			{Key: "general.file_type", Val: U32(15)},
		},
		Tensors: []Tensor{
			{Name: "token_embd.weight", Type: gguf.TypeQ4_K, Dims: []int64{256, 4}, Data: embd},
			{Name: "blk.0.attn_norm.weight", Type: gguf.TypeF32, Dims: []int64{16}, Data: f32(norm)},
			{Name: "blk.0.attn_q.weight", Type: gguf.TypeQ6_K, Dims: []int64{256, 2}},
			{Name: "output_norm.weight", Type: gguf.TypeF32, Dims: []int64{16}, Data: f32(outNorm)},
		},
	}
}

// Fixtures are the GGUF files of the project's testdata folder, by file name. Tests of any package may
// build the one they need, or read the committed copy, which this package's TestFixtures keeps in step
// with this function (after changing it: go test ./canon/gguf/ggufw -run TestFixtures -update, then
// review the files with stdiff).
func Fixtures() map[string][]byte {
	llama := llamaGGUF().Build()
	return map[string][]byte{
		"llama.gguf":             llama,
		"requant.gguf":           requantGGUF().Build(),
		"broken.gguf":            brokenGGUF().Build(),
		"odd.gguf":               oddGGUF().Build(),
		"overlap.gguf":           overlapGGUF().Build(),
		"trailing.gguf":          trailingGGUF().Build(),
		"llama-truncated.gguf":   llama[:len(llama)-500],
		"weights.gguf":           Weights(false).Build(),
		"weights-finetuned.gguf": Weights(true).Build(),
		"unknown-arch.gguf":      unknownArchGGUF().Build(),
	}
}

// unknownArchGGUF is a GGUF file of an architecture llama.cpp's name map does not know: it cannot be
// paired with a Hugging Face model.
func unknownArchGGUF() File {
	return File{
		KVs:     []KV{{Key: "general.architecture", Val: Str("no-such-arch")}},
		Tensors: []Tensor{{Name: "output_norm.weight", Type: gguf.TypeF32, Dims: []int64{4}}},
	}
}

// Split splits f as llama.cpp's llama-gguf-split does, into n files: the metadata in the first,
// the tensors shared out in order, and in every file the split.* keys saying where it stands.
func Split(f File, n int) []File {
	out := make([]File, n)
	for k := range out {
		if k == 0 {
			out[k].KVs = append(out[k].KVs, f.KVs...)
		}
		out[k].KVs = append(out[k].KVs,
			KV{Key: gguf.SplitNoKey, Val: U16(uint16(k))},
			KV{Key: gguf.SplitCountKey, Val: U16(uint16(n))},
			KV{Key: gguf.SplitTensorsKey, Val: I32(int32(len(f.Tensors)))})
	}
	for i, t := range f.Tensors {
		k := i * n / len(f.Tensors)
		out[k].Tensors = append(out[k].Tensors, t)
	}
	return out
}
