package loadcode

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/onnx"
	"github.com/stdiff/stdiff/canon/onnx/onnxw"
)

// onnxModel is a ModelProto whose graph has one node per (domain, op) pair, each domain imported.
func onnxModel(ops ...[2]string) []byte {
	var g, opsets []byte
	seen := map[string]bool{}
	for _, o := range ops {
		node := onnxw.Cat(onnxw.LenField(4, []byte(o[1])), onnxw.LenField(1, []byte("x")), onnxw.LenField(2, []byte("y")))
		if o[0] != "" {
			node = append(node, onnxw.LenField(7, []byte(o[0]))...)
		}
		g = append(g, onnxw.LenField(1, node)...)
		if !seen[o[0]] {
			seen[o[0]] = true
			opsets = append(opsets, onnxw.LenField(8, onnxw.Cat(onnxw.LenField(1, []byte(o[0])), onnxw.VarintField(2, 1)))...)
		}
	}
	g = append(g, onnxw.LenField(2, []byte("g"))...)
	return onnxw.Cat(onnxw.VarintField(1, 8), onnxw.LenField(7, g), opsets)
}

func TestONNXDomains(t *testing.T) {
	b := onnxModel([2]string{"", "MatMul"}, [2]string{"com.microsoft", "FusedMatMul"}, [2]string{"ai.onnx.ml", "TreeEnsembleClassifier"},
		[2]string{"my.company", "SecretOp"}, [2]string{"my.company", "OtherOp"}, [2]string{"com.microsoft", "PythonOp"}, [2]string{"ai.onnx.contrib", "PyCustomTokenizer"},
		[2]string{"ai.onnx.contrib", "GPT2Tokenizer"})
	f, err := onnx.Read(bytes.NewReader(b), int64(len(b)), "m.onnx")
	if err != nil {
		t.Fatal(err)
	}
	fs := Model(&canon.Model{Format: canon.FormatONNX, Detail: f})
	var got []string
	for _, x := range fs {
		got = append(got, string(x.Severity)+" "+x.Code+": "+x.Message)
	}
	want := []string{
		"error onnx-python-op: operator ai.onnx.contrib.PyCustomTokenizer (1 nodes) runs a Python function when the model runs",
		"error onnx-python-op: operator com.microsoft.PythonOp (1 nodes) runs a Python function when the model runs",
		"warning onnx-custom-domain: operators of the custom domain ai.onnx.contrib: GPT2Tokenizer",
		"warning onnx-custom-domain: operators of the custom domain my.company: OtherOp, SecretOp",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if fs := Model(&canon.Model{Format: canon.FormatONNX, Detail: mustONNX(t, onnxw.Model())}); len(fs) != 0 {
		t.Errorf("a standard model: %+v", fs)
	}
}

func mustONNX(t *testing.T, b []byte) *onnx.File {
	f, err := onnx.Read(bytes.NewReader(b), int64(len(b)), "m.onnx")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestKeras: a .keras archive is recognised; a layer from a module outside Keras (CVE-2025-1550) and
// a Lambda layer's bytecode are errors; a plain Keras model has only the info finding.
func TestKeras(t *testing.T) {
	write := func(cfg string) string {
		var buf bytes.Buffer
		z := zip.NewWriter(&buf)
		for name, body := range map[string]string{"config.json": cfg, "metadata.json": `{"keras_version": "3.8.0"}`, "model.weights.h5": "\x89HDF\r\n\x1a\n"} {
			w, _ := z.Create(name)
			w.Write([]byte(body))
		}
		z.Close()
		p := filepath.Join(t.TempDir(), "m.keras")
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write(`{"module": "keras", "class_name": "Sequential", "config": {"layers": [{"module": "keras.layers", "class_name": "Dense", "config": {}}]}}`)
	fs, ok := Keras(plain)
	if !ok || len(fs) != 1 || fs[0].Code != CodeKerasArchive {
		t.Errorf("plain: %v %+v", ok, fs)
	}
	evil := write(`{"module": "keras", "class_name": "Sequential", "config": {"layers": [{"module": "keras.layers", "class_name": "Lambda", "config": {"function": {"class_name": "__lambda__", "config": {"code": "YQ=="}}}}, {"module": "subprocess", "class_name": "Popen", "config": {}}]}}`)
	fs, _ = Keras(evil)
	codes := map[string]finding.Severity{}
	for _, f := range fs {
		codes[f.Code] = f.Severity
	}
	if codes[CodeKerasForeignModule] != finding.SevError || codes[CodeKerasLambda] != finding.SevError {
		t.Errorf("%+v", fs)
	}
	if _, ok := Keras(filepath.Join("..", "..", "testdata", "weights-legacy.pt")); ok {
		t.Error("a torch file taken for Keras")
	}
}

// TestONNXPythonFunc: a custom-domain node carrying a func_name attribute is an onnx-python-op error
// naming the function, whatever its operator is called. testdata/pyop.onnx was written by Debian's
// python3-onnx 1.12: helper.make_node('PyOp', ['x'], ['y'], domain='ai.onnx.contrib', func_name='evil').
func TestONNXPythonFunc(t *testing.T) {
	b, err := os.ReadFile("testdata/pyop.onnx")
	if err != nil {
		t.Fatal(err)
	}
	attr := onnxw.Cat(onnxw.LenField(1, []byte("func_name")), onnxw.LenField(4, []byte("run_me")), onnxw.VarintField(20, 3))
	other := onnxw.Cat(onnxw.LenField(1, []byte("mode")), onnxw.LenField(4, []byte("fast")), onnxw.VarintField(20, 3))
	node := onnxw.Cat(onnxw.LenField(4, []byte("Innocent")), onnxw.LenField(1, []byte("x")), onnxw.LenField(2, []byte("y")),
		onnxw.LenField(5, other), onnxw.LenField(5, attr), onnxw.LenField(7, []byte("my.company")))
	g := onnxw.Cat(onnxw.LenField(1, node), onnxw.LenField(2, []byte("g")))
	w := onnxw.Cat(onnxw.VarintField(1, 8), onnxw.LenField(7, g),
		onnxw.LenField(8, onnxw.Cat(onnxw.LenField(1, []byte("my.company")), onnxw.VarintField(2, 1))))
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"pyop.onnx", b, `error onnx-python-op: operator ai.onnx.contrib.PyOp runs the Python function "evil" when the model runs`},
		{"onnxw", w, `error onnx-python-op: operator my.company.Innocent runs the Python function "run_me" when the model runs`},
	} {
		fs := Model(&canon.Model{Format: canon.FormatONNX, Detail: mustONNX(t, c.b)})
		var got []string
		for _, x := range fs {
			got = append(got, string(x.Severity)+" "+x.Code+": "+x.Message)
		}
		if strings.Join(got, "\n") != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, strings.Join(got, "\n"), c.want)
		}
	}
}

// TestONNXCodeAttributes: the attributes of nodes outside the default domain that name code or
// files (testdata/make_onnx.py wrote the models with python3-onnx 1.12): ONNX Runtime's PyOp names the
// module, class and method it runs; an EPContext node's precompiled context is named, embedded or in
// a file, and a file outside the model's folder is an error; a model's own function is no custom
// code (torch.onnx writes them: torch-functions.onnx is torch 1.13's), but a custom operator its body
// uses is.
func TestONNXCodeAttributes(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"ortpyop.onnx", []string{`error onnx-python-op: operator pyopfloat.PyOp runs the Python function "mymodule.CustomFnWrapperModule.compute" when the model runs`}},
		{"epcontext.onnx", []string{
			`warning onnx-ep-context: EPContext node "qnn_ctx" loads a precompiled context for QNNExecutionProvider from the file "model_ctx.bin", in place of ONNX nodes`,
			`warning onnx-ep-context: EPContext node "trt_ctx" carries a precompiled context of 56 bytes for TensorrtExecutionProvider, loaded in place of ONNX nodes`,
			`error onnx-ep-context-outside: an EPContext node loads a precompiled context for an execution provider from "../../elsewhere/ctx.bin", outside the model's folder`}},
		{"localfunc.onnx", []string{`warning onnx-custom-domain: operators of the custom domain my.company: SecretOp`}},
		{"torch-functions.onnx", nil},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range Model(&canon.Model{Format: canon.FormatONNX, Detail: mustONNX(t, b)}) {
			got = append(got, string(x.Severity)+" "+x.Code+": "+x.Message)
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: got\n%s\nwant\n%s", c.file, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}
