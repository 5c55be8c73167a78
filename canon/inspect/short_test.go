package inspect_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/onnx/onnxw"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/torch/torchw"
)

// TestShortHoldsNoHeader: the rows of `inspect --short` hold their words, not the headers they were
// read from, so that a collection's report is small and its headers are collected as it is read.
func TestShortHoldsNoHeader(t *testing.T) {
	dir := t.TempDir()
	const files, pad = 40, 200 << 10
	for i := range files {
		f := stfile.KohyaSDXL(i)
		f.Metadata = append(f.Metadata, stfile.KV{Key: "ss_training_comment", Value: strings.Repeat("x", pad)})
		f.Tensors = f.Tensors[:3]
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%02d.safetensors", i)), f.Build(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := inspect.Short(t.Context(), []string{dir}, inspect.Options{})
	runtime.GC()
	runtime.ReadMemStats(&after)
	if len(r.Files) != files || r.Files[0].Name != "char0000" || len(r.Files[0].GuessedTriggers) == 0 {
		t.Fatalf("%d rows, first %+v", len(r.Files), r.Files[0])
	}
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > files*pad/8 {
		t.Errorf("the report holds %d bytes for %d rows (headers of %d bytes each)", held, files, pad)
	}
	runtime.KeepAlive(r)
}

// TestShortAllFormats: `inspect --short` of a folder lists its PyTorch checkpoints, NumPy files and
// ONNX models beside its safetensors files, one row each with its format (a sharded checkpoint as its
// index), the format in the KIND column where the kind is unknown.
func TestShortAllFormats(t *testing.T) {
	dir := t.TempDir()
	w := torchw.Tensor{Name: "w", DType: "F32", Shape: []uint64{2, 2}, Data: make([]byte, 16)}
	files := map[string][]byte{
		"a.safetensors": stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{2, 2}, Data: w.Data}}}.Build(),
		"b.pt":          torchw.Zip("b", torchw.StateDict([]torchw.Tensor{w}), []torchw.Tensor{w}),
		"c.npy":         torchw.NPY(w),
		"d.npz":         torchw.NPZ([]torchw.Tensor{w}, true),
		"e.onnx":        onnxw.Model(onnxw.Tensor("w", 1, []int64{2, 2}, onnxw.Raw(w.Data))),
		"notes.txt":     []byte("x"),
	}
	for name, b := range torchw.Sharded([]torchw.Tensor{w, {Name: "v", DType: "F32", Shape: []uint64{1}, Data: make([]byte, 4)}}, 2) {
		files[filepath.Join("set", name)] = b
	}
	for name, b := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := inspect.Short(t.Context(), []string{dir}, inspect.Options{})
	want := map[string]canon.Format{"a.safetensors": canon.FormatSafetensors, "b.pt": canon.FormatPyTorch, "c.npy": canon.FormatNumPy,
		"d.npz": canon.FormatNumPy, "e.onnx": canon.FormatONNX, filepath.Join("set", "pytorch_model.bin.index.json"): canon.FormatPyTorch}
	if len(r.Files) != len(want) || len(r.Errors) != 0 {
		t.Fatalf("%d rows, errors %v: %+v", len(r.Files), r.Errors, r.Files)
	}
	for _, row := range r.Files {
		rel, _ := filepath.Rel(dir, row.Path)
		if f, ok := want[rel]; !ok || row.Format != f || !row.Valid || row.Err != nil {
			t.Errorf("row %s: format %q, valid %v, %v", rel, row.Format, row.Valid, row.Err)
		}
	}
	var b strings.Builder
	if err := inspect.WriteShortText(&b, r, inspect.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"pytorch", "numpy", "onnx"} {
		if !strings.Contains(b.String(), "  "+kind+"  ") {
			t.Errorf("no row of kind %s in\n%s", kind, b.String())
		}
	}
}
