package diff

import (
	"strings"
	"testing"
)

func TestPromptChange(t *testing.T) {
	a := `{% for m in messages %}[{{ m.role }}] {{ m.content }}
{% endfor %}`
	b := `{% for m in messages %}[{{ m.role|upper }}] {{ m.content }}
{% endfor %}`
	p := promptChange(a, b)
	if p.Same || p.OldError != "" || p.NewError != "" || len(p.Lines) == 0 {
		t.Fatalf("%+v", p)
	}
	var plus []string
	for _, l := range p.Lines {
		if l.Op == "+" {
			plus = append(plus, l.Text)
		}
	}
	if len(plus) != 4 || plus[0] != "[SYSTEM] You are a helpful assistant.⏎" {
		t.Errorf("%q", plus)
	}
	if p := promptChange(a, "{# a comment #}"+a); !p.Same {
		t.Errorf("a comment changed the prompt: %+v", p)
	}
	if p := promptChange(a, `{{ raise_exception('no system role') }}`); !strings.Contains(p.NewError, "no system role") {
		t.Errorf("%+v", p)
	}
}

func TestRenderTemplatesOption(t *testing.T) {
	if !IsChatTemplateKey("tokenizer.chat_template.tool_use") || IsChatTemplateKey("general.name") {
		t.Error("IsChatTemplateKey")
	}
}
