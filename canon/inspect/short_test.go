package inspect_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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
	if err := inspect.WriteShort(&b, r, inspect.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"pytorch", "numpy", "onnx"} {
		if !strings.Contains(b.String(), "  "+kind+"  ") {
			t.Errorf("no row of kind %s in\n%s", kind, b.String())
		}
	}
}

// TestShortReusesHeaders: `inspect --short` reads a collection's headers into a few buffers kept for
// the next model, so that it allocates less per model than the model's header (it allocated a new
// header each time), and each row still says what its own model does: no row holds a part of a
// buffer read over since.
func TestShortReusesHeaders(t *testing.T) {
	dir := t.TempDir()
	const files = 40
	var header uint64
	for i := range files {
		f := stfile.KohyaSDXL(i)
		f.Metadata = append(f.Metadata, stfile.KV{Key: "ssmd_display_name", Value: fmt.Sprintf("model %02d", i)}, stfile.KV{Key: "ssmd_keywords", Value: fmt.Sprintf("word%02d", i)})
		b := f.Build()
		header += binary.LittleEndian.Uint64(b)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%02d.safetensors", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := inspect.Short(t.Context(), []string{dir}, inspect.Options{Workers: 2})
	runtime.ReadMemStats(&after)
	if len(r.Files) != files {
		t.Fatalf("%d rows", len(r.Files))
	}
	for i, row := range r.Files {
		card, err := inspect.Inspect(t.Context(), row.Path, inspect.Options{})
		if err != nil {
			t.Fatal(err)
		}
		in := card.Info
		if row.Name != fmt.Sprintf("model %02d", i) || row.Name != in.Name || row.BaseModel != in.BaseModel || !slices.Equal(row.Triggers, []string{fmt.Sprintf("word%02d", i)}) ||
			!slices.Equal(row.GuessedTriggers, in.GuessedTriggers) || row.Kind != in.Kind || row.Rank != in.Rank {
			t.Errorf("row %d: %+v; its card: %+v", i, row, in)
		}
	}
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop buffers: allocations mean nothing there")
	}
	per, perHeader := (after.TotalAlloc-before.TotalAlloc)/files, header/files
	t.Logf("%d bytes per model, headers of %d", per, perHeader)
	if per > 2*perHeader {
		t.Errorf("inspect --short allocates %d bytes per model, headers of %d bytes: want at most twice the header", per, perHeader)
	}
}

// TestShortSidecarsOfAFolder: a folder is listed once for its models' sidecars, and each model that has
// one still reads it: a .civitai.info beside one model, PEFT's adapter_config.json in a subfolder; a
// model with none has none.
func TestShortSidecarsOfAFolder(t *testing.T) {
	dir := t.TempDir()
	lora := stfile.File{Tensors: []stfile.Tensor{{Name: "lora_unet_x.lora_down.weight", DType: "F16", Shape: []uint64{4, 8}},
		{Name: "lora_unet_x.lora_up.weight", DType: "F16", Shape: []uint64{8, 4}}}}
	write(t, dir, "a.safetensors", lora.Build())
	write(t, dir, "a.civitai.info", []byte(`{"trainedWords": ["alpha word"], "baseModel": "SDXL 1.0"}`))
	write(t, dir, "b.safetensors", lora.Build())
	if err := os.Mkdir(filepath.Join(dir, "peft"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "peft"), "adapter_model.safetensors", lora.Build())
	write(t, filepath.Join(dir, "peft"), "adapter_config.json", []byte(`{"base_model_name_or_path": "org/base", "peft_type": "LORA"}`))
	r := inspect.Short(t.Context(), []string{dir}, inspect.Options{})
	if len(r.Files) != 3 {
		t.Fatalf("%d rows", len(r.Files))
	}
	a, b, peft := r.Files[0], r.Files[1], r.Files[2]
	if !slices.Equal(a.Triggers, []string{"alpha word"}) || a.BaseModel != "SDXL 1.0" {
		t.Errorf("a: %+v", a)
	}
	if len(b.Triggers) != 0 || b.BaseModel != "" || b.Name != "b" {
		t.Errorf("b: %+v", b)
	}
	if peft.BaseModel != "org/base" {
		t.Errorf("peft: %+v", peft)
	}
}
