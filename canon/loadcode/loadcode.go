// Package loadcode names what a model makes a loader run besides reading tensors: chat templates
// that reach past their data (package canon/template/scan), transformers' auto_map (remote code run with
// trust_remote_code), Hydra _target_ keys (a class or function instantiated from metadata), ONNX
// operators outside the standard domains (a Python operator above all). Scan gives findings for a
// model's own file and, for a folder, for the files a loader reads beside the weights. A Keras v3
// archive (a zip the PyTorch reader refuses) is recognised and its config read.
//
// It reads what it needs itself (small JSON and template files of the folder) and never prints.
package loadcode

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/onnx"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/template/scan"
)

// Finding codes: part of stdiff's contract with scripts; add, never rename. The chat-template codes
// are package template's (scan.CodePrivateAttribute, …).
const (
	// CodeRemoteCode: an auto_map entry of config.json or tokenizer_config.json: transformers imports
	// and runs the named module when the model is loaded with trust_remote_code=True.
	CodeRemoteCode = "remote-code"
	// CodeRemoteCodeOtherRepo: an auto_map entry of the form repo--module.Class, whose code comes
	// from another repository than the model's.
	CodeRemoteCodeOtherRepo = "remote-code-other-repo"
	// CodeHydraTarget: a Hydra _target_ key (in a config or in safetensors metadata): the named class
	// or function is imported and called when the config is instantiated (NeMo, Uni2TS, FlexTok).
	CodeHydraTarget = "hydra-target"
	// CodeHydraTargetUnsafe: a _target_ naming a function that runs code or commands (builtins.exec,
	// os.system, subprocess.*, …): CVE-2025-23304 and the payloads of Unit 42's write-up.
	CodeHydraTargetUnsafe = "hydra-target-unsafe"
	// CodeONNXCustomDomain: ONNX operators of a domain outside the standard ones and the known
	// runtimes' contrib domains: a runtime needs custom code to run them.
	CodeONNXCustomDomain = "onnx-custom-domain"
	// CodeONNXPythonOp: a Python operator (PythonOp, PyOp, or any ai.onnx.contrib operator that names
	// a Python function): running the model runs Python code.
	CodeONNXPythonOp = "onnx-python-op"
	// CodeONNXEPContext: an EPContext node (ONNX Runtime): a graph compiled ahead of time for one
	// execution provider (QNN, OpenVINO, TensorRT…), embedded in the node or in the file beside the
	// model it names, which the provider loads in place of ONNX nodes.
	CodeONNXEPContext = "onnx-ep-context"
	// CodeONNXEPContextOutside: an EPContext node naming a file outside the model's folder (an
	// absolute path, a .. part), as external data may not.
	CodeONNXEPContextOutside = "onnx-ep-context-outside"
)

// Codes lists every code of this package's findings, the chat-template ones included.
var Codes = []string{scan.CodePrivateAttribute, scan.CodeComputedAttribute, scan.CodeGlobalInternals,
	scan.CodeExhaustion, scan.CodeUnparsed, CodeRemoteCode, CodeRemoteCodeOtherRepo, CodeHydraTarget,
	CodeHydraTargetUnsafe, CodeONNXCustomDomain, CodeONNXPythonOp, CodeONNXEPContext, CodeONNXEPContextOutside, CodeKerasArchive, CodeKerasForeignModule, CodeKerasLambda}

// Known reports whether code is one of Codes.
func Known(code string) bool { return slices.Contains(Codes, code) }

// maxFile bounds the companion files Scan reads (a config or a template is a few hundred KiB at most).
const maxFile = 16 << 20

// Scan returns the findings for what model m, opened from spec, makes a loader run: those of its own
// file (Model) and, when spec is a local folder, those of the files beside the weights (Folder).
func Scan(spec string, m *canon.Model) []finding.Finding {
	fs := Model(m)
	st, err := os.Stat(spec)
	switch {
	case err != nil:
	case st.IsDir():
		fs = append(fs, Folder(spec)...)
	case m.Format == canon.FormatPyTorch && st.Mode().IsRegular(): // a zip that is no torch.save archive
		if kfs, ok := Keras(spec); ok {
			fs = append(fs, kfs...)
		}
	}
	return fs
}

// Model returns the findings of what m's own file holds: a GGUF's chat templates
// (tokenizer.chat_template and tokenizer.chat_template.NAME), safetensors metadata holding a chat
// template or a Hydra _target_, an ONNX graph's operator domains.
func Model(m *canon.Model) []finding.Finding {
	var fs []finding.Finding
	for _, e := range m.Metadata {
		switch {
		case m.Format == canon.FormatGGUF && (e.Key == "tokenizer.chat_template" || strings.HasPrefix(e.Key, "tokenizer.chat_template.")) && e.Type == "string":
			src, f := ggufTemplate(m, e)
			if f != nil {
				fs = append(fs, *f)
				continue
			}
			// the string's bytes follow the key (u64 length and bytes), its type (u32) and its length (u64)
			fs = append(fs, Template(e.Key, src, e.Offset+8+int64(len(e.Key))+4+8)...)
		case m.Format == canon.FormatGGUF:
		case e.Key == "chat_template" || strings.HasSuffix(e.Key, ".chat_template"):
			fs = append(fs, Template("metadata "+e.Key, e.Value, -1)...)
		default:
			fs = append(fs, targetsInText("metadata "+e.Key, e.Value, e.Offset)...)
		}
	}
	if f, ok := m.Detail.(*onnx.File); ok {
		fs = append(fs, onnxOps(f)...)
	}
	return fs
}

// ggufTemplate is the whole text of a GGUF chat template e (Metadata keeps the first gguf.MaxInline
// bytes of a string): read from the file when longer, up to maxFile bytes. Past that, or when the file
// cannot be read, the template is not analysed and the finding says so (a payload must not hide
// behind a long prefix).
func ggufTemplate(m *canon.Model, e canon.MetaEntry) (string, *finding.Finding) {
	f, ok := m.Detail.(*gguf.File)
	if !ok {
		return e.Value, nil
	}
	kv := f.KV(e.Key)
	if kv == nil || !kv.Value.Truncated() {
		return e.Value, nil
	}
	unread := &finding.Finding{Code: scan.CodeUnparsed, Severity: finding.SevWarning, Offset: e.Offset,
		Message: fmt.Sprintf("chat template %s: %d bytes, too long to analyse", e.Key, kv.Value.Len()),
		Hint:    templateHints[scan.CodeUnparsed]}
	if kv.Value.Len() > maxFile {
		return "", unread
	}
	src, err := f.FullString(kv.Value)
	if err != nil {
		unread.Message = fmt.Sprintf("chat template %s: cannot be read whole: %v", e.Key, err)
		return "", unread
	}
	return src, nil
}

// Template returns the findings of one chat template, found at where (a key, a file). base is the
// byte offset of the template's first byte in the file (a finding's offset is then exact), or -1
// when it is not known (a template inside JSON, whose escapes move the bytes): the message then says
// where in the template.
func Template(where, src string, base int64) []finding.Finding {
	var fs []finding.Finding
	for _, is := range scan.Analyze(src) {
		f := finding.Finding{Code: is.Code, Severity: finding.SevWarning, Offset: -1, Hint: templateHints[is.Code]}
		if is.Error {
			f.Severity = finding.SevError
		}
		if is.Code == scan.CodeGlobalInternals && !is.Error {
			f.Hint = "read the template before serving the model: chat templates have no use for this global"
		}
		if base >= 0 {
			f.Offset = base + int64(is.Pos)
			f.Message = fmt.Sprintf("chat template %s: %s", where, is.Message)
		} else {
			f.Message = fmt.Sprintf("chat template %s, byte %d of the template: %s", where, is.Pos, is.Message)
		}
		fs = append(fs, f)
	}
	return fs
}

// templateHints say what to do about each chat-template finding.
var templateHints = map[string]string{
	scan.CodePrivateAttribute:  "do not render this template: it reaches past the conversation into the renderer (a sandboxed renderer, such as transformers' ImmutableSandboxedEnvironment, refuses it; others run it)",
	scan.CodeGlobalInternals:   "do not render this template: it reaches into the renderer's globals",
	scan.CodeComputedAttribute: "read the template before serving the model: an attribute name computed at render time can reach Python internals in an unsandboxed renderer",
	scan.CodeExhaustion:        "do not render this template: it would exhaust the machine",
	scan.CodeUnparsed:          "a renderer may still read it: check it by hand",
}

// Folder returns the findings of the files a loader reads beside a folder's weights: config.json and
// tokenizer_config.json (auto_map, _target_, chat_template), chat_template.jinja, chat_template.json,
// additional_chat_templates/*.jinja, and Hydra configs (*.yaml) at the top of the folder.
func Folder(dir string) []finding.Finding {
	var fs []finding.Finding
	for _, name := range []string{"config.json", "tokenizer_config.json", "processor_config.json", "preprocessor_config.json", "generation_config.json", "adapter_config.json"} {
		b, ok := readSmall(filepath.Join(dir, name))
		if !ok {
			continue
		}
		var v any
		if json.Unmarshal(b, &v) != nil {
			continue
		}
		obj, _ := v.(map[string]any)
		if am, ok := obj["auto_map"].(map[string]any); ok {
			fs = append(fs, autoMap(dir, name, am)...)
		}
		if name == "tokenizer_config.json" {
			fs = append(fs, chatTemplates(name+" chat_template", obj["chat_template"])...)
		}
		fs = append(fs, targetsInText(name, string(b), -1)...)
	}
	if b, ok := readSmall(filepath.Join(dir, "chat_template.jinja")); ok {
		fs = append(fs, Template("chat_template.jinja", string(b), -1)...)
	}
	if b, ok := readSmall(filepath.Join(dir, "chat_template.json")); ok {
		var obj map[string]any
		if json.Unmarshal(b, &obj) == nil {
			fs = append(fs, chatTemplates("chat_template.json chat_template", obj["chat_template"])...)
		}
	}
	extra, _ := filepath.Glob(filepath.Join(dir, "additional_chat_templates", "*.jinja"))
	sort.Strings(extra)
	for _, p := range extra {
		if b, ok := readSmall(p); ok {
			fs = append(fs, Template("additional_chat_templates/"+filepath.Base(p), string(b), -1)...)
		}
	}
	yamls, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	more, _ := filepath.Glob(filepath.Join(dir, "*.yml"))
	yamls = append(yamls, more...)
	sort.Strings(yamls)
	for _, p := range yamls {
		if b, ok := readSmall(p); ok {
			fs = append(fs, yamlTargets(filepath.Base(p), string(b))...)
		}
	}
	return fs
}

// chatTemplates analyses a chat_template value: a string, or a list of {name, template}.
func chatTemplates(where string, v any) []finding.Finding {
	switch v := v.(type) {
	case string:
		return Template(where, v, -1)
	case []any:
		var fs []finding.Finding
		for _, it := range v {
			o, _ := it.(map[string]any)
			src, _ := o["template"].(string)
			name, _ := o["name"].(string)
			fs = append(fs, Template(fmt.Sprintf("%s[%q]", where, name), src, -1)...)
		}
		return fs
	}
	return nil
}

func readSmall(p string) ([]byte, bool) {
	f, err := os.Open(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > maxFile {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFile))
	return b, err == nil
}

// autoMap names the modules an auto_map makes transformers run, and whether they are in dir.
func autoMap(dir, file string, am map[string]any) []finding.Finding {
	keys := make([]string, 0, len(am))
	for k := range am {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var fs []finding.Finding
	for _, k := range keys {
		var refs []string
		switch v := am[k].(type) {
		case string:
			refs = []string{v}
		case []any: // AutoTokenizer: [slow, fast], either may be null
			for _, x := range v {
				if s, ok := x.(string); ok {
					refs = append(refs, s)
				}
			}
		}
		for _, ref := range refs {
			fs = append(fs, autoMapRef(dir, file, k, ref))
		}
	}
	return fs
}

func autoMapRef(dir, file, auto, ref string) finding.Finding {
	if repo, rest, ok := strings.Cut(ref, "--"); ok {
		return finding.Finding{Code: CodeRemoteCodeOtherRepo, Severity: finding.SevWarning, Offset: -1,
			Message: fmt.Sprintf("%s auto_map %s runs %s from the repository %s with trust_remote_code", file, auto, rest, repo),
			Hint:    "that code is not in this folder and may change under the model; read it at a fixed revision before trusting it"}
	}
	module, _, _ := strings.Cut(ref, ".")
	if i := strings.LastIndex(ref, "."); i > 0 {
		module = ref[:i]
	}
	path := filepath.Join(dir, filepath.FromSlash(strings.ReplaceAll(module, ".", "/"))+".py")
	where := fmt.Sprintf("%s.py not in the folder", strings.ReplaceAll(module, ".", "/"))
	if b, ok := readSmall(path); ok {
		sum := sha256.Sum256(b)
		where = fmt.Sprintf("%s.py in the folder, sha256 %s", strings.ReplaceAll(module, ".", "/"), hex.EncodeToString(sum[:]))
	}
	return finding.Finding{Code: CodeRemoteCode, Severity: finding.SevWarning, Offset: -1,
		Message: fmt.Sprintf("%s auto_map %s runs %s with trust_remote_code (%s)", file, auto, ref, where),
		Hint:    "load it with trust_remote_code only after reading that module"}
}
