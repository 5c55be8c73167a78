package onnx

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/onnx/onnxw"
)

// Hand-made models, written with onnxw.
var (
	varint = onnxw.Uvarint
	vField = onnxw.VarintField
	lField = onnxw.LenField
	cat    = onnxw.Cat
	tagOf  = onnxw.Tag
)

func tensorProto(name string, dt DataType, dims []int64, rest ...[]byte) []byte {
	return onnxw.Tensor(name, int32(dt), dims, rest...)
}

func modelOf(inits ...[]byte) []byte { return onnxw.Model(inits...) }

func read(t *testing.T, b []byte) *File {
	t.Helper()
	f, err := Read(bytes.NewReader(b), int64(len(b)), "m.onnx")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func codes(f *File) []string {
	var out []string
	for _, fd := range f.Findings {
		out = append(out, fd.Code)
	}
	return out
}

// TestHandMade: a model written by hand reads back: facts, tensors, their bytes (raw and typed).
func TestHandMade(t *testing.T) {
	raw := make([]byte, 8)
	binary.LittleEndian.PutUint32(raw, 0x3f800000)
	binary.LittleEndian.PutUint32(raw[4:], 0x40000000)
	packed := cat(varint(0xffffffffffffffff), varint(5)) // int32 -1, 5 as int32_data
	b := modelOf(
		tensorProto("a", Float, []int64{2}, lField(9, raw)),
		tensorProto("b", Int16, []int64{2}, lField(5, packed)),
	)
	f := read(t, b)
	if f.IRVersion != 8 || f.ProducerName != "onnxw" || len(f.Opsets) != 1 || f.Opsets[0].Version != 17 || f.Nodes != 1 || f.Ops[0] != (OpCount{"Identity", 1}) {
		t.Errorf("facts: %+v", f)
	}
	if len(f.Tensors) != 2 || f.Tensors[0].Where != InRaw || f.Tensors[1].Where != InTyped || len(f.Findings) != 0 {
		t.Fatalf("tensors %+v findings %+v", f.Tensors, f.Findings)
	}
	d := f.Data(bytes.NewReader(b), "", nil)
	got := make([]byte, d.Size())
	if _, err := d.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if want := append(raw, 0xff, 0xff, 5, 0); !bytes.Equal(got, want) {
		t.Errorf("bytes %x, want %x", got, want)
	}
}

// TestHostile: what a hostile model does is an error finding at its offset, never a panic, a hang or
// a large allocation.
func TestHostile(t *testing.T) {
	deep := []byte{}
	for range 200 { // a graph's node's attribute's graph, and so on
		deep = lField(1, lField(5, lField(6, deep)))
	}
	cases := map[string][]byte{
		"length past the end": cat(vField(1, 8), tagOf(7, wireLen), varint(1<<40)),
		"varint overflow":     cat(vField(1, 8), tagOf(5, wireVarint), bytes.Repeat([]byte{0xff}, 11)),
		"group":               cat(vField(1, 8), lField(2, []byte("p")), tagOf(9, wireStart)),
		"deep nesting":        cat(vField(1, 8), lField(2, []byte("p")), lField(7, deep)),
		"cut short":           modelOf(tensorProto("a", Float, []int64{2}, lField(9, make([]byte, 8))))[:40],
	}
	for name, b := range cases {
		f := read(t, b)
		if c := codes(f); len(c) == 0 || c[0] != CodeMalformed || f.Valid() {
			t.Errorf("%s: findings %+v", name, f.Findings)
		}
	}
	for name, c := range map[string]struct {
		b    []byte
		code string
	}{
		"short raw_data":    {modelOf(tensorProto("a", Float, []int64{3}, lField(9, make([]byte, 8)))), CodeDataIncomplete},
		"no data":           {modelOf(tensorProto("a", Float, []int64{3})), CodeDataIncomplete},
		"negative dim":      {modelOf(tensorProto("a", Float, []int64{-3}, lField(9, nil))), CodeBadTensor},
		"undefined type":    {modelOf(tensorProto("a", 99, []int64{3}, lField(9, nil))), CodeBadTensor},
		"named twice":       {modelOf(tensorProto("a", Uint8, []int64{1}, lField(9, []byte{1})), tensorProto("a", Uint8, []int64{1}, lField(9, []byte{1}))), CodeDuplicateTensor},
		"huge claimed dims": {modelOf(tensorProto("a", Float, []int64{1 << 40, 1 << 40}, lField(9, nil))), CodeBadTensor},
	} {
		f := read(t, c.b)
		if got := codes(f); len(got) != 1 || got[0] != c.code {
			t.Errorf("%s: findings %+v, want one %s", name, f.Findings, c.code)
		}
	}
	if _, err := Read(bytes.NewReader([]byte("PK\x03\x04")), 4, "x"); err == nil {
		t.Error("a zip file read as ONNX")
	}
}

// TestExternal: external data is read from the model's folder; a location that leaves it, a link that
// points out of it, a missing or short file are findings.
func TestExternal(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	data := bytes.Repeat([]byte{1, 2, 3, 4}, 4)
	for _, p := range []string{filepath.Join(dir, "w.bin"), filepath.Join(outside, "w.bin")} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outside, "w.bin"), filepath.Join(dir, "link.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("w.bin", filepath.Join(dir, "inner.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(filepath.Join(dir, "fifo.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder.bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	ext := func(loc string, kv ...string) []byte {
		e := lField(13, cat(lField(1, []byte("location")), lField(2, []byte(loc))))
		for i := 0; i < len(kv); i += 2 {
			e = append(e, lField(13, cat(lField(1, []byte(kv[i])), lField(2, []byte(kv[i+1]))))...)
		}
		return tensorProto("w", Float, []int64{2}, e, vField(14, 1))
	}
	for _, c := range []struct {
		name string
		t    []byte
		code string
	}{
		{"in the folder", ext("w.bin", "offset", "8", "length", "8"), ""},
		{"dot dot", ext("../w.bin", "length", "8"), CodeExternalRefused},
		{"absolute", ext(filepath.Join(outside, "w.bin"), "length", "8"), CodeExternalRefused},
		{"a link out", ext("link.bin", "length", "8"), CodeExternalRefused},
		{"a link inside", ext("inner.bin", "offset", "8", "length", "8"), ""},
		{"a link to /dev/zero", ext("zero.bin", "length", "8"), CodeExternalRefused},
		{"through a folder link out", ext("sub/w.bin", "length", "8"), CodeExternalRefused},
		{"a FIFO", ext("fifo.bin", "length", "8"), CodeExternalMissing},
		{"a folder", ext("folder.bin", "length", "8"), CodeExternalMissing},
		{"missing", ext("gone.bin", "length", "8"), CodeExternalMissing},
		{"past its end", ext("w.bin", "offset", "12", "length", "8"), CodeExternalMissing},
		{"wrong length", ext("w.bin", "length", "12"), CodeDataIncomplete},
		{"to the end, too long", ext("w.bin"), CodeDataIncomplete},
	} {
		b := modelOf(c.t)
		f := read(t, b)
		f.Check(bytes.NewReader(b), dir)
		got := strings.Join(codes(f), ",")
		if got != c.code {
			t.Errorf("%s: findings %+v, want %q", c.name, f.Findings, c.code)
		}
		// Data reads by the same rules: what check refuses is never read, by any command.
		d := f.Data(bytes.NewReader(b), dir, nil)
		p := make([]byte, 8)
		_, err := d.ReadAt(p, 0)
		switch {
		case c.code == "" && (err != nil || !bytes.Equal(p, data[8:16])):
			t.Errorf("%s: bytes %x, %v", c.name, p, err)
		case c.code == CodeExternalRefused && !errors.Is(err, ErrOutside):
			t.Errorf("%s: read %x, %v; want ErrOutside", c.name, p, err)
		case c.code != "" && c.code != CodeDataIncomplete && err == nil:
			t.Errorf("%s: read %x from a file check refuses", c.name, p)
		}
		d.Close()
	}
}

// pythonWith returns a Python interpreter that imports modules, or "" (Debian's packages install into
// /usr/bin/python3, which a pyenv shim may hide; elsewhere onnx may be pip's, in the python3 on PATH).
func pythonWith(modules string) string {
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import "+modules).Run() == nil {
			return path
		}
	}
	return ""
}

// written is where the models written by the onnx package (testdata/write_models.py, Debian's
// python3-onnx) and onnx's answers about them (expect.json) are recorded, so that TestOnnxWritten
// checks them where onnx is not installed; TestOnnxOracle checks the record against onnx where it is
// (-update re-records it, and refuses to run without onnx).
var written = filepath.Join("testdata", "written")

var update = flag.Bool("update", false, "re-record testdata/written with the onnx package (python3-onnx)")

// TestOnnxOracle: the recorded answers are onnx's own: write_models.py, run now, says the same about
// every tensor. Without python3-onnx it skips (TestOnnxWritten reads the record); -update re-records.
func TestOnnxOracle(t *testing.T) {
	py := pythonWith("onnx, numpy")
	if py == "" {
		if *update {
			t.Fatal("-update needs the oracle: python3-onnx is not installed (apt-get install python3-onnx)")
		}
		t.Skip("python3-onnx is not installed (apt-get install python3-onnx): TestOnnxWritten reads the recorded answers")
	}
	dir := t.TempDir()
	if out, err := exec.Command(py, filepath.Join("testdata", "write_models.py"), dir).CombinedOutput(); err != nil {
		t.Fatalf("write_models.py: %v\n%s", err, out)
	}
	if *update {
		if err := os.RemoveAll(written); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(written, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		return
	}
	live, err := os.ReadFile(filepath.Join(dir, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := os.ReadFile(filepath.Join(written, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if json.Unmarshal(live, &a) != nil || json.Unmarshal(recorded, &b) != nil || !reflect.DeepEqual(a, b) {
		t.Errorf("onnx's answers differ from testdata/written/expect.json: re-record with -update and review")
	}
	checkWritten(t, dir)
}

// TestOnnxWritten: models written by the onnx package read as onnx reads them: every tensor's name,
// type, dims and bytes (numpy's, row-major little-endian), from the record in testdata/written.
func TestOnnxWritten(t *testing.T) { checkWritten(t, written) }

// checkWritten checks the models in dir against onnx's answers in dir/expect.json.
func checkWritten(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var expect map[string]map[string]struct {
		DType int     `json:"dtype"`
		Dims  []int64 `json:"dims"`
		Hex   string  `json:"hex"`
	}
	if err := json.Unmarshal(b, &expect); err != nil {
		t.Fatal(err)
	}
	for model, tensors := range expect {
		mb, err := os.ReadFile(filepath.Join(dir, model))
		if err != nil {
			t.Fatal(err)
		}
		f := read(t, mb)
		f.Check(bytes.NewReader(mb), dir)
		if len(f.Findings) != 0 {
			t.Errorf("%s: findings %+v", model, f.Findings)
		}
		d := f.Data(bytes.NewReader(mb), dir, nil)
		found := map[string]bool{}
		for i := range f.Tensors {
			ft := &f.Tensors[i]
			want, ok := tensors[ft.Name]
			if !ok {
				t.Errorf("%s: tensor %q (%s) is not onnx's", model, ft.Name, ft.Kind)
				continue
			}
			found[ft.Name] = true
			got := make([]byte, d.Offsets[i+1]-d.Offsets[i])
			if _, err := d.ReadAt(got, int64(d.Offsets[i])); err != nil {
				t.Errorf("%s: %s: %v", model, ft.Name, err)
			}
			if int(ft.DataType) != want.DType || !equalDims(ft.Dims, want.Dims) || hex.EncodeToString(got) != want.Hex {
				t.Errorf("%s: %s: type %d dims %v bytes %x; onnx: %d %v %s", model, ft.Name, ft.DataType, ft.Dims, got, want.DType, want.Dims, want.Hex)
			}
		}
		for name := range tensors {
			if !found[name] {
				t.Errorf("%s: onnx's tensor %q not read", model, name)
			}
		}
		d.Close()
		if model == "raw.onnx" && (len(f.Metadata) != 2 || f.ProducerName != "stdiff-test" || len(f.Inputs) != 1 || strings.Join(f.Inputs[0].Shape, ",") != "batch,4" || f.Inputs[0].Type != "F32") {
			t.Errorf("raw.onnx facts: %+v", f)
		}
	}
}

func equalDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzRead: no input makes Read, Check or Data panic, hang or read out of bounds; a model Read calls
// valid has tensors whose bytes Data can read.
func FuzzRead(f *testing.F) {
	raw := make([]byte, 8)
	f.Add(modelOf(tensorProto("a", Float, []int64{2}, lField(9, raw))))
	f.Add(modelOf(tensorProto("b", Int16, []int64{2}, lField(5, cat(varint(1), varint(2))))))
	f.Add(modelOf(tensorProto("c", Int4, []int64{3}, lField(5, cat(varint(0x21), varint(3))))))
	f.Add(modelOf(tensorProto("claim", Float, []int64{1 << 26}, lField(4, make([]byte, 16))))) // dims claim 256 MiB, the field holds 4 floats
	f.Add(modelOf(tensorProto("w", Float, []int64{2}, lField(13, cat(lField(1, []byte("location")), lField(2, []byte("w.bin")))), vField(14, 1))))
	seeds, _ := filepath.Glob("../loadcode/testdata/*.onnx") // custom-domain nodes, EPContext, functions
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Read(bytes.NewReader(b), int64(len(b)), "f.onnx")
		if err != nil {
			return
		}
		dir := t.TempDir()
		m.Check(bytes.NewReader(b), dir)
		d := m.Data(bytes.NewReader(b), dir, nil)
		defer d.Close()
		p := make([]byte, min(d.Size(), 1<<16))
		_, err = d.ReadAt(p, 0)
		if m.Valid() && err != nil && len(p) > 0 {
			t.Fatalf("a valid model's bytes cannot be read: %v", err)
		}
	})
}

// TestTypedClaim: a tensor whose dims claim 256 MiB in a typed field of 16 bytes is refused from the
// field's length, before anything is allocated for the claim (it took 256 MiB a tensor, twice over
// while the slice grew: 538 MB for a 1.3 KB model).
func TestTypedClaim(t *testing.T) {
	b := modelOf(tensorProto("claim", Float, []int64{1 << 26}, lField(4, make([]byte, 16))))
	m, err := Read(bytes.NewReader(b), int64(len(b)), "claim.onnx")
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m.Check(bytes.NewReader(b), t.TempDir())
	d := m.Data(bytes.NewReader(b), t.TempDir(), nil)
	_, rerr := d.ReadAt(make([]byte, 16), 0)
	runtime.ReadMemStats(&after)
	if rerr == nil || m.Valid() {
		t.Errorf("a typed field of 4 floats read as 2^26: read error %v, valid %v", rerr, m.Valid())
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 1<<20 {
		t.Errorf("%d bytes allocated for a %d-byte model", a, len(b))
	}
}

// TestCodeRefs: what nodes outside the default domain name (package loadcode's fixtures, written by
// python3-onnx 1.12 and torch 1.13): the model's functions and their nodes' operators, ONNX Runtime's
// PyOp target, EPContext nodes embedded or naming a file.
func TestCodeRefs(t *testing.T) {
	read := func(name string) *File {
		b, err := os.ReadFile(filepath.Join("..", "loadcode", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := Read(bytes.NewReader(b), int64(len(b)), name)
		if err != nil || !f.Valid() {
			t.Fatalf("%s: %v %+v", name, err, f.Findings)
		}
		return f
	}
	f := read("torch-functions.onnx")
	if !reflect.DeepEqual(f.Functions, []string{"__main__.M", "torch.nn.modules.activation.GELU", "torch.nn.modules.linear.Linear"}) ||
		!reflect.DeepEqual(f.Ops, []OpCount{{"__main__.M", 1}}) || f.Nodes != 1 || len(f.FunctionOps) != 8 || len(f.Tensors) != 2 {
		t.Errorf("functions %v, ops %v, nodes %d, function ops %v, %d tensors", f.Functions, f.Ops, f.Nodes, f.FunctionOps, len(f.Tensors))
	}
	if f := read("ortpyop.onnx"); !reflect.DeepEqual(f.PythonFuncs, []PythonFunc{{"pyopfloat.PyOp", "mymodule.CustomFnWrapperModule.compute"}}) {
		t.Errorf("PyOp: %+v", f.PythonFuncs)
	}
	want := []EPContext{{Node: "qnn_ctx", Source: "QNNExecutionProvider", File: "model_ctx.bin"},
		{Node: "trt_ctx", Source: "TensorrtExecutionProvider", Bytes: 56}, {File: "../../elsewhere/ctx.bin"}}
	if f := read("epcontext.onnx"); !reflect.DeepEqual(f.EPContexts, want) || len(f.PythonFuncs) != 0 {
		t.Errorf("EPContext: %+v, Python %+v", f.EPContexts, f.PythonFuncs)
	}
}
