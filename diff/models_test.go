package diff

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/canon/values"
	"github.com/stdiff/stdiff/diff/pattern"
)

// counted is a source that counts the bytes read from it.
type counted struct {
	canon.Source
	n *atomic.Int64
}

func (c counted) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.Source.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// opened opens a fixture, reads through it counted in n.
func opened(t *testing.T, name string, n *atomic.Int64) *source.Opened {
	t.Helper()
	o, err := source.Open(t.Context(), filepath.Join("..", "testdata", name), source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	o.Source = counted{o.Source, n}
	return o
}

// TestModels: Models compares two local models by value unless HeaderOnly, and reads bytes only once
// it knows the comparison can be made: a header that could not be read, a pattern that filters
// nothing, or a bad tolerance is refused first.
func TestModels(t *testing.T) {
	var n atomic.Int64
	base, retrained := opened(t, "base.safetensors", &n), opened(t, "retrained.safetensors", &n)

	r, err := Models(t.Context(), base, retrained, Options{HeaderOnly: true})
	if err != nil || r.ContentCompared || !r.Identical || n.Load() != 0 {
		t.Fatalf("headers only: identical %v, content compared %v, %d bytes read, %v", r.Identical, r.ContentCompared, n.Load(), err)
	}
	if s := Summary(r, testFlags); !strings.HasSuffix(s, " · tensor data not compared (--header-only)") || r.Notes[0].Reason != NotReadHeaderOnly {
		t.Errorf("header only: summary %q, notes %+v", s, r.Notes)
	}
	var progress atomic.Int64
	r, err = Models(t.Context(), base, retrained, Options{Progress: func(k int64) { progress.Add(k) }})
	if err != nil || !r.ContentCompared || !r.ValuesCompared || len(r.Tensors.Changed) != 1 || r.Tensors.Changed[0].Fields[0] != "data" ||
		r.Tensors.Changed[0].Values == nil || r.Tensors.Changed[0].Old.Digest != "" || n.Load() == 0 {
		t.Fatalf("by value: %+v, %d bytes read, %v", r.Tensors.Changed, n.Load(), err)
	}
	if data := base.Model.DataLen() + retrained.Model.DataLen(); progress.Load() != data || n.Load() < data {
		t.Errorf("read %d bytes, progress told of %d, the data is %d", n.Load(), progress.Load(), data)
	}
	if r.Outcome() != canon.Found {
		t.Errorf("outcome %v, want found", r.Outcome())
	}

	n.Store(0)
	_, err = Models(t.Context(), base, retrained, Options{Tolerance: values.Tolerance{Atol: math.NaN()}})
	if !errors.Is(err, values.ErrTolerance) || n.Load() != 0 {
		t.Errorf("a NaN tolerance: %v, %d bytes read", err, n.Load())
	}
	_, err = Models(t.Context(), base, retrained, Options{Content: true, Tensors: []string{"layrs.*"}})
	var pe *pattern.Error
	if !errors.As(err, &pe) || pe.Pattern != "layrs.*" || !errors.Is(err, pattern.ErrNoMatch) || n.Load() != 0 {
		t.Errorf("a pattern matching nothing: %v, %d bytes read", err, n.Load())
	}
	_, err = Models(t.Context(), base, retrained, Options{Content: true, MetadataOnly: true})
	if err != nil || n.Load() != 0 {
		t.Errorf("metadata only: %v, %d bytes read", err, n.Load())
	}

	lfs := opened(t, "lfs-pointer.safetensors", &n)
	_, err = Models(t.Context(), base, lfs, Options{Content: true})
	var re *canon.ReadError
	if !errors.As(err, &re) || re.Name != lfs.Model.Name || !strings.Contains(re.Reason(), "Git LFS pointer") || n.Load() != 0 {
		t.Errorf("an unreadable header: %v, %d bytes read", err, n.Load())
	}
}

var errFull = errors.New("disk full")

// full accepts limit bytes, then fails every write, counting them.
type full struct {
	limit, failed int
}

func (f *full) Write(p []byte) (int, error) {
	if f.limit < len(p) {
		f.failed++
		return 0, errFull
	}
	f.limit -= len(p)
	return len(p), nil
}

// TestWritersReturnErrors: every writer returns the first write error, and the text writers stop
// writing at it.
func TestWritersReturnErrors(t *testing.T) {
	r := Compare(fixture(t, "base.safetensors", false), fixture(t, "changed.safetensors", false), Options{})
	for name, write := range map[string]func(io.Writer) error{
		"text":     func(w io.Writer) error { return Write(w, r, WriteOptions{}) },
		"full":     func(w io.Writer) error { return Write(w, r, WriteOptions{Full: true}) },
		"markdown": func(w io.Writer) error { return Write(w, r, WriteOptions{Format: textfmt.Markdown}) },
		"json":     func(w io.Writer) error { return Write(w, r, WriteOptions{Format: textfmt.JSON}) },
		"jsonl":    func(w io.Writer) error { return Write(w, r, WriteOptions{Format: textfmt.JSONL}) },
	} {
		f := &full{limit: 100}
		if err := write(f); !errors.Is(err, errFull) {
			t.Errorf("%s: %v, want %v", name, err, errFull)
		}
		if f.failed != 1 && name != "json" && name != "jsonl" {
			t.Errorf("%s: %d writes failed, want 1 (nothing written after an error)", name, f.failed)
		}
		if err := write(io.Discard); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestJSONL: the JSONL form is the JSON report on one line, the same fields in the same order.
func TestJSONL(t *testing.T) {
	r := Compare(fixture(t, "base.safetensors", false), fixture(t, "changed.safetensors", false), Options{})
	js := written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{Format: textfmt.JSON}) })
	line := written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{Format: textfmt.JSONL}) })
	if strings.Count(string(line), "\n") != 1 || !strings.HasPrefix(string(line), `{"schema":"stdiff.diff/v1",`) {
		t.Fatalf("not one line starting with the schema: %.80s", line)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, js); err != nil {
		t.Fatal(err)
	}
	if compact.String()+"\n" != string(line) {
		t.Errorf("JSONL is not the JSON report compacted:\n%s\n%s", line, compact.String())
	}
}

// testFlags names options as stdiff's CLI does, so that the words a caller's flags add are tested.
var testFlags = textfmt.Flags(func(option string) string {
	return map[string]string{"Full": "--full", "HeaderOnly": "--header-only", "MetadataOnly": "--metadata-only",
		"IgnoreMetadata": "--ignore-metadata", "IgnoreKeys": "--ignore-key", "IgnoreVolatile": "--ignore-volatile", "Content": "--content"}[option]
})

// TestNotesWithoutFlags: without WriteOptions.Flags, no note names an option; with them, each names the
// options that decided it, as the CLI words them.
func TestNotesWithoutFlags(t *testing.T) {
	for _, c := range []struct {
		n         Note
		bare, cli string
	}{
		{Note{Code: NoteMetadataOnly}, "tensors not compared", "tensors not compared (--metadata-only)"},
		{Note{Code: NoteIgnoreMetadata}, "metadata not compared", "metadata not compared (--ignore-metadata)"},
		{Note{Code: NoteKeysIgnored, Count: 3}, "3 metadata keys ignored", "3 metadata keys ignored (--ignore-key/--ignore-volatile)"},
		{Note{Code: NoteContentNotCompared, Reason: NotReadHeaderOnly}, "tensor data not compared", "tensor data not compared (--header-only)"},
		{Note{Code: NoteContentNotCompared, Reason: NotReadRemote}, "tensor data not compared (remote)", "tensor data not compared (remote; --content reads it)"},
	} {
		n := c.n
		if got := worded(n, nil); got != c.bare {
			t.Errorf("%s without flags: %q, want %q", c.n.Code, got, c.bare)
		}
		if got := worded(n, testFlags); got != c.cli {
			t.Errorf("%s with the CLI's flags: %q, want %q", c.n.Code, got, c.cli)
		}
	}
}

// TestNotesWordedWhenWritten: a report's notes are data (code and particulars) until it is written:
// Models words none, and each writer words them as it writes, naming options as its WriteOptions.Flags
// names them, the report left as it was. A GGUF compared with its source names no option in its notes,
// whatever the flags (as before notes were worded when written).
func TestNotesWordedWhenWritten(t *testing.T) {
	r, err := Models(t.Context(), opened(t, "base.safetensors", new(atomic.Int64)), opened(t, "retrained.safetensors", new(atomic.Int64)), Options{MetadataOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Notes) != 1 || r.Notes[0].Code != NoteMetadataOnly || r.Notes[0].Message != "" {
		t.Fatalf("notes as Models returns them %+v, want one metadata-only note without words", r.Notes)
	}
	for _, c := range []struct {
		opt  WriteOptions
		want string
	}{
		{WriteOptions{Format: textfmt.JSON}, `"message": "tensors not compared"`},
		{WriteOptions{Format: textfmt.JSON, Flags: testFlags}, `"message": "tensors not compared (--metadata-only)"`},
		{WriteOptions{Format: textfmt.JSONL, Flags: testFlags}, `"message":"tensors not compared (--metadata-only)"`},
		{WriteOptions{Flags: testFlags}, "\n  tensors not compared (--metadata-only)\n"},
		{WriteOptions{}, "\n  tensors not compared\n"},
		{WriteOptions{Format: textfmt.Markdown, Flags: testFlags}, "- tensors not compared (--metadata-only)\n"},
		{WriteOptions{Format: textfmt.HTML, Flags: testFlags}, "</code> tensors not compared (--metadata-only)</li>"},
	} {
		out := string(written(t, func(w io.Writer) error { return Write(w, r, c.opt) }))
		if !strings.Contains(out, c.want) {
			t.Errorf("%s with flags %v: no %q in\n%s", c.opt.Format, c.opt.Flags != nil, c.want, out)
		}
		if r.Notes[0].Message != "" {
			t.Fatalf("writing %s worded the report's note: %q", c.opt.Format, r.Notes[0].Message)
		}
	}

	src := sourceReport(t, filepath.Join(srcDir, "gpt2"), filepath.Join(srcDir, "gpt2-q8_0.gguf"), false, Options{HeaderOnly: true, IgnoreMetadata: true})
	text := string(written(t, func(w io.Writer) error { return Write(w, src, WriteOptions{Flags: testFlags}) }))
	if !strings.Contains(text, "\n  metadata not compared\n") || !strings.Contains(text, "\n  tensor data not compared\n") {
		t.Errorf("a GGUF and its source, written with flags: notes name options:\n%s", text)
	}
}
