package loadcode

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/template/scan"
)

// TestGGUFTemplateOffset: a finding in a GGUF's chat template points at the very byte of the file.
func TestGGUFTemplateOffset(t *testing.T) {
	f := ggufw.Weights(false)
	f.KVs = append(f.KVs, ggufw.KV{Key: "tokenizer.chat_template.tool_use", Val: ggufw.Str(`{{ x.__class__ }}`)})
	b := f.Build()
	m, err := canon.Read(bytes.NewReader(b), int64(len(b)), "t.gguf")
	if err != nil {
		t.Fatal(err)
	}
	fs := Model(m)
	if len(fs) != 1 || fs[0].Code != scan.CodePrivateAttribute || fs[0].Severity != finding.SevError {
		t.Fatalf("%+v", fs)
	}
	if got := string(b[fs[0].Offset:][:9]); got != "__class__" {
		t.Errorf("offset %d points at %q", fs[0].Offset, got)
	}
}

// TestSafetensorsMetadataTarget: a Hydra _target_ in safetensors metadata (a serialised config, as
// NeMo and FlexTok keep one) is named; builtins.exec is an error.
func TestSafetensorsMetadataTarget(t *testing.T) {
	m := &canon.Model{Format: canon.FormatSafetensors, Metadata: []canon.MetaEntry{
		{Key: "config", Value: `{"encoder": {"_target_": "flextok.model.Encoder"}, "hook": {"_target_": "builtins.exec", "_args_": ["import os"]}}`, Offset: 10},
		{Key: "chat_template", Value: `{{ messages|map(attribute='__class__')|list }}`, Offset: 50},
	}}
	fs := Model(m)
	codes := map[string]finding.Severity{}
	for _, f := range fs {
		codes[f.Code] = f.Severity
	}
	if codes[CodeHydraTarget] != finding.SevWarning || codes[CodeHydraTargetUnsafe] != finding.SevError || codes[scan.CodePrivateAttribute] != finding.SevError {
		t.Errorf("%+v", fs)
	}
	for _, f := range fs {
		if f.Code == CodeHydraTarget && !strings.Contains(f.Message, "flextok.model.Encoder") {
			t.Errorf("target not named: %s", f.Message)
		}
	}
}

func TestUnsafeTarget(t *testing.T) {
	for target, want := range map[string]bool{
		"builtins.exec": true, "os.system": true, "subprocess.Popen": true, "exec": true, "eval": true,
		"nemo.collections.asr.models.EncDecCTCModel": false, "torch.nn.Linear": false,
		"uni2ts.model.moirai.MoiraiModule": false, "importlib.import_module": true, "functools.partial": true,
	} {
		if got := unsafeTarget(target); got != want {
			t.Errorf("unsafeTarget(%s) = %v", target, got)
		}
	}
}

// TestFolder: auto_map modules are named with their sha256 when present, cross-repository ones as such;
// chat templates in every place transformers reads them are analysed.
func TestFolder(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.json", `{"auto_map": {"AutoModel": "modeling_x.XModel", "AutoConfig": "configuration_x.XConfig"}}`)
	write("modeling_x.py", "pass\n")
	write("tokenizer_config.json", `{"auto_map": {"AutoTokenizer": ["org/repo--tok.T", null]}, "chat_template": "{{ ''|attr('__cla'~'ss__') }}"}`)
	write("chat_template.json", `{"chat_template": "{{ cycler.__init__ }}"}`)
	write("additional_chat_templates/rag.jinja", `{% for i in range(2000) %}{% for j in range(2000) %}x{% endfor %}{% endfor %}`)
	fs := Folder(dir)
	var msgs []string
	for _, f := range fs {
		msgs = append(msgs, string(f.Severity)+" "+f.Code+": "+f.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"warning remote-code: config.json auto_map AutoConfig runs configuration_x.XConfig with trust_remote_code (configuration_x.py not in the folder)",
		"warning remote-code: config.json auto_map AutoModel runs modeling_x.XModel with trust_remote_code (modeling_x.py in the folder, sha256 9f56e761d79bfdb34304a012586cb04d16b435ef6130091a97702e559260a2f2)",
		"warning remote-code-other-repo: tokenizer_config.json auto_map AutoTokenizer runs tok.T from the repository org/repo",
		"error chat-template-private-attribute: chat template tokenizer_config.json chat_template, byte 18 of the template: |attr reads the private attribute \"__class__\"",
		"error chat-template-private-attribute: chat template chat_template.json chat_template",
		"error chat-template-exhaustion: chat template additional_chat_templates/rag.jinja",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in\n%s", want, all)
		}
	}
}

// TestRealCorpusSilent: the real third-party folders and files of the shared corpus give no finding
// (skipped where the corpus is absent).
func TestRealCorpusSilent(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "corpus", "real", "writers-2026-11", "transformers-5.17", "hf-llama-sharded")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("the shared corpus is not here:", err)
	}
	if fs := Folder(dir); len(fs) != 0 {
		t.Errorf("%s: %+v", dir, fs)
	}
}

// TestGGUFLongTemplate: a payload behind more than gguf.MaxInline bytes of padding is still found
// (Metadata keeps only the first MaxInline bytes of a string).
func TestGGUFLongTemplate(t *testing.T) {
	f := ggufw.Weights(false)
	src := strings.Repeat("x", 1<<20+10) + `{{ x.__globals__ }}`
	f.KVs = append(f.KVs, ggufw.KV{Key: "tokenizer.chat_template", Val: ggufw.Str(src)})
	b := f.Build()
	m, err := canon.Read(bytes.NewReader(b), int64(len(b)), "t.gguf")
	if err != nil {
		t.Fatal(err)
	}
	fs := Model(m)
	if len(fs) != 1 || fs[0].Code != scan.CodePrivateAttribute {
		t.Fatalf("%+v", fs)
	}
	if got := string(b[fs[0].Offset:][:11]); got != "__globals__" {
		t.Errorf("offset %d points at %q", fs[0].Offset, got)
	}
}
