package canon

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/zeebo/blake3"
)

// ggufFixture is a small valid GGUF file: typed pairs (a tokenizer-like array among them) and tensors
// of plain and block types, with shapes of one to three dimensions.
func ggufFixture() ggufw.File {
	tokens := make([]string, 100)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("tok%d", i)
	}
	return ggufw.File{
		KVs: []ggufw.KV{
			{Key: "general.architecture", Val: ggufw.Str("llama")},
			{Key: "general.name", Val: ggufw.Str("tiny")},
			{Key: "llama.context_length", Val: ggufw.U32(4096)},
			{Key: "llama.attention.layer_norm_rms_epsilon", Val: ggufw.F32(1e-5)},
			{Key: "llama.rope.dimension_sections", Val: ggufw.I32s(8, 8, 0, 0)},
			{Key: "tokenizer.ggml.add_bos_token", Val: ggufw.Bool(true)},
			{Key: "tokenizer.ggml.tokens", Val: ggufw.Strs(tokens...)},
			{Key: "tokenizer.ggml.pre", Val: ggufw.Strs("a", "b\n")},
		},
		Tensors: []ggufw.Tensor{
			{Name: "token_embd.weight", Type: gguf.TypeQ4_K, Dims: []int64{256, 3}},
			{Name: "blk.0.attn_norm.weight", Type: gguf.TypeF32, Dims: []int64{256}},
			{Name: "output.weight", Type: gguf.TypeQ8_0, Dims: []int64{64, 2}},
			{Name: "blk.0.ffn.weight", Type: gguf.TypeF16, Dims: []int64{8, 4, 2}},
		},
	}
}

// TestReadGGUF: Read tells GGUF by its magic and gives a Model in canon's terms: row-major shapes,
// ggml's type names, offsets in the data section, typed metadata, a data section where the header
// puts it.
func TestReadGGUF(t *testing.T) {
	b := ggufFixture().Build()
	m := ReadBytes("m.safetensors", b) // the name says safetensors; the bytes decide
	if m.Format != FormatGGUF || !m.Valid() || !m.HeaderParsed || m.ggufFile() == nil || len(m.Findings) != 0 || m.RawHeader != nil {
		t.Fatalf("format %q, verdict %v, parsed %v, findings %+v", m.Format, m.RefErr, m.HeaderParsed, m.Findings)
	}
	if m.DataOffset() != m.ggufFile().DataOffset || m.DataOffset()%32 != 0 || int64(m.HeaderLen) != m.DataOffset() || m.DataLen() != int64(len(b))-m.DataOffset() {
		t.Errorf("data at %d (gguf %d), header %d, data %d bytes of %d", m.DataOffset(), m.ggufFile().DataOffset, m.HeaderLen, m.DataLen(), len(b))
	}
	want := []struct {
		name  string
		dtype tensor.DType
		shape []uint64
		len   uint64
	}{
		{"token_embd.weight", "Q4_K", []uint64{3, 256}, 3 * 144},
		{"blk.0.attn_norm.weight", "F32", []uint64{256}, 1024},
		{"output.weight", "Q8_0", []uint64{2, 64}, 2 * 2 * 34},
		{"blk.0.ffn.weight", "F16", []uint64{2, 4, 8}, 128},
	}
	if len(m.Tensors) != len(want) {
		t.Fatalf("%d tensors", len(m.Tensors))
	}
	for i, w := range want {
		tn := &m.Tensors[i]
		ti := &m.ggufFile().Tensors[i]
		if exp, ok := tn.ExpectedLen(); tn.Name != w.name || tn.DType != w.dtype || !slices.Equal(tn.Shape, w.shape) || tn.Len() != w.len || !ok || exp != w.len {
			t.Errorf("tensor %d: %+v (expected length %d %v), want %+v", i, tn, exp, ok, w)
		}
		if tn.Begin != ti.Offset || tn.HeaderOffset != ti.HeaderOffset || m.DataOffset()+int64(tn.End) > int64(len(b)) {
			t.Errorf("%s: data %d-%d, header at %d; gguf says %d, %d", tn.Name, tn.Begin, tn.End, tn.HeaderOffset, ti.Offset, ti.HeaderOffset)
		}
	}
	meta := map[string][2]string{}
	for _, e := range m.Metadata {
		meta[e.Key] = [2]string{e.Type, e.Value}
		if e.NotString || e.Offset <= 0 {
			t.Errorf("%s: %+v", e.Key, e)
		}
	}
	for key, w := range map[string][2]string{
		"general.architecture":                   {"string", "llama"},
		"llama.context_length":                   {"uint32", "4096"},
		"llama.attention.layer_norm_rms_epsilon": {"float32", "1e-05"},
		"llama.rope.dimension_sections":          {"array", "[int32 × 4: 8, 8, 0, 0]"},
		"tokenizer.ggml.add_bos_token":           {"bool", "true"},
		"tokenizer.ggml.pre":                     {"array", `[string × 2: "a", "b\n"]`},
	} {
		if meta[key] != w {
			t.Errorf("%s: %q, want %q", key, meta[key], w)
		}
	}
	toks := meta["tokenizer.ggml.tokens"]
	digest := m.ggufFile().KV("tokenizer.ggml.tokens").Value.Array.Digest
	if toks != [2]string{"array", "[string × 100, blake3 " + hex.EncodeToString(digest[:8]) + "]"} {
		t.Errorf("tokens: %q", toks)
	}
	if len(m.Metadata) != 8 || !m.HasMetadata {
		t.Errorf("%d metadata entries", len(m.Metadata))
	}
	per, total := m.Params()
	if len(per) != 4 || per[0].DType != "Q4_K" || per[0].Elements != 768 || per[0].Bytes != 432 || total.Elements != 768+256+128+64 || total.Tensors != 4 {
		t.Errorf("params %+v, total %+v", per, total)
	}
}

// TestGGUFArraySummary: an array's summary changes with any element, also one past the few kept in
// memory, and lists the elements only while they are few and short.
func TestGGUFArraySummary(t *testing.T) {
	summary := func(v ggufw.Val) string {
		f := ggufFixture()
		f.KVs = []ggufw.KV{{Key: "a", Val: v}}
		m := ReadBytes("m.gguf", f.Build())
		if !m.Valid() {
			t.Fatalf("%v", m.RefErr)
		}
		return m.Metadata[0].Value
	}
	many := make([]uint32, 1000)
	a := summary(ggufw.U32s(many...))
	many[999] = 1
	if b := summary(ggufw.U32s(many...)); a == b || !strings.HasPrefix(a, "[uint32 × 1000, blake3 ") {
		t.Errorf("%q and %q", a, b)
	}
	if s := summary(ggufw.Strs()); s != "[string × 0]" {
		t.Errorf("empty: %q", s)
	}
	long := strings.Repeat("x", 300)
	if s := summary(ggufw.Strs(long)); !strings.HasPrefix(s, "[string × 1, blake3 ") {
		t.Errorf("long element: %q", s)
	}
	if s := summary(ggufw.F32s(0.5, -2)); s != "[float32 × 2: 0.5, -2]" {
		t.Errorf("floats: %q", s)
	}
}

// TestGGUFVerdicts: llama.cpp's verdict becomes RefErr (its rule as the kind), with an error finding of
// that kind among gguf's findings; the formats before GGUF are named, not read.
func TestGGUFVerdicts(t *testing.T) {
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	valid := ggufFixture().Build()
	unknownType := ggufFixture()
	unknownType.Tensors[1].Type = 99
	unknownType.Tensors[1].Data = make([]byte, 1024)
	dupTensor := ggufFixture()
	dupTensor.Tensors[2].Name = "token_embd.weight"
	bigEndian := ggufFixture()
	bigEndian.BigEndian = true
	for _, c := range []struct {
		name     string
		b        []byte
		kind     gguf.Rule
		code     string
		message  string // a part of the finding's message
		tensors  int
		parsed   bool
		severity finding.Severity
	}{
		{"ggjt-v3", append([]byte("tjgg"), append(le32(3), make([]byte, 100)...)...), gguf.RuleMagic, gguf.CodeLegacyGGML, "GGJT v3, the format before GGUF", 0, false, finding.SevError},
		{"ggml", append([]byte("lmgg"), make([]byte, 100)...), gguf.RuleMagic, gguf.CodeLegacyGGML, "GGML (unversioned)", 0, false, finding.SevError},
		{"gguf-v1", append([]byte("GGUF"), append(le32(1), make([]byte, 100)...)...), gguf.RuleVersion, gguf.CodeUnsupportedVersion, "GGUF v1", 0, false, finding.SevError},
		{"big-endian", bigEndian.Build(), gguf.RuleVersion, gguf.CodeBigEndian, "big-endian", 4, true, finding.SevError},
		{"magic-only", []byte("GGUF\x03"), gguf.RuleHeaderRead, gguf.CodeTruncatedHeader, "cut off", 0, false, finding.SevError},
		{"unknown-type", unknownType.Build(), gguf.RuleTensorType, gguf.CodeUnknownType, "ggml type 99", 4, true, finding.SevError},
		{"duplicate-tensor", dupTensor.Build(), gguf.RuleDuplicateTensor, gguf.CodeDuplicateTensor, "appears twice", 3, true, finding.SevError},
		{"truncated", valid[:len(valid)-40], gguf.RuleTensorBounds, gguf.CodeTruncatedData, "not within the file", 4, true, finding.SevError},
		{"trailing", append(bytes.Clone(valid), make([]byte, 64)...), "", gguf.CodeTrailingBytes, "follow the end of the data section", 4, true, finding.SevWarning},
	} {
		m := ReadBytes(c.name, c.b)
		checkInvariants(t, m)
		if m.Format != FormatGGUF || len(m.Tensors) != c.tensors || m.HeaderParsed != c.parsed {
			t.Errorf("%s: format %q, %d tensors, parsed %v", c.name, m.Format, len(m.Tensors), m.HeaderParsed)
		}
		if c.kind == "" && !m.Valid() || c.kind != "" && (m.Valid() || m.RefErr.Kind != finding.RefKind(c.kind)) {
			t.Errorf("%s: verdict %v, want %q", c.name, m.RefErr, c.kind)
		}
		found := false
		for _, f := range m.Findings {
			found = found || f.Code == c.code && f.Severity == c.severity && strings.Contains(f.Message, c.message) && f.RefKind == finding.RefKind(c.kind)
		}
		if !found {
			t.Errorf("%s: no %s finding saying %q: %+v", c.name, c.code, c.message, m.Findings)
		}
		if !c.parsed && m.DataOffset() != m.FileSize {
			t.Errorf("%s: data at %d in a file of %d bytes whose header was not read", c.name, m.DataOffset(), m.FileSize)
		}
	}
	// The unknown type's tensor is listed, with no length; the duplicate keeps the first entry.
	m := ReadBytes("u", unknownType.Build())
	if tn := m.Tensor("blk.0.attn_norm.weight"); tn == nil || tn.DType != "TYPE_99" || tn.Len() != 0 {
		t.Errorf("unknown type: %+v", tn)
	}
	m = ReadBytes("d", dupTensor.Build())
	if tn := m.Tensor("token_embd.weight"); tn == nil || tn.DType != "Q4_K" {
		t.Errorf("duplicate: %+v", tn)
	}
	// The hint of a format before GGUF says what to do.
	m = ReadBytes("old.bin", append([]byte("tjgg"), le32(3)...))
	if len(m.Findings) == 0 || !strings.Contains(m.Findings[0].Hint, "convert") {
		t.Errorf("legacy: %+v", m.Findings)
	}
}

// TestSafetensorsNotGGUF: safetensors files stay safetensors, whatever their name, and a file too
// short for a GGUF magic is a safetensors file that is too small.
func TestSafetensorsNotGGUF(t *testing.T) {
	b, err := os.ReadFile("../testdata/base.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if m := ReadBytes("base.gguf", b); m.Format != FormatSafetensors || !m.Valid() || m.ggufFile() != nil {
		t.Errorf("format %q, verdict %v", m.Format, m.RefErr)
	}
	if m := ReadBytes("x", []byte("GGU")); m.Format != FormatSafetensors || m.RefErr.Kind != finding.HeaderTooSmall {
		t.Errorf("3 bytes: %q %v", m.Format, m.RefErr)
	}
}

// ggufContent is the canonical content form of a GGUF file held in memory, each tensor's digest taken
// from the bytes the model says it has.
func ggufContent(t *testing.T, m *Model, b []byte) []byte {
	t.Helper()
	digests := make([][32]byte, len(m.Tensors))
	for i := range m.Tensors {
		tn := &m.Tensors[i]
		start := m.DataOffset() + int64(tn.Begin)
		digests[i] = blake3.Sum256(b[start : start+int64(tn.Len())])
	}
	return CanonicalContent(m, digests)
}

// TestGGUFCanonical: the canonical form of a GGUF model, byte for byte: its own first line, ggml's
// type names in lower case, row-major shapes, ggml's byte lengths (without padding).
func TestGGUFCanonical(t *testing.T) {
	m := ReadBytes("m.gguf", ggufFixture().Build())
	want := "stdiff-structure-gguf/1\n" +
		"22:blk.0.attn_norm.weight f32 [256] 1024\n" +
		"16:blk.0.ffn.weight f16 [2,4,8] 128\n" +
		"13:output.weight q8_0 [2,64] 136\n" +
		"17:token_embd.weight q4_k [3,256] 432\n"
	if got := string(Canonical(m)); got != want {
		t.Errorf("canonical form:\n%s\nwant:\n%s", got, want)
	}
	content := string(ggufContent(t, m, ggufFixture().Build()))
	if !strings.HasPrefix(content, "stdiff-content-gguf/1\n22:blk.0.attn_norm.weight f32 [256] 1024 ") || strings.Count(content, "\n") != 5 {
		t.Errorf("content form:\n%s", content)
	}

	// The same tensor lines from a safetensors file: only the first line tells them apart.
	st := &Model{Format: FormatSafetensors, Tensors: []tensor.Tensor{{Name: "w", DType: "F32", Shape: []uint64{4}, End: 16}}}
	g := &Model{Format: FormatGGUF, Tensors: st.Tensors}
	cs, cg := string(Canonical(st)), string(Canonical(g))
	if cs == cg || strings.SplitN(cs, "\n", 2)[1] != strings.SplitN(cg, "\n", 2)[1] {
		t.Errorf("safetensors %q, gguf %q", cs, cg)
	}
}

// randomGGUF is a random valid GGUF file description: tensors of several types with unique names,
// random pairs.
func randomGGUF(rng *rand.Rand) ggufw.File {
	types := []gguf.GGMLType{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeI8, gguf.TypeQ4_0, gguf.TypeQ4_K, gguf.TypeQ8_0, gguf.TypeIQ4_NL}
	var f ggufw.File
	for i, n := 0, 1+rng.Intn(12); i < n; i++ {
		typ := types[rng.Intn(len(types))]
		info, _ := typ.Info()
		dims := []int64{int64(info.BlockSize) * int64(1+rng.Intn(4))}
		for k := rng.Intn(3); k > 0; k-- {
			dims = append(dims, int64(1+rng.Intn(3)))
		}
		f.Tensors = append(f.Tensors, ggufw.Tensor{Name: fmt.Sprintf("blk.%d.w%d", rng.Intn(100), i), Type: typ, Dims: dims})
	}
	for i, n := 0, rng.Intn(6); i < n; i++ {
		f.KVs = append(f.KVs, ggufw.KV{Key: fmt.Sprintf("k%d", i), Val: ggufw.U32(rng.Uint32())})
	}
	return f
}

// TestGGUFIdentityStable is the property structure and content IDs promise, for GGUF: they survive
// metadata edits, re-ordered tensors (their data moved with them), another alignment and GGUF v2,
// and change with any name, type, shape or (content) tensor byte.
func TestGGUFIdentityStable(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	forms := func(f ggufw.File) (string, string) {
		b := f.Build()
		m := ReadBytes("m.gguf", b)
		if !m.Valid() {
			t.Fatalf("invalid fixture: %v", m.RefErr)
		}
		return string(Canonical(m)), string(ggufContent(t, m, b))
	}
	for i := 0; i < 200; i++ {
		f := randomGGUF(rng)
		s0, c0 := forms(f)
		same := map[string]ggufw.File{}
		g := f
		g.KVs = append(slices.Clone(f.KVs), ggufw.KV{Key: "general.name", Val: ggufw.Str("edited")})
		rng.Shuffle(len(g.KVs), func(a, b int) { g.KVs[a], g.KVs[b] = g.KVs[b], g.KVs[a] })
		same["metadata edited"] = g
		g = f
		g.Tensors = slices.Clone(f.Tensors)
		rng.Shuffle(len(g.Tensors), func(a, b int) { g.Tensors[a], g.Tensors[b] = g.Tensors[b], g.Tensors[a] })
		same["tensors re-ordered"] = g
		g = f
		g.KVs = append(slices.Clone(f.KVs), ggufw.KV{Key: gguf.AlignmentKey, Val: ggufw.U32(64)})
		same["alignment 64"] = g
		g = f
		g.Version = 2
		same["version 2"] = g
		for what, g := range same {
			if s, c := forms(g); s != s0 || c != c0 {
				t.Fatalf("%s changed the forms:\n%s\n%s", what, s0, s)
			}
		}

		k := rng.Intn(len(f.Tensors))
		other := map[string]ggufw.File{}
		g = f
		g.Tensors = slices.Clone(f.Tensors)
		g.Tensors[k].Name += "x"
		other["renamed"] = g
		g = f
		g.Tensors = slices.Clone(f.Tensors)
		g.Tensors[k].Dims = append([]int64{g.Tensors[k].Dims[0] * 2}, g.Tensors[k].Dims[1:]...)
		other["reshaped"] = g
		g = f
		g.Tensors = slices.Clone(f.Tensors)
		if g.Tensors[k].Type == gguf.TypeF16 {
			g.Tensors[k].Type = gguf.TypeBF16 // same size, other type
		} else {
			g.Tensors[k].Type, g.Tensors[k].Dims = gguf.TypeF16, []int64{256}
		}
		other["retyped"] = g
		for what, g := range other {
			if s, c := forms(g); s == s0 || c == c0 {
				t.Fatalf("%s kept a form:\n%s", what, s0)
			}
		}
		// One flipped tensor byte: the same structure, another content.
		g = f
		g.Tensors = slices.Clone(f.Tensors)
		n, _ := ggufw.TensorBytes(g.Tensors[k].Type, g.Tensors[k].Dims)
		data := make([]byte, n)
		g.Tensors[k].Data = data
		s1, c1 := forms(g)
		data[rng.Intn(len(data))] ^= 1
		if s2, c2 := forms(g); s2 != s1 || c2 == c1 {
			t.Fatal("a flipped byte: structure changed or content did not")
		}
	}
}

// TestGGUFReal reads the real GGUF file of the shared corpus: llama.cpp loads it; its canonical form is
// pinned, so that its structure ID never changes unnoticed.
func TestGGUFReal(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "corpus", "real", "llama-2-tiny-random.gguf")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("real corpus not found (it lives beside the project in shared/): %v", err)
	}
	m := ReadBytes(path, b)
	if m.Format != FormatGGUF || !m.Valid() || len(m.Tensors) != 12 || len(m.Findings) != 0 || m.DataOffset() != 724416 || len(m.Metadata) != 18 {
		t.Fatalf("format %q, verdict %v, %d tensors, findings %+v, data at %d, %d pairs", m.Format, m.RefErr, len(m.Tensors), m.Findings, m.DataOffset(), len(m.Metadata))
	}
	if tn := m.Tensor("token_embd.weight"); tn == nil || tn.DType != "F16" || !slices.Equal(tn.Shape, []uint64{32000, 8}) || tn.Len() != 512000 {
		t.Errorf("token_embd.weight: %+v", tn)
	}
	if v, _ := m.Meta("tokenizer.ggml.tokens"); !strings.HasPrefix(v, "[string × 32000, blake3 ") {
		t.Errorf("tokens: %q", v)
	}
	per, total := m.Params()
	if len(per) != 2 || per[0].DType != "F16" || per[0].Elements != 513024 || total.Elements != 513048 {
		t.Errorf("params %+v %+v", per, total)
	}
	sum := blake3.Sum256(Canonical(m))
	if got := hex.EncodeToString(sum[:]); got != realGGUFStructure {
		t.Errorf("structure form hashes to %s, pinned %s:\n%s", got, realGGUFStructure, Canonical(m))
	}
	content := blake3.Sum256(ggufContent(t, m, b))
	if got := hex.EncodeToString(content[:]); got != realGGUFContent {
		t.Errorf("content form hashes to %s, pinned %s", got, realGGUFContent)
	}
}

// The BLAKE3 of the real file's canonical forms: its structure ID is "st1:" and the first, its content
// ID "ct1:" and the second.
const (
	realGGUFStructure = "d6a76caa5e00a96dd95e163937598ca1c8a59a6d7db56cf3f7338a8f3924fae5"
	realGGUFContent   = "5b57748acbe0b58a8bf6e61732b1c4cbb721da1a2f517f88c2f002fc39fe3e54"
)
