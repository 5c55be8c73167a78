package diff

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// openGGUF writes f to a temporary file and opens it (closed when the test ends).
func openGGUF(t *testing.T, name string, f ggufw.File) *source.Opened {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, f.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := source.Open(t.Context(), path, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

func ggufTensor(name string, typ gguf.GGMLType, dims ...int64) ggufw.Tensor {
	return ggufw.Tensor{Name: name, Type: typ, Dims: dims}
}

// TestRequantization: a dtype change to or from a ggml block-quantised type, with the shape kept, is a
// requantisation (its own group kind, named so in text); a change between float types, or one that
// changes the shape too, stays a change.
func TestRequantization(t *testing.T) {
	a := ggufw.File{Tensors: []ggufw.Tensor{
		ggufTensor("blk.0.attn_q.weight", gguf.TypeQ4_K, 256, 2), ggufTensor("blk.1.attn_q.weight", gguf.TypeQ4_K, 256, 2),
		ggufTensor("blk.0.ffn_up.weight", gguf.TypeF16, 32, 2), ggufTensor("norm.weight", gguf.TypeF32, 32),
		ggufTensor("output.weight", gguf.TypeQ4_K, 256, 2)}}
	b := ggufw.File{Tensors: []ggufw.Tensor{
		ggufTensor("blk.0.attn_q.weight", gguf.TypeQ6_K, 256, 2), ggufTensor("blk.1.attn_q.weight", gguf.TypeQ6_K, 256, 2),
		ggufTensor("blk.0.ffn_up.weight", gguf.TypeQ8_0, 32, 2), ggufTensor("norm.weight", gguf.TypeF16, 32),
		ggufTensor("output.weight", gguf.TypeQ6_K, 256, 4)}}
	r := Compare(Side{Model: openGGUF(t, "a.gguf", a).Model}, Side{Model: openGGUF(t, "b.gguf", b).Model}, Options{})
	kinds := map[string]ChangeKind{}
	for _, g := range r.Tensors.Groups {
		kinds[g.Pattern] = g.Kind
	}
	want := map[string]ChangeKind{"blk.{0,1}.attn_q.weight": Requantized, "blk.0.ffn_up.weight": Requantized,
		"norm.weight": Changed, "output.weight": Changed}
	if len(kinds) != len(want) {
		t.Errorf("groups %v, want %v", kinds, want)
	}
	for p, k := range want {
		if kinds[p] != k {
			t.Errorf("%s: %q, want %q", p, kinds[p], k)
		}
	}
	for _, c := range r.Tensors.Changed {
		if c.Requantization() != (want[c.Name] == Requantized || strings.Contains(c.Name, "attn_q")) {
			t.Errorf("%s: Requantization() %v", c.Name, c.Requantization())
		}
	}
	var text, md bytes.Buffer
	if err := Write(&text, r, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&md, r, WriteOptions{Format: textfmt.Markdown}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"~ blk.{0,1}.attn_q.weight  requantised Q4_K → Q6_K, size 288 B → 420 B  (2 tensors)",
		"~ blk.0.ffn_up.weight      requantised F16 → Q8_0, size 128 B → 68 B", "~ norm.weight              dtype F32 → F16, size 128 B → 64 B"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.Contains(md.String(), "| ~ | `blk.{0,1}.attn_q.weight` | requantised Q4\\_K → Q6\\_K") {
		t.Errorf("Markdown:\n%s", md.String())
	}
}

// TestGGUFMetadataTyped: GGUF values compare with their types (the same digits in another type are a
// change), arrays by summary in Compare and element by element in Models: added, removed and
// changed elements at the same index, with examples; arrays of another element type are not
// compared element by element.
func TestGGUFMetadataTyped(t *testing.T) {
	kvs := func(ctx ggufw.Val, tokens []string, scores []float32, ids ggufw.Val) ggufw.File {
		return ggufw.File{KVs: []ggufw.KV{
			{Key: "general.architecture", Val: ggufw.Str("llama")},
			{Key: "llama.context_length", Val: ctx},
			{Key: "tokenizer.ggml.tokens", Val: ggufw.Strs(tokens...)},
			{Key: "tokenizer.ggml.scores", Val: ggufw.F32s(scores...)},
			{Key: "ids", Val: ids},
		}}
	}
	toks := []string{"<unk>", "<s>", "</s>", "a", "b", "c", "d", "e", "f", "g"}
	a := kvs(ggufw.U32(4096), toks, []float32{0, 0, 0, 1, 2, 3, 4, 5, 6, 7}, ggufw.I32s(1, 2))
	edited := append([]string{"<unk>", "<s>", "<|end|>", "a", "B"}, toks[5:]...)
	b := kvs(ggufw.U64(4096), append(edited, "<|tool|>"), []float32{0, 0, 0, 1, 2, 3, 4, 5}, ggufw.U32s(1, 2))
	oa, ob := openGGUF(t, "a.gguf", a), openGGUF(t, "b.gguf", b)

	pure := Compare(Side{Model: oa.Model}, Side{Model: ob.Model}, Options{MetadataOnly: true})
	r, err := Models(t.Context(), oa, ob, Options{MetadataOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	changes := map[string]MetaChange{}
	for _, c := range r.Metadata.Changed {
		changes[c.Key] = c
	}
	if len(changes) != 4 || r.Metadata.Unchanged != 1 {
		t.Fatalf("changes %v, %d unchanged", changes, r.Metadata.Unchanged)
	}
	if c := changes["llama.context_length"]; c.Kind != "value" || c.OldType != "uint32" || c.NewType != "uint64" || c.Old != c.New {
		t.Errorf("context length: %+v", c)
	}
	tok := changes["tokenizer.ggml.tokens"].Array
	if tok == nil || !tok.Compared || tok.Added != 1 || tok.Removed != 0 || tok.Changed != 2 || tok.Old.Length != 10 || tok.New.Length != 11 || tok.Old.Type != "string" {
		t.Fatalf("tokens: %+v", tok)
	}
	ex := tok.Examples
	if len(ex) != 3 || ex[0].Kind != Added || ex[0].Index != 10 || *ex[0].New != "<|tool|>" || ex[0].Old != nil ||
		ex[1].Kind != Changed || ex[1].Index != 2 || *ex[1].Old != "</s>" || *ex[1].New != "<|end|>" || ex[2].Index != 4 {
		t.Errorf("token examples: %+v", ex)
	}
	if sc := changes["tokenizer.ggml.scores"].Array; sc == nil || sc.Removed != 2 || sc.Added != 0 || sc.Changed != 0 || *sc.Examples[0].Old != "6" {
		t.Errorf("scores: %+v", sc)
	}
	if ids := changes["ids"].Array; ids == nil || ids.Compared || ids.Old.Type != "int32" || ids.New.Type != "uint32" {
		t.Errorf("ids (int32 → uint32): %+v", ids)
	}
	if pc := pure.Metadata.Changed; len(pc) != 4 || pc[2].Array == nil || pc[2].Array.Compared {
		t.Errorf("Compare reads no elements: %+v", pc)
	}

	var text bytes.Buffer
	if err := Write(&text, r, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"~ llama.context_length   uint32 4096 → uint64 4096\n",
		"~ tokenizer.ggml.tokens  string × 10, blake3 ", "string × 11, blake3 ",
		"      1 added: [10] \"<|tool|>\"\n",
		"      2 changed: [2] \"</s>\" → \"<|end|>\", [4] \"b\" → \"B\"\n",
		"      2 removed: [8] 6, [9] 7\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}

	same, err := Models(t.Context(), oa, openGGUF(t, "a2.gguf", a), Options{MetadataOnly: true})
	if err != nil || !same.Identical || same.Metadata.Unchanged != 5 {
		t.Errorf("same file: %+v, %v", same, err)
	}
}

// TestGGUFLongStrings: strings longer than what the header read keeps (gguf.MaxInline) are compared
// whole by Models: a change past the kept bytes is found, and equal ones stay equal.
func TestGGUFLongStrings(t *testing.T) {
	long := strings.Repeat("{\"vocab\": 1}\n", gguf.MaxInline/12)
	file := func(s string) ggufw.File {
		return ggufw.File{KVs: []ggufw.KV{{Key: "tokenizer.huggingface.json", Val: ggufw.Str(s)}, {Key: "general.name", Val: ggufw.Str("x")}}}
	}
	a := openGGUF(t, "a.gguf", file(long+"end"))
	r, err := Models(t.Context(), a, openGGUF(t, "b.gguf", file(long+"END")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Identical || len(r.Metadata.Changed) != 1 || r.Metadata.Unchanged != 1 || r.Metadata.Changed[0].Key != "tokenizer.huggingface.json" ||
		!strings.HasSuffix(r.Metadata.Changed[0].New, "END") || len(r.Categories) != 1 || r.Categories[0] != "metadata" {
		t.Errorf("a change past the first MaxInline bytes: identical %v, %d changed, %d unchanged, categories %v", r.Identical, len(r.Metadata.Changed), r.Metadata.Unchanged, r.Categories)
	}
	for _, n := range r.Notes {
		if n.Code.IsLayout() {
			t.Errorf("layout note on different models: %v", n)
		}
	}
	r, err = Models(t.Context(), a, openGGUF(t, "c.gguf", file(long+"end")), Options{})
	if err != nil || !r.Identical {
		t.Errorf("equal long strings: identical %v, %v", r.Identical, err)
	}
	r, err = Models(t.Context(), a, openGGUF(t, "d.gguf", file(long+"END")), Options{IgnoreKeys: []string{"tokenizer.*"}})
	if err != nil || !r.Identical {
		t.Errorf("an ignored long string: identical %v, %v", r.Identical, err)
	}
}

// TestGGUFUnreadable: a GGUF file whose header is cut off is refused as a GGUF file, not as a
// safetensors one.
func TestGGUFUnreadable(t *testing.T) {
	b := ggufw.File{KVs: []ggufw.KV{{Key: "general.name", Val: ggufw.Str("tiny")}}, NoHeaderPad: true}.Build()
	path := filepath.Join(t.TempDir(), "cut.gguf")
	if err := os.WriteFile(path, b[:len(b)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	cut, err := source.Open(t.Context(), path, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	_, err = Models(t.Context(), cut, openGGUF(t, "whole.gguf", ggufw.File{}), Options{})
	if err == nil || !strings.Contains(err.Error(), "not a readable GGUF file: ") {
		t.Errorf("error %v", err)
	}
}

// TestGGUFElementsUnreadable: when the elements of a changed array cannot be read (the model's source
// is gone), Models fails with a read error naming that model, not with a half-made report.
func TestGGUFElementsUnreadable(t *testing.T) {
	f := func(tokens ...string) ggufw.File {
		return ggufw.File{KVs: []ggufw.KV{{Key: "tokenizer.ggml.tokens", Val: ggufw.Strs(tokens...)}}}
	}
	a, b := openGGUF(t, "a.gguf", f("a", "b")), openGGUF(t, "b.gguf", f("a", "c"))
	b.Close()
	r, err := Models(t.Context(), a, b, Options{MetadataOnly: true})
	var re *canon.ReadError
	if !errors.As(err, &re) || re.Name != b.Model.Name || r != nil {
		t.Errorf("report %v, error %v", r, err)
	}
}

// f32Bytes is v as F32 values in the given byte order.
func f32Bytes(order binary.AppendByteOrder, v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = order.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// TestGGUFByValue: two local GGUF files are compared by value where their types decode, as
// safetensors files are: an F32 tensor's statistics are those of its values (so its bytes were read
// at the right offsets), an F32 → F16 conversion is checked for exact rounding. A Q4_K tensor whose
// bytes changed is a data change with no statistics: ggml's block-quantised types are compared by
// their bytes, never decoded.
func TestGGUFByValue(t *testing.T) {
	q4 := make([]byte, 2*144)
	for i := range q4 {
		q4[i] = byte(i * 7)
	}
	q4b := slices.Clone(q4)
	q4b[200] ^= 1
	le := binary.LittleEndian
	half := []byte{0x00, 0x3C, 0x00, 0x40, 0x00, 0x42, 0x00, 0x44} // 1, 2, 3, 4 in F16
	file := func(q []byte, norm []byte, emb ggufw.Tensor) ggufw.File {
		return ggufw.File{Tensors: []ggufw.Tensor{
			{Name: "blk.0.attn_q.weight", Type: gguf.TypeQ4_K, Dims: []int64{256, 2}, Data: q},
			{Name: "blk.0.attn_norm.weight", Type: gguf.TypeF32, Dims: []int64{2, 2}, Data: norm},
			emb}}
	}
	a := file(q4, f32Bytes(le, 1, 2, 3, 4), ggufw.Tensor{Name: "emb.weight", Type: gguf.TypeF32, Dims: []int64{4}, Data: f32Bytes(le, 1, 2, 3, 4)})
	b := file(q4b, f32Bytes(le, 1, 2, 3, 6), ggufw.Tensor{Name: "emb.weight", Type: gguf.TypeF16, Dims: []int64{4}, Data: half})
	r, err := Models(t.Context(), openGGUF(t, "a.gguf", a), openGGUF(t, "b.gguf", b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.ValuesCompared || !slices.Equal(r.Categories, []Category{CategoryDType, CategoryData, CategoryValues}) {
		t.Errorf("values compared %v, categories %v", r.ValuesCompared, r.Categories)
	}
	if c := tensorChange(t, r, "blk.0.attn_q.weight"); !slices.Equal(c.Fields, []string{"data"}) || c.Values != nil {
		t.Errorf("Q4_K: fields %v, values %+v", c.Fields, c.Values)
	}
	if d := tensorChange(t, r, "blk.0.attn_norm.weight").Values; d == nil || d.MaxAbsDiff != 2 || d.MaxAbsDiffIndex != 3 || d.Differing != 1 {
		t.Errorf("F32: values %+v", d)
	}
	if d := tensorChange(t, r, "emb.weight").Values; d == nil || d.ExactRounding == nil || !*d.ExactRounding {
		t.Errorf("F32 → F16: values %+v", d)
	}
}

// TestGGUFBigEndianBytesOnly: the tensors of a big-endian GGUF file are compared by their bytes only
// (package values decodes little-endian elements): a changed F32 tensor is a data change with no
// statistics, a type change is not compared by value, and a note says why (values_compared false).
func TestGGUFBigEndianBytesOnly(t *testing.T) {
	be := binary.BigEndian
	file := func(norm ...float32) ggufw.File {
		return ggufw.File{BigEndian: true, Tensors: []ggufw.Tensor{
			{Name: "norm.weight", Type: gguf.TypeF32, Dims: []int64{4}, Data: f32Bytes(be, norm...)},
			{Name: "same.weight", Type: gguf.TypeF32, Dims: []int64{2}, Data: f32Bytes(be, 1, 2)}}}
	}
	for _, other := range []bool{false, true} { // big-endian against big-endian, and against little-endian
		b := file(1, 2, 3, 6)
		b.BigEndian = !other
		if other {
			b.Tensors[0].Data, b.Tensors[1].Data = f32Bytes(binary.LittleEndian, 1, 2, 3, 6), f32Bytes(binary.LittleEndian, 1, 2)
		}
		r, err := Models(t.Context(), openGGUF(t, "a.gguf", file(1, 2, 3, 4)), openGGUF(t, "b.gguf", b), Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := tensorChange(t, r, "norm.weight")
		var codes []NoteCode
		for _, n := range r.Notes {
			codes = append(codes, n.Code)
		}
		if !slices.Equal(c.Fields, []string{"data"}) || c.Values != nil || r.ValuesCompared || !r.ContentCompared ||
			!slices.Contains(codes, NoteBigEndian) || !slices.Contains(r.Categories, CategoryValues) {
			t.Errorf("little-endian side %v: fields %v, values %+v, values compared %v, notes %v, categories %v",
				other, c.Fields, c.Values, r.ValuesCompared, codes, r.Categories)
		}
	}
	r, err := Models(t.Context(), openGGUF(t, "a.gguf", file(1, 2, 3, 4)), openGGUF(t, "b.gguf", file(1, 2, 3, 4)), Options{})
	if err != nil || !r.Identical {
		t.Errorf("a big-endian file against its copy: %v, identical %v", err, r != nil && r.Identical)
	}
}
