package diff

import (
	"strings"

	chat "github.com/stdiff/stdiff/canon/template"
	"github.com/stdiff/stdiff/diff/linediff"
)

// PromptChange is how the prompt a changed chat template gives differs (Options.RenderTemplates):
// both templates rendered, sandboxed, on template.Conversation, and the line diff of the prompts.
type PromptChange struct {
	// Same is true when both templates give the same prompt: the change does not alter what the
	// model sees.
	Same bool `json:"same"`
	// Lines is the line diff of the two prompts (nil when Same or when one could not be rendered).
	Lines []linediff.Line `json:"lines,omitempty"`
	// OldError and NewError say why a template could not be rendered ("" when it could).
	OldError string `json:"old_error,omitempty"`
	NewError string `json:"new_error,omitempty"`
}

// IsChatTemplateKey reports whether a metadata key holds a chat template: GGUF's
// tokenizer.chat_template and tokenizer.chat_template.NAME, a chat_template key.
func IsChatTemplateKey(key string) bool {
	return key == "tokenizer.chat_template" || strings.HasPrefix(key, "tokenizer.chat_template.") ||
		key == "chat_template" || strings.HasSuffix(key, ".chat_template")
}

// promptChange renders two chat templates on the fixed conversation and diffs the prompts.
func promptChange(old, new string) *PromptChange {
	a, errA := renderPrompt(old)
	b, errB := renderPrompt(new)
	p := &PromptChange{OldError: errA, NewError: errB}
	switch {
	case errA != "" || errB != "":
	case a == b:
		p.Same = true
	default:
		p.Lines = boundedDiff(visible(a), visible(b))
	}
	return p
}

// visible shows the invisible ends of a prompt's lines (a trailing space, a missing final newline
// matters to a tokenizer) as ⏎ at each line end.
func visible(s string) string {
	return strings.TrimSuffix(strings.ReplaceAll(s, "\n", "⏎\n"), "\n")
}

func renderPrompt(src string) (string, string) {
	t, err := chat.Parse(src)
	if err != nil {
		return "", err.Error()
	}
	out, err := chat.Render(t, chat.Conversation(), chat.Limits{})
	if err != nil {
		return "", err.Error()
	}
	return out, ""
}

// addPrompts sets Prompt on every changed chat template of r.
func addPrompts(r *Report) {
	for i := range r.Metadata.Changed {
		c := &r.Metadata.Changed[i]
		if IsChatTemplateKey(c.Key) && (c.OldType == "" || c.OldType == "string") && (c.NewType == "" || c.NewType == "string") {
			c.Prompt = promptChange(c.Old, c.New)
		}
	}
}
