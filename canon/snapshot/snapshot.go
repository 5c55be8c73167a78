// Package snapshot is the snapshot file: a small JSON record of a model that stands in for it where its
// bytes are not needed (`stdiff snapshot`, then `stdiff diff OLD.snap NEW`). A snapshot holds the
// reference reader's verdict and findings, the metadata, every tensor's name, dtype, shape and byte
// length, its BLAKE3 digest and its value summary (values.Stats), and the model's structure and
// content IDs. Write writes it deterministically (the same model gives the same bytes); Read reads it
// strictly and refuses one of another schema version (*VersionError) or one whose IDs do not match its
// own content (*MismatchError, a hand-edited snapshot). Model turns it into the canon.Model it stands
// for, without bytes.
//
// Making a snapshot of a model (reading its bytes) is hash.Snapshot's job; this package reads and
// writes the file only, and imports no package that opens models.
package snapshot

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/values"
	"github.com/zeebo/blake3"
)

// Schema is the "schema" of the snapshot files this package reads and writes; SchemaPrefix starts the
// schema of every version.
const (
	Schema       = "stdiff.snapshot/v1"
	SchemaPrefix = "stdiff.snapshot/"
)

// Limits of Read: a snapshot is refused past them, before it is parsed whole. A 50,000-tensor model's
// snapshot is about 17 MB; reading one takes about 7 times its size in memory.
const (
	MaxFileSize = 256 << 20
	MaxTensors  = 10_000_000
)

// Snapshot is the record of one model. Tensors are sorted by name, metadata by key.
type Snapshot struct {
	Schema string `json:"schema"`
	// Of is the model as it was named when the snapshot was made: a path relative to the snapshot's
	// folder when it was written to a file (see Rel), or a URL.
	Of string `json:"model"`
	// Format is the model's format (safetensors, gguf, pytorch, numpy); Size its total size in bytes.
	Format canon.Format `json:"format"`
	Size   int64        `json:"size"`
	// StructureID and ContentID are the model's IDs (canon.StructureID, canon.ContentID): Read checks
	// them against the tensors and digests below.
	StructureID string `json:"structure_id"`
	ContentID   string `json:"content_id"`
	// Digest is the BLAKE3 of everything else the snapshot holds (see Seal): Read checks it too.
	Digest  string  `json:"digest"`
	Verdict Verdict `json:"verdict"`
	// Findings are the model's findings. In the file a finding about the whole file (Offset -1) has
	// the offset null, as in every report stdiff writes; Read reads -1 there (as snapshots were
	// written before) as null, and refuses any other negative offset.
	Findings []finding.Finding `json:"findings"`
	// Companions are the files a loader reads beside the tensors of a folder model (package
	// companion: small ones whole, a tokenizer.json by its summary, each by its digest), in path
	// order; nil (absent from the file) for a model named by a file, and in snapshots written before
	// stdiff recorded them. The digest covers them when they are there.
	Companions []companion.File `json:"companions,omitempty"`
	Metadata   []Meta           `json:"metadata"`
	Tensors    []Tensor         `json:"tensors"`
}

// sealedFinding is a finding as the digest covers it: encoding/json's form of the struct, a whole-file
// offset -1 (not null, as the snapshot file writes it), as snapshots have been sealed from the start.
type sealedFinding finding.Finding

// Verdict is the reference reader's verdict on the model.
type Verdict struct {
	Valid bool `json:"valid"`
	// Kind and Message are the reference's error when it rejects the model.
	Kind    finding.RefKind `json:"kind,omitempty"`
	Message string          `json:"message,omitempty"`
}

// Meta is one metadata entry (see canon.MetaEntry).
type Meta struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// Type is a GGUF value's type; NotString marks a safetensors value that is not a JSON string.
	Type      string `json:"type,omitempty"`
	NotString bool   `json:"not_string,omitempty"`
}

// Tensor is one tensor: what the header says of it, the BLAKE3 of its bytes (64 hex digits) and the
// summary of its values (nil for a dtype package values does not decode).
type Tensor struct {
	Name   string        `json:"name"`
	DType  tensor.DType  `json:"dtype"`
	Shape  []uint64      `json:"shape"`
	Bytes  uint64        `json:"bytes"`
	BLAKE3 string        `json:"blake3"`
	Values *values.Stats `json:"values,omitempty"`
}

// New makes the snapshot of m, named name, from the BLAKE3 of each tensor's bytes and the summary of
// its values (both in m.Tensors order; stats[i] nil when not summarised), and seals it (IDs and Digest).
func New(m *canon.Model, name string, digests [][32]byte, stats []*values.Stats) *Snapshot {
	s := &Snapshot{Schema: Schema, Of: name, Format: m.Format, Size: m.FileSize, Verdict: Verdict{Valid: m.Valid()},
		Findings: slices.Clone(m.Findings), Metadata: make([]Meta, len(m.Metadata)), Tensors: make([]Tensor, 0, len(m.Tensors))}
	if s.Format == "" {
		s.Format = canon.FormatSafetensors
	}
	if s.Findings == nil {
		s.Findings = []finding.Finding{}
	}
	if m.RefErr != nil {
		s.Verdict.Kind, s.Verdict.Message = m.RefErr.Kind, m.RefErr.Message
	}
	for i, e := range m.Metadata {
		s.Metadata[i] = Meta{Key: e.Key, Value: e.Value, Type: e.Type, NotString: e.NotString}
	}
	slices.SortStableFunc(s.Metadata, func(a, b Meta) int { return strings.Compare(a.Key, b.Key) })
	for _, i := range canon.CanonicalOrder(m) {
		t := &m.Tensors[i]
		shape := t.Shape
		if shape == nil {
			shape = []uint64{}
		}
		s.Tensors = append(s.Tensors, Tensor{Name: t.Name, DType: t.DType, Shape: shape, Bytes: t.Len(), BLAKE3: hex.EncodeToString(digests[i][:]), Values: stats[i]})
	}
	s.Seal()
	return s
}

// Recordable says why the model m, named name, cannot be recorded in a snapshot (nil when it can): a
// snapshot is JSON, whose strings are UTF-8, so a model name, tensor name, dtype, metadata key or
// value that is not valid UTF-8 (GGUF allows any bytes) would read back as other text, and the
// snapshot as edited. New's m and name must be recordable.
func Recordable(m *canon.Model, name string) error {
	bad := func(what, s string) error {
		return fmt.Errorf("%s %q is not valid UTF-8: a snapshot (JSON) cannot record it", what, s)
	}
	if !utf8.ValidString(name) {
		return bad("the model's name", name)
	}
	for i := range m.Tensors {
		switch t := &m.Tensors[i]; {
		case !utf8.ValidString(t.Name):
			return bad("tensor name", t.Name)
		case !utf8.ValidString(string(t.DType)):
			return bad("the dtype of tensor "+strconv.Quote(t.Name)+",", string(t.DType))
		}
	}
	for _, e := range m.Metadata {
		switch {
		case !utf8.ValidString(e.Key):
			return bad("metadata key", e.Key)
		case !utf8.ValidString(e.Value):
			return bad("the value of metadata key "+strconv.Quote(e.Key)+",", e.Value)
		}
	}
	return nil
}

// Seal sets the IDs and the Digest from the rest of the snapshot.
func (s *Snapshot) Seal() {
	m, digests := s.model(""), s.digests()
	s.StructureID, s.ContentID = canon.StructureID(m), canon.ContentID(m, digests)
	s.Digest = s.digest()
}

// digest is the BLAKE3 of everything in the snapshot but its IDs and Digest, in a binary form
// ("stdiff-snapshot-digest/1", then each field in order: strings and lists with their lengths as
// uvarints, integers as varints, floats as their 8 bytes little-endian with every undefined one as
// one NaN, since JSON writes them all as null; the findings as sealedFinding, a whole-file offset -1,
// as when snapshots wrote it so): a hand-edited value, verdict or summary changes it.
func (s *Snapshot) digest() string {
	h := blake3.New()
	var b []byte
	str := func(v string) { b = append(binary.AppendUvarint(b, uint64(len(v))), v...) }
	num := func(v int64) { b = binary.AppendVarint(b, v) }
	flt := func(x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			x = math.NaN()
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	str("stdiff-snapshot-digest/1")
	str(s.Schema)
	str(s.Of)
	str(string(s.Format))
	num(s.Size)
	str(string(appendJSON(nil, s.Verdict)))
	var sealed []sealedFinding // nil for nil, as the findings
	for _, f := range s.Findings {
		sealed = append(sealed, sealedFinding(f))
	}
	if s.Findings != nil && sealed == nil {
		sealed = []sealedFinding{}
	}
	str(string(appendJSON(nil, sealed)))
	if s.Companions != nil { // absent before stdiff recorded them: those snapshots keep their digest
		str("companions")
		str(string(appendJSON(nil, s.Companions)))
	}
	num(int64(len(s.Metadata)))
	for _, e := range s.Metadata {
		str(e.Key)
		str(e.Value)
		str(e.Type)
		num(int64(boolInt(e.NotString)))
	}
	num(int64(len(s.Tensors)))
	for _, t := range s.Tensors {
		str(t.Name)
		str(string(t.DType))
		num(int64(len(t.Shape)))
		for _, d := range t.Shape {
			b = binary.AppendUvarint(b, d)
		}
		b = binary.AppendUvarint(b, t.Bytes)
		str(t.BLAKE3)
		if v := t.Values; v == nil {
			num(0)
		} else {
			num(1)
			num(v.Count)
			flt(v.Min)
			flt(v.Max)
			flt(v.Mean)
			flt(v.Std)
			num(v.NaN)
			num(v.Inf)
			num(v.Zeros)
			num(v.Subnormal)
			flt(v.L2)
		}
		if len(b) > 1<<16 {
			h.Write(b)
			b = b[:0]
		}
	}
	h.Write(b)
	return "b3:" + hex.EncodeToString(h.Sum(nil))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// digests are the tensors' BLAKE3 digests, in Tensors order (Read checked their form).
func (s *Snapshot) digests() [][32]byte {
	d := make([][32]byte, len(s.Tensors))
	for i := range s.Tensors {
		hex.Decode(d[i][:], []byte(s.Tensors[i].BLAKE3))
	}
	return d
}

// Model is the model the snapshot stands for, named name (the snapshot's path): its header as the
// snapshot records it, without bytes. Tensors are in name order, at made-up offsets one after
// another from 0 (a snapshot does not record the layout); HeaderLen is 0.
func (s *Snapshot) Model(name string) *canon.Model { return s.model(name) }

func (s *Snapshot) model(name string) *canon.Model {
	m := &canon.Model{Name: name, Format: s.Format, FileSize: s.Size, HeaderParsed: true, HasMetadata: len(s.Metadata) > 0,
		Tensors: make([]tensor.Tensor, len(s.Tensors)), Metadata: make([]canon.MetaEntry, len(s.Metadata))}
	var off uint64
	for i, t := range s.Tensors {
		m.Tensors[i] = tensor.Tensor{Name: t.Name, DType: t.DType, Shape: t.Shape, Begin: off, End: off + t.Bytes, HeaderOffset: -1}
		off += t.Bytes
	}
	for i, e := range s.Metadata {
		m.Metadata[i] = canon.MetaEntry{Key: e.Key, Value: e.Value, Type: e.Type, NotString: e.NotString, Offset: -1}
	}
	for _, f := range s.Findings {
		m.AddFinding(f)
	}
	if !s.Verdict.Valid {
		m.RefErr = &canon.RefError{Kind: s.Verdict.Kind, Message: s.Verdict.Message, Offset: -1}
	}
	return m
}

// Digests are the tensors' BLAKE3 digests and Stats their value summaries (nil where none), both in
// the order of Model's tensors.
func (s *Snapshot) Digests() [][32]byte { return s.digests() }

// Stats are the tensors' value summaries, in the order of Model's tensors (nil where none).
func (s *Snapshot) Stats() []*values.Stats {
	out := make([]*values.Stats, len(s.Tensors))
	for i := range s.Tensors {
		out[i] = s.Tensors[i].Values
	}
	return out
}

// Write writes s as JSON (see encode): a line for the fields of the model, then a line per metadata
// entry and per tensor, so that two snapshots compare well with a line diff. The same snapshot gives
// the same bytes.
func Write(w io.Writer, s *Snapshot) error {
	_, err := w.Write(s.encode(nil))
	return err
}

// VersionError is a snapshot of a schema version this package does not read.
type VersionError struct {
	// Schema is the snapshot's "schema".
	Schema string
}

// Error names the version found and the one read.
func (e *VersionError) Error() string {
	return fmt.Sprintf("a snapshot of schema %q; this stdiff reads %s", e.Schema, Schema)
}

// MismatchError is a snapshot whose IDs or digest do not match its own content: it was edited by hand
// (or damaged) after it was written.
type MismatchError struct {
	// What is "structure ID", "content ID" or "digest"; Recorded is the value in the file, Computed
	// the value of its content.
	What, Recorded, Computed string
}

// Error says which one does not match.
func (e *MismatchError) Error() string {
	return fmt.Sprintf("snapshot does not match its own IDs (%s %s recorded, %s computed from its content)", e.What, short(e.Recorded), short(e.Computed))
}

// short is an ID's prefix and first 16 hex digits.
func short(id string) string {
	if i := strings.IndexByte(id, ':'); i >= 0 && len(id) > i+17 {
		return id[:i+17] + "…"
	}
	return id
}

// ErrNotSnapshot is the error of Read for JSON that is not a snapshot (no "schema" of a snapshot).
var ErrNotSnapshot = errors.New("not a stdiff snapshot")

// ErrInvalid is wrapped by the errors of a snapshot that is not well formed: not JSON of the schema,
// unsorted tensors, a digest that is not 64 hex digits, past the limits.
var ErrInvalid = errors.New("invalid snapshot")

// Sniff reports whether b, the first bytes of a file, begin a snapshot: a JSON object whose first
// field is a "schema" of a snapshot (any version). Read says whether it is one it reads.
func Sniff(b []byte) bool {
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("{"))
	if !ok {
		return false
	}
	rest, ok = bytes.CutPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte(`"schema"`))
	if !ok {
		return false
	}
	rest, ok = bytes.CutPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte(":"))
	return ok && bytes.HasPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte(`"`+SchemaPrefix))
}

// Read reads a snapshot strictly: at most MaxFileSize bytes of JSON with exactly the fields of its
// schema, at most MaxTensors tensors in name order, each digest 64 hex digits; then it checks its IDs
// and digest against its content. Errors: ErrNotSnapshot, a *VersionError, errors wrapping ErrInvalid,
// a *MismatchError.
func Read(r io.Reader) (*Snapshot, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%w: larger than %d MiB", ErrInvalid, MaxFileSize>>20)
	}
	schema, err := readSchema(b)
	switch {
	case err != nil || !strings.HasPrefix(schema, SchemaPrefix):
		return nil, ErrNotSnapshot
	case schema != Schema:
		return nil, &VersionError{Schema: schema}
	}
	s, ok := decodeAsWritten(b)
	if !ok { // JSON of the schema, written otherwise: read strictly, slowly
		var w wire
		if err := decodeStrict(b, &w); err != nil {
			return nil, fmt.Errorf("%w: %s", ErrInvalid, problem(err, b))
		}
		s = w.snapshot()
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	m, digests := s.model(""), s.digests()
	for _, c := range []struct{ what, recorded, computed string }{
		{"structure ID", s.StructureID, canon.StructureID(m)},
		{"content ID", s.ContentID, canon.ContentID(m, digests)},
		{"digest", s.Digest, s.digest()},
	} {
		if c.recorded != c.computed {
			return nil, &MismatchError{What: c.what, Recorded: c.recorded, Computed: c.computed}
		}
	}
	return s, nil
}

// readSchema reads the first field of the JSON object b begins with, which must be "schema", a string.
func readSchema(b []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var tokens [3]json.Token
	for i := range tokens {
		t, err := dec.Token()
		if err != nil {
			return "", err
		}
		tokens[i] = t
	}
	schema, ok := tokens[2].(string)
	if tokens[0] != json.Delim('{') || tokens[1] != "schema" || !ok {
		return "", ErrNotSnapshot
	}
	return schema, nil
}

// wire is a snapshot as Read decodes it: its tensors' summaries are decoded without a decoder of
// their own (values.Stats.UnmarshalJSON), which would parse each one twice.
type wire struct {
	Snapshot
	Tensors []wireTensor `json:"tensors"`
}

type wireTensor struct {
	Name   string       `json:"name"`
	DType  tensor.DType `json:"dtype"`
	Shape  []uint64     `json:"shape"`
	Bytes  uint64       `json:"bytes"`
	BLAKE3 string       `json:"blake3"`
	Values *struct {
		Count, NaN, Inf, Zeros, Subnormal int64
		Min, Max, Mean, Std, L2           *float64
	} `json:"values"`
}

// snapshot is the Snapshot w holds.
func (w *wire) snapshot() *Snapshot {
	s := w.Snapshot
	s.Tensors = make([]Tensor, len(w.Tensors))
	f := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	for i, t := range w.Tensors {
		s.Tensors[i] = Tensor{Name: t.Name, DType: t.DType, Shape: t.Shape, Bytes: t.Bytes, BLAKE3: t.BLAKE3}
		if v := t.Values; v != nil {
			s.Tensors[i].Values = &values.Stats{Count: v.Count, Min: f(v.Min), Max: f(v.Max), Mean: f(v.Mean), Std: f(v.Std),
				NaN: v.NaN, Inf: v.Inf, Zeros: v.Zeros, Subnormal: v.Subnormal, L2: f(v.L2)}
		}
	}
	return &s
}

// check checks what Read needs of a decoded snapshot before computing its IDs.
func (s *Snapshot) check() error {
	switch {
	case !s.Format.Known():
		return fmt.Errorf("format %q is none stdiff reads", s.Format)
	case len(s.Tensors) > MaxTensors:
		return fmt.Errorf("%d tensors, more than %d", len(s.Tensors), MaxTensors)
	case s.Verdict.Valid != (s.Verdict.Kind == ""):
		return errors.New("the verdict is valid with an error kind, or invalid without one")
	case !isCode(string(s.Verdict.Kind)):
		return fmt.Errorf("the verdict's kind %q is not an error kind", s.Verdict.Kind)
	}
	for _, f := range s.Findings {
		switch {
		case f.Code == "" || !isCode(f.Code):
			return fmt.Errorf("finding code %q is not a code", f.Code)
		case f.Severity != finding.SevError && f.Severity != finding.SevWarning && f.Severity != finding.SevInfo:
			return fmt.Errorf("finding %s: severity %q is not error, warning or info", f.Code, f.Severity)
		case !isCode(string(f.RefKind)):
			return fmt.Errorf("finding %s: reference kind %q is not an error kind", f.Code, f.RefKind)
		case f.Offset < -1:
			return fmt.Errorf("finding %s: offset %d is not a byte offset", f.Code, f.Offset)
		}
	}
	for i, f := range s.Companions {
		if i > 0 && s.Companions[i-1].Path >= f.Path {
			return fmt.Errorf("companion file %q is out of order or repeated", f.Path)
		}
		if !strings.HasPrefix(f.Digest, "b3:") {
			return fmt.Errorf("companion file %q: digest %q is not b3:…", f.Path, f.Digest)
		}
	}
	for i := range s.Metadata {
		if i > 0 && s.Metadata[i-1].Key >= s.Metadata[i].Key {
			return fmt.Errorf("metadata key %q is out of order or repeated", s.Metadata[i].Key)
		}
	}
	for i := range s.Tensors {
		t := &s.Tensors[i]
		switch {
		case i > 0 && s.Tensors[i-1].Name >= t.Name:
			return fmt.Errorf("tensor %q is out of order or repeated", t.Name)
		case t.DType == "":
			return fmt.Errorf("tensor %q has no dtype", t.Name)
		case len(t.BLAKE3) != 64 || strings.ToLower(t.BLAKE3) != t.BLAKE3:
			return fmt.Errorf("tensor %q: blake3 is not 64 lower-case hex digits", t.Name)
		}
		if _, err := hex.DecodeString(t.BLAKE3); err != nil {
			return fmt.Errorf("tensor %q: blake3 is not 64 lower-case hex digits", t.Name)
		}
	}
	return nil
}

// isCode reports whether c could be one of stdiff's codes (finding codes, error kinds, severities):
// ASCII letters, digits, '.', '-' and '_' only. Writers print codes as they are, so a snapshot's codes
// must be such names (not, say, a terminal escape).
func isCode(c string) bool {
	for i := 0; i < len(c); i++ {
		if b := c[i]; !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '.' || b == '-' || b == '_') {
			return false
		}
	}
	return true
}

// ReadFile reads the snapshot in the file at path (see Read). Its errors are *canon.ReadError values
// naming the file, with a hint.
func ReadFile(path string) (*Snapshot, error) {
	f, _, err := canon.OpenRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := Read(f)
	if err != nil {
		return nil, ReadError(path, err)
	}
	return s, nil
}

// ReadError is err, an error of Read, as a *canon.ReadError naming the snapshot, with a hint.
func ReadError(path string, err error) error {
	re := &canon.ReadError{Name: path, Op: "read", Err: err}
	var ve *VersionError
	var me *MismatchError
	switch {
	case errors.As(err, &ve):
		re.Hint = "make it again with this stdiff: `stdiff snapshot MODEL -o FILE`"
	case errors.As(err, &me), errors.Is(err, ErrInvalid):
		re.Hint = "a snapshot is not meant to be edited: make it again with `stdiff snapshot MODEL -o FILE`"
	}
	return re
}

// Rel is how a snapshot written to out names the model spec: its path relative to out's folder
// (with forward slashes) when both are local paths and out is not "" (standard output), else spec.
func Rel(spec, out string) string {
	if out == "" || strings.Contains(spec, "://") {
		return spec
	}
	absSpec, err1 := filepath.Abs(spec)
	absOut, err2 := filepath.Abs(out)
	if err1 != nil || err2 != nil {
		return spec
	}
	rel, err := filepath.Rel(filepath.Dir(absOut), absSpec)
	if err != nil {
		return spec
	}
	return filepath.ToSlash(rel)
}

// WriteFile writes s to the file at path atomically (see canon.WriteFileAtomic): path is never left
// half-written, nor replaced when ctx is done first; the files keep names (the model's own) and
// anything but a regular file are refused.
func WriteFile(ctx context.Context, path string, s *Snapshot, keep ...string) error {
	return canon.WriteFileAtomic(ctx, path, "a snapshot", func(w io.Writer) error { return Write(w, s) }, keep...)
}
