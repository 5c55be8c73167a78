// Package diff compares two models. Models compares two opened models, by value when both are local
// (every tensor's bytes, and the statistics of those that differ); Compare compares two models read
// already (their headers, and their per-tensor digests when given). Both compute a Report once, and
// the writers turn it into text, JSON, JSONL or Markdown. Nothing here prints or decides about the
// terminal: progress is a callback and colour a textfmt.Palette the caller passes.
package diff

import (
	"encoding/hex"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	companiondiff "github.com/stdiff/stdiff/diff/companion"
	"github.com/stdiff/stdiff/diff/ggufsrc"
	"github.com/stdiff/stdiff/diff/linediff"
	"github.com/stdiff/stdiff/diff/namefold"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/delta"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/values"
	"github.com/stdiff/stdiff/diff/onnxsrc"
	"github.com/stdiff/stdiff/diff/pattern"
)

// Options choose what Compare and Models look at, and what counts as a failure.
type Options struct {
	// IgnoreMetadata leaves metadata out; MetadataOnly leaves tensors out.
	IgnoreMetadata, MetadataOnly bool
	// IgnoreKeys are glob patterns (path.Match) of metadata keys to leave out.
	IgnoreKeys []string
	// IgnoreVolatile leaves out lora.VolatileKeys: keys that change on every training run.
	IgnoreVolatile bool
	// Tensors, when set, are glob patterns (path.Match) that limit the comparison to matching tensor names.
	Tensors []string
	// HeaderOnly makes Models read no tensor byte: structure and metadata only. Without it, Models
	// compares the tensors of two local models by value (see Models).
	HeaderOnly bool
	// Content makes Models read the tensor bytes of remote models too (their digests: remote bytes are
	// compared, not decoded). Compare takes the digests in Side instead.
	Content bool
	// Tolerance is numpy.isclose's, for tensors compared by value: a tensor equal within it is listed
	// (Change.Values.WithinTolerance) but is no difference. The zero Tolerance asks for equal values.
	Tolerance values.Tolerance
	// FailOn are the categories that make the outcome Found (Report.Outcome); empty: every category.
	FailOn []Category
	// Quick makes Models stop reading at the first difference that decides the outcome (a category of
	// FailOn): for an exit status alone. The report is then incomplete (note scope.stopped-early).
	Quick bool
	// Values tunes the reading of tensor bytes by Models: goroutines and memory (values.Options; its
	// Tolerance and Progress are taken from these Options).
	Values values.Options
	// Progress, when set, is called by Models from reading goroutines with the number of tensor bytes
	// just read, of either model.
	Progress func(n int64)
	// Xet makes Models also say how much of B is made of A's chunks under the Hub's chunker
	// (Report.Xet): both must be local files, each read whole once more.
	Xet bool
	// RenderTemplates renders both sides of every changed chat template (tokenizer.chat_template and
	// tokenizer.chat_template.NAME in GGUF, chat_template in metadata) on a fixed conversation, sandboxed
	// and bounded (package canon/template), and adds the diff of the prompts (MetaChange.Prompt): what
	// the model will now see.
	RenderTemplates bool
}

// Side is one model to compare. Digests, when set, are the per-tensor BLAKE3 digests in
// Model.Tensors order; with digests on both sides, Compare also compares tensor bytes. Stats, when
// set, are the summaries of the tensors' values in the same order (nil where none): a tensor whose
// digests differ shows how its summary moved (Change.Summary). Snapshot is true for a model read from
// a snapshot (package canon/snapshot), whose layout (tensor order, offsets, header length) is not
// known: layout is then not compared.
type Side struct {
	Model    *canon.Model
	Digests  [][32]byte
	Stats    []*values.Stats
	Snapshot bool
}

// Tensor describes a tensor in a report.
type Tensor struct {
	Name  string   `json:"name"`
	DType string   `json:"dtype"`
	Shape []uint64 `json:"shape"`
	Bytes uint64   `json:"bytes"`
	// Digest is the BLAKE3 of the tensor's bytes in hex, when content was compared.
	Digest string `json:"blake3,omitempty"`
}

// Change is a tensor present on both sides that differs.
type Change struct {
	Name string `json:"name"`
	// Fields that differ: dtype, shape, bytes (the byte size) and data (the bytes themselves).
	Fields []string `json:"fields"`
	Old    Tensor   `json:"old"`
	New    Tensor   `json:"new"`
	// Values is the element-by-element comparison of the two tensors' values, when they were compared
	// by value (Models, two local models: same shape, dtypes that decode). A tensor equal within the
	// tolerance is listed with Values.WithinTolerance true, and is no difference.
	Values *values.Diff `json:"values,omitempty"`
	// Summary is how the summaries of the tensor's values moved, when its bytes were compared by
	// digest and both sides have a summary (a snapshot side: note scope.snapshot): derived from the
	// summaries, not element by element.
	Summary *SummaryChange `json:"summary,omitempty"`
	// ValuesEqual, when set, says why the bytes of a tensor of one dtype differ while its values
	// (compared by value) are all equal: such a change counts in CategoryData, not CategoryValues.
	ValuesEqual EqualValues `json:"values_equal,omitempty"`
	// NameB, Transform, Heads and MatchesUnder are set for a GGUF compared with its Hugging Face
	// source (see Report.Source): NameB is the tensor's name on side b, Transform the conversion
	// undone to compare the two (with Heads for ggufsrc.TransformPermuteQK), and MatchesUnder, when the values
	// differ under that transform but match under another, that other one. For an ONNX export
	// compared with its source (package onnxsrc), Name is the source tensor's name and NameB the
	// initializer's, whichever side each is on, and Transform is ggufsrc.TransformTranspose or absent.
	NameB        string               `json:"name_b,omitempty"`
	Transform    ggufsrc.Transform    `json:"transform,omitempty"`
	Heads        int                  `json:"heads,omitempty"`
	MatchesUnder *ggufsrc.Alternative `json:"matches_under,omitempty"`
}

// EqualValues names why bytes differ where values are equal. Codes are stable and safe to match in
// scripts; cmd/stdiff/docs/scripting.md lists them.
type EqualValues string

// Reasons for bytes that differ with equal values.
const (
	// EqualSignOfZero: a float tensor without NaN: only the signs of zeros differ (−0.0 against +0.0).
	EqualSignOfZero EqualValues = "sign-of-zero"
	// EqualNaNPayload: NaN on both sides in the same places, with other bits (and perhaps zeros of
	// another sign).
	EqualNaNPayload EqualValues = "nan-payload"
	// EqualEncoding: a dtype that is no float (BOOL: another non-zero byte) encodes equal values otherwise.
	EqualEncoding EqualValues = "encoding"
)

// equalValues says why the bytes of a tensor of dtype dt differ while its values compare equal (d),
// or "" when they do not.
func equalValues(dt tensor.DType, d *values.Diff) EqualValues {
	switch {
	case d == nil || d.Differing > 0 || d.Count == 0 || d.ExactRounding != nil:
		return ""
	case d.NaNA > 0 || d.NaNB > 0:
		return EqualNaNPayload
	case values.IsFloat(dt) || dt == tensor.DType("C64"):
		return EqualSignOfZero
	}
	return EqualEncoding
}

// SummaryChange is the value summaries of a changed tensor on each side (values.Stats: count, min,
// max, mean, std, L2 norm, NaN and Inf counts).
type SummaryChange struct {
	From values.Stats `json:"from"`
	To   values.Stats `json:"to"`
}

// Rename is a tensor removed under one name and added under another.
type Rename struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Confirmed is true when the bytes are equal (content compared); otherwise the rename is only likely:
	// same dtype, shape and size.
	Confirmed bool   `json:"confirmed"`
	Tensor    Tensor `json:"tensor"`
}

// MetaEntry is a metadata key and its value.
type MetaEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// Type is a GGUF value's type ("uint32", "string", "array", …; absent for safetensors).
	Type string `json:"type,omitempty"`
}

// MetaChange is a metadata key whose value differs.
type MetaChange struct {
	Key string `json:"key"`
	Old string `json:"old"`
	New string `json:"new"`
	// Kind says how the values are shown: "value" (short, old → new), "text" (a line diff), "json" (a line
	// diff of both values formatted with sorted keys), "large" (summarised by size and hash) or, for
	// GGUF, "array" (KindArray: summarised, Array says how the elements differ).
	Kind string `json:"kind"`
	// Lines is the line diff for kinds text and json.
	Lines []linediff.Line `json:"lines,omitempty"`
	// OldType and NewType are a GGUF value's type on each side (absent for safetensors): a value
	// that keeps its text but changes its type (uint32 → uint64) is a change.
	OldType string `json:"old_type,omitempty"`
	NewType string `json:"new_type,omitempty"`
	// Array is how two GGUF arrays differ (kind "array" only).
	Array *ArrayChange `json:"array,omitempty"`
	// Prompt is how the prompts of two chat templates differ (Options.RenderTemplates only).
	Prompt *PromptChange `json:"prompt,omitempty"`
}

// Schema names the JSON form of a Report and its version: the first field of every report.
const Schema = "stdiff.diff/v1"

// Report is the whole comparison, computed once and rendered many ways.
type Report struct {
	Schema string `json:"schema"`
	A      string `json:"a"`
	B      string `json:"b"`
	// Identical is true when nothing in scope differs and the reference reader's verdict is the same
	// (a tensor equal within the tolerance differs: the models are then not identical, but Categories
	// may be empty).
	Identical bool `json:"identical"`
	// Categories name the kinds of difference found, each once, in the order of the Categories list.
	Categories []Category `json:"categories"`
	// FailOn are the categories that make the outcome Found (Options.FailOn; every category by default).
	FailOn []Category `json:"fail_on"`
	// TensorsCompared and MetadataCompared say what was in scope; ContentCompared is true when tensor
	// bytes were compared, ValuesCompared when tensors were compared by value (Change.Values).
	TensorsCompared  bool `json:"tensors_compared"`
	MetadataCompared bool `json:"metadata_compared"`
	ContentCompared  bool `json:"content_compared"`
	ValuesCompared   bool `json:"values_compared"`
	// Tolerance is the tolerance tensors were compared by value under, when one was given.
	Tolerance *values.Tolerance `json:"tolerance,omitempty"`
	// Verdict is the reference reader's verdict on each side. It is always compared, whatever the
	// scope: a file that strict readers reject is different from one they load.
	Verdict  VerdictReport  `json:"verdict"`
	Tensors  TensorReport   `json:"tensors"`
	Metadata MetadataReport `json:"metadata"`
	// Notes are differences that do not count (layout, order, padding) and what was left out.
	Notes []Note `json:"notes"`
	// Source is set when one model is a GGUF file and the other its Hugging Face source: how their
	// tensors were paired through llama.cpp's name map, and what the quantisation did to each type.
	Source *ggufsrc.Report `json:"gguf_source,omitempty"`
	// Companions is how the files a loader reads beside the tensors differ (package diff/companion),
	// when a side is a folder model (see Models); absent otherwise.
	Companions *companiondiff.Report `json:"companions,omitempty"`
	// Xet is set with Options.Xet: what of B an upload after A would not send again.
	Xet *XetShare `json:"xet,omitempty"`
}

// Outcome is canon.Found when a category of FailOn occurred, else canon.Clean.
func (r *Report) Outcome() canon.Outcome {
	for _, c := range r.Categories {
		if r.Fails(c) {
			return canon.Found
		}
	}
	return canon.Clean
}

// VerdictReport holds the reference reader's verdict on both sides.
type VerdictReport struct {
	A SideVerdict `json:"a"`
	B SideVerdict `json:"b"`
	// Changed is true when the verdicts differ: one side valid and the other not, or other error kinds.
	Changed bool `json:"changed"`
}

// SideVerdict is the reference reader's verdict on one side.
type SideVerdict struct {
	Valid bool `json:"valid"`
	// Kind is the reference's error kind when it rejects the side; nil (JSON null) when it is valid.
	Kind *finding.RefKind `json:"kind"`
}

func verdictOf(m *canon.Model) SideVerdict {
	if m.RefErr == nil {
		return SideVerdict{Valid: true}
	}
	k := m.RefErr.Kind
	return SideVerdict{Kind: &k}
}

// String is "valid", or "invalid" and the reference's error kind.
func (v SideVerdict) String() string {
	if v.Valid || v.Kind == nil {
		return "valid"
	}
	return "invalid (" + string(*v.Kind) + ")"
}

func (v SideVerdict) same(w SideVerdict) bool {
	return v.Valid == w.Valid && (v.Kind == nil) == (w.Kind == nil) && (v.Kind == nil || *v.Kind == *w.Kind)
}

// TensorReport holds the tensor differences, each list sorted by name.
type TensorReport struct {
	Added     []Tensor `json:"added"`
	Removed   []Tensor `json:"removed"`
	Changed   []Change `json:"changed"`
	Renamed   []Rename `json:"renamed"`
	Unchanged int      `json:"unchanged"`
	// NotCompared are tensors on both sides, of the same dtype and shape, whose bytes could not be
	// read (Reason NotReadBytesMissing: they lie past the end of a truncated file): neither changed
	// nor unchanged, they count in CategoryData and CategoryValues. In name order.
	NotCompared []NotCompared `json:"not_compared"`
	// Groups fold changes that happened the same way to many tensors, for display.
	Groups []Group `json:"groups"`
	// Moved are tensors on both sides, in other files of their shard sets (see Move); in name order,
	// absent when none moved.
	Moved []Move `json:"moved,omitempty"`
}

// NotCompared is a tensor whose bytes could not be read, and why.
type NotCompared struct {
	Name   string  `json:"name"`
	Reason NotRead `json:"reason"`
}

// MetadataReport holds the metadata differences, in key order.
type MetadataReport struct {
	Added     []MetaEntry  `json:"added"`
	Removed   []MetaEntry  `json:"removed"`
	Changed   []MetaChange `json:"changed"`
	Unchanged int          `json:"unchanged"`
}

// Compare compares a with b. Patterns in opt that match nothing leave everything out: call
// Options.CheckPatterns first to refuse them.
func Compare(a, b Side, opt Options) *Report {
	return build(a, b, opt, matchTensors(a.Model, b.Model, opt), nil, "")
}

// build makes the report of a and b, whose tensors match as m says; read holds what Models read of
// the tensor bytes (nil when it read none), and notRead why it read none.
func build(a, b Side, opt Options, m matching, read *bytesRead, notRead NotRead) *Report {
	r := &Report{Schema: Schema, A: a.Model.Name, B: b.Model.Name,
		ContentCompared: (a.Digests != nil && b.Digests != nil || read != nil) && !opt.MetadataOnly,
		ValuesCompared:  read != nil && !read.bigEndian && !opt.MetadataOnly,
		TensorsCompared: !opt.MetadataOnly, MetadataCompared: !opt.IgnoreMetadata,
		FailOn: opt.FailOn}
	if len(r.FailOn) == 0 {
		r.FailOn = Categories
	}
	if !opt.Tolerance.IsZero() && r.ValuesCompared {
		tol := opt.Tolerance
		r.Tolerance = &tol
	}
	r.Tensors = TensorReport{Added: []Tensor{}, Removed: []Tensor{}, Changed: []Change{}, Renamed: []Rename{}, NotCompared: []NotCompared{}, Groups: []Group{}}
	r.Metadata = MetadataReport{Added: []MetaEntry{}, Removed: []MetaEntry{}, Changed: []MetaChange{}}
	r.Notes = []Note{}
	r.Verdict = VerdictReport{A: verdictOf(a.Model), B: verdictOf(b.Model)}
	r.Verdict.Changed = !r.Verdict.A.same(r.Verdict.B)
	if !r.Verdict.Changed && !r.Verdict.A.Valid {
		r.Notes = append(r.Notes, Note{Code: NoteBothInvalid, Old: string(*r.Verdict.A.Kind)})
	}
	if !opt.MetadataOnly {
		var aliases []Note
		m.removed, m.added, aliases = aliasDrops(a.Model, b.Model, m.matched, m.removed, m.added)
		r.Notes = append(r.Notes, aliases...)
		r.Notes = append(r.Notes, m.notes...)
		compareTensors(r, a, b, opt, m, read)
		shardNotes(r, a.Model, b.Model, m.matched)
	} else {
		r.Notes = append(r.Notes, Note{Code: NoteMetadataOnly})
	}
	if !opt.IgnoreMetadata {
		compareMetadata(r, a.Model, b.Model, opt)
	} else {
		r.Notes = append(r.Notes, Note{Code: NoteIgnoreMetadata})
	}
	r.settle()
	// How the models are laid out on disk, whatever else differs.
	if !opt.MetadataOnly && !a.Snapshot && !b.Snapshot {
		layoutNotes(r, a.Model, b.Model, m.matched)
	}
	if (a.Snapshot || b.Snapshot) && r.ContentCompared {
		r.Notes = append(r.Notes, Note{Code: NoteSnapshot})
	}
	if read != nil && read.bigEndian && !opt.MetadataOnly {
		r.Notes = append(r.Notes, Note{Code: NoteBigEndian})
	}
	if read != nil && read.missing > 0 {
		r.Notes = append(r.Notes, Note{Code: NoteBytesMissing, Count: read.missing})
	}
	if !r.ContentCompared && !opt.MetadataOnly {
		n := Note{Code: NoteContentNotCompared}
		n.Reason = notRead
		r.Notes = append(r.Notes, n)
	}
	if read != nil && read.stopped {
		r.Notes = append(r.Notes, Note{Code: NoteStoppedEarly})
	}
	return r
}

// settle names the kinds of difference in a report (Categories) and says whether the models are
// identical: no category, and no tensor equal within the tolerance only.
func (r *Report) settle() {
	r.Categories = categories(r)
	r.Identical = len(r.Categories) == 0 && len(r.Tensors.Changed) == 0
}

// categories names the kinds of difference in a report, in the order of the Categories list.
func categories(r *Report) []Category {
	t, m := &r.Tensors, &r.Metadata
	has := map[Category]bool{CategoryAdded: len(t.Added) > 0, CategoryRemoved: len(t.Removed) > 0, CategoryRenamed: len(t.Renamed) > 0,
		CategoryMetadata: len(m.Added)+len(m.Removed)+len(m.Changed) > 0, CategoryVerdict: r.Verdict.Changed}
	if len(t.NotCompared) > 0 { // bytes that could not be read may hold any change: a gate on them must not pass
		has[CategoryData], has[CategoryValues] = true, true
	}
	for i := range t.Changed {
		changeCategories(&t.Changed[i], r.Tolerance != nil, has)
	}
	out := []Category{}
	for _, k := range Categories {
		if has[k] {
			out = append(out, k)
		}
	}
	return out
}

// CheckPatterns refuses the patterns of opt that would filter nothing: a malformed one, or one that
// matches no name in a or b (tensor names for Tensors, metadata keys for IgnoreKeys). It returns a
// *pattern.Error for the first, in the order of the options. Patterns of a part the options leave out
// (Tensors with MetadataOnly, IgnoreKeys with IgnoreMetadata) are checked for syntax only.
func (opt Options) CheckPatterns(a, b *canon.Model) error {
	return pattern.Check(a, b, opt.Tensors, opt.IgnoreKeys, !opt.MetadataOnly, !opt.IgnoreMetadata)
}

func matchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, s); ok {
			return true
		}
	}
	return false
}

func describe(s Side, i int) Tensor {
	t := &s.Model.Tensors[i]
	shape := t.Shape
	if shape == nil {
		shape = []uint64{}
	}
	d := Tensor{Name: t.Name, DType: string(t.DType), Shape: shape, Bytes: t.Len()}
	if s.Digests != nil {
		d.Digest = hex.EncodeToString(s.Digests[i][:])
	}
	return d
}

// matching pairs the tensors of two models by name: matched holds the (a, b) indices of the tensors on
// both sides, removed and added the indices of the others, all within opt.Tensors.
type matching struct {
	matched        [][2]int
	removed, added []int
	// onnx, when set, is how an ONNX export's tensors pair with its source's (transposes undone);
	// notes are the notes of that pairing.
	onnx  *onnxsrc.Sided
	notes []Note
}

func matchTensors(a, b *canon.Model, opt Options) matching {
	var m matching
	if opt.MetadataOnly {
		return m
	}
	keep := func(name string) bool { return len(opt.Tensors) == 0 || matchAny(opt.Tensors, name) }
	bt := b.Tensors
	// Versions of a model usually list their tensors in the same order: look names up by position
	// first, and build a map only when that fails.
	var inB *canon.NameIndex
	find := func(i int, name string) (int, bool) {
		if i < len(bt) && bt[i].Name == name {
			return i, true
		}
		if inB == nil {
			inB = canon.NewNameIndex(bt)
		}
		return inB.Find(name)
	}
	m.matched = make([][2]int, 0, len(a.Tensors))
	matchedB := make([]bool, len(bt))
	for i := range a.Tensors {
		ta := &a.Tensors[i]
		if !keep(ta.Name) {
			continue
		}
		j, ok := find(i, ta.Name)
		if !ok {
			m.removed = push(m.removed, i)
			continue
		}
		matchedB[j] = true
		m.matched = append(m.matched, [2]int{i, j})
	}
	for j := range bt {
		if !matchedB[j] && keep(bt[j].Name) {
			m.added = push(m.added, j)
		}
	}
	return m
}

func compareTensors(r *Report, a, b Side, opt Options, m matching, read *bytesRead) {
	bt := b.Model.Tensors
	digests := a.Digests != nil && b.Digests != nil
	for k, p := range m.matched {
		i, j := p[0], p[1]
		ta, tb := &a.Model.Tensors[i], &bt[j]
		if ta.NameOnly() || tb.NameOnly() { // a shard is missing: the name is all there is to compare
			r.Tensors.Unchanged++
			continue
		}
		var fields []string
		if ta.DType != tb.DType {
			fields = append(fields, "dtype")
		}
		shapeA, shapeB := ta.Shape, tb.Shape
		if m.onnx != nil {
			shapeA, shapeB = m.onnx.Shapes(k, shapeA, shapeB)
		}
		if !equalShape(shapeA, shapeB) {
			fields = append(fields, "shape")
		}
		if ta.Len() != tb.Len() {
			fields = append(fields, "bytes")
		}
		var vals *values.Diff
		if c, ok := read.pair(k); ok {
			vals = c.Diff
			if !c.Equal && len(fields) == 0 {
				fields = append(fields, "data")
			}
		} else if digests && len(fields) == 0 && a.Digests[i] != b.Digests[j] {
			fields = append(fields, "data")
		}
		if len(fields) == 0 && read.unread(k) {
			r.Tensors.NotCompared = push(r.Tensors.NotCompared, NotCompared{Name: ta.Name, Reason: NotReadBytesMissing})
			continue
		}
		if len(fields) == 0 {
			r.Tensors.Unchanged++
			continue
		}
		var sum *SummaryChange
		if digests && a.Stats != nil && b.Stats != nil && a.Stats[i] != nil && b.Stats[j] != nil && a.Digests[i] != b.Digests[j] {
			sum = &SummaryChange{From: *a.Stats[i], To: *b.Stats[j]}
		}
		ch := Change{Name: ta.Name, Fields: fields, Old: describe(a, i), New: describe(b, j), Values: vals, Summary: sum}
		if ta.Name != tb.Name {
			ch.NameB = tb.Name
			if m.onnx != nil && m.onnx.Side == 0 { // an ONNX export on side a: named by its source
				ch.Name, ch.NameB = tb.Name, ta.Name
			}
		}
		if m.onnx != nil && m.onnx.Transposed[k] {
			ch.Transform = ggufsrc.TransformTranspose
		}
		if len(fields) == 1 && fields[0] == "data" {
			ch.ValuesEqual = equalValues(ta.DType, vals)
		}
		r.Tensors.Changed = push(r.Tensors.Changed, ch)
	}
	removedIdx, addedIdx := findRenames(r, a, b, m.removed, m.added, read)
	r.Tensors.Removed = slices.Grow(r.Tensors.Removed, len(removedIdx))
	r.Tensors.Added = slices.Grow(r.Tensors.Added, len(addedIdx))
	for _, i := range removedIdx {
		r.Tensors.Removed = append(r.Tensors.Removed, describe(a, i))
	}
	for _, j := range addedIdx {
		r.Tensors.Added = append(r.Tensors.Added, describe(b, j))
	}
	byName := func(x, y Tensor) int { return strings.Compare(x.Name, y.Name) }
	slices.SortFunc(r.Tensors.Added, byName)
	slices.SortFunc(r.Tensors.Removed, byName)
	slices.SortFunc(r.Tensors.Changed, func(x, y Change) int { return strings.Compare(x.Name, y.Name) })
	slices.SortFunc(r.Tensors.NotCompared, func(x, y NotCompared) int { return strings.Compare(x.Name, y.Name) })
	slices.SortFunc(r.Tensors.Renamed, func(x, y Rename) int { return strings.Compare(x.From, y.From) })
	r.Tensors.Groups = groupChanges(&r.Tensors, r.Tolerance != nil)
}

// push appends v to s, doubling the capacity when s is full. append grows large slices by a quarter, and
// the CLI runs without garbage collection until its heap nears a limit, so a list of a million entries
// built by append leaves about four times its size behind; built by push, about once.
func push[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(len(s), 8))
	}
	return append(s, v)
}

func equalShape(x, y []uint64) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// findRenames pairs removed and added tensors of equal dtype, shape and size. With content compared,
// only equal bytes pair (confirmed renames); without, tensors pair by name similarity (likely renames).
// Candidates are first paired among names with the same numbers (layers.3.k_proj → layers.3.key_proj),
// then among the rest, so that thousands of alike tensors cost no more than a sort. It returns the
// indices left unpaired.
func findRenames(r *Report, a, b Side, removed, added []int, read *bytesRead) ([]int, []int) {
	if len(removed) == 0 || len(added) == 0 {
		return removed, added
	}
	content := r.ContentCompared
	digest := func(side int, s Side, i int) ([32]byte, bool) {
		if s.Digests != nil {
			return s.Digests[i], true
		}
		return read.digest(side, i)
	}
	var buf []byte
	var nums []int
	// key is what a rename keeps: dtype, shape, size, bytes when compared, and the numbers in the name
	// when withNumbers. A tensor whose bytes were not read gets no key ("").
	key := func(side int, s Side, i int, withNumbers bool) string {
		t := &s.Model.Tensors[i]
		buf = append(buf[:0], t.DType...)
		for _, d := range t.Shape {
			buf = strconv.AppendUint(append(buf, ' '), d, 10)
		}
		buf = strconv.AppendUint(append(buf, '/'), t.Len(), 10)
		if content {
			d, ok := digest(side, s, i)
			if !ok {
				return ""
			}
			buf = append(buf, d[:]...)
		}
		if withNumbers {
			nums = numbers(nums[:0], t.Name)
			for _, n := range nums {
				buf = strconv.AppendInt(append(buf, '#'), int64(n), 10)
			}
		}
		return string(buf)
	}
	usedA, usedB := make([]bool, len(a.Model.Tensors)), make([]bool, len(b.Model.Tensors))
	pairs := make([][2]int, 0, min(len(removed), len(added))) // every rename, then the report's list at its size
	for _, withNumbers := range []bool{true, false} {
		bucketA, bucketB := map[string][]int{}, map[string][]int{}
		var keys []string
		for _, i := range removed {
			if !usedA[i] && !a.Model.Tensors[i].NameOnly() { // a name alone says nothing of a rename
				if k := key(0, a, i, withNumbers); k != "" {
					bucketA[k] = push(bucketA[k], i)
				}
			}
		}
		for _, j := range added {
			if !usedB[j] && !b.Model.Tensors[j].NameOnly() {
				k := key(1, b, j, withNumbers)
				if k == "" {
					continue
				}
				if len(bucketA[k]) > 0 && len(bucketB[k]) == 0 {
					keys = append(keys, k)
				}
				bucketB[k] = push(bucketB[k], j)
			}
		}
		for _, k := range keys {
			for _, p := range pairNames(a, b, bucketA[k], bucketB[k]) {
				usedA[p[0]], usedB[p[1]] = true, true
				pairs = append(pairs, p)
			}
		}
	}
	r.Tensors.Renamed = slices.Grow(r.Tensors.Renamed, len(pairs))
	for _, p := range pairs {
		r.Tensors.Renamed = append(r.Tensors.Renamed, Rename{From: a.Model.Tensors[p[0]].Name,
			To: b.Model.Tensors[p[1]].Name, Confirmed: content, Tensor: describe(b, p[1])})
	}
	var leftRemoved, leftAdded []int
	for _, i := range removed {
		if !usedA[i] {
			leftRemoved = append(leftRemoved, i)
		}
	}
	for _, j := range added {
		if !usedB[j] {
			leftAdded = append(leftAdded, j)
		}
	}
	return leftRemoved, leftAdded
}

// numbers appends the numbers template finds in a name.
func numbers(dst []int, name string) []int {
	var tmp [64]byte
	_, dst = namefold.AppendTemplate(tmp[:0], dst, name)
	return dst
}

// pairNames pairs two lists of candidates, most similar names first. Past 4,096 possible pairs it pairs
// them in name order instead, which keeps the work linear.
func pairNames(a, b Side, xs, ys []int) [][2]int {
	var out [][2]int
	if len(xs)*len(ys) > 4096 {
		out = make([][2]int, 0, min(len(xs), len(ys)))
		xs, ys = append([]int(nil), xs...), append([]int(nil), ys...)
		sort.Slice(xs, func(p, q int) bool { return a.Model.Tensors[xs[p]].Name < a.Model.Tensors[xs[q]].Name })
		sort.Slice(ys, func(p, q int) bool { return b.Model.Tensors[ys[p]].Name < b.Model.Tensors[ys[q]].Name })
		for k := 0; k < min(len(xs), len(ys)); k++ {
			out = append(out, [2]int{xs[k], ys[k]})
		}
		return out
	}
	type pair struct{ i, j, score int }
	var pairs []pair
	for _, i := range xs {
		for _, j := range ys {
			pairs = append(pairs, pair{i, j, similarity(a.Model.Tensors[i].Name, b.Model.Tensors[j].Name)})
		}
	}
	sort.SliceStable(pairs, func(p, q int) bool { return pairs[p].score > pairs[q].score })
	usedX, usedY := map[int]bool{}, map[int]bool{}
	for _, p := range pairs {
		if !usedX[p.i] && !usedY[p.j] {
			usedX[p.i], usedY[p.j] = true, true
			out = append(out, [2]int{p.i, p.j})
		}
	}
	return out
}

// similarity scores how alike two names are: the length of their common prefix and suffix.
func similarity(x, y string) int {
	p := 0
	for p < len(x) && p < len(y) && x[p] == y[p] {
		p++
	}
	s := 0
	for s < len(x)-p && s < len(y)-p && x[len(x)-1-s] == y[len(y)-1-s] {
		s++
	}
	return p + s
}

// ignoresKey reports whether opt leaves a metadata key out of the comparison (IgnoreKeys,
// IgnoreVolatile).
func (opt Options) ignoresKey(key string) bool {
	return matchAny(opt.IgnoreKeys, key) || (opt.IgnoreVolatile && matchAny(lora.VolatileKeys, key))
}

// skipsKey reports whether a metadata key is left out of the comparison: ignored, or writer
// bookkeeping (which notes report instead).
func (opt Options) skipsKey(key string) bool {
	return opt.ignoresKey(key) || matchAny(lora.BookkeepingKeys, key)
}

// keptKey reports whether the comparison of a and b's metadata keeps key: not ignored, and not writer
// bookkeeping, unless b lost it: transformers' load_state_dict refuses a safetensors file whose
// metadata lacks a known format, so its removal is a metadata change. Bookkeeping added (a
// conversion to safetensors writes format: pt) or changed is a note.
func (opt Options) keptKey(a, b *canon.Model, key string) bool {
	if opt.ignoresKey(key) {
		return false
	}
	_, inA := a.Meta(key)
	_, inB := b.Meta(key)
	return !matchAny(lora.BookkeepingKeys, key) || (inA && !inB && holdsFormat(b))
}

// holdsFormat reports whether m is a safetensors model, whose loaders read the format key: its removal
// matters there only (a PyTorch or ONNX file converted from safetensors has no place for it).
func holdsFormat(m *canon.Model) bool { return m.Format == canon.FormatSafetensors || m.Format == "" }

func compareMetadata(r *Report, a, b *canon.Model, opt Options) {
	for _, k := range lora.BookkeepingKeys {
		va, inA := a.Meta(k)
		vb, inB := b.Meta(k)
		if !opt.ignoresKey(k) && (inB || !holdsFormat(b)) && (inA != inB || va != vb) {
			r.Notes = append(r.Notes, Note{Code: NoteBookkeeping, Key: k, Old: va, New: vb})
		}
	}
	ignored, reformatted := 0, 0
	for _, m := range []*canon.Model{a, b} { // keys the options leave out, each once
		for i := range m.Metadata {
			if k := m.Metadata[i].Key; opt.ignoresKey(k) && (m == a || !hasKey(a, k)) {
				ignored++
			}
		}
	}
	for _, k := range delta.Metadata(a, b, func(key string) bool { return !opt.keptKey(a, b, key) }) {
		switch k.Status {
		case delta.Removed:
			r.Metadata.Removed = append(r.Metadata.Removed, entryOf(k.A))
		case delta.Added:
			r.Metadata.Added = append(r.Metadata.Added, entryOf(k.B))
		case delta.Changed:
			if delta.Typed(a, b) {
				r.Metadata.Changed = append(r.Metadata.Changed, typedChange(k.A, k.B))
			} else {
				r.Metadata.Changed = append(r.Metadata.Changed, changeOf(k.Key, k.A.Value, k.B.Value))
			}
		case delta.Reformatted:
			r.Metadata.Unchanged++
			reformatted++
		default:
			r.Metadata.Unchanged++
		}
	}
	sort.Slice(r.Metadata.Added, func(x, y int) bool { return r.Metadata.Added[x].Key < r.Metadata.Added[y].Key })
	sort.Slice(r.Metadata.Removed, func(x, y int) bool { return r.Metadata.Removed[x].Key < r.Metadata.Removed[y].Key })
	sortChanges(r.Metadata.Changed)
	if opt.RenderTemplates {
		addPrompts(r)
	}
	if reformatted > 0 {
		r.Notes = append(r.Notes, Note{Code: NoteReformatted, Count: reformatted})
	}
	if ignored > 0 {
		r.Notes = append(r.Notes, Note{Code: NoteKeysIgnored, Count: ignored})
	}
}

// entryOf is a metadata entry as a report lists it.
// hasKey reports whether m's metadata holds key.
func hasKey(m *canon.Model, key string) bool {
	_, ok := m.Meta(key)
	return ok
}

func entryOf(e *canon.MetaEntry) MetaEntry {
	return MetaEntry{Key: e.Key, Value: e.Value, Type: e.Type}
}

// sortChanges sorts metadata changes by key.
func sortChanges(cs []MetaChange) {
	sort.Slice(cs, func(x, y int) bool { return cs[x].Key < cs[y].Key })
}

// layoutNotes adds how b is laid out differently from a as notes (see delta.LayoutOf).
func layoutNotes(r *Report, a, b *canon.Model, matched [][2]int) {
	bookkeeping := func(key string) bool { return matchAny(lora.BookkeepingKeys, key) }
	for _, l := range delta.LayoutOf(a, b, matched, bookkeeping) {
		r.Notes = append(r.Notes, Note{Code: NoteCode(l.Code), Old: l.Old, New: l.New})
	}
}
