package hash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// Schema is the "schema" of a Report in JSON, and of each of its JSONL records.
const Schema = "stdiff.hash/v1"

// Report is what `stdiff hash` says of models: one File per model named, in the order named.
type Report struct {
	Schema string `json:"schema"`
	Files  []File `json:"files"`
}

// File is what Run found for one model: its IDs, and why those it lacks are missing. Err set means the
// model could not be opened or read at all, and then only Path is meaningful.
//
// In JSON (see MarshalJSON) a file is {path, size, mtime, valid, reference_error, structure_id,
// content_id (with Options.Content), the ecosystem hashes (with Options.All), findings}, each hash null
// where the file has none; a file that could not be read is {path, error}.
type File struct {
	Path string
	// Size and MTime (UTC) are the local file's, as it was when opened: -1 and the zero time for a URL or
	// a shard set.
	Size  int64
	MTime time.Time
	// Valid is the reference reader's verdict; RefErr says why it rejects the file.
	Valid  bool
	RefErr *canon.RefError
	// StructureID is "" when the header cannot be read (HeaderErr says why).
	StructureID Hex
	// ContentID is nil unless asked for (Options.Content), and "" when the file has none: its header
	// cannot be read, or its tensors lie past its end (ContentErr says why).
	ContentID *Hex
	// Ecosystem is nil unless asked for (Options.All).
	Ecosystem *Ecosystem
	// Xet is nil unless asked for (Options.Xet).
	Xet *Xet
	// Findings are those of the hashes embedded in the metadata (see VerifyEmbedded), with Options.All.
	Findings []finding.Finding
	// Canonical is the canonical form the structure ID hashes (with Options.Content, the content form the
	// content ID hashes), with Options.Canonical; nil when the file has no such ID.
	Canonical []byte
	// HeaderErr says why the header-based IDs (structure ID, content ID, AutoV3) are missing; ContentErr
	// why the content ID is (with Options.Content).
	HeaderErr, ContentErr error
	// Err is why the model could not be opened or read.
	Err error
	// CompanionsID identifies the files a loader reads beside the tensors of a folder model
	// (companion.ID: config.json, the tokenizer's files, …); "" for a model not named by its folder.
	CompanionsID Hex

	// bytesOnly: the file was read as bytes, for its Xet hash alone (see Options.Xet): it has no IDs.
	bytesOnly bool
	// tensors are the digests of the model's tensors by name, when its content ID was computed (for
	// the check of a snapshot, which names the tensors that changed).
	tensors map[string][32]byte
	// companions are the folder model's companion files (for the check of a snapshot, which names
	// those that changed).
	companions []companion.File
}

// Run opens each spec (a file, a shard set, a URL or hf://, as canon/source opens them) and computes
// its structure ID and, as opt asks, its content ID, ecosystem hashes and canonical form. Models are
// read one after another, each one's bytes in parallel; a model that cannot be read gets a File with
// Err, and Run goes on with the next.
func Run(ctx context.Context, specs []string, opt Options) *Report {
	r := &Report{Schema: Schema, Files: make([]File, 0, len(specs))}
	for _, spec := range specs {
		if opt.xetOnly() {
			r.Files = append(r.Files, xetFile(ctx, spec, opt))
			continue
		}
		f := hashFile(ctx, spec, opt, opt.All && namesShard(spec))
		if opt.Xet || opt.All && isLocalFile(spec) { // the Hub's hash rides with the ecosystem hashes of a local file
			addXet(ctx, &f, opt)
		}
		r.Files = append(r.Files, f)
	}
	if opt.Xet || opt.All {
		shareXet(r.Files)
	}
	return r
}

// namesShard reports whether spec names one file of a shard set or of a split GGUF model by its name
// (…-0000K-of-0000N.safetensors or .gguf), not a folder or an index. Ecosystem hashes are hashes of
// files: of such a file, they are its own, and so are its IDs then (see Options.All).
func namesShard(spec string) bool {
	base := path.Base(filepath.ToSlash(spec))
	if _, _, n, ok := source.ShardPattern(base); ok && n > 1 {
		return true
	}
	_, _, n, ok := source.GGUFSplitPattern(base)
	return ok && n > 1
}

// Outcome is Trouble when a model could not be read, else Found when one is invalid or lacks an ID
// asked for (a shard set with shards missing has none), else Clean.
func (r *Report) Outcome() canon.Outcome {
	o := canon.Clean
	for i := range r.Files {
		f := &r.Files[i]
		switch {
		case f.Err != nil:
			o = canon.Trouble
		case !f.Valid || f.HeaderErr != nil || f.ContentErr != nil:
			o = max(o, canon.Found)
		}
	}
	return o
}

// hashFile computes what opt asks for one model (see Run); single opens spec as the one file it
// names (source.OpenOne), never as a shard set.
func hashFile(ctx context.Context, spec string, opt Options, single bool) File {
	open := source.Open
	if single {
		open = source.OpenOne
	}
	opened, err := open(ctx, spec, opt.Source)
	if err != nil {
		return File{Path: spec, Err: err}
	}
	defer opened.Close()
	f := File{Path: spec, Size: -1}
	if err := f.fill(ctx, opened, opt); err != nil {
		return File{Path: spec, Err: err}
	}
	return f
}

// ErrEcosystemOfSet is the cause of File.Err when ecosystem hashes (Options.All), which are hashes
// of files, are asked of a set of shards.
var ErrEcosystemOfSet = errors.New("ecosystem hashes are hashes of files, and this is a set of shards")

// fill computes the header's IDs, then reads the bytes: in one pass when ecosystem hashes are wanted,
// else the tensors only. A model whose header cannot be read still has its whole-file hashes.
func (f *File) fill(ctx context.Context, opened *source.Opened, opt Options) error {
	m, src := opened.Model, opened.Source
	content, all, canonical := opt.Content, opt.All, opt.Canonical
	if all && m.Shards != nil {
		return &canon.ReadError{Name: f.Path, Err: ErrEcosystemOfSet, Hint: "hash the shard files one by one"}
	}
	if fs, ok := src.(*source.FileSource); ok {
		st, err := fs.File().Stat()
		if err != nil {
			return canon.PathError("stat", f.Path, err)
		}
		f.Size, f.MTime = fs.Size(), st.ModTime().UTC()
	}
	f.Valid, f.RefErr = m.Valid(), m.RefErr
	if opened.Folder != "" {
		f.CompanionsID, f.companions = Hex(companion.ID(opened.Companions)), opened.Companions
	}
	switch {
	case !m.HeaderParsed:
		f.HeaderErr = HeaderError(m)
	case m.MissingShards() != nil:
		f.HeaderErr = missingShardsError(m)
	default:
		f.StructureID = Hex(canon.StructureID(m))
	}
	if content {
		if f.ContentErr = f.HeaderErr; f.ContentErr == nil {
			f.ContentErr = CheckRanges(src, m)
		}
	}
	digests := content && f.ContentErr == nil
	var d [][32]byte
	var err error
	switch {
	case all && opened.File != nil: // the file's bytes are not the model's (ONNX): two passes
		if opt.Reading != nil {
			opt.Reading(f.Path, opened.File.Size())
		}
		var e Ecosystem
		if e, _, err = FileHashes(ctx, opened.File, &canon.Model{Name: m.Name, Format: m.Format, FileSize: opened.File.Size(), HeaderLen: uint64(opened.File.Size())}, false, opt); err != nil {
			return err
		}
		e.AutoV3 = "" // a hash of a safetensors file's data section: an ONNX file has none
		f.Ecosystem = &e
		if digests {
			if d, err = Digests(ctx, opened, opt); err != nil {
				return err
			}
		}
	case all:
		if opt.Reading != nil {
			opt.Reading(f.Path, src.Size())
		}
		var e Ecosystem
		if e, d, err = FileHashes(ctx, src, m, digests, opt); err != nil {
			return err
		}
		f.Ecosystem, f.Findings = &e, VerifyEmbedded(m, e.AutoV3)
	case digests:
		if opt.Reading != nil {
			opt.Reading(f.Path, m.DataLen())
		}
		if d, err = Digests(ctx, opened, opt); err != nil {
			return err
		}
	}
	if err := opened.Unchanged(); err != nil {
		return err
	}
	if content {
		id := Hex("")
		if digests {
			id = Hex(canon.ContentID(m, d))
			f.tensors = make(map[string][32]byte, len(d))
			for i := range d {
				f.tensors[m.Tensors[i].Name] = d[i]
			}
		}
		f.ContentID = &id
	}
	switch {
	case canonical && content && digests:
		f.Canonical = canon.CanonicalContent(m, d)
	case canonical && !content && f.StructureID != "":
		f.Canonical = canon.Canonical(m)
	}
	return nil
}

// Digests returns the per-tensor digests of an opened model (see TensorDigests): read in parallel from
// a local file, which must not have changed since it was opened, and front to back from a remote one
// (see StreamDigests).
func Digests(ctx context.Context, opened *source.Opened, opt Options) ([][32]byte, error) {
	if opened.Remote {
		return StreamDigests(ctx, opened.Source, opened.Model, opt)
	}
	d, err := TensorDigests(ctx, opened.Source, opened.Model, opt)
	if err != nil {
		return nil, err
	}
	return d, opened.Unchanged()
}

// HeaderError explains why a model's header could not be read at all (m.HeaderParsed false), from its
// first error finding: a *canon.ReadError with the finding's hint, saying which format the file is
// not a readable file of (safetensors, GGUF).
func HeaderError(m *canon.Model) error {
	what := "not a readable safetensors file"
	if m.Format == canon.FormatGGUF {
		what = "not a readable GGUF file"
	}
	for _, f := range m.Findings {
		if f.Severity == finding.SevError {
			return &canon.ReadError{Name: m.Name, Err: fmt.Errorf("%s: %s", what, f.Message), Hint: f.Hint}
		}
	}
	return &canon.ReadError{Name: m.Name, Err: fmt.Errorf("%s: %v", what, m.RefErr)}
}

// errNotFolder is why a model has no companion files ID.
var errNotFolder = errors.New("it is not named by its folder (a save_pretrained, PEFT or diffusers folder, or a Hugging Face cache folder), whose files beside the tensors the ID covers")

// errNoAutoV1 is why a file under AutoV1MinSize bytes has no AutoV1.
var errNoAutoV1 = fmt.Errorf("it hashes file bytes 0x100000 to 0x110000, and the file has fewer than %s bytes", textfmt.Thousands(AutoV1MinSize))

// Hash returns the file's hash of one manifest kind (see Kinds), without the kind's prefix, or "" when
// it has none: then with why, when it cannot have one (a header that cannot be read, a file too small
// for an AutoV1), and nil when it was not asked for.
func (f *File) Hash(kind string) (string, error) {
	switch kind {
	case "st1":
		if f.StructureID == "" {
			return "", f.HeaderErr
		}
		return strings.TrimPrefix(string(f.StructureID), canon.StructurePrefix), nil
	case "cf1":
		switch {
		case f.CompanionsID == "":
			return "", errNotFolder
		case f.StructureID == "": // a manifest identifies the tensors first
			return "", f.HeaderErr
		}
		return strings.TrimPrefix(string(f.CompanionsID), companion.IDPrefix), nil
	case "xet":
		if f.Xet == nil {
			return "", nil
		}
		return f.Xet.Hash, nil
	case "ct1":
		if f.ContentID == nil {
			return "", nil
		}
		if *f.ContentID == "" {
			return "", f.ContentErr
		}
		return strings.TrimPrefix(string(*f.ContentID), canon.ContentPrefix), nil
	}
	e := f.Ecosystem
	if e == nil {
		return "", nil
	}
	switch kind {
	case "sha256":
		return e.SHA256, nil
	case "autov1":
		if e.AutoV1 == "" {
			return "", errNoAutoV1
		}
		return string(e.AutoV1), nil
	case "autov2":
		return e.AutoV2, nil
	case "autov3":
		if e.AutoV3 == "" {
			return "", f.HeaderErr
		}
		return string(e.AutoV3), nil
	case "blake3":
		return e.BLAKE3, nil
	case "crc32":
		return e.CRC32, nil
	}
	return "", nil
}

// Diagnostic is a line for the user beside a file's record (the CLI writes it to stderr): a message
// that names the file, printable as it is, and what to do about it ("" when nothing).
type Diagnostic struct {
	Message, Hint string
}

// Diagnostics says what a file's record leaves unsaid: why IDs are missing (a header that cannot be
// read, tensors past the end of the file), or that the reference reader rejects the file and the IDs
// describe what could be read; with findings, also its findings of severity warning or error (an
// embedded hash that does not match). A file that could not be read (Err) has none: its error says it.
func (f *File) Diagnostics(findings bool) []Diagnostic {
	if f.Err != nil {
		return nil
	}
	var out []Diagnostic
	path := textfmt.Escape(f.Path)
	hint := func(err error) string {
		var re *canon.ReadError
		if errors.As(err, &re) && re.Hint != "" {
			return re.Hint
		}
		return "`stdiff check " + path + "` says what is wrong"
	}
	switch {
	case f.HeaderErr != nil:
		missing := []string{"structure ID"}
		if f.ContentID != nil {
			missing = append(missing, "content ID")
		}
		if f.Ecosystem != nil && f.Ecosystem.AutoV3 == "" {
			missing = append(missing, "AutoV3")
		}
		list := missing[0]
		if k := len(missing); k > 1 {
			list = strings.Join(missing[:k-1], ", ") + " or " + missing[k-1]
		}
		out = append(out, Diagnostic{path + ": " + textfmt.Escape(reason(f.HeaderErr)) + "; no " + list, hint(f.HeaderErr)})
	case f.ContentErr != nil:
		out = append(out, Diagnostic{path + ": " + textfmt.Escape(reason(f.ContentErr)) + "; no content ID", hint(f.ContentErr)})
	case !f.Valid:
		out = append(out, Diagnostic{fmt.Sprintf("%s: warning: the reference reader rejects this file (%s); the IDs describe what could be read", path, f.RefErr.Kind), hint(nil)})
	}
	if findings {
		for _, fd := range f.Findings {
			if fd.Severity != finding.SevInfo {
				out = append(out, Diagnostic{path + ": " + fd.Code + ": " + textfmt.Escape(fd.Message), fd.Hint})
			}
		}
	}
	return out
}

// reason is an error as one line, without the file's name where the error names it.
func reason(err error) string {
	var re *canon.ReadError
	if errors.As(err, &re) {
		return re.Reason()
	}
	return err.Error()
}

// fileRecord is a File as JSON shows it.
type fileRecord struct {
	Path           string          `json:"path"`
	Size           *int64          `json:"size"`
	MTime          *string         `json:"mtime"`
	Valid          bool            `json:"valid"`
	ReferenceError *refErrorRecord `json:"reference_error"`
	StructureID    Hex             `json:"structure_id"`
	ContentID      *Hex            `json:"content_id,omitempty"`
	CompanionsID   Hex             `json:"companions_id,omitempty"`
	*Ecosystem
	XetHash  string            `json:"xet_hash,omitempty"`
	Xet      *Xet              `json:"xet,omitempty"`
	Findings []finding.Finding `json:"findings,omitempty"`
}

// errorRecord is a file that could not be read, as JSON shows it.
type errorRecord struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// refErrorRecord is the reference reader's error as JSON shows it (as `check` does).
type refErrorRecord struct {
	Kind    finding.RefKind `json:"kind"`
	Message string          `json:"message"`
	Offset  int64           `json:"offset"`
}

// MarshalJSON writes the file's JSON record (see File).
func (f File) MarshalJSON() ([]byte, error) { return json.Marshal(f.record()) }

// record is the file's JSON record (a JSONL line adds the schema: textfmt.WriteRecords).
func (f *File) record() any {
	if f.Err != nil {
		return errorRecord{Path: f.Path, Error: f.Err.Error()}
	}
	if f.bytesOnly {
		return f.xetRecord()
	}
	r := fileRecord{Path: f.Path, Valid: f.Valid, StructureID: f.StructureID, ContentID: f.ContentID, CompanionsID: f.CompanionsID, Ecosystem: f.Ecosystem, Xet: f.Xet}
	if f.Xet != nil {
		r.XetHash = f.Xet.Hash
	}
	if f.Size >= 0 {
		size, mtime := f.Size, f.MTime.Format(time.RFC3339Nano)
		r.Size, r.MTime = &size, &mtime
	}
	if e := f.RefErr; e != nil {
		r.ReferenceError = &refErrorRecord{Kind: e.Kind, Message: e.Message, Offset: e.Offset}
	}
	r.Findings = f.Findings
	return r
}
