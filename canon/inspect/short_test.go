package inspect_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/lora"
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

// TestShortSameNames: a collection's models of the same tensor names (whose surveys lora keeps by a
// key of their names and shapes) each get their own row: the same names in other shapes (rank 4 then
// 8; SD1's context width then SDXL's), in another order (the tokens' order and the last one's width),
// marked as tokens by the metadata or not; and those of the same names, shapes and marks (another
// dtype, other metadata) the same row but for their words. One worker reads them in path order, so
// that each model is read just after the one a wrong key would take it for.
func TestShortSameNames(t *testing.T) {
	const k = "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k"
	adapter := func(rank, in uint64, dtype string) stfile.File {
		return stfile.File{Tensors: []stfile.Tensor{{Name: k + ".alpha", DType: dtype, Shape: []uint64{}},
			{Name: k + ".lora_down.weight", DType: dtype, Shape: []uint64{rank, in}}, {Name: k + ".lora_up.weight", DType: dtype, Shape: []uint64{320, rank}}}}
	}
	tokens := func(names ...string) stfile.File {
		var f stfile.File
		for _, n := range names {
			width := uint64(768)
			if strings.HasSuffix(n, "|1024") {
				n, width = strings.TrimSuffix(n, "|1024"), 1024
			}
			f.Tensors = append(f.Tensors, stfile.Tensor{Name: n, DType: "F32", Shape: []uint64{width}})
		}
		return f
	}
	marked := tokens("<s1>", "x")
	marked.Metadata = []stfile.KV{{Key: "<s1>", Value: "<embed>"}}
	other := adapter(8, 2048, "F32")
	other.Metadata = []stfile.KV{{Key: "ss_network_dim", Value: "8"}}
	files := []struct {
		f      stfile.File
		kind   lora.Kind
		family lora.Family
		rank   int
		words  []string
	}{
		{adapter(4, 768, "F16"), lora.KindLoRA, lora.FamilySD1, 4, nil},
		{adapter(8, 768, "F16"), lora.KindLoRA, lora.FamilySD1, 8, nil},
		{adapter(8, 2048, "F16"), lora.KindLoRA, lora.FamilySDXL, 8, nil},
		{other, lora.KindLoRA, lora.FamilySDXL, 8, nil},
		{tokens("<a>", "<b>|1024"), lora.KindTextualInversion, lora.FamilySD2, 0, []string{"<a>", "<b>"}},
		{tokens("<b>|1024", "<a>"), lora.KindTextualInversion, lora.FamilySD1, 0, []string{"<b>", "<a>"}},
		{marked, lora.KindUnknown, lora.FamilyUnknown, 0, []string{"<s1>"}},
		{tokens("<s1>", "x"), lora.KindUnknown, lora.FamilyUnknown, 0, nil},
	}
	dir := t.TempDir()
	for i, c := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%d.safetensors", i)), c.f.Build(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 2 { // the second time, every layout is known
		r := inspect.Short(t.Context(), []string{dir}, inspect.Options{Workers: 1})
		if len(r.Files) != len(files) {
			t.Fatalf("%d rows", len(r.Files))
		}
		for i, row := range r.Files {
			c := files[i]
			if row.Kind != c.kind || row.Family != c.family || row.Rank != c.rank || !slices.Equal(row.Triggers, append([]string{}, c.words...)) {
				t.Errorf("round %d, m%d: %s %s rank %d triggers %q; want %s %s rank %d triggers %q", round, i, row.Kind, row.Family, row.Rank, row.Triggers,
					c.kind, c.family, c.rank, c.words)
			}
		}
	}
}

// TestShortPlainRows: rows read one after another into one header buffer (Short with one worker: the
// plain way, safetensors' readPlain, with the last header's memory) are the rows of each file read on
// its own (the full parser), field for field, on the stfile writers' files every way they write them,
// headers the plain way must decline (names and keys written twice, control characters, escapes of
// every kind, NUL padding, invalid entries), and the real files beside the project.
func TestShortPlainRows(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name+".safetensors"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	big := stfile.ManyTensors(2000) // first in path order, the largest header: every other one fits its buffer
	big.Metadata = []stfile.KV{{Key: "ss_output_name", Value: "big"}}
	write("000-big", big.Build())
	n := 0
	for _, f := range []stfile.File{stfile.LoRA(), stfile.Weights(), stfile.KohyaSDXL(1), stfile.KohyaSDXL(2), stfile.KohyaSDXL(5)} {
		for _, v := range []func(*stfile.File){func(*stfile.File) {}, func(f *stfile.File) { f.Indent = true }, func(f *stfile.File) { f.NoPad = true },
			func(f *stfile.File) { f.Metadata, f.NullMetadata = nil, true },
			func(f *stfile.File) {
				f.Metadata = append(f.Metadata, stfile.KV{Key: "ss_tag_frequency", Value: `{"10_caf\u00e9 x": {"caf\u00e9": 3, "\"q\"": 9, "b\\c": 2}}`})
			},
			func(f *stfile.File) {
				f.Metadata = append(f.Metadata, stfile.KV{Key: "modelspec.title", Value: "tab\tin"})
			},
			func(f *stfile.File) { f.Metadata = append(f.Metadata, f.Metadata...) },
			func(f *stfile.File) { f.Tensors = append(f.Tensors, f.Tensors[0]) },
		} {
			g := f
			g.Metadata, g.Tensors = slices.Clone(f.Metadata), slices.Clone(f.Tensors)
			v(&g)
			write(fmt.Sprintf("m%03d", n), g.Build())
			n++
		}
	}
	for name, b := range stfile.Fixtures() {
		write("fixture-"+strings.TrimSuffix(name, ".safetensors"), b)
	}
	real, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "corpus", "real", "*.safetensors"))
	if len(real) == 0 {
		t.Fatal("the real corpus (../shared/corpus/real beside the repository) is not there")
	}
	for _, p := range real {
		if st, err := os.Stat(p); err == nil && st.Size() < 4<<20 {
			b, _ := os.ReadFile(p)
			write("real-"+strings.TrimSuffix(filepath.Base(p), ".safetensors"), b)
		}
	}
	all := inspect.Short(t.Context(), []string{dir}, inspect.Options{Workers: 1})
	if len(all.Files) < 60 {
		t.Fatalf("%d rows", len(all.Files))
	}
	for _, row := range all.Files {
		alone := inspect.Short(t.Context(), []string{row.Path}, inspect.Options{Workers: 1})
		if len(alone.Files) != 1 {
			t.Fatalf("%s: %d rows alone", row.Path, len(alone.Files))
		}
		if want := alone.Files[0]; !reflect.DeepEqual(row, want) {
			t.Errorf("%s:\nafter other headers %+v\nalone               %+v", filepath.Base(row.Path), row, want)
		}
	}
}
