package companion_test

import (
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/textfmt"
	companiondiff "github.com/stdiff/stdiff/diff/companion"
)

func file(path string, kind companion.Kind, s string) companion.File {
	f := companion.File{Path: path, Kind: kind}
	companion.Parse(&f, []byte(s))
	return f
}

// TestCompareNamesKeysLinesAndTokens: config.json by key path (a chat template in
// tokenizer_config.json as a line diff), a template as a line diff, a tokenizer.json by the tokens,
// merges and special tokens that changed; a reformatted JSON file is no change; files on one side
// are added or removed.
func TestCompareNamesKeysLinesAndTokens(t *testing.T) {
	tok := func(vocab, merges, added string) string {
		return `{"added_tokens":[` + added + `],"normalizer":null,"model":{"type":"BPE","vocab":{` + vocab + `},"merges":[` + merges + `]}}`
	}
	a := []companion.File{
		file("chat_template.jinja", companion.KindText, "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n"),
		file("config.json", companion.KindJSON, `{"rope_theta": 10000, "max_position_embeddings": 2048, "architectures": ["A"], "gone": 1}`),
		file("special_tokens_map.json", companion.KindJSON, `{"bos_token": "<s>"}`),
		file("tokenizer.json", companion.KindTokenizer, tok(`"a":0,"b":1,"ab":2`, `"a b"`, `{"id":3,"content":"<s>","special":true}`)),
		file("tokenizer_config.json", companion.KindJSON, `{"chat_template": "{% for m in messages %}\n{{ m.content }}\n{% endfor %}"}`),
	}
	b := []companion.File{
		file("chat_template.jinja", companion.KindText, "line 1\nline 2\nline 3\nline 4 changed\nline 5\nline 6\n"),
		file("config.json", companion.KindJSON, `{"rope_theta": 500000, "max_position_embeddings": 8192, "architectures": ["B"], "new": true}`),
		file("generation_config.json", companion.KindJSON, `{"do_sample": true}`),
		file("special_tokens_map.json", companion.KindJSON, "{\n  \"bos_token\": \"<s>\"\n}\n"),
		file("tokenizer.json", companion.KindTokenizer, tok(`"a":0,"b":1,"ab":2,"<tool>":4`, `["a","b"]`, `{"id":3,"content":"<s>","special":true},{"id":5,"content":"<|eot|>","special":true}`)),
		file("tokenizer_config.json", companion.KindJSON, `{"chat_template": "{% for m in messages %}\n<|{{ m.role }}|>{{ m.content }}\n{% endfor %}"}`),
	}
	r := companiondiff.Compare(a, b, true, true)
	if !r.Compared || len(r.Added) != 1 || r.Added[0].Path != "generation_config.json" || len(r.Removed) != 0 || r.Unchanged != 1 || len(r.Changed) != 4 {
		t.Fatalf("report %+v", r)
	}
	cfg := r.Changed[1]
	var keys []string
	for _, k := range cfg.Keys {
		keys = append(keys, k.Path+" "+k.Change+" "+k.Old+"→"+k.New)
	}
	if got, want := strings.Join(keys, "; "), "architectures[0] changed \"A\"→\"B\"; gone removed 1→; max_position_embeddings changed 2048→8192; new added →true; rope_theta changed 10000→500000"; got != want {
		t.Errorf("config.json keys\n%s\nwant\n%s", got, want)
	}
	tc := r.Changed[2].Tokenizer
	if tc == nil || tc.Vocab == nil || tc.Vocab.AddedCount != 1 || tc.Vocab.Added[0].Token != "<tool>" || tc.Merges != nil || !tc.SpecialChanged || len(tc.AddedTokens) != 1 || tc.AddedTokens[0].New.Content != "<|eot|>" {
		t.Errorf("tokenizer change %+v", tc)
	}
	tpl := r.Changed[3].Keys
	if len(tpl) != 1 || tpl[0].Path != "chat_template" || len(tpl[0].Lines) == 0 {
		t.Errorf("tokenizer_config.json %+v", tpl)
	}
	text := strings.Join(r.Text(textfmt.Palette{}, 1), "\n")
	for _, want := range []string{"~ rope_theta", "10000 → 500000", "- line 4", "+ line 4 changed", "… 2 unchanged lines", `1 added ("<tool>" 4)`, `+ added token 5 "<|eot|>" (special)`, "+ generation_config.json"} {
		if !strings.Contains(text, want) {
			t.Errorf("text does not say %q:\n%s", want, text)
		}
	}
	if companiondiff.Compare(a, nil, true, false).Compared || companiondiff.Compare(nil, nil, false, false) != nil {
		t.Error("one side or no side a folder: compared")
	}
}
