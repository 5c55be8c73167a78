// Package card holds what a model's format says of it besides its tensors and metadata, as plain
// data: the GGUF, ONNX, PyTorch and DDUF sections of inspect's card. Each format's adapter in package
// canon fills its section (canon.Model.Card); package inspect renders it, without knowing the format's
// package. Their JSON is the card's (docs/scripting.md).
package card

import (
	"encoding/json"
	"strconv"

	"github.com/stdiff/stdiff/canon/tensor"
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
	// Strings are the string values of the keys inspect's Info reads (general.name, general.author,
	// general.description, general.base_model.0.name, general.base_model.0.repo_url, adapter.type), by
	// key, as llama.cpp's look-up finds them; a key that is absent or not a string is not in it.
	Strings map[string]string `json:"-"`
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

// ONNX is what an ONNX model says besides its initializers: the facts people compare exports by.
type ONNX struct {
	IRVersion       int64     `json:"ir_version"`
	Producer        string    `json:"producer"`
	ProducerVersion string    `json:"producer_version"`
	Domain          string    `json:"domain,omitempty"`
	ModelVersion    int64     `json:"model_version,omitempty"`
	Opsets          []Opset   `json:"opsets"`
	Inputs          []Value   `json:"inputs"`
	Outputs         []Value   `json:"outputs"`
	Nodes           int       `json:"nodes"`
	Ops             []OpCount `json:"ops"`
	// External names the external data files the initializers are in.
	External []string `json:"external_data,omitempty"`
}

// Opset is one operator set the model imports.
type Opset struct {
	Domain  string `json:"domain"`
	Version int64  `json:"version"`
}

// Value is one graph input or output.
type Value struct {
	Name string `json:"name"`
	// Type is the element type's name ("F32"), or what else the value is ("sequence", "map"…).
	Type string `json:"type"`
	// Shape has each dimension's size, or its symbolic name ("batch"), or "?" when unknown; nil when
	// the shape itself is unknown.
	Shape []string `json:"shape"`
}

// OpCount is how many nodes of the graphs run one operator.
type OpCount struct {
	Op    string `json:"op"` // domain-qualified when not the default domain: "com.microsoft.FusedMatMul"
	Count int    `json:"count"`
}

// PyTorch is what a PyTorch checkpoint or NumPy file says besides its tensors: its container, what kind
// of checkpoint it is, the pickles in it and the globals they name, tied weights.
type PyTorch struct {
	// Container is the file's format: pytorch-zip, pytorch-legacy, pickle, npy, npz…
	Container string `json:"container"`
	// Kind is what the checkpoint is, from its top-level keys: lightning (a PyTorch Lightning
	// checkpoint), a1111-embedding (a textual inversion), a1111-hypernetwork, or state-dict.
	Kind string `json:"kind"`
	// Pickles counts the pickles read; Globals are the globals they name (module.name, each once, with
	// its class: allowed, unknown or unsafe).
	Pickles int      `json:"pickles"`
	Globals []Global `json:"globals"`
	// Aliases are the groups of tensors that share a storage (tied weights).
	Aliases [][]string `json:"aliases"`
	// Strided counts the tensors that are not row-major views of their storage.
	Strided int `json:"strided"`
}

// Global is one global a pickle names.
type Global struct {
	Name  string `json:"global"`
	Class string `json:"class"`
}

// The classes of a Global, as the weights-only unpickler sorts the globals a pickle names.
const (
	// ClassAllowed: in torch.load(weights_only=True)'s allowlist.
	ClassAllowed = "allowed"
	// ClassUnknown: outside the allowlist (torch.load refuses it; it runs no code stdiff knows of).
	ClassUnknown = "unknown"
	// ClassUnsafe: a global that runs code (os.system, builtins.eval, …).
	ClassUnsafe = "unsafe"
)

// DDUF is what a DDUF file (a diffusers pipeline in one file) says besides its tensors: the
// pipeline's class and its components as model_index.json lists them.
type DDUF struct {
	// Class is model_index.json's _class_name.
	Class string `json:"class"`
	// Members counts the archive's members read in place.
	Members    int             `json:"members"`
	Components []DDUFComponent `json:"components"`
}

// DDUFComponent is one component of a DDUF pipeline: its folder, the library and class
// model_index.json names, its tensors and parameters (0 for one without weights: a scheduler, a
// tokenizer) and the files of its folder.
type DDUFComponent struct {
	Name    string   `json:"name"`
	Library string   `json:"library"`
	Class   string   `json:"class"`
	Tensors int      `json:"tensors"`
	Params  uint64   `json:"params"`
	Files   []string `json:"files"`
}
