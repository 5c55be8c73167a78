package companion

import (
	"fmt"
	"strings"

	"github.com/stdiff/stdiff/canon/textfmt"
)

// Summary is one short line of what f says, where that is cheap to tell from what was read: a
// config.json's model_type and architectures, whether a tokenizer_config.json has a chat template, a
// tokenizer.json's model and vocabulary size, an adapter's type and rank, a pipeline's class, a
// scheduler's or processor's class. "" when there is nothing short to say; f.Problem when the file
// was not read as its kind.
func Summary(f File) string {
	if f.Problem != "" {
		return strings.Join(strings.Fields(f.Problem), " ")
	}
	if f.Tokenizer != nil {
		t := f.Tokenizer
		s := fmt.Sprintf("%s, %s tokens", t.Model, textfmt.Thousands(uint64(t.Vocab)))
		if t.Merges > 0 {
			s += ", " + textfmt.Thousands(uint64(t.Merges)) + " merges"
		}
		if n := len(t.AddedTokens); n > 0 {
			s += ", " + textfmt.Plural(n, "added token")
		}
		return strings.Join(strings.Fields(s), " ")
	}
	if f.Kind != KindJSON || f.Text == "" {
		return ""
	}
	v, err := Decode(f.Text)
	if err != nil {
		return ""
	}
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	str := func(k string) string {
		s, _ := m[k].(string)
		return s
	}
	var parts []string
	add := func(s string) {
		if s = strings.Join(strings.Fields(s), " "); s != "" { // one line, whatever the file holds
			parts = append(parts, s)
		}
	}
	base := f.Path[strings.LastIndexByte(f.Path, '/')+1:]
	switch strings.ToLower(base) {
	case "config.json":
		add(str("model_type"))
		if a, ok := m["architectures"].([]any); ok {
			var names []string
			for _, x := range a {
				if s, ok := x.(string); ok {
					names = append(names, s)
				}
			}
			add(strings.Join(names, ", "))
		}
		add(str("_class_name")) // a diffusers component's
	case "tokenizer_config.json":
		add(str("tokenizer_class"))
		switch t := m["chat_template"].(type) {
		case string:
			add("chat template")
		case []any:
			add(textfmt.Plural(len(t), "chat template"))
		default:
			add("no chat template")
		}
	case "adapter_config.json":
		add(str("peft_type"))
		if r, ok := m["r"]; ok {
			add(fmt.Sprintf("r %v", r))
		}
		add(str("base_model_name_or_path"))
	case "model_index.json", "scheduler_config.json", "preprocessor_config.json", "processor_config.json",
		"feature_extractor_config.json", "image_processor_config.json", "video_preprocessor_config.json":
		add(str("_class_name"))
		add(str("image_processor_type"))
		add(str("feature_extractor_type"))
		add(str("processor_class"))
	}
	return strings.Join(parts, " · ")
}
