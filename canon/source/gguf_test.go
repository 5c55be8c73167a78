package source

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/zeebo/blake3"
)

// ggufWhole is a small model in one GGUF file: metadata and five tensors of several types.
func ggufWhole() ggufw.File {
	return ggufw.File{
		KVs: []ggufw.KV{
			{Key: "general.architecture", Val: ggufw.Str("llama")},
			{Key: "llama.block_count", Val: ggufw.U32(1)},
			{Key: "tokenizer.ggml.tokens", Val: ggufw.Strs("a", "b", "c")},
		},
		Tensors: []ggufw.Tensor{
			{Name: "token_embd.weight", Type: gguf.TypeQ4_K, Dims: []int64{256, 4}},
			{Name: "blk.0.attn_q.weight", Type: gguf.TypeQ8_0, Dims: []int64{64, 64}},
			{Name: "blk.0.attn_norm.weight", Type: gguf.TypeF32, Dims: []int64{64}},
			{Name: "blk.0.ffn_up.weight", Type: gguf.TypeF16, Dims: []int64{64, 8}},
			{Name: "output.weight", Type: gguf.TypeQ6_K, Dims: []int64{256, 2}},
		},
	}
}

// ggufSplit splits f as llama.cpp's gguf-split does: the first file has the metadata, every file the
// split.* keys and its part of the tensors (parts gives their indices per file).
func ggufSplit(f ggufw.File, parts ...[]int) []ggufw.File {
	out := make([]ggufw.File, len(parts))
	for k, part := range parts {
		if k == 0 {
			out[k].KVs = slices.Clone(f.KVs)
		}
		out[k].KVs = append(out[k].KVs,
			ggufw.KV{Key: gguf.SplitNoKey, Val: ggufw.U16(uint16(k))},
			ggufw.KV{Key: gguf.SplitCountKey, Val: ggufw.U16(uint16(len(parts)))},
			ggufw.KV{Key: gguf.SplitTensorsKey, Val: ggufw.I32(int32(len(f.Tensors)))})
		for _, i := range part {
			out[k].Tensors = append(out[k].Tensors, f.Tensors[i])
		}
	}
	return out
}

// setKV replaces the value of key in f, or appends the pair; a nil v removes it.
func setKV(f *ggufw.File, key string, v ggufw.Val) {
	for i := range f.KVs {
		if f.KVs[i].Key == key {
			if v == nil {
				f.KVs = slices.Delete(f.KVs, i, i+1)
			} else {
				f.KVs[i].Val = v
			}
			return
		}
	}
	if v != nil {
		f.KVs = append(f.KVs, ggufw.KV{Key: key, Val: v})
	}
}

// writeSplit writes the files of a split model into dir under llama.cpp's names, and returns the names.
func writeSplit(t *testing.T, dir string, files []ggufw.File) []string {
	t.Helper()
	names := GGUFSplitNames("m", len(files))
	for k, f := range files {
		if err := os.WriteFile(filepath.Join(dir, names[k]), f.Build(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// contentForm is the canonical content form of a model, each tensor's bytes read from src.
func contentForm(t *testing.T, m *canon.Model, src io.ReaderAt) string {
	t.Helper()
	digests := make([][32]byte, len(m.Tensors))
	for i := range m.Tensors {
		tn := &m.Tensors[i]
		b := make([]byte, tn.Len())
		if _, err := src.ReadAt(b, m.DataOffset()+int64(tn.Begin)); err != nil {
			t.Fatal(err)
		}
		digests[i] = blake3.Sum256(b)
	}
	return string(canon.CanonicalContent(m, digests))
}

// TestGGUFSplitSet: any file of a split GGUF model opens the whole model, whose metadata, structure and
// content are those of the same model in one file.
func TestGGUFSplitSet(t *testing.T) {
	whole := ggufWhole()
	wb := whole.Build()
	wm := canon.ReadBytes("whole.gguf", wb)
	wantStructure, wantContent := string(canon.Canonical(wm)), contentForm(t, wm, readerOf(wb))

	dir := t.TempDir()
	names := writeSplit(t, dir, ggufSplit(whole, []int{0, 1}, []int{2, 3}, []int{4}))
	for _, name := range names {
		o, err := Open(t.Context(), filepath.Join(dir, name), Options{})
		if err != nil {
			t.Fatal(err)
		}
		m := o.Model
		if m.Format != canon.FormatGGUF || !m.Valid() || m.HasErrors() || len(m.Tensors) != 5 || len(m.Shards) != 3 || m.Detail.(*gguf.File) == nil || m.Detail.(*gguf.File).KV("general.architecture") == nil {
			t.Errorf("%s: format %q, verdict %v, findings %+v, %d tensors, %d files", name, m.Format, m.RefErr, m.Findings, len(m.Tensors), len(m.Shards))
		}
		if !reflect.DeepEqual(metaOf(m), metaOf(wm)) {
			t.Errorf("%s: metadata %v, want %v", name, metaOf(m), metaOf(wm))
		}
		if got := string(canon.Canonical(m)); got != wantStructure {
			t.Errorf("%s: structure\n%s\nwant\n%s", name, got, wantStructure)
		}
		if got := contentForm(t, m, o.Source); got != wantContent {
			t.Errorf("%s: content\n%s\nwant\n%s", name, got, wantContent)
		}
		o.Close()
	}
}

func readerOf(b []byte) io.ReaderAt { return strings.NewReader(string(b)) }

// metaOf is a model's metadata as key → type and value.
func metaOf(m *canon.Model) map[string]string {
	out := map[string]string{}
	for _, e := range m.Metadata {
		out[e.Key] = e.Type + " " + e.Value
	}
	return out
}

// TestGGUFSplitDefects: a split model llama.cpp's loader rejects has its verdict (rule "split", or the
// rule of the file that fails) and says why; what the loader does not read is a warning.
func TestGGUFSplitDefects(t *testing.T) {
	split := func(mod func(fs []ggufw.File)) []ggufw.File {
		fs := ggufSplit(ggufWhole(), []int{0, 1}, []int{2, 3}, []int{4})
		mod(fs)
		return fs
	}
	for _, c := range []struct {
		name    string
		files   []ggufw.File
		code    string
		sev     finding.Severity
		kind    finding.RefKind // "" when the set stays valid
		message string
	}{
		{"split.no wrong", split(func(fs []ggufw.File) { setKV(&fs[1], gguf.SplitNoKey, ggufw.U16(2)) }),
			canon.CodeSplitNumber, finding.SevError, "split", "split.no is 2, but the file is number 1"},
		{"split.no uint32", split(func(fs []ggufw.File) { setKV(&fs[2], gguf.SplitNoKey, ggufw.U32(2)) }),
			canon.CodeSplitNumber, finding.SevError, "split", "split.no is a uint32, not the uint16"},
		{"split.no missing", split(func(fs []ggufw.File) { setKV(&fs[0], gguf.SplitNoKey, nil) }),
			canon.CodeSplitNumber, finding.SevError, "split", "has no split.no"},
		{"split.count wrong", split(func(fs []ggufw.File) { setKV(&fs[0], gguf.SplitCountKey, ggufw.U16(4)) }),
			canon.CodeSplitCount, finding.SevError, "split", "split.count is 4, but the set has 3 files"},
		{"split.count wrong later", split(func(fs []ggufw.File) { setKV(&fs[2], gguf.SplitCountKey, ggufw.U16(4)) }),
			canon.CodeSplitCount, finding.SevWarning, "", "reads the first file's only"},
		{"split.tensors.count wrong", split(func(fs []ggufw.File) { setKV(&fs[0], gguf.SplitTensorsKey, ggufw.I32(6)) }),
			canon.CodeSplitTensorCount, finding.SevError, "split", "split.tensors.count is 6, but the files hold 5 tensors"},
		{"split.tensors.count missing", split(func(fs []ggufw.File) { setKV(&fs[0], gguf.SplitTensorsKey, nil) }),
			canon.CodeSplitTensorCount, finding.SevError, "split", "has no split.tensors.count"},
		{"tensor in two files", split(func(fs []ggufw.File) { fs[2].Tensors = append(fs[2].Tensors, ggufWhole().Tensors[0]) }),
			canon.CodeTensorInTwoShards, finding.SevError, finding.RefKind(gguf.RuleDuplicateTensor), "is in m-00001-of-00003.gguf and in m-00003-of-00003.gguf"},
		{"a file truncated", split(func(fs []ggufw.File) { fs[1].NoLastPad, fs[1].Tensors[1].NoData = true, true }),
			gguf.CodeTruncatedData, finding.SevError, finding.RefKind(gguf.RuleTensorBounds), "m-00002-of-00003.gguf: tensor \"blk.0.ffn_up.weight\""},
	} {
		dir := t.TempDir()
		names := writeSplit(t, dir, c.files)
		o, err := Open(t.Context(), filepath.Join(dir, names[0]), Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		m := o.Model
		o.Close()
		if c.kind == "" && !m.Valid() || c.kind != "" && (m.Valid() || m.RefErr.Kind != c.kind) {
			t.Errorf("%s: verdict %v, want %q", c.name, m.RefErr, c.kind)
		}
		found := false
		for _, f := range m.Findings {
			found = found || f.Code == c.code && f.Severity == c.sev && strings.Contains(f.Message, c.message) && (f.Severity != finding.SevError || f.RefKind == c.kind)
		}
		if !found {
			t.Errorf("%s: no %s %s saying %q: %+v", c.name, c.sev, c.code, c.message, m.Findings)
		}
	}
}

// TestGGUFSplitIncomplete: a file of a split model whose other files are missing is the model known in
// part, which llama.cpp's loader rejects: the files that are there, read, and each missing one a shard
// with Missing set and a missing-split error naming it. A file that says it is split but is not named
// like one is read as one file, with a note saying so.
func TestGGUFSplitIncomplete(t *testing.T) {
	dir := t.TempDir()
	files := ggufSplit(ggufWhole(), []int{0, 1}, []int{2, 3}, []int{4})
	names := writeSplit(t, dir, files)
	if err := os.Remove(filepath.Join(dir, names[1])); err != nil {
		t.Fatal(err)
	}
	for _, named := range []string{names[0], names[2]} {
		o, err := Open(t.Context(), filepath.Join(dir, named), Options{})
		if err != nil {
			t.Fatalf("%s: %v", named, err)
		}
		m := o.Model
		o.Close()
		var missing []finding.Finding
		for _, f := range m.Findings {
			if f.Code == canon.CodeMissingSplit {
				missing = append(missing, f)
			}
		}
		if len(m.Tensors) != 3 || !slices.Equal(m.MissingShards(), names[1:2]) || len(missing) != 1 ||
			missing[0].Severity != finding.SevError || missing[0].RefKind != finding.RefKind(gguf.RuleSplit) || !strings.HasPrefix(missing[0].Message, names[1]+" is missing") {
			t.Errorf("%s: %d tensors, missing %q, findings %+v", named, len(m.Tensors), m.MissingShards(), m.Findings)
		}
		if m.Valid() || m.RefErr.Kind != finding.RefKind(gguf.RuleSplit) || !m.HasErrors() {
			t.Errorf("%s: verdict %+v", named, m.RefErr)
		}
		for _, f := range m.Findings {
			if f.Code == canon.CodeSplitTensorCount {
				t.Errorf("%s: the missing file's tensors are counted as missing: %+v", named, f)
			}
		}
	}
	renamed := filepath.Join(dir, "m.gguf")
	if err := os.WriteFile(renamed, files[0].Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := Open(t.Context(), renamed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := o.Model
	o.Close()
	last := m.Findings[len(m.Findings)-1]
	if len(m.Tensors) != 2 || m.Shards != nil || last.Code != canon.CodeIncompleteSet || last.Severity != finding.SevInfo {
		t.Errorf("renamed: %d tensors, findings %+v", len(m.Tensors), m.Findings)
	}
	// A whole model in one file is no split file.
	o, err = Open(t.Context(), writeOne(t, ggufWhole()), Options{})
	if err != nil || len(o.Model.Findings) != 0 {
		t.Errorf("whole: %v %+v", err, o.Model.Findings)
	}
	o.Close()
}

func writeOne(t *testing.T, f ggufw.File) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "whole.gguf")
	if err := os.WriteFile(p, f.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRemoteGGUFSplit: over http, any file of a split model opens the whole model too.
func TestRemoteGGUFSplit(t *testing.T) {
	whole := ggufWhole()
	wm := canon.ReadBytes("whole.gguf", whole.Build())
	s := &server{files: map[string][]byte{}, ranges: true}
	files := ggufSplit(whole, []int{0}, []int{1, 2}, []int{3, 4})
	for k, name := range GGUFSplitNames("m", 3) {
		s.files["/org/"+name] = files[k].Build()
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	o, err := Open(t.Context(), ts.URL+"/org/m-00002-of-00003.gguf", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	m := o.Model
	if !m.Valid() || m.HasErrors() || len(m.Shards) != 3 || !o.Remote || string(canon.Canonical(m)) != string(canon.Canonical(wm)) {
		t.Fatalf("verdict %v, findings %+v, %d files", m.RefErr, m.Findings, len(m.Shards))
	}
	if contentForm(t, m, o.Source) != contentForm(t, wm, readerOf(whole.Build())) {
		t.Error("content differs from the whole file's")
	}
}

// TestRemoteGGUFHeaderBytes: reading a GGUF header over http costs the header (here a 200,000-token
// tokenizer, about 5 MiB) and at most 1 MiB more (the reader's last buffer), never the tensor data
// (64 MiB), with or without ranges; a small header costs the first request alone.
func TestRemoteGGUFHeaderBytes(t *testing.T) {
	small := ggufw.Synthetic(9, 100)
	large := ggufw.Synthetic(90, 200_000)
	large.Tensors = append(large.Tensors, ggufw.Tensor{Name: "big", Type: gguf.TypeF32, Dims: []int64{16 << 20}, Data: make([]byte, 64<<20)})
	for _, c := range []struct {
		name string
		file ggufw.File
		reqs int64 // 0: not checked
	}{{"small", small, 1}, {"tokenizer", large, 0}} {
		b := c.file.Build()
		want := canon.ReadBytes("m.gguf", b)
		header := want.DataOffset()
		for _, ranges := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s,ranges=%v", c.name, ranges), func(t *testing.T) {
				s := &server{files: map[string][]byte{"/m.gguf": b}, ranges: ranges}
				ts := httptest.NewServer(s)
				defer ts.Close()
				o, err := Open(t.Context(), ts.URL+"/m.gguf", Options{})
				if err != nil {
					t.Fatal(err)
				}
				o.Close()
				if m := o.Model; !m.Valid() || len(m.Tensors) != len(want.Tensors) || m.DataOffset() != header {
					t.Fatalf("verdict %v, %d tensors, data at %d", m.RefErr, len(m.Tensors), m.DataOffset())
				}
				received := o.Source.(*HTTPSource).Fetched.Load()
				time.Sleep(100 * time.Millisecond) // let the server notice the hang-up
				sent := s.sent.Load()
				t.Logf("header %d bytes: received %d (%d more), the server sent %d, in %d requests", header, received, received-header, sent, s.reqs.Load())
				if received > max(header+1<<20, 256<<10) {
					t.Errorf("received %d bytes for a %d-byte header", received, header)
				}
				if c.reqs > 0 && s.reqs.Load() != c.reqs {
					t.Errorf("%d requests, want %d", s.reqs.Load(), c.reqs)
				}
				// Without ranges the server writes ahead into the connection's buffers until it sees
				// the hang-up: far less than the file, still.
				if len(b) > 32<<20 && sent > int64(len(b))/4 {
					t.Errorf("the server sent %d of %d bytes for a %d-byte header", sent, len(b), header)
				}
			})
		}
	}
}

// TestWalkGGUF: a walk finds GGUF files beside safetensors files.
func TestWalkGGUF(t *testing.T) {
	dir := t.TempDir()
	// ollama's blobs have no extension: a GGUF magic makes one a model; its other blobs (a licence, a
	// template, JSON), other extensionless files and a .bin file with the magic are left out.
	files := map[string]string{"a.gguf": "x", "b.safetensors": "x", "c.GGUF": "x", "d.bin": "GGUF",
		"sha256-0a1b": "GGUF\x03\x00\x00\x00", "sha256-2c3d": "MIT License", "sha256-4e5f": "{}", "short": "GG", "empty": ""}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, errs := Walk(context.Background(), []string{dir}, WalkOptions{})
	want := []string{filepath.Join(dir, "a.gguf"), filepath.Join(dir, "b.safetensors"), filepath.Join(dir, "c.GGUF"), filepath.Join(dir, "sha256-0a1b")}
	if !reflect.DeepEqual(got, want) || len(errs) != 0 {
		t.Errorf("walk: %q %v", got, errs)
	}
}
