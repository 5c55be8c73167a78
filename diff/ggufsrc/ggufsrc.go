// Package ggufsrc compares a GGUF file with the Hugging Face model it was converted from: tensors
// paired through llama.cpp's name map for the GGUF's general.architecture (package hfmap), the
// transforms convert_hf_to_gguf.py applies undone, the GGUF side dequantised and compared by value
// band by band, a summary per GGUF type, and the GGUF keys that restate config.json compared with it.
// Compare returns its own result types; package diff adapts them into its Report.
package ggufsrc

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/dequant"
	"github.com/stdiff/stdiff/canon/gguf/hfmap"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/values"
)

// Transform names a conversion that llama.cpp's convert_hf_to_gguf.py applies to a tensor, undone to
// compare a GGUF file with its Hugging Face source. Codes are stable and safe to match in scripts.
type Transform string

// Transforms.
const (
	// TransformNone: the tensor is stored as it is (its dimensions reversed, as GGUF writes them).
	TransformNone Transform = "none"
	// TransformPermuteQK: the rows of a query or key projection are permuted within each head (llama
	// and the architectures converted like it), with Heads heads: num_attention_heads for q,
	// num_key_value_heads for k.
	TransformPermuteQK Transform = "permute-qk"
	// TransformNormPlusOne: the Gemma family's norm weights are stored plus one.
	TransformNormPlusOne Transform = "norm+1"
	// TransformTranspose: GPT-2's Conv1D weights are stored transposed.
	TransformTranspose Transform = "transpose"
	// TransformStackExperts: the experts of a MoE layer, one tensor each in the source, are stacked into
	// one tensor, compared expert by expert.
	TransformStackExperts Transform = "stack-experts"
	// TransformTrimRows: the token embedding keeps the rows of the tokens the vocabulary has (Gemma 3
	// drops the rest): the GGUF's rows are compared with the source's first rows.
	TransformTrimRows Transform = "trim-rows"
)

// Alternative is a transform under which a pair's values match when they do not under the one the
// converter applies: the converter that wrote the GGUF did something else (or the source's
// config.json says another head count).
type Alternative struct {
	Transform Transform    `json:"transform"`
	Heads     int          `json:"heads,omitempty"`
	Values    *values.Diff `json:"values,omitempty"`
}

// PairStatus says how a GGUF tensor compares with its source.
type PairStatus string

// Pair statuses.
const (
	// PairEqual: every value is equal.
	PairEqual PairStatus = "equal"
	// PairExactRounding: the GGUF tensor (F16, BF16) is the round-to-nearest-even conversion of the
	// source: equal as far as its type can be.
	PairExactRounding PairStatus = "exact-rounding"
	// PairDiffers: values differ (a quantised type always does); PairResult.Values holds the statistics.
	PairDiffers PairStatus = "differs"
	// PairShape: the shapes do not correspond.
	PairShape PairStatus = "shape"
	// PairNotCompared: values were not read (header only, a remote side, a snapshot, a type that cannot
	// be dequantised).
	PairNotCompared PairStatus = "not-compared"
)

// Report is how a GGUF file was compared with its Hugging Face source (diff's Report.Source, JSON
// gguf_source).
type Report struct {
	// Arch is the GGUF's general.architecture; GGUF says which side it is ("a" or "b").
	Arch string `json:"arch"`
	GGUF string `json:"gguf"`
	// NameMap is where llama.cpp's name map came from (package hfmap).
	NameMap string `json:"name_map"`
	// Config is the config.json read beside the source ("" when there is none).
	Config string `json:"config"`
	// Pairs are the tensors paired, in the GGUF's order.
	Pairs []Pair `json:"pairs"`
	// Types summarise the pairs per GGUF type, in the order types first occur.
	Types []TypeSummary `json:"types"`
	// ConfigKeys are the GGUF keys that restate config.json, with both values.
	ConfigKeys []ConfigKey `json:"config_keys"`
	// Skipped are source tensors the converter leaves out by design (rotary inverse frequencies,
	// attention masks, Gemma's lm_head); Generated GGUF tensors the converter makes (rope factors).
	// Neither counts as a difference.
	Skipped   []string `json:"skipped"`
	Generated []string `json:"generated"`
}

// Pair is one GGUF tensor and its source: their names as the models were given (Name on side a),
// the transform undone (with Heads for TransformPermuteQK), the GGUF type, and how they compare.
type Pair struct {
	Name      string     `json:"name"`
	NameB     string     `json:"name_b"`
	Transform Transform  `json:"transform"`
	Heads     int        `json:"heads,omitempty"`
	Type      string     `json:"type"`
	Status    PairStatus `json:"status"`
}

// TypeSummary is the pairs of one GGUF type: how many, their parameters and bits per weight, and
// how far dequantised values are from the source (RMSE over every element as quantize-stats
// computes it, largest absolute error); nil where no value was compared.
type TypeSummary struct {
	Type          string   `json:"type"`
	Tensors       int      `json:"tensors"`
	Parameters    uint64   `json:"parameters"`
	BitsPerWeight float64  `json:"bits_per_weight"`
	RMSE          *float64 `json:"rmse"`
	MaxError      *float64 `json:"max_error"`
	sumSq         float64
	count         int64
	maxErr        float64
	bytes         uint64
}

// ConfigKey is a GGUF key that restates a key of config.json, with both values ("" where absent).
type ConfigKey struct {
	Key       string `json:"key"`
	ConfigKey string `json:"config_key"`
	GGUF      string `json:"gguf"`
	Config    string `json:"config"`
	Equal     bool   `json:"equal"`
}

// ErrUnknownArchitecture is the error of a GGUF file whose general.architecture llama.cpp's name map
// does not know (or that has none): its tensors cannot be paired with a Hugging Face model's.
var ErrUnknownArchitecture = errors.New("llama.cpp's name map has no such architecture")

// Side says which of a and b is a GGUF file compared with its Hugging Face source (a safetensors
// file, shard set or save_pretrained folder): 0 or 1, or -1 when they are no such pair.
func Side(a, b *canon.Model) int {
	isST := func(m *canon.Model) bool { return m.Format == canon.FormatSafetensors || m.Format == "" }
	switch {
	case a.Format == canon.FormatGGUF && isST(b):
		return 0
	case b.Format == canon.FormatGGUF && isST(a):
		return 1
	}
	return -1
}

// archOf is the name map of a GGUF model's general.architecture.
func archOf(m *canon.Model) (*hfmap.Arch, error) {
	name, ok := m.Meta("general.architecture")
	if !ok {
		return nil, &canon.ReadError{Name: m.Name, Err: fmt.Errorf("%w: the file has no general.architecture", ErrUnknownArchitecture),
			Hint: "convert_hf_to_gguf.py always writes general.architecture, which picks the name map the tensors are paired through: this file was made or edited another way; compare it with a GGUF file instead"}
	}
	a, ok := hfmap.Lookup(name)
	if !ok {
		src, _, _ := hfmap.Source()
		return nil, &canon.ReadError{Name: m.Name, Err: fmt.Errorf("%w: general.architecture is %q", ErrUnknownArchitecture, name),
			Hint: fmt.Sprintf("the name map (%s) knows %d architectures, e.g. llama, qwen2, gemma2, phi3, gpt2; a newer stdiff may know this one", src, len(hfmap.Archs()))}
	}
	return a, nil
}

// hfConfig is a source's config.json: its keys, with those of text_config (multimodal models) where
// the top level lacks them.
type hfConfig map[string]any

// readConfig reads the config.json beside a local source (in its folder, or beside its file).
func readConfig(o *source.Opened) (hfConfig, string) {
	if o.Remote || o.Snapshot != nil {
		return nil, ""
	}
	dir := o.Model.Name
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	path := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, ""
	}
	var c hfConfig
	if json.Unmarshal(b, &c) != nil || c == nil {
		return nil, ""
	}
	if tc, ok := c["text_config"].(map[string]any); ok {
		for k, v := range tc {
			if _, ok := c[k]; !ok {
				c[k] = v
			}
		}
	}
	if rp, ok := c["rope_parameters"].(map[string]any); ok { // transformers 5 keeps rope_theta here
		if _, ok := c["rope_theta"]; !ok && rp["rope_theta"] != nil {
			c["rope_theta"] = rp["rope_theta"]
		}
	}
	return c, path
}

// number is the first of keys that config.json holds as a number.
func (c hfConfig) number(keys ...string) (float64, string, bool) {
	for _, k := range keys {
		if v, ok := c[k].(float64); ok {
			return v, k, true
		}
	}
	return 0, "", false
}

// configKeys are the GGUF keys (after "ARCH.") that restate config.json, and the config keys that
// convert_hf_to_gguf.py reads them from.
var configKeys = []struct {
	gguf   string
	config []string
	f32    bool // stored as float32
}{
	{"block_count", []string{"num_hidden_layers", "n_layer", "n_layers", "num_layers"}, false},
	{"context_length", []string{"max_position_embeddings", "n_ctx", "n_positions", "max_sequence_length"}, false},
	{"embedding_length", []string{"hidden_size", "n_embd", "d_model"}, false},
	{"attention.head_count", []string{"num_attention_heads", "n_head", "n_heads"}, false},
	{"attention.head_count_kv", []string{"num_key_value_heads", "n_head_kv", "num_kv_heads"}, false},
	{"rope.freq_base", []string{"rope_theta"}, true},
	{"attention.layer_norm_rms_epsilon", []string{"rms_norm_eps"}, true},
	{"attention.layer_norm_epsilon", []string{"layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"}, true},
	{"vocab_size", []string{"vocab_size"}, false},
	{"feed_forward_length", []string{"intermediate_size", "n_inner", "hidden_dim"}, false},
	{"attention.key_length", []string{"head_dim"}, false},
	{"attention.value_length", []string{"head_dim"}, false},
	{"expert_count", []string{"num_local_experts", "num_experts"}, false},
	{"expert_used_count", []string{"num_experts_per_tok"}, false},
	{"expert_group_count", []string{"n_group"}, false},
	{"expert_group_used_count", []string{"topk_group"}, false},
}

// compareConfig compares the GGUF keys that restate config.json with it; vocab_size also against the
// length of tokenizer.ggml.tokens when the GGUF has no ARCH.vocab_size.
func compareConfig(g *canon.Model, arch string, c hfConfig) []ConfigKey {
	out := []ConfigKey{}
	if c == nil {
		return out
	}
	for _, k := range configKeys {
		key := arch + "." + k.gguf
		gv, ok := g.Meta(key)
		if !ok && k.gguf == "vocab_size" {
			if n, has := tokenCount(g); has {
				key, gv, ok = "tokenizer.ggml.tokens", strconv.FormatUint(n, 10), true
			}
		}
		cv, ck, has := c.number(k.config...)
		if !ok || !has {
			continue
		}
		x, err := strconv.ParseFloat(gv, 64)
		equal := err == nil && x == cv
		if k.f32 && err == nil {
			equal = float32(x) == float32(cv)
		}
		out = append(out, ConfigKey{Key: key, ConfigKey: ck, GGUF: gv, Config: strconv.FormatFloat(cv, 'g', -1, 64), Equal: equal})
	}
	return append(out, derivedKeys(g, arch, c)...)
}

// derivedKeys compares the GGUF keys the converter derives from config.json rather than copies: the
// RoPE dimension count (head_dim, else hidden_size / num_attention_heads, for a rotary factor of 1)
// and RoPE scaling (rope_scaling, or transformers 5's rope_parameters: its type, factor and, for
// YaRN, original context length), as TextModel.set_gguf_parameters and LlamaModel write them.
func derivedKeys(g *canon.Model, arch string, c hfConfig) []ConfigKey {
	var out []ConfigKey
	num := func(key, ck string, cv float64, f32 bool) {
		gv, ok := g.Meta(arch + "." + key)
		if !ok {
			return
		}
		x, err := strconv.ParseFloat(gv, 64)
		equal := err == nil && x == cv
		if f32 && err == nil {
			equal = float32(x) == float32(cv)
		}
		out = append(out, ConfigKey{Key: arch + "." + key, ConfigKey: ck, GGUF: gv, Config: strconv.FormatFloat(cv, 'g', -1, 64), Equal: equal})
	}
	rope := ropeParams(c)
	partial, _, hasPartial := c.number("partial_rotary_factor", "rotary_pct")
	if p, ok := rope["partial_rotary_factor"].(float64); ok {
		partial, hasPartial = p, true
	}
	if !hasPartial || partial == 1 {
		if hd, _, ok := c.number("head_dim"); ok {
			num("rope.dimension_count", "head_dim", hd, false)
		} else if n, _, ok := c.number("hidden_size", "n_embd"); ok {
			if hv, _, _ := c.number("num_attention_heads", "n_head"); heads(hv) > 0 {
				h := heads(hv)
				num("rope.dimension_count", "hidden_size / num_attention_heads", math.Floor(n/float64(h)), false)
			}
		}
	}
	typ, _ := rope["rope_type"].(string)
	if typ == "" {
		typ, _ = rope["type"].(string)
	}
	factor, hasFactor := rope["factor"].(float64)
	var gtype string
	switch strings.ToLower(typ) {
	case "linear":
		gtype = "linear"
	case "yarn":
		gtype = "yarn"
	case "su", "longrope":
		gtype, hasFactor = "longrope", false
	default:
		return out
	}
	if gtype != "longrope" && !hasFactor {
		return out
	}
	if gv, ok := g.Meta(arch + ".rope.scaling.type"); ok {
		out = append(out, ConfigKey{Key: arch + ".rope.scaling.type", ConfigKey: "rope_scaling.rope_type", GGUF: gv, Config: typ, Equal: gv == gtype})
	}
	if hasFactor {
		num("rope.scaling.factor", "rope_scaling.factor", factor, true)
	}
	if orig, ok := rope["original_max_position_embeddings"].(float64); ok && gtype == "yarn" {
		num("rope.scaling.original_context_length", "rope_scaling.original_max_position_embeddings", orig, false)
	}
	return out
}

// ropeParams are config.json's RoPE parameters as the converter reads them: rope_scaling, else
// rope_parameters (transformers 5), its full_attention entry where it has one per attention kind.
func ropeParams(c hfConfig) map[string]any {
	r, _ := c["rope_scaling"].(map[string]any)
	if r == nil {
		r, _ = c["rope_parameters"].(map[string]any)
	}
	if fa, ok := r["full_attention"].(map[string]any); ok {
		r = fa
	}
	return r
}

func tokenCount(g *canon.Model) (uint64, bool) {
	f, ok := g.Detail.(*gguf.File)
	if !ok {
		return 0, false
	}
	for i := range f.KVs {
		if kv := &f.KVs[i]; kv.Key == "tokenizer.ggml.tokens" && kv.Value.Array != nil {
			return kv.Value.Array.Len, true
		}
	}
	return 0, false
}

// Architectures whose converter applies a transform (convert_hf_to_gguf.py's modify_tensors).
var (
	permuteArchs = []string{"llama", "granite", "minicpm", "olmo", "arctic", "chameleon"}
	plusOneArchs = []string{"gemma", "gemma2", "gemma3", "gemma3n"}
)

// skippedByConverter reports whether the converter leaves a source tensor out by design.
func skippedByConverter(arch, name string) bool {
	switch {
	case strings.HasSuffix(name, ".attention.masked_bias"), strings.HasSuffix(name, ".attention.bias"),
		strings.HasSuffix(name, ".rotary_emb.inv_freq"):
		return true
	case arch == "gpt2" && (strings.HasSuffix(name, ".attn.bias") || strings.HasSuffix(name, ".attn.masked_bias")):
		return true
	case slices.Contains(plusOneArchs, arch) && name == "lm_head.weight":
		return true
	}
	return false
}

// generatedByConverter reports whether the converter makes a GGUF tensor that has no source tensor.
func generatedByConverter(name string) bool {
	return name == "rope_freqs.weight" || name == "rope_factors_long.weight" || name == "rope_factors_short.weight"
}

// srcPair is a GGUF tensor (index g) and its source tensors (one, or one per expert in order).
type srcPair struct {
	g         int
	hf        []int
	transform Transform
	heads     int
	// shapeOK says the shapes correspond; result is how the values compare, nil where they were not.
	shapeOK bool
	result  *srcResult
}

// expectedTransform is what the converter does to a source tensor of arch, mapped to GGUF name gname.
func expectedTransform(arch, hfName, gname string, c hfConfig, g *canon.Model) (Transform, int) {
	switch {
	case slices.Contains(permuteArchs, arch) && (strings.HasSuffix(gname, ".attn_q.weight") || strings.HasSuffix(gname, ".attn_q.bias")):
		return TransformPermuteQK, headCount(c, g, arch, false)
	case slices.Contains(permuteArchs, arch) && (strings.HasSuffix(gname, ".attn_k.weight") || strings.HasSuffix(gname, ".attn_k.bias")):
		return TransformPermuteQK, headCount(c, g, arch, true)
	case slices.Contains(plusOneArchs, arch) && strings.HasSuffix(hfName, "norm.weight"):
		return TransformNormPlusOne, 0
	case arch == "gpt2" && (strings.HasSuffix(hfName, ".c_attn.weight") || strings.HasSuffix(hfName, ".c_proj.weight") || strings.HasSuffix(hfName, ".c_fc.weight")):
		return TransformTranspose, 0
	}
	return TransformNone, 0
}

// headCount is the number of heads the converter permutes q (kv false) or k (kv true) with: from
// config.json as the converter reads it, else from the GGUF's own keys.
// A count that is no whole number from 1 to maxHeads is 0 (none).
func headCount(c hfConfig, g *canon.Model, arch string, kv bool) int {
	if n, _, ok := c.number("num_attention_heads"); ok {
		if kv {
			if m, _, ok := c.number("num_key_value_heads"); ok && m > 0 {
				return heads(m)
			}
		}
		return heads(n)
	}
	return ggufHeads(g, arch, kv)
}

// maxHeads bounds a head count read from a file: far above any model's, far below where doubling it
// or dividing by it could overflow.
const maxHeads = 1 << 24

// heads is a head count from config.json, 0 unless a whole number from 1 to maxHeads.
func heads(v float64) int {
	if v < 1 || v > maxHeads || v != math.Trunc(v) {
		return 0
	}
	return int(v)
}

// ggufHeads is the head count a GGUF file says: ARCH.attention.head_count(_kv).
func ggufHeads(g *canon.Model, arch string, kv bool) int {
	key := arch + ".attention.head_count"
	if kv {
		if v, ok := g.Meta(key + "_kv"); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return heads(n)
		}
	}
	v, _ := g.Meta(key)
	n, _ := strconv.ParseFloat(v, 64)
	return heads(n)
}

// ggmlType is the ggml type of a GGUF tensor, by its canon DType.
func ggmlType(d tensor.DType) (gguf.GGMLType, bool) {
	for i := range gguf.Types {
		if info, ok := gguf.GGMLType(i).Info(); ok && info.Name == string(d) {
			return gguf.GGMLType(i), true
		}
	}
	return 0, false
}

// stackedName is the source's name for a stacked tensor: the first expert's, its number a *.
func stackedName(first string) string {
	i := strings.Index(first, ".experts.")
	if i < 0 {
		return first
	}
	rest := first[i+len(".experts."):]
	j := strings.IndexByte(rest, '.')
	if j < 0 {
		return first
	}
	return first[:i] + ".experts.*." + rest[j+1:]
}

// trimmed reports whether GGUF tensor g could be source tensor h with rows left out at the end, as
// the converter trims Gemma 3's token embedding to its vocabulary.
func trimmed(arch string, g, h *tensor.Tensor) bool {
	return strings.HasPrefix(arch, "gemma3") && g.Name == "token_embd.weight" && len(g.Shape) == 2 && len(h.Shape) == 2 &&
		g.Shape[1] == h.Shape[1] && g.Shape[0] < h.Shape[0]
}

// expectedShape is the GGUF shape (row-major) of a source tensor of shape s after transform tr, with
// n experts stacked (0: none).
func expectedShape(s []uint64, tr Transform, n int) []uint64 {
	out := slices.Clone(s)
	if tr == TransformTranspose && len(s) == 2 {
		out[0], out[1] = s[1], s[0]
	}
	if n > 0 {
		out = append([]uint64{uint64(n)}, out...)
	}
	return out
}

// equalOrRounded says whether a comparison of a source (side a of d) with a GGUF tensor (side b)
// finds the same values, or the GGUF's as the exact rounding of the source's.
func equalOrRounded(d *values.Diff) PairStatus {
	switch {
	case d.Differing == 0 && d.NaNA == d.NaNB && d.InfA == d.InfB:
		return PairEqual
	case d.ExactRounding != nil && *d.ExactRounding && d.Rounding != nil && d.Rounding.Narrow == "b":
		return PairExactRounding
	}
	return PairDiffers
}

// matchesWell says whether a comparison finds values close enough to take the transform for the one
// applied: equal, exactly rounded, or off by less than half their norm (quantisation moves values by
// a few percent; an unpermuted q or a missing +1 by about their whole norm).
func matchesWell(d *values.Diff) bool {
	return equalOrRounded(d) != PairDiffers || d.RelL2 < 0.5
}

// swapSides turns a comparison of a source (a) with a GGUF (b) into one of the GGUF (a) with its
// source (b), for a GGUF given first: the counts of each side swap (rel_l2 stays relative to the
// source).
func swapSides(d *values.Diff) {
	d.NaNA, d.NaNB = d.NaNB, d.NaNA
	d.InfA, d.InfB = d.InfB, d.InfA
	if r := d.Rounding; r != nil {
		if r.Narrow == "a" {
			r.Narrow = "b"
		} else {
			r.Narrow = "a"
		}
	}
}

// rmse is √(sum/n), nil for no element.
func rmse(sum float64, n int64) *float64 {
	if n == 0 {
		return nil
	}
	v := math.Sqrt(sum / float64(n))
	return &v
}

// supportedGGUF reports whether the GGUF side of a pair can be read as values: F32, F16 and BF16 as
// they are, the others through package dequant.
func supportedGGUF(d tensor.DType) bool {
	if supportedRaw(d) {
		return true
	}
	t, ok := ggmlType(d)
	return ok && dequant.Supported(t)
}

// supportedRaw reports whether a GGUF tensor of type d is compared as it is, not dequantised.
func supportedRaw(d tensor.DType) bool { return d == "F32" || d == "F16" || d == "BF16" }
