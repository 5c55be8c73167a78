package hash

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/stfile"
)

func model(t *testing.T, b []byte) (*canon.Model, canon.Source) {
	t.Helper()
	src := canon.SourceOf(bytes.NewReader(b), int64(len(b)), "test")
	m, err := canon.Read(src, src.Size(), src.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !m.Valid() {
		t.Fatalf("test file invalid: %v", m.RefErr)
	}
	return m, src
}

func ids(t *testing.T, b []byte) (structure, content string) {
	t.Helper()
	m, src := model(t, b)
	d, err := TensorDigests(context.Background(), src, m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return canon.StructureID(m), canon.ContentID(m, d)
}

func sample() stfile.File {
	return stfile.File{Seed: 7, Metadata: []stfile.KV{{Key: "format", Value: "pt"}, {Key: "note", Value: "a"}},
		Tensors: []stfile.Tensor{
			{Name: "b.weight", DType: "F16", Shape: []uint64{4, 3}},
			{Name: "a.bias", DType: "F32", Shape: []uint64{3}},
			{Name: "c.scalar", DType: "BF16", Shape: []uint64{}},
			{Name: "d.empty", DType: "U8", Shape: []uint64{0, 5}},
		}}
}

// TestCanonicalForm pins the canonical form byte for byte: the specification in cmd/stdiff/docs/identities.md.
func TestCanonicalForm(t *testing.T) {
	m, _ := model(t, sample().Build())
	want := "stdiff-structure/1\n" +
		"6:a.bias f32 [3] 12\n" +
		"8:b.weight f16 [4,3] 24\n" +
		"8:c.scalar bf16 [] 2\n" +
		"7:d.empty u8 [0,5] 0\n"
	if got := string(canon.Canonical(m)); got != want {
		t.Fatalf("canonical form:\n%s\nwant:\n%s", got, want)
	}
}

// TestIdentityProperties checks what must and must not change each ID.
func TestIdentityProperties(t *testing.T) {
	baseS, baseC := ids(t, sample().Build())
	same := map[string]stfile.File{}
	f := sample()
	f.Metadata = []stfile.KV{{Key: "other", Value: "edited"}}
	same["metadata edit"] = f
	f = sample()
	f.Metadata = nil
	f.NullMetadata = true
	same["metadata null"] = f
	f = sample()
	f.Tensors = []stfile.Tensor{f.Tensors[3], f.Tensors[1], f.Tensors[0], f.Tensors[2]}
	same["header order"] = f
	f = sample()
	f.DataOrder = []int{2, 0, 3, 1}
	same["data order"] = f
	f = sample()
	f.NoPad = true
	same["no padding"] = f
	f = sample()
	f.Indent = true
	same["pretty JSON"] = f
	for name, f := range same {
		s, c := ids(t, f.Build())
		if s != baseS || c != baseC {
			t.Errorf("%s changed an ID: %s %s", name, s, c)
		}
	}

	differ := map[string]func(*stfile.File){
		"rename": func(f *stfile.File) { f.Tensors[0].Name = "b.weights" },
		"dtype":  func(f *stfile.File) { f.Tensors[0].DType = "BF16" },
		"shape":  func(f *stfile.File) { f.Tensors[0].Shape = []uint64{3, 4} },
		"added tensor": func(f *stfile.File) {
			f.Tensors = append(f.Tensors, stfile.Tensor{Name: "e", DType: "U8", Shape: []uint64{1}})
		},
		"removed": func(f *stfile.File) { f.Tensors = f.Tensors[1:] },
	}
	for name, change := range differ {
		f := sample()
		change(&f)
		s, _ := ids(t, f.Build())
		if s == baseS {
			t.Errorf("%s did not change the structure ID", name)
		}
	}

	// One flipped data byte: same structure, different content.
	b := sample().Build()
	b[len(b)-20] ^= 1
	s, c := ids(t, b)
	if s != baseS || c == baseC {
		t.Errorf("flipped byte: structure %v (want same), content %v (want different)", s == baseS, c == baseC)
	}
	// Swapping the bytes of two same-sized tensors changes content too.
	f = sample()
	f.Tensors = append(f.Tensors, stfile.Tensor{Name: "x", DType: "U8", Shape: []uint64{2}, Data: []byte{1, 2}},
		stfile.Tensor{Name: "y", DType: "U8", Shape: []uint64{2}, Data: []byte{3, 4}})
	_, c1 := ids(t, f.Build())
	f.Tensors[4].Data, f.Tensors[5].Data = f.Tensors[5].Data, f.Tensors[4].Data
	_, c2 := ids(t, f.Build())
	if c1 == c2 {
		t.Error("swapping two tensors' bytes did not change the content ID")
	}
}

// TestDigestsAgree: the parallel per-tensor digests and the single-pass ones are the same, and each is
// the BLAKE3 of exactly that tensor's bytes.
func TestDigestsAgree(t *testing.T) {
	f := stfile.ManyTensors(300)
	f.Tensors = append(f.Tensors, stfile.Tensor{Name: "big", DType: "F32", Shape: []uint64{3 << 20}}) // spans chunks
	f.DataOrder = nil
	b := f.Build()
	m, src := model(t, b)
	par, err := TensorDigests(context.Background(), src, m, Options{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, one, err := FileHashes(context.Background(), src, m, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range par {
		if par[i] != one[i] {
			t.Fatalf("tensor %s: parallel and single-pass digests differ", m.Tensors[i].Name)
		}
	}
	last := m.Tensors[len(m.Tensors)-1]
	data := b[m.DataOffset()+int64(last.Begin) : m.DataOffset()+int64(last.End)]
	if got := toolSum(t, "b3sum", data); got != "" && got != hex.EncodeToString(par[len(par)-1][:]) {
		t.Fatalf("digest of %s is not the BLAKE3 of its bytes (b3sum says %s)", last.Name, got)
	}
}

// toolSum asks a checksum command (b3sum, sha256sum) for the hash of b ("" when it is not installed).
func toolSum(t *testing.T, tool string, b []byte) string {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		return ""
	}
	cmd := exec.Command(path, "-")
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(out))[0]
}

// TestEcosystemKnownAnswers checks every ecosystem hash against an independent computation: coreutils
// sha256sum and b3sum on the file, crypto/sha256 of the byte ranges, and CivitAI's own CRC32 example.
func TestEcosystemKnownAnswers(t *testing.T) {
	f := sample()
	f.Tensors = append(f.Tensors, stfile.Tensor{Name: "pad", DType: "U8", Shape: []uint64{0x120000}}) // past 0x110000
	b := f.Build()
	m, src := model(t, b)
	e, _, err := FileHashes(context.Background(), src, m, false, Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "f.safetensors")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sha256sum", path).Output(); err == nil {
		if want := strings.Fields(string(out))[0]; e.SHA256 != want {
			t.Errorf("SHA256 %s, sha256sum says %s", e.SHA256, want)
		}
	} else {
		t.Logf("sha256sum not available: %v", err)
	}
	if want := toolSum(t, "b3sum", b); want != "" && e.BLAKE3 != want {
		t.Errorf("BLAKE3 %s, b3sum says %s", e.BLAKE3, want)
	}
	whole := sha256.Sum256(b)
	if e.SHA256 != hex.EncodeToString(whole[:]) || e.AutoV2 != hex.EncodeToString(whole[:])[:10] {
		t.Errorf("SHA256/AutoV2 %s/%s", e.SHA256, e.AutoV2)
	}
	v3 := sha256.Sum256(b[m.DataOffset():])
	if string(e.AutoV3) != hex.EncodeToString(v3[:]) || e.AutoV3Short() != hex.EncodeToString(v3[:])[:12] {
		t.Errorf("AutoV3 %s, want sha256 of the bytes after the header", e.AutoV3)
	}
	v1 := sha256.Sum256(b[0x100000:0x110000])
	if string(e.AutoV1) != hex.EncodeToString(v1[:])[:8] {
		t.Errorf("AutoV1 %s", e.AutoV1)
	}

	hello := canon.SourceOf(strings.NewReader("hello world"), 11, "hello")
	e, _, err = FileHashes(context.Background(), hello, &canon.Model{}, false, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.CRC32 != "85114A0D" {
		t.Errorf("CRC32 of \"hello world\" is %s, CivitAI says 85114A0D", e.CRC32)
	}
}

func TestVerifyEmbedded(t *testing.T) {
	build := func(v3 string) (*canon.Model, Ecosystem) {
		f := sample()
		f.Metadata = append(f.Metadata, stfile.KV{Key: "sshs_model_hash", Value: v3}, stfile.KV{Key: "modelspec.hash_sha256", Value: "0x" + v3})
		b := f.Build()
		m, src := model(t, b)
		e, _, err := FileHashes(context.Background(), src, m, false, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return m, e
	}
	// The data section does not depend on the metadata, so a first build tells the right value.
	_, e := build(strings.Repeat("0", 64))
	m, e2 := build(string(e.AutoV3))
	fs := VerifyEmbedded(m, e2.AutoV3)
	if len(fs) != 2 || fs[0].Code != canon.CodeHashMatch || fs[1].Code != canon.CodeHashMatch {
		t.Fatalf("matching hashes: %+v", fs)
	}
	m, e2 = build("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
	fs = VerifyEmbedded(m, e2.AutoV3)
	if len(fs) != 2 || fs[0].Code != canon.CodeHashMismatch || !strings.Contains(fs[0].Message, "empty input") {
		t.Fatalf("empty-input hash: %+v", fs)
	}
}

// TestShrinkingFile: a source that loses bytes while it is hashed is an error, never an ID.
func TestShrinkingFile(t *testing.T) {
	b := sample().Build()
	path := filepath.Join(t.TempDir(), "f.safetensors")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := source.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	m, err := canon.Read(src, src.Size(), src.Name())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(len(b)-10)); err != nil {
		t.Fatal(err)
	}
	if _, err := TensorDigests(context.Background(), src, m, Options{}); err == nil {
		t.Fatal("digests of a file that shrank: no error")
	}
	if _, _, err := FileHashes(context.Background(), src, m, true, Options{}); err == nil {
		t.Fatal("ecosystem hashes of a file that shrank: no error")
	}
}

// FuzzParseManifest: a manifest is user input; what it accepts must format back to the same entry.
func FuzzParseManifest(f *testing.F) {
	f.Add("st1:abc  model.safetensors\n# comment\n\\sha256:00  a\\\\b\\nc\n")
	f.Fuzz(func(t *testing.T, text string) {
		entries, err := ParseManifest(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, e := range entries {
			again, err := ParseManifest(strings.NewReader(FormatLine(e.Kind, e.Value, e.Path)))
			if err != nil || len(again) != 1 || again[0].Path != e.Path || again[0].Kind != e.Kind || again[0].Value != e.Value {
				t.Fatalf("entry %+v does not survive formatting: %+v %v", e, again, err)
			}
		}
	})
}

// TestRecordedKnownAnswers pins hashes recorded from independent tools (b3sum 1.2, coreutils sha256sum,
// Python zlib.crc32), so the check holds where those tools are not installed. The 102,400-byte input is
// the BLAKE3 test-vector pattern (byte i is i mod 251).
func TestRecordedKnownAnswers(t *testing.T) {
	pattern := make([]byte, 102400)
	for i := range pattern {
		pattern[i] = byte(i % 251)
	}
	for _, c := range []struct {
		in                  []byte
		blake3, sha256, crc string
	}{
		{nil, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "00000000"},
		{[]byte("hello world"), "d74981efa70a0c880b8d8c1985d075dbcbf679b99a5f9914e5aaf96b831a9e24", "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9", "85114A0D"},
		{pattern, "bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085", "74588b7f0bcc354ac14d9cf199fa3a20c05f0c7293b9075b2f2e146e718de800", "13CEC15C"},
	} {
		e, _, err := FileHashes(context.Background(), canon.SourceOf(bytes.NewReader(c.in), int64(len(c.in)), "kat"), &canon.Model{}, false, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if e.BLAKE3 != c.blake3 || e.SHA256 != c.sha256 || e.CRC32 != c.crc || e.AutoV2 != c.sha256[:10] {
			t.Errorf("%d bytes: %+v", len(c.in), e)
		}
	}
	// A tensor's digest is the plain BLAKE3 of its bytes.
	f := stfile.File{Tensors: []stfile.Tensor{{Name: "t", DType: "U8", Shape: []uint64{102400}, Data: pattern}}}
	m, src := model(t, f.Build())
	d, err := TensorDigests(context.Background(), src, m, Options{})
	if err != nil || hex.EncodeToString(d[0][:]) != "bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085" {
		t.Errorf("tensor digest %x %v", d[0], err)
	}
}

// TestAutoV1Window: AutoV1 hashes file bytes 0x100000 to 0x110000 and exists only where the file has all
// of them; a shorter file has none, never the SHA256 of nothing (e3b0c442) or of a partial window.
func TestAutoV1Window(t *testing.T) {
	for _, size := range []int{100, 0x100000, 0x100000 + 1, AutoV1MinSize - 1, AutoV1MinSize, 0x130000} {
		b := fileOfSize(t, size)
		m, src := model(t, b)
		e, _, err := FileHashes(context.Background(), src, m, false, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if size < AutoV1MinSize {
			if e.AutoV1 != "" {
				t.Errorf("%#x-byte file: AutoV1 %s, want none (the window is incomplete)", size, e.AutoV1)
			}
			continue
		}
		v1 := sha256.Sum256(b[0x100000:0x110000])
		if string(e.AutoV1) != hex.EncodeToString(v1[:])[:8] {
			t.Errorf("%#x-byte file: AutoV1 %s, want %x", size, e.AutoV1, v1[:4])
		}
	}
	js, err := json.Marshal(Ecosystem{SHA256: "ab", AutoV3: "cd"})
	if err != nil || !strings.Contains(string(js), `"autov1":null`) || !strings.Contains(string(js), `"autov3":"cd"`) {
		t.Errorf("JSON of a missing AutoV1: %s %v", js, err)
	}
}

// fileOfSize builds a valid file of exactly size bytes (at least about 100): one U8 tensor fills it.
func fileOfSize(t *testing.T, size int) []byte {
	t.Helper()
	f := stfile.File{Seed: 1, Tensors: []stfile.Tensor{{Name: "t", DType: "U8", Shape: []uint64{0}}}}
	for range 4 { // the header grows with the digits of the shape: a few rounds settle it
		b := f.Build()
		if len(b) == size {
			return b
		}
		f.Tensors[0].Shape[0] = uint64(int(f.Tensors[0].Shape[0]) + size - len(b))
	}
	t.Fatalf("cannot build a file of %d bytes", size)
	return nil
}

// TestWholeFileHashesWithoutHeader: a file whose header cannot be read (a Git LFS pointer, a download cut
// off in its header, a file too short for the length) still has its whole-file hashes, the ones a user
// checks a download with; AutoV3 needs the header length and is absent where the length is unusable.
func TestWholeFileHashesWithoutHeader(t *testing.T) {
	lfs := []byte("version https://git-lfs.github.com/spec/v1\n" +
		"oid sha256:4b4c2b3e9a1d2c1f0e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f\nsize 4831838208\n")
	valid := sample().Build()
	for _, c := range []struct {
		name   string
		b      []byte
		sha256 string // recorded with coreutils sha256sum
		autoV3 bool
	}{
		{"lfs pointer", lfs, "25300ff95d1a43e35b23e2a9bbf1504a86e42b1def29cc639100de1f9162e4a2", false},
		{"empty", nil, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", false},
		{"4 bytes", []byte("\x10\x00\x00\x00"), "097328e8c957de2428283954f6a1ee8ff7ad7def12e100a600178407f5decf24", false},
		{"cut in the header", valid[:40], "", false},
		{"bad JSON, length fine", append([]byte("\x04\x00\x00\x00\x00\x00\x00\x00{oops"), 1, 2, 3), "", true},
	} {
		src := canon.SourceOf(bytes.NewReader(c.b), int64(len(c.b)), c.name)
		m, err := canon.Read(src, src.Size(), src.Name())
		if err != nil {
			t.Fatal(err)
		}
		if m.HeaderParsed {
			t.Fatalf("%s: header parsed", c.name)
		}
		e, d, err := FileHashes(context.Background(), src, m, true, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		whole := sha256.Sum256(c.b)
		want := hex.EncodeToString(whole[:])
		if got := toolSum(t, "sha256sum", c.b); got != "" && got != want {
			t.Fatalf("%s: crypto/sha256 and sha256sum disagree", c.name)
		}
		if c.sha256 != "" && c.sha256 != want {
			t.Fatalf("%s: recorded SHA256 %s, computed %s", c.name, c.sha256, want)
		}
		if e.SHA256 != want || e.AutoV2 != want[:10] || e.BLAKE3 == "" || e.CRC32 == "" {
			t.Errorf("%s: whole-file hashes %+v, want SHA256 %s", c.name, e, want)
		}
		if want := toolSum(t, "b3sum", c.b); want != "" && e.BLAKE3 != want {
			t.Errorf("%s: BLAKE3 %s, b3sum says %s", c.name, e.BLAKE3, want)
		}
		if e.AutoV1 != "" || len(d) != 0 {
			t.Errorf("%s: AutoV1 %q, %d digests", c.name, e.AutoV1, len(d))
		}
		if c.autoV3 {
			v3 := sha256.Sum256(c.b[8+m.HeaderLen:])
			if string(e.AutoV3) != hex.EncodeToString(v3[:]) {
				t.Errorf("%s: AutoV3 %s, want the SHA256 of the bytes after the header", c.name, e.AutoV3)
			}
		} else if e.AutoV3 != "" {
			t.Errorf("%s: AutoV3 %s, want none: the header length is unusable", c.name, e.AutoV3)
		}
	}
}

// TestKindNames: every kind a manifest may hold has a name for messages.
func TestKindNames(t *testing.T) {
	for _, k := range Kinds {
		if KindName(k) == "" {
			t.Errorf("kind %s has no name", k)
		}
	}
	if KindName("st1") != "structure ID" || KindName("md5") != "" {
		t.Error("KindName")
	}
}

// TestGGUFHasNoAutoV3: AutoV3 hashes what follows a safetensors header; a GGUF file has none, so it has
// no AutoV3, while its whole-file hashes are those of its bytes.
func TestGGUFHasNoAutoV3(t *testing.T) {
	b := ggufw.Synthetic(4, 16).Build()
	src := canon.SourceOf(bytes.NewReader(b), int64(len(b)), "m.gguf")
	m, err := canon.Read(src, src.Size(), src.Name())
	if err != nil || m.Format != canon.FormatGGUF || !m.Valid() {
		t.Fatalf("read: %v, format %q, verdict %v", err, m.Format, m.RefErr)
	}
	e, d, err := FileHashes(context.Background(), src, m, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	whole := sha256.Sum256(b)
	if e.SHA256 != hex.EncodeToString(whole[:]) || e.AutoV3 != "" || len(d) != len(m.Tensors) {
		t.Errorf("SHA256 %s, AutoV3 %q, %d digests of %d tensors", e.SHA256, e.AutoV3, len(d), len(m.Tensors))
	}
}
