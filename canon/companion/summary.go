package companion

import (
	"encoding/json"
	"path"
	"strings"
)

// Summary is what a companion file says that tells a reader what it is for, where that is cheap to
// find: read from a JSON file's Text (so not from one over WholeSize or one that does not parse), a
// tokenizer.json's summary and a template's name. Every field is absent where the file does not say.
type Summary struct {
	// ModelType is a config's model_type ("llama"); Architectures its architectures
	// (["LlamaForCausalLM"]).
	ModelType     string   `json:"model_type,omitempty"`
	Architectures []string `json:"architectures,omitempty"`
	// Class is the class the file names for its loader: a diffusers config's or model_index.json's
	// _class_name, else a tokenizer_config.json's tokenizer_class, else a processor config's
	// processor_class, image_processor_type or feature_extractor_type.
	Class string `json:"class,omitempty"`
	// PEFTType, Rank and BaseModel are an adapter_config.json's peft_type, r and
	// base_model_name_or_path.
	PEFTType  string `json:"peft_type,omitempty"`
	Rank      int64  `json:"rank,omitempty"`
	BaseModel string `json:"base_model,omitempty"`
	// ChatTemplate is true for a chat template: a *.jinja file, or a JSON file (tokenizer_config.json,
	// chat_template.json) with a chat_template that is not empty.
	ChatTemplate bool `json:"chat_template,omitempty"`
	// Tokenizer is a tokenizer.json's model type and sizes.
	Tokenizer *TokenizerSummary `json:"tokenizer,omitempty"`
}

// TokenizerSummary is a tokenizer.json's model type ("BPE"), number of tokens in its vocabulary, of
// merges and of added tokens.
type TokenizerSummary struct {
	Model       string `json:"model"`
	Vocab       int    `json:"vocab"`
	Merges      int    `json:"merges"`
	AddedTokens int    `json:"added_tokens"`
}

// classKeys are the keys that name a file's class, in the order Summary.Class takes them.
var classKeys = []string{"_class_name", "tokenizer_class", "processor_class", "image_processor_type", "feature_extractor_type"}

// Summarize says what f says (see Summary). It reads what f holds, never the file again.
func Summarize(f *File) Summary {
	var s Summary
	switch f.Kind {
	case KindText:
		s.ChatTemplate = strings.HasSuffix(strings.ToLower(path.Base(f.Path)), ".jinja") && f.Size > 0
	case KindTokenizer:
		if t := f.Tokenizer; t != nil {
			s.Tokenizer = &TokenizerSummary{Model: t.Model, Vocab: t.Vocab, Merges: t.Merges, AddedTokens: len(t.AddedTokens)}
		}
	case KindJSON:
		if f.Text == "" {
			break
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(f.Text), &obj) != nil {
			break
		}
		str := func(key string) string {
			var v string
			_ = json.Unmarshal(obj[key], &v) // absent or not a string: ""
			return v
		}
		s.ModelType = str("model_type")
		var archs []string
		if json.Unmarshal(obj["architectures"], &archs) == nil {
			s.Architectures = archs
		}
		for _, k := range classKeys {
			if s.Class = str(k); s.Class != "" {
				break
			}
		}
		if strings.EqualFold(path.Base(f.Path), "adapter_config.json") {
			s.PEFTType, s.BaseModel = str("peft_type"), str("base_model_name_or_path")
			var r float64
			if json.Unmarshal(obj["r"], &r) == nil && r > 0 && r < 1<<31 && r == float64(int64(r)) {
				s.Rank = int64(r)
			}
		}
		if t, ok := obj["chat_template"]; ok {
			var text string
			var list []json.RawMessage
			s.ChatTemplate = json.Unmarshal(t, &text) == nil && text != "" || json.Unmarshal(t, &list) == nil && len(list) > 0
		}
	}
	return s
}
