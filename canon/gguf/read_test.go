package gguf_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/zeebo/blake3"
)

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		head   []byte
		format string
		ok     bool
	}{
		{base().Build(), "GGUF v3", true},
		{cat([]byte("GGUF"), le32(2)), "GGUF v2", true},
		{cat([]byte("GGUF"), le32(1)), "GGUF v1", true},
		{cat([]byte("GGUF"), []byte{0, 0, 0, 3}), "GGUF v3 (big-endian)", true},
		{[]byte("GGUF"), "GGUF", true},
		{cat([]byte("tjgg"), le32(3)), "GGJT v3", true},
		{cat([]byte("fmgg"), le32(1)), "GGMF v1", true},
		{cat([]byte("lmgg"), le32(7)), "GGML (unversioned)", true},
		{cat(le64(2), []byte("{}")), "", false},
		{[]byte("GG"), "", false},
	} {
		f, ok := gguf.Sniff(c.head)
		if f != c.format || ok != c.ok {
			t.Errorf("%q: %q %v, want %q %v", c.head, f, ok, c.format, c.ok)
		}
	}
}

// TestFindings checks the finding each defect produces: code, severity, rule and where it points.
func TestFindings(t *testing.T) {
	byName := map[string][]byte{}
	for _, c := range edgeCases() {
		byName[c.name] = c.b
	}
	for _, c := range []struct {
		name, code string
		sev        finding.Severity
		offset     int64 // -1: not checked; -2: the finding must be absent
	}{
		{"empty", gguf.CodeEmptyFile, finding.SevError, 0},
		{"three-bytes", gguf.CodeFileTooSmall, finding.SevError, 0},
		{"ggjt-v3", gguf.CodeLegacyGGML, finding.SevError, 0},
		{"lfs-pointer", gguf.CodeLFSPointer, finding.SevError, 0},
		{"html", gguf.CodeHTMLPage, finding.SevError, 0},
		{"safetensors", gguf.CodeNotGGUF, finding.SevError, 0},
		{"bad-magic", gguf.CodeNotGGUF, finding.SevError, 0},
		{"version-1", gguf.CodeUnsupportedVersion, finding.SevError, 4},
		{"big-endian-v3", gguf.CodeBigEndian, finding.SevError, 4},
		{"tensor-count-negative", gguf.CodeCountOverLimit, finding.SevError, 8},
		{"kv-count-over-limit", gguf.CodeCountOverLimit, finding.SevError, 16},
		{"key-empty", gguf.CodeEmptyKey, finding.SevError, 24},
		{"key-past-eof", gguf.CodeTruncatedHeader, finding.SevError, 24},
		{"key-over-1GiB", gguf.CodeStringTooLong, finding.SevError, 24},
		{"key-duplicate", gguf.CodeDuplicateKey, finding.SevError, -1},
		{"nested-array", gguf.CodeNestedArray, finding.SevError, -1},
		{"value-type-13", gguf.CodeInvalidValueType, finding.SevError, -1},
		{"array-over-2^30", gguf.CodeArrayTooLong, finding.SevError, -1},
		{"ok-bool-2", gguf.CodeOddBool, finding.SevWarning, -1},
		{"ok-bool-array-odd", gguf.CodeOddBool, finding.SevWarning, -1},
		{"ok-string-invalid-utf8", gguf.CodeInvalidUTF8, finding.SevWarning, -1},
		{"ok-string-array-invalid-utf8", gguf.CodeInvalidUTF8, finding.SevWarning, -1},
		{"ok-key-invalid-utf8", gguf.CodeInvalidUTF8, finding.SevWarning, 24},
		{"alignment-48", gguf.CodeBadAlignment, finding.SevError, -1},
		{"alignment-type-u64", gguf.CodeAlignmentType, finding.SevError, -1},
		{"name-64", gguf.CodeNameTooLong, finding.SevError, -1},
		{"name-duplicate", gguf.CodeDuplicateTensor, finding.SevError, -1},
		{"name-duplicate-after-nul", gguf.CodeNulInName, finding.SevWarning, -1},
		{"dims-5", gguf.CodeTooManyDims, finding.SevError, -1},
		{"dim-negative", gguf.CodeNegativeDim, finding.SevError, -1},
		{"elements-int64-max", gguf.CodeShapeOverflow, finding.SevError, -1},
		{"type-43", gguf.CodeUnknownType, finding.SevError, -1},
		{"type-removed-31", gguf.CodeRemovedType, finding.SevError, -1},
		{"block-q4_0-33", gguf.CodePartialBlock, finding.SevError, -1},
		{"data-start-past-eof", gguf.CodeDataStartBeyond, finding.SevError, -1},
		{"offset-first-not-zero", gguf.CodeOffsetGap, finding.SevError, -1},
		{"offset-misaligned", gguf.CodeMisaligned, finding.SevError, -1},
		{"offset-overlap", gguf.CodeOffsetOverlap, finding.SevError, -1},
		{"offset-order-swapped", gguf.CodeTensorOffset, finding.SevError, -1},
		{"offset-unpadded", gguf.CodeMisaligned, finding.SevError, -1},
		{"offset-zero-size-not-zero", gguf.CodeOffsetGap, finding.SevError, -1},
		{"data-truncated-last-tensor", gguf.CodeTruncatedData, finding.SevError, -1},
		{"ok-trailing-bytes", gguf.CodeTrailingBytes, finding.SevWarning, 256},
		{"ok-no-tensors-trailing", gguf.CodeTrailingBytes, finding.SevWarning, 32},
		{"ok-no-tensors-in-padding", gguf.CodeTrailingBytes, finding.SevWarning, -2},
	} {
		b, ok := byName[c.name]
		if !ok {
			t.Fatalf("no edge case %s", c.name)
		}
		f := read(c.name, b)
		var hit *finding.Finding
		for i := range f.Findings {
			if f.Findings[i].Code == c.code {
				hit = &f.Findings[i]
				break
			}
		}
		if c.offset == -2 { // must not be found
			if hit != nil {
				t.Errorf("%s: unexpected %+v", c.name, hit)
			}
			continue
		}
		switch {
		case hit == nil:
			t.Errorf("%s: no %s finding: %+v", c.name, c.code, f.Findings)
		case hit.Severity != c.sev:
			t.Errorf("%s: %s is %s", c.name, c.code, hit.Severity)
		case c.offset >= 0 && hit.Offset != c.offset:
			t.Errorf("%s: %s at offset %d, want %d", c.name, c.code, hit.Offset, c.offset)
		case hit.Message == "" || strings.HasSuffix(hit.Message, ".") || hit.Message[0] >= 'A' && hit.Message[0] <= 'Z':
			t.Errorf("%s: message %q breaks the style (lower case, no trailing period)", c.name, hit.Message)
		case c.sev == finding.SevError && hit.RefKind == "":
			t.Errorf("%s: error finding without a rule", c.name)
		}
	}
}

// TestLenientReading checks that a file llama.cpp rejects still yields what could be read.
func TestLenientReading(t *testing.T) {
	f := base()
	f.KVs = append(f.KVs, kv("general.name", ggufw.Str("again")), kv("later", ggufw.U32(7)))
	f.Tensors = append(f.Tensors, t1("c", 99, 8), t1("a", gguf.TypeF16, 16))
	g := read("lenient", f.Build())
	if g.Valid() || g.Verdict.Rule != gguf.RuleDuplicateKey {
		t.Fatalf("verdict %v", g.Verdict)
	}
	if len(g.KVs) != 4 || len(g.Tensors) != 4 {
		t.Fatalf("%d pairs, %d tensors read", len(g.KVs), len(g.Tensors))
	}
	if v, _ := g.KV("later").Value.Uint(); v != 7 {
		t.Errorf("later = %d", v)
	}
	codes := map[string]bool{}
	for _, fd := range g.Findings {
		codes[fd.Code] = true
	}
	for _, c := range []string{gguf.CodeDuplicateKey, gguf.CodeUnknownType, gguf.CodeDuplicateTensor} {
		if !codes[c] {
			t.Errorf("no %s finding: %+v", c, g.Findings)
		}
	}
}

// TestBigEndian reads a big-endian file in its own byte order, for the record, while rejecting it.
func TestBigEndian(t *testing.T) {
	f := allValueTypes()
	f.BigEndian = true
	g := read("be", f.Build())
	if g.Verdict == nil || g.Verdict.Rule != gguf.RuleVersion || g.ByteOrder != binary.BigEndian || g.Version != 3 {
		t.Fatalf("verdict %v, order %v, version %d", g.Verdict, g.ByteOrder, g.Version)
	}
	if g.Format != "GGUF v3 (big-endian)" {
		t.Errorf("format %q", g.Format)
	}
	le := read("le", allValueTypes().Build())
	if len(g.KVs) != len(le.KVs) || len(g.Tensors) != 2 {
		t.Fatalf("%d pairs, %d tensors", len(g.KVs), len(g.Tensors))
	}
	for i := range le.KVs {
		if g.KVs[i].Key != le.KVs[i].Key || g.KVs[i].Value.String() != le.KVs[i].Value.String() {
			t.Errorf("pair %d: %s=%s, little-endian %s=%s", i, g.KVs[i].Key, g.KVs[i].Value, le.KVs[i].Key, le.KVs[i].Value)
		}
	}
	if g.Tensors[1].Type != gguf.TypeQ4_0 || g.Tensors[1].Offset != 32 {
		t.Errorf("tensor %+v", g.Tensors[1])
	}
}

func TestValues(t *testing.T) {
	g := read("values", allValueTypes().Build())
	if !g.Valid() {
		t.Fatal(g.Verdict)
	}
	want := map[string]string{"u8": "200", "i8": "-5", "u16": "60000", "i16": "-300", "u32": "4000000000", "i32": "-70000",
		"f32": "1.5", "bool": "true", "str": "héllo", "u64": "18446744073709551615", "i64": "-9223372036854775808", "f64": "-2.25"}
	for k, w := range want {
		if got := g.KV(k).Value.String(); got != w {
			t.Errorf("%s = %s, want %s", k, got, w)
		}
	}
	if v, ok := g.KV("i8").Value.Int(); !ok || v != -5 {
		t.Errorf("i8 Int = %d %v", v, ok)
	}
	if _, ok := g.KV("u64").Value.Int(); ok {
		t.Error("u64 max fits int64?")
	}
	if v, ok := g.KV("f32").Value.Float(); !ok || v != 1.5 {
		t.Errorf("f32 = %v", v)
	}
	if s, ok := g.KV("str").Value.Str(); !ok || s != "héllo" {
		t.Errorf("str = %q", s)
	}
	if _, ok := g.KV("str").Value.Uint(); ok {
		t.Error("a string has a Uint")
	}
}

// TestArrays checks an array's head, digest and lazy element access, numeric and string.
func TestArrays(t *testing.T) {
	toks := make([]string, 1000)
	scores := make([]float32, 1000)
	for i := range toks {
		toks[i] = strings.Repeat("x", i%50) + strconv.Itoa(i)
		scores[i] = float32(i) / 2
	}
	toks[500] = strings.Repeat("L", 3<<20) // longer than MaxInline, longer than the buffer
	b := withKVs(kv("toks", ggufw.Strs(toks...)), kv("scores", ggufw.F32s(scores...))).Build()
	g := read("arrays", b)
	if !g.Valid() {
		t.Fatal(g.Verdict)
	}
	a := g.KV("toks").Value.Array
	if a.ElemType != gguf.ValString || a.Len != 1000 || len(a.Head) != gguf.HeadLen {
		t.Fatalf("array %v × %d, head %d", a.ElemType, a.Len, len(a.Head))
	}
	sum := blake3.Sum256(b[a.Offset : a.Offset+a.Size])
	if sum != a.Digest {
		t.Error("digest is not BLAKE3 of the element bytes")
	}
	for _, i := range []uint64{0, 15, 16, 17, 499, 501, 999, 16} {
		v, err := a.At(i)
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := v.Str(); s != toks[i] {
			t.Errorf("toks[%d] = %q, want %q", i, s, toks[i])
		}
	}
	long, err := a.At(500)
	if err != nil || !long.Truncated() || long.Len() != 3<<20 {
		t.Fatalf("long element: %v truncated=%v len=%d", err, long.Truncated(), long.Len())
	}
	if full, err := g.FullString(long); err != nil || full != toks[500] {
		t.Errorf("FullString: %v, %d bytes", err, len(full))
	}
	if _, err := a.At(1000); !errors.Is(err, gguf.ErrIndex) {
		t.Errorf("At(1000): %v", err)
	}
	all, err := a.Strings()
	if err != nil || len(all) != 1000 || all[999] != toks[999] {
		t.Errorf("Strings: %v, %d", err, len(all))
	}
	sc := g.KV("scores").Value.Array
	for _, i := range []uint64{3, 777} {
		v, err := sc.At(i)
		if f, _ := v.Float(); err != nil || f != float64(scores[i]) {
			t.Errorf("scores[%d] = %v (%v)", i, f, err)
		}
	}
	n := 0
	if err := sc.Each(func(i uint64, v gguf.Value) error {
		if f, _ := v.Float(); f != float64(scores[i]) {
			t.Errorf("scores[%d] = %v", i, f)
		}
		n++
		return nil
	}); err != nil || n != 1000 {
		t.Errorf("Each: %v, %d", err, n)
	}
	stop := errors.New("stop")
	if err := sc.Each(func(i uint64, v gguf.Value) error { return stop }); err != stop {
		t.Errorf("Each does not return fn's error: %v", err)
	}
}

// failingReader fails every read past a point.
type failingReader struct {
	b   []byte
	bad int64
}

func (r failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.bad {
		return 0, errors.New("disk on fire")
	}
	return copy(p, r.b[off:]), nil
}

// TestReadError: an I/O failure is an error, never a verdict.
func TestReadError(t *testing.T) {
	b := ggufw.Synthetic(50, 100000).Build()
	for _, bad := range []int64{0, 10, 100, 70000, 500000} {
		f, err := gguf.Read(failingReader{b, bad}, int64(len(b)), "x.gguf")
		if err == nil || !strings.Contains(err.Error(), "x.gguf") {
			t.Errorf("fail at %d: %v, %v", bad, f, err)
		}
	}
	// A file that is shorter than its size claims (it shrank) is an error too.
	if _, err := gguf.Read(bytes.NewReader(b[:1000]), int64(len(b)), "x.gguf"); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("shrunk file: %v", err)
	}
}

// TestRealFile reads a real GGUF file from the shared corpus and checks what it is known to hold.
func TestRealFile(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "corpus", "real", "llama-2-tiny-random.gguf")
	fh, err := os.Open(path)
	if err != nil {
		t.Skipf("real corpus not found (it lives beside the project in shared/): %v", err)
	}
	defer fh.Close()
	st, _ := fh.Stat()
	f, err := gguf.Read(fh, st.Size(), path)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Valid() || f.Version != 3 || len(f.Tensors) != 12 || len(f.KVs) != 18 || f.DataOffset != 724416 || f.Alignment != 32 {
		t.Fatalf("verdict %v, v%d, %d tensors, %d pairs, data at %d, alignment %d", f.Verdict, f.Version, len(f.Tensors), len(f.KVs), f.DataOffset, f.Alignment)
	}
	if len(f.Findings) != 0 {
		t.Errorf("findings: %+v", f.Findings)
	}
	toks := f.KV("tokenizer.ggml.tokens").Value.Array
	if toks == nil || toks.Len != 32000 || toks.ElemType != gguf.ValString {
		t.Fatalf("tokens: %+v", toks)
	}
	if s, _ := toks.Head[0].Str(); s != "<unk>" {
		t.Errorf("first token %q", s)
	}
	if v, err := toks.At(31999); err != nil || v.String() == "" {
		t.Errorf("last token: %v %q", err, v)
	}
	if arch, _ := f.KV("general.architecture").Value.Str(); arch != "llama" {
		t.Errorf("architecture %q", arch)
	}
	emb := f.Tensor("token_embd.weight")
	if emb == nil || emb.Type != gguf.TypeF16 || len(emb.Dims) != 2 || emb.Dims[0] != 8 || emb.Dims[1] != 32000 || emb.Size != 512000 {
		t.Errorf("token_embd.weight: %+v", emb)
	}
	if s := emb.Shape(); s[0] != 32000 || s[1] != 8 {
		t.Errorf("shape %v", s)
	}
	last := f.Tensors[len(f.Tensors)-1]
	if f.DataOffset+int64(last.Offset+last.Size) != st.Size() {
		t.Errorf("the last tensor ends at %d, the file at %d", f.DataOffset+int64(last.Offset+last.Size), st.Size())
	}
}
