package template

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRenderChatML(t *testing.T) {
	src := `{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`
	tpl, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Render(tpl, Conversation(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\nThe capital of France is Paris.<|im_end|>\n<|im_start|>user\nAnd of Italy?<|im_end|>\n<|im_start|>assistant\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestRenderSandbox: a payload cannot leave the data, and the limits hold.
func TestRenderSandbox(t *testing.T) {
	for _, c := range []struct {
		src   string
		limit bool
	}{
		{`{{ ().__class__ }}`, false},
		{`{{ lipsum.__globals__ }}`, false},
		{`{{ ''|attr('__class__') }}`, false},
		{`{{ messages|map(attribute='__class__')|list }}`, false},
		{`{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}`, true},
		{`{{ 'x' * 100000000 }}`, true},
		{`{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}`, true},
		{`{% set ns = namespace(s='xxxxxxxxxxxxxxxx') %}{% for i in range(30) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}`, true},
	} {
		tpl, err := Parse(c.src)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Render(tpl, Conversation(), Limits{Steps: 100000, Output: 1 << 16})
		if c.limit {
			if !errors.Is(err, ErrLimit) {
				t.Errorf("%s: want a limit, got %v (%d bytes)", c.src, err, len(out))
			}
			continue
		}
		if err == nil && strings.Contains(out, "class") {
			t.Errorf("%s: rendered %q", c.src, out)
		}
	}
}

// TestRenderReal: every real template renders the fixed conversation as transformers' renderer
// does (testdata/real/*.prompt, recorded with Python's jinja2 by testdata/real/render.py), or, where
// the template raises on it (testdata/real/*.raises, the message Python gave), fails with that message.
func TestRenderReal(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "real", "*.jinja"))
	if len(files) == 0 {
		t.Fatal("no real templates")
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		tpl, err := Parse(string(b))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		got, err := Render(tpl, Conversation(), Limits{})
		base := strings.TrimSuffix(f, ".jinja")
		if raised, rerr := os.ReadFile(base + ".raises"); rerr == nil {
			if err == nil || !strings.Contains(err.Error(), string(raised)) {
				t.Errorf("%s: got %q, %v; Python raised %q", f, got, err, raised)
			}
			continue
		}
		want, rerr := os.ReadFile(base + ".prompt")
		if rerr != nil {
			t.Errorf("%s: neither .prompt nor .raises recorded (run testdata/real/render.py)", f)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if got != string(want) {
			t.Errorf("%s: got\n%q\nwant\n%q", f, got, want)
		}
	}
}

// TestRenderInUndefined: `in` over an undefined name is false, as jinja2's Undefined iterates as
// empty (Llama Guard 3's template tests `key not in excluded_category_keys` with no such variable);
// over none it is an error, as in Python.
func TestRenderInUndefined(t *testing.T) {
	for src, want := range map[string]string{
		"{{ 1 in nothing }}":       "False",
		"{{ 'a' not in nothing }}": "True",
	} {
		tpl, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Render(tpl, Conversation(), Limits{})
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", src, got, err, want)
		}
	}
	tpl, err := Parse("{{ 1 in none }}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(tpl, Conversation(), Limits{}); err == nil {
		t.Error("1 in none: no error")
	}
}
