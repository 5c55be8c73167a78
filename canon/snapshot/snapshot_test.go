package snapshot_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/snapshot"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/values"
	"github.com/stdiff/stdiff/hash"
)

// model is a small model with metadata, tensors out of name order, and a NaN.
func model(t testing.TB) (*canon.Model, []byte) {
	t.Helper()
	nan := []byte{0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0x3f}
	f := stfile.File{Metadata: []stfile.KV{{Key: "b", Value: "2"}, {Key: "a", Value: "1"}},
		Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{2}, Data: nan}, {Name: "b", DType: "BF16", Shape: []uint64{3, 4}}, {Name: "e", DType: "F16", Shape: []uint64{0}}}}
	b := f.Build()
	m, err := canon.Read(bytes.NewReader(b), int64(len(b)), "m.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	return m, b
}

// snap is the snapshot of model, made as hash.Snapshot makes it.
func snap(t testing.TB) (*snapshot.Snapshot, *canon.Model) {
	t.Helper()
	m, b := model(t)
	src := canon.SourceOf(bytes.NewReader(b), int64(len(b)), m.Name)
	d, st, err := hash.DigestsAndStats(context.Background(), src, m, hash.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return snapshot.New(m, "m.safetensors", d, st), m
}

func write(t testing.TB, s *snapshot.Snapshot) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := snapshot.Write(&buf, s); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	s, m := snap(t)
	b := write(t, s)
	if !snapshot.Sniff(b) {
		t.Fatal("Sniff does not know a snapshot")
	}
	r, err := snapshot.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if again := write(t, r); !bytes.Equal(again, b) {
		t.Fatalf("read and written again, the bytes differ:\n%s\n%s", b, again)
	}
	if r.StructureID != canon.StructureID(m) {
		t.Errorf("structure ID %s, hash says %s", r.StructureID, canon.StructureID(m))
	}
	got := r.Model("x.snap")
	if canon.StructureID(got) != canon.StructureID(m) || len(got.Metadata) != 2 || got.Metadata[0].Key != "a" || !got.Valid() {
		t.Errorf("the model of the snapshot is not the model: %+v", got)
	}
	if r.ContentID != canon.ContentID(got, r.Digests()) {
		t.Errorf("content ID %s, hash says %s", r.ContentID, canon.ContentID(got, r.Digests()))
	}
	w := r.Tensors[2] // tensors in name order: b, e, w
	if w.Name != "w" || w.Values == nil || w.Values.NaN != 1 || w.Values.Count != 2 || w.Values.Max != 1 {
		t.Errorf("w's summary: %+v", w.Values)
	}
	if e := r.Tensors[1]; e.Values == nil || !math.IsNaN(e.Values.Mean) || e.Values.Count != 0 {
		t.Errorf("an empty tensor's summary: %+v", e.Values)
	}
	// the lines: the model, then one per metadata entry and tensor
	if lines := strings.Count(string(b), "\n"); lines != 1+2+1+3+1 {
		t.Errorf("%d lines:\n%s", lines, b)
	}
}

// TestStatsAsSummarizeAll: the summaries are check --values's numbers, to the bit, also for a
// tensor of several chunks.
func TestStatsAsSummarizeAll(t *testing.T) {
	f := stfile.File{Tensors: []stfile.Tensor{{Name: "big", DType: "F32", Shape: []uint64{values.ChunkElements*2 + 7}}, {Name: "f6", DType: "F6_E2M3", Shape: []uint64{4 * 1000}}}}
	b := f.Build()
	m, err := canon.Read(bytes.NewReader(b), int64(len(b)), "m")
	if err != nil {
		t.Fatal(err)
	}
	src := canon.SourceOf(bytes.NewReader(b), int64(len(b)), "m")
	_, stats, err := hash.DigestsAndStats(context.Background(), src, m, hash.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var ts []values.Tensor
	for _, tt := range m.Tensors {
		ts = append(ts, values.Tensor{DType: tt.DType, R: src, Off: m.DataOffset() + int64(tt.Begin), Len: int64(tt.Len())})
	}
	err = values.SummarizeAll(context.Background(), ts, values.Options{}, func(i int, s values.Stats) bool {
		if got := *stats[i]; got != s && !(math.IsNaN(got.Mean) && math.IsNaN(s.Mean)) {
			t.Errorf("%s: %+v, SummarizeAll %+v", m.Tensors[i].Name, got, s)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestInfiniteSummaryReadsBack: a norm that overflowed (+Inf, written as null, read as NaN) does not
// make the snapshot look edited.
func TestInfiniteSummaryReadsBack(t *testing.T) {
	m, _ := model(t)
	stats := make([]*values.Stats, len(m.Tensors))
	stats[0] = &values.Stats{Count: 2, Min: -1, Max: math.Inf(1), Mean: math.NaN(), Std: math.NaN(), Inf: 1, L2: math.Inf(1)}
	s := snapshot.New(m, "m", make([][32]byte, len(m.Tensors)), stats)
	if _, err := snapshot.Read(bytes.NewReader(write(t, s))); err != nil {
		t.Fatal(err)
	}
}

func TestTamperRefused(t *testing.T) {
	s, _ := snap(t)
	b := string(write(t, s))
	for _, c := range []struct{ name, from, to, what string }{
		{"shape", `"shape":[3,4]`, `"shape":[4,3]`, "structure ID"},
		{"digest", `"blake3":"` + s.Tensors[0].BLAKE3[:4], `"blake3":"0000`, "content ID"},
		{"metadata", `"value":"2"`, `"value":"3"`, "digest"},
		{"summary", `"nan":1`, `"nan":0`, "digest"},
		{"verdict", `"verdict":{"valid":true}`, `"verdict":{"valid":false,"kind":"InvalidOffset"}`, "digest"},
	} {
		t.Run(c.name, func(t *testing.T) {
			edited := strings.Replace(b, c.from, c.to, 1)
			if edited == b {
				t.Fatalf("%q not in the snapshot", c.from)
			}
			_, err := snapshot.Read(strings.NewReader(edited))
			var me *snapshot.MismatchError
			if !errors.As(err, &me) || me.What != c.what {
				t.Fatalf("err = %v, want a mismatch of the %s", err, c.what)
			}
		})
	}
}

func TestReadRefuses(t *testing.T) {
	s, _ := snap(t)
	b := string(write(t, s))
	for _, c := range []struct {
		name, text string
		want       error
	}{
		{"other version", strings.Replace(b, snapshot.Schema, "stdiff.snapshot/v2", 1), &snapshot.VersionError{}},
		{"not a snapshot", `{"schema":"stdiff.hash/v1"}`, snapshot.ErrNotSnapshot},
		{"not JSON", `{"schema":`, snapshot.ErrNotSnapshot},
		{"unknown field", strings.Replace(b, `"size":`, `"extra":1,"size":`, 1), snapshot.ErrInvalid},
		{"unknown field in a finding", strings.Replace(b, `"findings":[]`, `"findings":[{"code":"c","severity":"info","offset":null,"message":"m","extra":1}]`, 1), snapshot.ErrInvalid},
		{"trailing", b + "{}", snapshot.ErrInvalid},
		{"trailing brace", b + "}", snapshot.ErrInvalid},
		{"reformatted, trailing brace", strings.ReplaceAll(b, ",\n", ", ") + "}", snapshot.ErrInvalid},
		{"unsorted", strings.Replace(strings.Replace(b, `"name":"b"`, `"name":"z"`, 1), `"name":"w"`, `"name":"a"`, 1), snapshot.ErrInvalid},
		{"bad digest", strings.Replace(b, `"blake3":"`, `"blake3":"G`, 1), snapshot.ErrInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := snapshot.Read(strings.NewReader(c.text))
			var ve *snapshot.VersionError
			switch want := c.want.(type) {
			case *snapshot.VersionError:
				if !errors.As(err, &ve) || ve.Schema != "stdiff.snapshot/v2" || !strings.Contains(err.Error(), snapshot.Schema) {
					t.Fatalf("err = %v", err)
				}
			default:
				if !errors.Is(err, want) {
					t.Fatalf("err = %v, want %v", err, want)
				}
			}
		})
	}
}

func TestSniff(t *testing.T) {
	for s, want := range map[string]bool{
		`{"schema":"stdiff.snapshot/v1"}`:          true,
		" {\n \"schema\" : \"stdiff.snapshot/v9\"": true,
		`{"schema":"stdiff.hash/v1"}`:              false,
		`{"a":1,"schema":"stdiff.snapshot/v1"}`:    false,
		"\x08\x00\x00\x00\x00\x00\x00\x00{}":       false,
	} {
		if snapshot.Sniff([]byte(s)) != want {
			t.Errorf("Sniff(%q) != %v", s, want)
		}
	}
}

// TestOpen: source.Open opens a snapshot as the model it stands for only when asked, and a JSON
// file that is not a snapshot as before.
func TestOpen(t *testing.T) {
	s, m := snap(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "m.snap")
	if err := snapshot.WriteFile(context.Background(), path, s); err != nil {
		t.Fatal(err)
	}
	o, err := source.Open(context.Background(), path, source.Options{Snapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	if o.Snapshot == nil || o.Model.Name != path || canon.StructureID(o.Model) != canon.StructureID(m) {
		t.Fatalf("opened %+v", o)
	}
	if o, err := source.Open(context.Background(), path, source.Options{}); err != nil || o.Snapshot != nil || o.Model.Valid() {
		t.Fatalf("a snapshot opened without Options.Snapshots: %v", err)
	}
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"schema":"x"}`), 0o644)
	o1, err1 := source.Open(context.Background(), other, source.Options{Snapshots: true})
	o2, err2 := source.Open(context.Background(), other, source.Options{})
	if err1 != nil || err2 != nil || o1.Snapshot != nil || o1.Model.RefErr.Error() != o2.Model.RefErr.Error() {
		t.Fatalf("a JSON file: %v, without snapshots %v", err1, err2)
	}
	os.WriteFile(path, []byte(strings.Replace(string(write(t, s)), `"value":"1"`, `"value":"9"`, 1)), 0o644)
	_, err = source.Open(context.Background(), path, source.Options{Snapshots: true})
	var re *canon.ReadError
	if !errors.As(err, &re) || re.Name != path || !strings.Contains(re.Hint, "stdiff snapshot") {
		t.Fatalf("a tampered snapshot: %v", err)
	}
}

// TestWriteFile: written whole, never over the model's own file, nothing left when ctx is done.
func TestWriteFile(t *testing.T) {
	s, _ := snap(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "m.safetensors")
	os.WriteFile(model, []byte("model"), 0o644)
	if err := snapshot.WriteFile(context.Background(), model, s, model); err == nil {
		t.Fatal("wrote over the model")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(dir, "m.snap")
	if err := snapshot.WriteFile(ctx, out, s, model); err == nil {
		t.Fatal("written after ctx was done")
	}
	if b, _ := os.ReadFile(model); string(b) != "model" {
		t.Fatal("the model changed")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
	if err := snapshot.WriteFile(context.Background(), out, s, model); err != nil {
		t.Fatal(err)
	}
	if got, err := snapshot.ReadFile(out); err != nil || got.ContentID != s.ContentID {
		b, _ := os.ReadFile(out)
		t.Fatalf("read back: %v\n%q", err, b)
	}
}

func TestRel(t *testing.T) {
	for _, c := range [][3]string{
		{"model", "model.snap", "model"},
		{"a/model.safetensors", "a/b/x.snap", "../model.safetensors"},
		{"hf://org/repo", "x.snap", "hf://org/repo"},
		{"./model", "", "./model"},
	} {
		if got := snapshot.Rel(c[0], c[1]); got != c[2] {
			t.Errorf("Rel(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// TestFindingOffsets: a finding about the whole file has the offset null, as in every other report,
// and reads back as -1; a snapshot written before, with -1 there, still reads, as the same snapshot
// (its digest unchanged); any other negative offset is refused.
func TestFindingOffsets(t *testing.T) {
	s, _ := snap(t)
	s.Findings = []finding.Finding{{Code: "incomplete-shard-set", Severity: finding.SevInfo, Offset: -1, Message: "whole"},
		{Code: "nul-padding", Severity: finding.SevWarning, Offset: 8, Message: "at 8"}}
	s.Seal()
	b := write(t, s)
	if !bytes.Contains(b, []byte(`"offset":null,"message":"whole"`)) || !bytes.Contains(b, []byte(`"offset":8,`)) || bytes.Contains(b, []byte(`"offset":-1`)) {
		t.Fatalf("written: %s", b)
	}
	old := bytes.Replace(b, []byte(`"offset":null`), []byte(`"offset":-1`), 1)
	for name, b := range map[string][]byte{"written": b, "written before": old} {
		r, err := snapshot.Read(bytes.NewReader(b))
		if err != nil || r.Digest != s.Digest || r.Findings[0].Offset != -1 || r.Findings[1].Offset != 8 {
			t.Errorf("%s: %v %+v", name, err, r)
		}
	}
	s.Findings[0].Offset = -2
	s.Seal()
	forged := bytes.Replace(write(t, s), []byte(`"offset":null`), []byte(`"offset":-2`), 1)
	if _, err := snapshot.Read(bytes.NewReader(forged)); !errors.Is(err, snapshot.ErrInvalid) {
		t.Errorf("offset -2: %v", err)
	}
}

// TestSealedBeforeStillReads: snapshots sealed by earlier versions of stdiff, kept as they were written
// (testdata: a finding about the whole file with the offset null, as written from a2f41f0 on, and -1,
// as written before), still read, their digest unchanged; written again, they are the file of today.
func TestSealedBeforeStillReads(t *testing.T) {
	now, err := os.ReadFile(filepath.Join("testdata", "sealed-offset-null.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sealed-offset-null.snapshot.json", "sealed-offset-minus-one.snapshot.json"} {
		t.Run(name, func(t *testing.T) {
			s, err := snapshot.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Findings) != 2 || s.Findings[0].Offset != -1 || s.Findings[1].Offset != 8 || !s.Findings[1].Fixable {
				t.Errorf("findings %+v", s.Findings)
			}
			if b := write(t, s); !bytes.Equal(b, now) {
				t.Errorf("written again:\n%s\nwant\n%s", b, now)
			}
		})
	}
}

// TestPickleFindingsReadBack: a PyTorch checkpoint's findings name a pickle's global and the archive
// entry they are about; the snapshot keeps both, and reads back with its digest.
func TestPickleFindingsReadBack(t *testing.T) {
	s, _ := snap(t)
	s.Findings = []finding.Finding{{Code: "pickle-unsafe-global", Severity: finding.SevError, Offset: 40, Message: "names os.system", Global: "os.system", Entry: "m/extra.pkl"},
		{Code: "non-contiguous-tensor", Severity: finding.SevInfo, Offset: -1, Message: "w has strides [1 2]", Entry: "m/data.pkl"}}
	s.Seal()
	b := write(t, s)
	r, err := snapshot.Read(bytes.NewReader(b))
	if err != nil || !slices.Equal(r.Findings, s.Findings) {
		t.Fatalf("%v: %+v, want %+v", err, r, s.Findings)
	}
}

func FuzzReadSnapshot(f *testing.F) {
	s, _ := snap(f)
	b := write(f, s)
	f.Add(b)
	s.Findings = []finding.Finding{{Code: "c", Severity: finding.SevInfo, Offset: -1, Message: "whole"}, {Code: "d", Severity: finding.SevError, Offset: 8, Message: "at 8", RefKind: "K"}}
	s.Seal()
	f.Add(write(f, s))
	f.Add([]byte(`{"schema":"stdiff.snapshot/v1","tensors":[{"name":"a","blake3":"x"}]}`))
	f.Add([]byte(`{"schema":"stdiff.snapshot/v1","format":"gguf","tensors":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := snapshot.Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		// what Read accepts writes and reads back the same, and stands for a model
		again, err := snapshot.Read(bytes.NewReader(write(t, s)))
		if err != nil {
			t.Fatalf("written again, refused: %v", err)
		}
		if again.Digest != s.Digest {
			t.Fatal("written again, another digest")
		}
		m := s.Model("x")
		if canon.StructureID(m) != s.StructureID {
			t.Fatal("the model's structure ID is not the snapshot's")
		}
	})
}

// TestReadRefusesForgedCodes: the codes a snapshot records (the verdict's kind, each finding's code,
// severity and reference kind) are printed as they are, as stdiff's own: a snapshot whose codes are
// not such names (a terminal escape, say) is refused, even when its IDs were computed again.
func TestReadRefusesForgedCodes(t *testing.T) {
	for name, edit := range map[string]func(s *snapshot.Snapshot){
		"verdict kind": func(s *snapshot.Snapshot) {
			s.Verdict = snapshot.Verdict{Kind: "InvalidOffset\x1b[2J", Message: "m"}
		},
		"finding code": func(s *snapshot.Snapshot) {
			s.Findings = []finding.Finding{{Code: "x\x1b]0;title\x07", Severity: finding.SevError, Offset: -1, Message: "m"}}
		},
		"finding severity": func(s *snapshot.Snapshot) {
			s.Findings = []finding.Finding{{Code: "x", Severity: "error\x1b[1m", Offset: -1, Message: "m"}}
		},
		"finding reference kind": func(s *snapshot.Snapshot) {
			s.Findings = []finding.Finding{{Code: "x", Severity: finding.SevError, Offset: -1, Message: "m", RefKind: "K\u202e"}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, _ := snap(t)
			edit(s)
			s.Seal()
			if _, err := snapshot.Read(bytes.NewReader(write(t, s))); !errors.Is(err, snapshot.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
	s, _ := snap(t) // stdiff's own codes read back
	s.Verdict = snapshot.Verdict{Kind: "tensor.offset", Message: "m\x1b"}
	s.Findings = []finding.Finding{{Code: "unknown-dtype", Severity: finding.SevWarning, Offset: 3, Message: "m\x1b", RefKind: finding.InvalidHeaderDeserialization}}
	s.Seal()
	if _, err := snapshot.Read(bytes.NewReader(write(t, s))); err != nil {
		t.Fatal(err)
	}
}

// TestWriteFileRefusesNonRegular: a snapshot replaces a regular file only: a folder, or a named pipe
// or device (`-o /dev/stdout`), is refused and left as it was, and nothing is left behind.
func TestWriteFileRefusesNonRegular(t *testing.T) {
	s, _ := snap(t)
	dir := t.TempDir()
	folder, fifo := filepath.Join(dir, "folder"), filepath.Join(dir, "fifo")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	targets := []string{folder}
	if err := mkfifo(fifo); err == nil {
		targets = append(targets, fifo)
	}
	for _, path := range targets {
		before, _ := os.Lstat(path)
		err := snapshot.WriteFile(context.Background(), path, s)
		var re *canon.ReadError
		if !errors.As(err, &re) || re.Name != path || re.Hint == "" {
			t.Errorf("%s: err = %v, want a *canon.ReadError naming it, with a hint", path, err)
		}
		if after, _ := os.Lstat(path); after == nil || after.Mode() != before.Mode() {
			t.Errorf("%s was replaced", path)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(targets) {
		t.Errorf("left behind: %v", entries)
	}
}

// TestReadErrorsSayWhere: a snapshot that is not JSON of its schema is refused with what is wrong and
// where, in stdiff's words: not encoding/json's (no "json:", no Go type names).
func TestReadErrorsSayWhere(t *testing.T) {
	s, _ := snap(t)
	b := string(write(t, s))
	for _, c := range []struct{ name, text, want string }{
		{"cut short", b[:len(b)/2], "cut short after byte "},
		{"wrong type", strings.Replace(b, `"size":`, `"size":"1",`+`"x":`, 1), `field "size", before byte 88: a JSON string where a snapshot has a number`},
		{"wrong type in a tensor", strings.Replace(strings.ReplaceAll(b, ",\n", ", "), `"shape":[3,4]`, `"shape":["3",4]`, 1), `field "tensors.shape", before byte `},
		{"wrong type in the verdict", strings.Replace(b, `"valid":true`, `"valid":1`, 1), `field "verdict.valid", before byte `},
		{"syntax", strings.Replace(b, `"size":`, `"size":,`, 1), "not JSON at byte 85, near `"},
		{"unknown field", strings.Replace(b, `"size":`, `"extra":1,"size":`, 1), `unknown field "extra"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := snapshot.Read(strings.NewReader(c.text))
			if !errors.Is(err, snapshot.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) || strings.Contains(msg, "json:") || strings.Contains(msg, "Go struct") || strings.Contains(msg, "wire") {
				t.Errorf("err = %q, want %q in stdiff's words", msg, c.want)
			}
		})
	}
}
