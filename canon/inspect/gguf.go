package inspect

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/zeebo/blake3"
)

// GGUF is what a GGUF file's header says of the model, in llama.cpp's terms: the format, who made it
// and under which licence, the quantisation, the architecture's hyperparameters, the tokenizer and
// the chat template. Every field comes from the header's key-value pairs (named in each comment);
// a field whose key is absent is null (omitted for strings). The model's name, author, description
// and base model are in Info, as for safetensors.
type GGUF struct {
	// Format is the format and version the first bytes say ("GGUF v3"); Alignment the data alignment.
	Format    string `json:"format"`
	Version   uint32 `json:"version"`
	Alignment uint64 `json:"alignment"`
	// Architecture is general.architecture (llama, qwen2, gemma3, …); Type general.type (model,
	// adapter, mmproj, …).
	Architecture string `json:"architecture"`
	Type         string `json:"type,omitempty"`
	// Organization, Basename, Finetune, ModelVersion and SizeLabel are general.organization,
	// general.basename, general.finetune, general.version and general.size_label.
	Organization  string `json:"organization,omitempty"`
	Basename      string `json:"basename,omitempty"`
	Finetune      string `json:"finetune,omitempty"`
	ModelVersion  string `json:"model_version,omitempty"`
	SizeLabel     string `json:"size_label,omitempty"`
	License       string `json:"license,omitempty"`         // general.license, else general.license.name
	LicenseLink   string `json:"license_link,omitempty"`    // general.license.link
	URL           string `json:"url,omitempty"`             // general.url
	RepoURL       string `json:"repo_url,omitempty"`        // general.repo_url
	SourceURL     string `json:"source_url,omitempty"`      // general.source.url
	SourceRepoURL string `json:"source_repo_url,omitempty"` // general.source.repo_url, or the Hub repository
	QuantizedBy   string `json:"quantized_by,omitempty"`    // general.quantized_by
	// FileType is general.file_type: the quantisation scheme llama-quantize was asked for.
	FileType *FileType `json:"file_type"`
	// QuantizationVersion is general.quantization_version.
	QuantizationVersion *uint64 `json:"quantization_version"`
	// Types is the quantisation mix: each tensor type with its share of the tensor bytes, largest first.
	Types []TypeShare `json:"types"`
	// The hyperparameters llama.cpp reads as ARCH.context_length, ARCH.embedding_length, …
	ContextLength     *Count `json:"context_length"`
	EmbeddingLength   *Count `json:"embedding_length"`
	BlockCount        *Count `json:"block_count"`
	FeedForwardLength *Count `json:"feed_forward_length"`
	HeadCount         *Count `json:"head_count"`    // ARCH.attention.head_count
	HeadCountKV       *Count `json:"head_count_kv"` // ARCH.attention.head_count_kv
	ExpertCount       *Count `json:"expert_count"`
	ExpertUsedCount   *Count `json:"expert_used_count"`
	Rope              Rope   `json:"rope"`
	// Tokenizer is what the tokenizer.ggml.* keys say (null when there are none).
	Tokenizer *Tokenizer `json:"tokenizer"`
	// ChatTemplate summarises tokenizer.chat_template (null when absent); the template itself is
	// in the metadata.
	ChatTemplate *ChatTemplate `json:"chat_template"`
}

// FileType is general.file_type: its number and llama.cpp's name for it (Q4_K_M, …).
type FileType struct {
	ID   uint64 `json:"id"`
	Name string `json:"name"`
}

// TypeShare is one tensor type of the quantisation mix.
type TypeShare struct {
	DType   tensor.DType `json:"dtype"`
	Tensors int          `json:"tensors"`
	Bytes   uint64       `json:"bytes"`
	// Share is Bytes over the bytes of every tensor (0 to 1, to 4 decimals).
	Share float64 `json:"share"`
}

// Count is a hyperparameter: one number, or one per layer when the file stores an array (some
// architectures give each layer its own head count). Its JSON is a number or an array of numbers.
type Count struct {
	N        uint64
	PerLayer []uint64
}

// MarshalJSON writes the number, or the array.
func (c Count) MarshalJSON() ([]byte, error) {
	if c.PerLayer != nil {
		return json.Marshal(c.PerLayer)
	}
	return strconv.AppendUint(nil, c.N, 10), nil
}

// Rope is the rotary position embedding's settings: ARCH.rope.dimension_count, ARCH.rope.freq_base,
// and ARCH.rope.scaling.type, .factor and .original_context_length.
type Rope struct {
	DimensionCount        *Count   `json:"dimension_count"`
	FreqBase              *float64 `json:"freq_base"`
	ScalingType           string   `json:"scaling_type,omitempty"`
	ScalingFactor         *float64 `json:"scaling_factor"`
	OriginalContextLength *Count   `json:"original_context_length"`
}

// Tokenizer is what the tokenizer.ggml.* keys say: the tokenizer model (llama, gpt2, bert, …), the
// pre-tokenizer (llama-bpe, qwen2, …), the vocabulary size (the length of tokenizer.ggml.tokens), the
// number of BPE merges, and the special tokens' ids (tokenizer.ggml.bos_token_id is "bos", …).
type Tokenizer struct {
	Model         string            `json:"model,omitempty"`
	Pre           string            `json:"pre,omitempty"`
	VocabSize     uint64            `json:"vocab_size"`
	Merges        uint64            `json:"merges"`
	SpecialTokens map[string]uint64 `json:"special_tokens"`
}

// ChatTemplate summarises a chat template: its size, its number of lines, the first 16 hex digits of
// its BLAKE3, the special markers it writes (<|im_start|>, [INST], …: the role format), and the names
// of the other templates the file carries (tokenizer.chat_template.NAME: tool_use, rag, …).
type ChatTemplate struct {
	Bytes   uint64   `json:"bytes"`
	Lines   int      `json:"lines"`
	BLAKE3  string   `json:"blake3"`
	Markers []string `json:"markers"`
	Named   []string `json:"named"`
	// Text is the template (its first gguf.MaxInline bytes), for the text card with --full.
	Text string `json:"-"`
}

// The keys the card reads.
const (
	keyArchitecture = "general.architecture"
	keyChatTemplate = "tokenizer.chat_template"
)

// ggufMeta reads typed values of a GGUF header.
type ggufMeta struct{ f *gguf.File }

func (g ggufMeta) str(key string) string {
	if kv := g.f.KV(key); kv != nil {
		if s, ok := kv.Value.Str(); ok {
			return s
		}
	}
	return ""
}

func (g ggufMeta) float(key string) *float64 {
	if kv := g.f.KV(key); kv != nil {
		if x, ok := kv.Value.Float(); ok {
			return &x
		}
		if n, ok := kv.Value.Int(); ok {
			x := float64(n)
			return &x
		}
	}
	return nil
}

// count reads a non-negative integer, or an array of them.
func (g ggufMeta) count(key string) *Count {
	kv := g.f.KV(key)
	if kv == nil {
		return nil
	}
	if a := kv.Value.Array; a != nil {
		if a.Len != uint64(len(a.Head)) { // more layers than kept in memory: the file is not what it seems
			return nil
		}
		c := &Count{PerLayer: make([]uint64, 0, len(a.Head))}
		for _, v := range a.Head {
			n, ok := uintOf(v)
			if !ok {
				return nil
			}
			c.PerLayer = append(c.PerLayer, n)
		}
		return c
	}
	if n, ok := uintOf(kv.Value); ok {
		return &Count{N: n}
	}
	return nil
}

// uintOf is an integer value of any type that is not negative.
func uintOf(v gguf.Value) (uint64, bool) {
	if n, ok := v.Uint(); ok {
		return n, true
	}
	if n, ok := v.Int(); ok && n >= 0 {
		return uint64(n), true
	}
	return 0, false
}

// ggufCard is the GGUF section of m's card (nil for a model that is not GGUF or whose header could
// not be read).
func ggufCard(m *canon.Model) *GGUF {
	if m.GGUF == nil || !m.HeaderParsed {
		return nil
	}
	f := m.GGUF
	g := ggufMeta{f}
	arch := g.str(keyArchitecture)
	out := &GGUF{Format: f.Format, Version: f.Version, Alignment: f.Alignment, Architecture: arch,
		Type: g.str("general.type"), Organization: g.str("general.organization"), Basename: g.str("general.basename"),
		Finetune: g.str("general.finetune"), ModelVersion: g.str("general.version"), SizeLabel: g.str("general.size_label"),
		License: g.str("general.license"), LicenseLink: g.str("general.license.link"), URL: g.str("general.url"),
		RepoURL: g.str("general.repo_url"), SourceURL: g.str("general.source.url"), SourceRepoURL: g.str("general.source.repo_url"),
		QuantizedBy: g.str("general.quantized_by")}
	if out.License == "" {
		out.License = g.str("general.license.name")
	}
	if out.SourceRepoURL == "" {
		if repo := g.str("general.source.huggingface.repository"); repo != "" {
			out.SourceRepoURL = "https://huggingface.co/" + repo
		}
	}
	if c := g.count(gguf.FileTypeKey); c != nil && c.PerLayer == nil {
		name, _ := gguf.FileTypeName(c.N)
		out.FileType = &FileType{ID: c.N, Name: name}
	}
	if c := g.count("general.quantization_version"); c != nil && c.PerLayer == nil {
		out.QuantizationVersion = &c.N
	}
	out.Types = typeShares(m)
	if arch != "" {
		p := arch + "."
		out.ContextLength, out.EmbeddingLength = g.count(p+"context_length"), g.count(p+"embedding_length")
		out.BlockCount, out.FeedForwardLength = g.count(p+"block_count"), g.count(p+"feed_forward_length")
		out.HeadCount, out.HeadCountKV = g.count(p+"attention.head_count"), g.count(p+"attention.head_count_kv")
		out.ExpertCount, out.ExpertUsedCount = g.count(p+"expert_count"), g.count(p+"expert_used_count")
		out.Rope = Rope{DimensionCount: g.count(p + "rope.dimension_count"), FreqBase: g.float(p + "rope.freq_base"),
			ScalingType: g.str(p + "rope.scaling.type"), ScalingFactor: g.float(p + "rope.scaling.factor"),
			OriginalContextLength: g.count(p + "rope.scaling.original_context_length")}
	}
	out.Tokenizer = tokenizerOf(f)
	out.ChatTemplate = chatTemplateOf(f)
	return out
}

// typeShares is the quantisation mix of m's tensors, largest share first (then by name).
func typeShares(m *canon.Model) []TypeShare {
	per, total := m.Params()
	out := make([]TypeShare, 0, len(per))
	for _, p := range per {
		ts := TypeShare{DType: p.DType, Tensors: p.Tensors, Bytes: p.Bytes}
		if total.Bytes > 0 {
			ts.Share = math.Round(float64(p.Bytes)/float64(total.Bytes)*1e4) / 1e4
		}
		out = append(out, ts)
	}
	slices.SortStableFunc(out, func(a, b TypeShare) int {
		if a.Bytes != b.Bytes {
			if a.Bytes > b.Bytes {
				return -1
			}
			return 1
		}
		return strings.Compare(string(a.DType), string(b.DType))
	})
	return out
}

// tokenizerOf reads the tokenizer.ggml.* keys (nil when there are none). The vocabulary is counted,
// not read: the card costs no pass over a tokenizer's hundred thousand tokens.
func tokenizerOf(f *gguf.File) *Tokenizer {
	var t *Tokenizer
	for i := range f.KVs {
		kv := &f.KVs[i]
		rest, ok := strings.CutPrefix(kv.Key, "tokenizer.ggml.")
		if !ok {
			continue
		}
		if t == nil {
			t = &Tokenizer{SpecialTokens: map[string]uint64{}}
		}
		switch name, isID := strings.CutSuffix(rest, "_token_id"); {
		case rest == "model":
			t.Model, _ = kv.Value.Str()
		case rest == "pre":
			t.Pre, _ = kv.Value.Str()
		case rest == "tokens" && kv.Value.Array != nil:
			t.VocabSize = kv.Value.Array.Len
		case rest == "merges" && kv.Value.Array != nil:
			t.Merges = kv.Value.Array.Len
		case isID:
			if n, ok := uintOf(kv.Value); ok {
				if _, seen := t.SpecialTokens[name]; !seen { // the first pair, as llama.cpp reads it
					t.SpecialTokens[name] = n
				}
			}
		}
	}
	return t
}

// markerPattern finds the special markers a chat template writes: <|im_start|>, <start_of_turn>,
// [INST], <|start_header_id|>, </s>, …
var markerPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<\|[^|<>\s'"{}]{1,40}\|>|</?[a-z_]{1,30}>|\[/?[A-Z_]{2,20}\]`)
})

// maxMarkers is how many markers a summary lists.
const maxMarkers = 8

// chatTemplateOf summarises tokenizer.chat_template (nil when absent).
func chatTemplateOf(f *gguf.File) *ChatTemplate {
	kv := f.KV(keyChatTemplate)
	if kv == nil || kv.Value.Type != gguf.ValString {
		return nil
	}
	text, _ := kv.Value.Str()
	c := &ChatTemplate{Bytes: kv.Value.Len(), Lines: strings.Count(text, "\n") + 1, Markers: []string{}, Named: []string{}, Text: text}
	sum := blake3.Sum256([]byte(text))
	c.BLAKE3 = hex.EncodeToString(sum[:8])
	if kv.Value.Truncated() {
		c.BLAKE3 = "" // not the whole template's
	}
	for _, m := range markerPattern().FindAllString(text, -1) {
		if !slices.Contains(c.Markers, m) && len(c.Markers) < maxMarkers {
			c.Markers = append(c.Markers, m)
		}
	}
	for i := range f.KVs {
		if name, ok := strings.CutPrefix(f.KVs[i].Key, keyChatTemplate+"."); ok && !slices.Contains(c.Named, name) {
			c.Named = append(c.Named, name)
		}
	}
	return c
}

// ggufInfo completes what lora.Derive says of a GGUF model from the general.* keys llama.cpp's
// converter writes: the name (general.name, over the file name), the author, the description, the
// base model (general.base_model.0.name or its repository), the kind (a model is a checkpoint, a LoRA
// adapter a lora) and the family (general.architecture: the diffusion families by name, any other
// architecture is a language model).
func ggufInfo(m *canon.Model, in *lora.Info) {
	if m.GGUF == nil || !m.HeaderParsed {
		return
	}
	g := ggufMeta{m.GGUF}
	set := func(field *string, name string, keys ...string) {
		if *field != "" && in.Sources[name] != "file name" {
			return
		}
		for _, k := range keys {
			if v := strings.TrimSpace(g.str(k)); v != "" {
				*field, in.Sources[name] = v, "metadata "+k
				return
			}
		}
	}
	set(&in.Name, "name", "general.name")
	set(&in.Author, "author", "general.author")
	set(&in.Description, "description", "general.description")
	set(&in.BaseModel, "base_model", "general.base_model.0.name", "general.base_model.0.repo_url")
	if in.Kind == lora.KindUnknown && len(m.Tensors) > 0 { // a vocabulary-only file is no model
		switch typ := g.str("general.type"); {
		case typ == "adapter" && g.str("adapter.type") == "lora":
			in.Kind = lora.KindLoRA
		case typ == "" || typ == "model":
			in.Kind = lora.KindCheckpoint
		}
		if in.Kind != lora.KindUnknown {
			in.Sources["kind"] = "metadata general.type"
		}
	}
	if arch := g.str(keyArchitecture); in.Family == lora.FamilyUnknown && arch != "" {
		fam, ok := map[string]lora.Family{"sd1": lora.FamilySD1, "sdxl": lora.FamilySDXL, "sd3": lora.FamilySD3, "flux": lora.FamilyFlux}[arch]
		if !ok {
			fam = lora.FamilyLLM
		}
		in.Family, in.Sources["family"] = fam, "metadata "+keyArchitecture
	}
}
