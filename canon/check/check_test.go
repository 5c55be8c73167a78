package check_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/check"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/canon/values"
)

func fixture(name string) string { return filepath.Join("..", "..", "testdata", name) }

// copyFixture copies a fixture into a temporary folder, for tests that repair it.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(fixture(name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunVerdicts: each model gets its record, in order: the reference's verdict, the findings with
// their codes, and for a missing file an error that keeps its cause; the outcome is the worst.
func TestRunVerdicts(t *testing.T) {
	specs := []string{fixture("base.safetensors"), fixture("nul-padded.safetensors"), fixture("repeated.safetensors"), fixture("missing.safetensors")}
	r := check.Run(t.Context(), specs, check.Options{})
	if r.Schema != "stdiff.check/v1" || len(r.Files) != 4 {
		t.Fatalf("schema %q, %d files", r.Schema, len(r.Files))
	}
	base, nul, rep, missing := r.Files[0], r.Files[1], r.Files[2], r.Files[3]
	if !base.Valid || base.ReferenceError != nil || len(base.Findings) != 0 || base.Outcome() != canon.Clean || base.TensorCount != 14 {
		t.Errorf("base: %+v", base)
	}
	if nul.Valid || nul.ReferenceError == nil || nul.ReferenceError.Kind != finding.InvalidHeaderDeserialization ||
		len(nul.Findings) != 1 || nul.Findings[0].Code != finding.CodeNulPadding || nul.Findings[0].Offset < 0 || nul.Outcome() != canon.Found {
		t.Errorf("nul-padded: %+v", nul)
	}
	if !rep.Valid || rep.FindingCounts[finding.CodeDuplicateTensor] != 5 || rep.Outcome() != canon.Clean {
		t.Errorf("repeated (valid, warnings only): %+v", rep)
	}
	if !errors.Is(missing.Err, fs.ErrNotExist) || missing.Error == "" || missing.Findings == nil || missing.Outcome() != canon.Trouble {
		t.Errorf("missing: %+v", missing)
	}
	if got := r.Outcome(); got != canon.Trouble {
		t.Errorf("outcome %v, want trouble", got)
	}
	if got := check.Run(t.Context(), specs[:2], check.Options{}).Outcome(); got != canon.Found {
		t.Errorf("outcome without the missing file %v, want found", got)
	}
}

// TestRunMany: many models are checked several at a time, and each File is the one a check of its
// model alone gives, in the order of the specs; once ctx is done, every model fails with its error.
func TestRunMany(t *testing.T) {
	kinds := []string{fixture("base.safetensors"), fixture("nul-padded.safetensors"), fixture("repeated.safetensors"), fixture("missing.safetensors")}
	var specs []string
	for i := range 41 {
		specs = append(specs, kinds[(i*7)%len(kinds)])
	}
	r := check.Run(t.Context(), specs, check.Options{})
	if len(r.Files) != len(specs) {
		t.Fatalf("%d files for %d specs", len(r.Files), len(specs))
	}
	for i, spec := range specs {
		one := check.Run(t.Context(), []string{spec}, check.Options{}).Files[0]
		got, _ := json.Marshal(r.Files[i])
		want, _ := json.Marshal(one)
		if r.Files[i].Path != spec || !bytes.Equal(got, want) {
			t.Errorf("file %d: %s\nalone: %s", i, got, want)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for i, f := range check.Run(ctx, specs, check.Options{}).Files {
		if f.Path != specs[i] || !errors.Is(f.Err, context.Canceled) {
			t.Errorf("file %d after cancel: path %q, error %v", i, f.Path, f.Err)
		}
	}
}

// TestFix: Options.Fix repairs NUL padding and says so; refuses other defects (the file untouched and
// still checked) and anything that is not one local file (an error, nothing checked).
func TestFix(t *testing.T) {
	nul := copyFixture(t, "nul-padded.safetensors")
	truncated := copyFixture(t, "truncated.safetensors")
	before, _ := os.ReadFile(truncated)
	r := check.Run(t.Context(), []string{nul, truncated, filepath.Dir(nul)}, check.Options{Fix: true})
	fixed, refused, folder := r.Files[0], r.Files[1], r.Files[2]
	if fixed.Fixed == nil || fixed.Fixed.Bytes != 3 || fixed.Fixed.Start != 1669 || fixed.Fixed.End != 1672 || !fixed.Valid || fixed.Outcome() != canon.Clean {
		t.Errorf("nul-padded: %+v (fixed %+v)", fixed, fixed.Fixed)
	}
	var fe *check.FixError
	if !errors.As(refused.FixErr, &fe) || !errors.Is(refused.FixErr, canon.ErrNotFixable) || fe.Hint == "" || refused.Err != nil {
		t.Errorf("truncated: fix error %v, err %v", refused.FixErr, refused.Err)
	}
	if refused.Valid || refused.Outcome() != canon.Found || refused.Fixed != nil {
		t.Errorf("truncated, refused, is still checked: %+v", refused)
	}
	if after, _ := os.ReadFile(truncated); !bytes.Equal(after, before) {
		t.Error("a refused file was changed")
	}
	if !errors.Is(folder.Err, check.ErrNotLocal) || !errors.As(folder.Err, &fe) || !strings.Contains(folder.Error, filepath.Dir(nul)) || folder.Outcome() != canon.Trouble {
		t.Errorf("folder: %+v", folder)
	}
	if s := check.Run(t.Context(), []string{"https://example.invalid/m.safetensors"}, check.Options{Fix: true}).Files[0]; !errors.Is(s.Err, check.ErrNotLocal) {
		t.Errorf("URL: %v, want ErrNotLocal (and no request)", s.Err)
	}
}

// TestFixHintGGUF: the hint for a refused GGUF file is about GGUF, not the safetensors advice; the
// format decides, as the file was read.
func TestFixHintGGUF(t *testing.T) {
	for _, name := range []string{"llama.gguf", "broken.gguf", "truncated.safetensors"} {
		f := check.Run(t.Context(), []string{copyFixture(t, name)}, check.Options{Fix: true}).Files[0]
		var fe *check.FixError
		if !errors.As(f.FixErr, &fe) || !errors.Is(f.FixErr, canon.ErrNotFixable) {
			t.Fatalf("%s: fix error %v", name, f.FixErr)
		}
		if safetensorsHint := strings.Contains(fe.Hint, "safetensors writer"); safetensorsHint != strings.HasSuffix(name, ".safetensors") {
			t.Errorf("%s: hint %q", name, fe.Hint)
		}
	}
}

// TestValuesHook: what Options.Values returns lands in the record (statistics in Tensors, findings
// among the findings); its error makes the model unreadable.
func TestValuesHook(t *testing.T) {
	called := 0
	hook := func(ctx context.Context, o *source.Opened) ([]check.TensorValues, []finding.Finding, error) {
		called++
		if o.Model.Valid() {
			return []check.TensorValues{{Name: o.Model.Tensors[0].Name, Values: values.Stats{Count: 3, NaN: 1}}},
				[]finding.Finding{{Code: "values-nan", Severity: finding.SevWarning, Offset: -1, Message: "1 NaN"}}, nil
		}
		return nil, nil, errors.New("cannot read the values")
	}
	r := check.Run(t.Context(), []string{fixture("base.safetensors"), fixture("truncated.safetensors")}, check.Options{Values: hook})
	good, bad := r.Files[0], r.Files[1]
	if called != 2 || len(good.Tensors) != 1 || good.Tensors[0].Values.NaN != 1 || good.FindingCounts["values-nan"] != 1 || good.Findings[0].Offset != -1 {
		t.Errorf("hook called %d times; record %+v", called, good)
	}
	if bad.Err == nil || bad.Outcome() != canon.Trouble {
		t.Errorf("hook error: %+v", bad)
	}
	var j bytes.Buffer
	if err := check.Write(&j, &check.Report{Schema: check.Schema, Files: []check.File{good}}, check.WriteOptions{Format: textfmt.JSON}); err != nil || !strings.Contains(j.String(), `"nan": 1`) {
		t.Errorf("JSON (%v) lacks the values:\n%s", err, j.String())
	}
}

// manyFindings is a file with five duplicate-tensor-name warnings, of which the record keeps only
// kept (as canon keeps at most finding.MaxPerCode) and counts them all.
func manyFindings(t *testing.T, kept int) check.File {
	r := check.Run(t.Context(), []string{fixture("repeated.safetensors")}, check.Options{})
	f := r.Files[0]
	f.Findings = f.Findings[:kept]
	return f
}

// TestWriteTextFolds: past three findings of a code the text says how many more; Full lists every
// finding kept and then how many were not kept.
func TestWriteTextFolds(t *testing.T) {
	for _, c := range []struct {
		full        bool
		kept, lines int
		more        string
	}{
		{false, 5, 3, "  … and 2 more duplicate-tensor-name\n"},
		{true, 5, 5, ""},
		{true, 4, 4, "  … and 1 more duplicate-tensor-name\n"},
		{false, 2, 2, "  … and 3 more duplicate-tensor-name\n"},
	} {
		var b bytes.Buffer
		r := &check.Report{Schema: check.Schema, Files: []check.File{manyFindings(t, c.kept)}}
		if err := check.Write(&b, r, check.WriteOptions{Full: c.full}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if n := strings.Count(out, "  warning duplicate-tensor-name at byte"); n != c.lines {
			t.Errorf("full %v, %d kept: %d finding lines, want %d:\n%s", c.full, c.kept, n, c.lines, out)
		}
		if c.more != "" && !strings.HasSuffix(out, c.more) || c.more == "" && strings.Contains(out, "more") {
			t.Errorf("full %v, %d kept: want the last line %q:\n%s", c.full, c.kept, c.more, out)
		}
	}
}

// TestWriteJSONL: a JSONL record is its file's record in the JSON, with the schema.
func TestWriteJSONL(t *testing.T) {
	r := check.Run(t.Context(), []string{fixture("base.safetensors"), fixture("nul-padded.safetensors"), fixture("missing.safetensors")}, check.Options{})
	var j, l bytes.Buffer
	if err := check.Write(&j, r, check.WriteOptions{Format: textfmt.JSON}); err != nil {
		t.Fatal(err)
	}
	if err := check.Write(&l, r, check.WriteOptions{Format: textfmt.JSONL}); err != nil {
		t.Fatal(err)
	}
	var whole struct{ Files []map[string]any }
	if err := json.Unmarshal(j.Bytes(), &whole); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(l.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), l.String())
	}
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(line, `{"schema":"stdiff.check/v1",`) {
			t.Errorf("line %d does not open on the schema: %s", i, line)
		}
		delete(rec, "schema")
		a, _ := json.Marshal(rec)
		b, _ := json.Marshal(whole.Files[i])
		if !bytes.Equal(a, b) {
			t.Errorf("line %d\n%s\nis not the JSON's record\n%s", i, a, b)
		}
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWritersReturnErrors: a writer that cannot write says so.
func TestWritersReturnErrors(t *testing.T) {
	r := check.Run(t.Context(), []string{fixture("nul-padded.safetensors")}, check.Options{})
	for name, write := range map[string]func() error{
		"text":     func() error { return check.Write(failWriter{}, r, check.WriteOptions{}) },
		"markdown": func() error { return check.Write(failWriter{}, r, check.WriteOptions{Format: textfmt.Markdown}) },
		"json":     func() error { return check.Write(failWriter{}, r, check.WriteOptions{Format: textfmt.JSON}) },
		"jsonl":    func() error { return check.Write(failWriter{}, r, check.WriteOptions{Format: textfmt.JSONL}) },
	} {
		if err := write(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestShardSetText: a set is named with its shard count; a set whose shards are valid but which is
// not (a tensor in two shards) says so.
func TestShardSetText(t *testing.T) {
	dir := t.TempDir()
	a := stfile.File{Tensors: []stfile.Tensor{{Name: "a", DType: "F32", Shape: []uint64{2}}}}
	b := stfile.File{Tensors: []stfile.Tensor{{Name: "b", DType: "F32", Shape: []uint64{2}}}}
	for name, f := range map[string]stfile.File{"m-00001-of-00002.safetensors": a, "m-00002-of-00002.safetensors": b} {
		if err := os.WriteFile(filepath.Join(dir, name), f.Build(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text := func() string {
		var out bytes.Buffer
		r := check.Run(t.Context(), []string{filepath.Join(dir, "m-00001-of-00002.safetensors")}, check.Options{})
		if err := check.Write(&out, r, check.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got := text(); !strings.Contains(got, ": OK (2 tensors in 2 shards)\n") {
		t.Errorf("valid set: %s", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "m-00002-of-00002.safetensors"), a.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := text(); !strings.Contains(got, ": INVALID: every shard is valid, but the set is not\n") || !strings.Contains(got, canon.CodeTensorInTwoShards) {
		t.Errorf("invalid set: %s", got)
	}
}

// TestWriteFindingsHintOnce: a hint shared by several findings (every up weight of an untrained LoRA)
// is said once, below the first; another hint is still said.
func TestWriteFindingsHintOnce(t *testing.T) {
	fs := []finding.Finding{
		{Code: "values-all-zero", Severity: finding.SevWarning, Offset: -1, Message: "a is all zeros", Hint: "the LoRA changes nothing"},
		{Code: "values-all-zero", Severity: finding.SevWarning, Offset: -1, Message: "b is all zeros", Hint: "the LoRA changes nothing"},
		{Code: "values-nan", Severity: finding.SevError, Offset: -1, Message: "c has NaN", Hint: "retrain"},
	}
	var b bytes.Buffer
	if err := check.WriteFindings(&b, fs, nil, "  ", check.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Count(out, "hint: the LoRA changes nothing") != 1 || strings.Count(out, "hint: retrain") != 1 ||
		!strings.Contains(out, "a is all zeros\n    hint: the LoRA changes nothing\n") {
		t.Errorf("hints:\n%s", out)
	}
}

// TestFixNotLocalWords: the error for a repair of something that is not one local file carries what
// a program words its hint from (a URL; the NUL-padded files of a folder), and names the option as
// Options.Flags gives it, else as the library's own (Options.Fix): never a flag of its own.
func TestFixNotLocalWords(t *testing.T) {
	nul := copyFixture(t, "nul-padded.safetensors")
	dir := filepath.Dir(nul)
	var fe *check.FixError
	bare := check.Run(t.Context(), []string{dir}, check.Options{Fix: true}).Files[0]
	if !errors.As(bare.Err, &fe) || bare.Error != dir+": Options.Fix repairs one local file, not a folder, an index or a URL" ||
		!fe.Listed || len(fe.Padded) != 1 || fe.Remote || strings.Contains(fe.Hint, "--") {
		t.Errorf("without flags: %q, %+v", bare.Error, fe)
	}
	flags := func(option string) string { return map[string]string{"Fix": "--fix"}[option] } // the CLI's
	worded := check.Run(t.Context(), []string{dir}, check.Options{Fix: true, Flags: flags}).Files[0]
	if worded.Error != dir+": --fix repairs one local file, not a folder, an index or a URL" {
		t.Errorf("with the CLI's flags: %q", worded.Error)
	}
	url := check.Run(t.Context(), []string{"https://example.invalid/m.safetensors"}, check.Options{Fix: true}).Files[0]
	if !errors.As(url.Err, &fe) || !fe.Remote || fe.Listed {
		t.Errorf("URL: %+v", fe)
	}
}
