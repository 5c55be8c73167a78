// Package check gives the reference reader's verdict on models and names every defect stdiff finds
// in them, and with Options.Fix first repairs NUL-padded headers in place. Run computes a Report
// once; Write renders it, in the format WriteOptions.Format names. The way findings are shown
// (WriteFindings, FindingMarkdown) lives here too, for every report that lists findings.
//
// It never prints on its own, reads no environment variable and decides nothing about the
// terminal: the caller passes how to open models (source.Options), a writer and, for colour, a
// textfmt.Palette.
package check

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/loadcode"
	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/canon/values"
)

// Schema is the version of the report's JSON, its first field.
const Schema = "stdiff.check/v1"

// Options tune Run.
type Options struct {
	// Source says how models are opened (the Hub's endpoint and token, HTTP settings).
	Source source.Options
	// Fix repairs a header padded with NUL bytes in place before the file is checked (see
	// canon.FixNulPadding). Only one local file can be repaired, never a folder, an index or a URL.
	Fix bool
	// Values, when set, reads the tensor values of every model that could be read: its statistics go
	// to File.Tensors and its findings (values-nan, values-inf, …) to File.Findings; an error makes the
	// file unreadable (File.Err). ScanValues makes the one `stdiff check --values` uses.
	Values func(ctx context.Context, o *source.Opened) ([]TensorValues, []finding.Finding, error)
	// AsFiles reads each spec as the one file it names (source.OpenOne): a shard without its set, an
	// index as the file it is. A hook given the files staged for a commit checks each once, by its name.
	AsFiles bool
	// Flags, when set, names Fix as the caller's users give it, in the error for a model Fix cannot
	// repair ("m: --fix repairs one local file, …"); without it the error names Options.Fix.
	Flags textfmt.Flags
}

// Report is what check says of every model it was given, in order.
type Report struct {
	Schema string `json:"schema"`
	Files  []File `json:"files"`
}

// File is the verdict on one model and every defect found in it.
type File struct {
	// Path is the model as it was named (a file, a shard set, a URL).
	Path string `json:"path"`
	// Valid is the reference reader's verdict; ReferenceError is its error (nil when Valid).
	Valid          bool      `json:"valid"`
	ReferenceError *RefError `json:"reference_error"`
	// Findings lists at most finding.MaxPerCode findings of one code; FindingCounts counts
	// every finding of each code.
	Findings      []finding.Finding `json:"findings"`
	FindingCounts map[string]int    `json:"finding_counts"`
	// Error is Err's message: the model could not be read (or repaired), and nothing else here holds.
	Error string `json:"error,omitempty"`
	// Fixed says what Options.Fix repaired (nil when it changed nothing).
	Fixed *Fix `json:"fixed,omitempty"`
	// Tensors holds the value statistics of each tensor when Options.Values is set.
	Tensors []TensorValues `json:"tensors,omitempty"`

	// Err is why the model could not be read or repaired: a *canon.ReadError, or a *FixError when
	// Options.Fix was asked of something that is not one local file.
	Err error `json:"-"`
	// FixErr is why Options.Fix left a file that was then checked as it was (a *FixError wrapping
	// canon.ErrNotFixable): it has defects a repair must not touch.
	FixErr error `json:"-"`
	// What the text shows besides: the name the model was read under (a URL for hf://), its tensor
	// count, header length, and number of shards (0 for a single file).
	Name        string       `json:"-"`
	TensorCount int          `json:"-"`
	HeaderLen   uint64       `json:"-"`
	Shards      int          `json:"-"`
	Format      canon.Format `json:"-"`
}

// RefError is the reference reader's error as the reports show it.
type RefError struct {
	Kind    finding.RefKind `json:"kind"`
	Message string          `json:"message"`
	Offset  int64           `json:"offset"`
}

// RefErrorOf is e as the reports show it, nil for nil (a valid model).
func RefErrorOf(e *canon.RefError) *RefError {
	if e == nil {
		return nil
	}
	return &RefError{Kind: e.Kind, Message: e.Message, Offset: e.Offset}
}

// Fix is what Options.Fix repaired: Bytes NUL bytes became spaces, in the file range [Start, End).
type Fix struct {
	Bytes int   `json:"bytes"`
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// TensorValues is the value statistics of one tensor (see Options.Values).
type TensorValues struct {
	Name   string       `json:"name"`
	Values values.Stats `json:"values"`
}

// ErrNotLocal is wrapped when Options.Fix is asked of something that is not one local file. Its
// message follows the option's name, as Options.Flags gives it ("m: --fix repairs one local file, …").
var ErrNotLocal = errors.New("repairs one local file, not a folder, an index or a URL")

// FixError is why Options.Fix did not repair a file (it wraps ErrNotLocal or canon.ErrNotFixable),
// with what to do instead.
type FixError struct {
	// Path is the model as it was named.
	Path string
	// Err is the cause; its message names the file.
	Err error
	// Hint says what to do instead, naming no option.
	Hint string
	// Remote is set for a URL (ErrNotLocal): there is no local file to repair.
	Remote bool
	// Listed is set when the files of a model of several (ErrNotLocal: a shard set, a pipeline, a
	// folder) could be listed; Padded are those that are NUL-padded, each as a word a shell reads back
	// as its path: they can be repaired one by one.
	Listed bool
	Padded []string
	// Format is the format of a file Options.Fix refused (canon.ErrNotFixable).
	Format canon.Format
}

// Error is the cause's message: "model.safetensors: not fixable in place: …".
func (e *FixError) Error() string { return e.Err.Error() }

// Unwrap gives the cause.
func (e *FixError) Unwrap() error { return e.Err }

// Run checks every model spec names (a file, a shard set, a URL: see source.Open), reading headers
// only, several at a time (one after the other with Fix, which writes, or Values, which reads every
// tensor); the Files are in the order of specs. A model that cannot be read gets a File with Err set
// and the others are checked all the same; once ctx is done every model left fails with an error
// wrapping ctx.Err().
func Run(ctx context.Context, specs []string, opt Options) *Report {
	r := &Report{Schema: Schema, Files: make([]File, len(specs))}
	done := make([]bool, len(specs))
	if !opt.Fix && opt.Values == nil && len(specs) > 1 {
		pool.Run(ctx, 2*runtime.GOMAXPROCS(0), len(specs), func(ctx context.Context, i int) error {
			r.Files[i], done[i] = checkOne(ctx, specs[i], opt), true
			return nil
		})
	}
	for i, spec := range specs { // those the pool did not reach (ctx is done) fail at once
		if !done[i] {
			r.Files[i] = checkOne(ctx, spec, opt)
		}
	}
	return r
}

func checkOne(ctx context.Context, spec string, opt Options) File {
	f := File{Path: spec, Name: spec}
	if opt.Fix {
		if !isLocalFile(spec) {
			return f.failed(notLocal(ctx, spec, opt))
		}
		res, err := canon.FixNulPadding(ctx, spec)
		switch {
		case errors.Is(err, canon.ErrNotFixable):
			f.FixErr = &FixError{Path: spec, Err: err, Hint: notFixableHint(res.Format), Format: res.Format}
		case err != nil:
			return f.failed(err)
		case res.Changed > 0:
			f.Fixed = &Fix{Bytes: res.Changed, Start: res.Start, End: res.End}
		}
	}
	open := source.Open
	if opt.AsFiles {
		open = source.OpenOne
	}
	o, err := open(ctx, spec, opt.Source)
	if err != nil {
		return f.failed(err)
	}
	defer o.Close()
	m := o.Model
	if o.Snapshot == nil {
		for _, x := range loadcode.Scan(spec, m) {
			m.AddFinding(x)
		}
	}
	if opt.Values != nil {
		tv, fs, err := opt.Values(ctx, o)
		if err != nil {
			return f.failed(err)
		}
		f.Tensors = tv
		for _, x := range fs {
			m.AddFinding(x)
		}
	}
	f.Name, f.Valid, f.ReferenceError = m.Name, m.Valid(), RefErrorOf(m.RefErr)
	f.Findings, f.FindingCounts = append([]finding.Finding{}, m.Findings...), m.FindingCounts()
	f.TensorCount, f.HeaderLen, f.Shards, f.Format = len(m.Tensors), m.HeaderLen, len(m.Shards), m.Format
	return f
}

// notLocal is the error for a repair asked of a model that is not one local file: a URL (download
// it), or a model of several files (a shard set, a pipeline, a folder), whose NUL-padded files it
// lists, to be repaired one by one.
func notLocal(ctx context.Context, spec string, opt Options) *FixError {
	fix := opt.Flags.Of("Fix")
	if fix == "" {
		fix = "Options.Fix"
	}
	e := &FixError{Path: spec, Err: fmt.Errorf("%s: %s %w", spec, fix, ErrNotLocal), Remote: source.IsRemote(spec)}
	if e.Remote { // no request: there is nothing to repair here
		e.Hint = "download the file, then repair it"
		return e
	}
	o, err := source.Open(ctx, spec, opt.Source)
	if err != nil {
		e.Hint = "repair the files one by one"
		return e
	}
	defer o.Close()
	e.Listed = true
	for _, name := range o.Files() {
		one, err := source.OpenFileModel(ctx, name)
		if err != nil {
			continue
		}
		if one.Model.FindingCounts()[finding.CodeNulPadding] > 0 {
			e.Padded = append(e.Padded, shellWord(name))
		}
		one.Close()
	}
	if e.Hint = "none of its files is NUL-padded"; len(e.Padded) > 0 {
		e.Hint = "repair its NUL-padded files one by one: " + strings.Join(e.Padded, " ")
	}
	return e
}

// shellWord is path as a word a shell reads back as path: as it is when it holds only safe characters,
// else in single quotes.
func shellWord(path string) string {
	if path != "" && strings.Trim(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+,:@%") == "" {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}

// notFixableHint says what to do about a file of format that Options.Fix refused to repair.
func notFixableHint(format canon.Format) string {
	if format == canon.FormatGGUF {
		return "nothing in a GGUF file can be repaired in place; a file llama.cpp rejects must be converted or quantised again (convert_hf_to_gguf.py, llama-quantize) or fetched again"
	}
	return "only NUL padding can be repaired in place; re-save the file with a safetensors writer"
}

// failed is f for a model that could not be read (or repaired): its error, no findings.
func (f File) failed(err error) File {
	f.Err, f.Error = err, err.Error()
	f.Findings, f.FindingCounts = []finding.Finding{}, map[string]int{}
	return f
}

// isLocalFile reports whether spec names one local file (a shard counts), not a folder, an index or
// a URL. A path that cannot be looked at counts as a file: repairing it then says why it cannot.
func isLocalFile(spec string) bool {
	if source.IsRemote(spec) {
		return false
	}
	st, err := os.Stat(spec)
	if err != nil {
		return true
	}
	return !st.IsDir() && !strings.HasSuffix(spec, ".index.json")
}

// Outcome is Trouble when a model could not be read, Found when one is invalid or has a finding of
// severity error, else Clean.
func (r *Report) Outcome() canon.Outcome {
	o := canon.Clean
	for i := range r.Files {
		o = max(o, r.Files[i].Outcome())
	}
	return o
}

// Outcome is Trouble when the model could not be read, Found when it is invalid or has a finding of
// severity error, else Clean.
func (f *File) Outcome() canon.Outcome {
	switch {
	case f.Err != nil || f.Error != "":
		return canon.Trouble
	case !f.Valid || HasError(f.Findings):
		return canon.Found
	}
	return canon.Clean
}

// HasError reports whether a finding of severity error is among fs.
func HasError(fs []finding.Finding) bool {
	for _, f := range fs {
		if f.Severity == finding.SevError {
			return true
		}
	}
	return false
}
