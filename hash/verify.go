package hash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/snapshot"
	"github.com/stdiff/stdiff/canon/source"
)

// VerifySchema is the "schema" of a VerifyReport in JSON, and of each of its JSONL records.
const VerifySchema = "stdiff.hash-check/v1"

// VerifyReport is what `stdiff hash --check` says of a manifest: one VerifyResult per file it names,
// in the order of their first lines.
type VerifyReport struct {
	Schema string         `json:"schema"`
	Files  []VerifyResult `json:"files"`
}

// Code says why a file failed a manifest's check: what changed, most telling first, or which hash the
// file cannot have. Codes are stable and safe to match in scripts; cmd/stdiff/docs/scripting.md lists them.
type Code string

// Codes of a failed check.
const (
	// ChangeStructure: the structure ID differs: tensor names, dtypes, shapes or count.
	ChangeStructure Code = "change.structure"
	// ChangeContent: the content ID differs and the structure is the same: tensor bytes changed.
	ChangeContent Code = "change.content"
	// ChangeLayout: AutoV3 differs and the content ID is the same: tensor order or gaps in the data.
	ChangeLayout Code = "change.layout"
	// ChangeHeader: a whole-file hash differs and AutoV3 is the same: metadata or formatting.
	ChangeHeader Code = "change.header"
	// ChangeFile: whole-file hashes differ (Mismatched lists them); when the content ID was checked
	// too, every tensor is the same.
	ChangeFile Code = "change.file"
	// ChangeCompanion: the companion files ID differs (a folder model's config.json, tokenizer
	// files, chat template… were added, removed or changed) and the tensors are as the manifest says.
	// A snapshot's check names the files (Files).
	ChangeCompanion Code = "change.companion"
	// UnavailableCompanion: the manifest has a companion files ID and the model has none (it is no
	// longer named by its folder).
	UnavailableCompanion Code = "unavailable.companion"
	// ChangeVerdict: the reference reader's verdict on the model is not the one its snapshot recorded
	// (valid or rejected, and the error kind), and its IDs match (VerifySnapshot).
	ChangeVerdict Code = "change.verdict"
	// UnavailableStructure: the manifest has a structure ID and the file has none (its header cannot
	// be read).
	UnavailableStructure Code = "unavailable.structure"
	// UnavailableContent: the manifest has a content ID and the file has none (its header cannot be
	// read, or its tensors lie past its end).
	UnavailableContent Code = "unavailable.content"
	// UnavailableAutoV1: the manifest has an AutoV1 and the file is too small to have one.
	UnavailableAutoV1 Code = "unavailable.autov1"
	// UnavailableAutoV3: the manifest has an AutoV3 and the file's header length does not say where
	// its data starts.
	UnavailableAutoV3 Code = "unavailable.autov3"
)

// unavailable is the code of each kind a file may be unable to have.
var unavailable = map[string]Code{"st1": UnavailableStructure, "ct1": UnavailableContent, "cf1": UnavailableCompanion, "autov1": UnavailableAutoV1, "autov3": UnavailableAutoV3}

// VerifyResult is the check of one file. Err set means it could not be opened or read; it then failed.
type VerifyResult struct {
	Path string `json:"path"`
	OK   bool   `json:"ok"`
	// Code says why the file failed ("" when OK or unreadable); Reason is the same in words, made from
	// the code, Mismatched and Why.
	Code   Code   `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Checked are the kinds the manifest lists for the file, in the order of Kinds.
	Checked []string `json:"checked"`
	// Mismatched are the kinds whose hashes differ, in the order of Kinds.
	Mismatched []string `json:"mismatched,omitempty"`
	// Tensors name the tensors that changed (their bytes differ, or they are on one side only), in
	// name order, when a snapshot was checked (VerifySnapshot) and the content differs.
	Tensors []string `json:"tensors,omitempty"`
	// Files name the companion files that changed (added, removed or other digests), in path order,
	// when a snapshot of a folder model was checked.
	Files []string `json:"files,omitempty"`
	// Why is, for an unavailable.* code, why the file cannot have that hash.
	Why error `json:"-"`
	// Err is why the file could not be opened or read.
	Err error `json:"-"`
}

// MarshalJSON writes the result's JSON record: its fields as tagged, and "error" with Err's message.
func (v VerifyResult) MarshalJSON() ([]byte, error) { return json.Marshal(v.record()) }

// verifyRecord is a VerifyResult as JSON shows it.
type verifyRecord struct {
	Path       string   `json:"path"`
	OK         bool     `json:"ok"`
	Code       Code     `json:"code,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	Checked    []string `json:"checked"`
	Mismatched []string `json:"mismatched,omitempty"`
	Tensors    []string `json:"tensors,omitempty"`
	Files      []string `json:"files,omitempty"`
	Error      string   `json:"error,omitempty"`
}

func (v *VerifyResult) record() verifyRecord {
	r := verifyRecord{Path: v.Path, OK: v.OK, Code: v.Code, Reason: v.Reason, Checked: v.Checked, Mismatched: v.Mismatched, Tensors: v.Tensors, Files: v.Files}
	if v.Err != nil {
		r.Error = v.Err.Error()
	}
	return r
}

// Outcome is Trouble when a file could not be read, else Found when one failed, else Clean.
func (r *VerifyReport) Outcome() canon.Outcome {
	o := canon.Clean
	for i := range r.Files {
		switch f := &r.Files[i]; {
		case f.Err != nil:
			o = canon.Trouble
		case !f.OK:
			o = max(o, canon.Found)
		}
	}
	return o
}

// Failed counts the files that were read and did not match.
func (r *VerifyReport) Failed() int {
	n := 0
	for i := range r.Files {
		if f := &r.Files[i]; !f.OK && f.Err == nil {
			n++
		}
	}
	return n
}

// Unreadable counts the files that could not be opened or read.
func (r *VerifyReport) Unreadable() int {
	n := 0
	for i := range r.Files {
		if r.Files[i].Err != nil {
			n++
		}
	}
	return n
}

// DropMissing leaves out of the report the files that do not exist (their Err is an fs.ErrNotExist),
// as sha256sum --ignore-missing does; it reports whether no file is left.
func (r *VerifyReport) DropMissing() (none bool) {
	r.Files = slices.DeleteFunc(r.Files, func(v VerifyResult) bool { return errors.Is(v.Err, fs.ErrNotExist) })
	return len(r.Files) == 0
}

// Summary is the count line a check ends with when not every file is OK, as sha256sum ends with its
// warnings: "1 of 3 files did not match", "1 of 3 files could not be read", or both in one line;
// "" when every file is OK.
func (r *VerifyReport) Summary() string {
	failed, unread, n := r.Failed(), r.Unreadable(), len(r.Files)
	switch {
	case failed > 0 && unread > 0:
		return fmt.Sprintf("%d of %d files did not match, %d could not be read", failed, n, unread)
	case failed > 0:
		return fmt.Sprintf("%d of %d files did not match", failed, n)
	case unread > 0:
		return fmt.Sprintf("%d of %d files could not be read", unread, n)
	}
	return ""
}

// ManifestError is a manifest that cannot be verified: a line that is not a manifest line (Line, from
// 1), or no hashes at all (Line 0).
type ManifestError struct {
	Line int
	Err  error
	// Hint says what to do about it.
	Hint string
}

// Error is "line N: " and what is wrong with it, or what is wrong with the whole manifest.
func (e *ManifestError) Error() string {
	if e.Line > 0 {
		return "line " + strconv.Itoa(e.Line) + ": " + e.Err.Error()
	}
	return e.Err.Error()
}

// Unwrap returns the cause.
func (e *ManifestError) Unwrap() error { return e.Err }

// ErrEmptyManifest is the cause of the ManifestError of a manifest without a single hash.
var ErrEmptyManifest = errors.New("no hashes in the manifest")

// Verify reads a manifest (see ParseManifestKind; opt.BareKind says what bare hash lines hold) and
// checks each file it names, once, computing only what its lines need: the structure ID, the content
// ID when a ct1 line asks, the ecosystem hashes in one pass when any of theirs does. A file with lines
// of whole-file hashes only (as sha256sum and b3sum write) is read as the one file it is, even when it
// is a shard or an index; so is a shard named by its file name with whole-file hashes beside its IDs
// (as Run writes them with Options.All). A manifest that cannot be read or holds no hash is an error (a
// *ManifestError when it is the manifest's fault); a file that cannot be read is a result with Err.
func Verify(ctx context.Context, manifest io.Reader, opt Options) (*VerifyReport, error) {
	entries, err := ParseManifestKind(manifest, opt.BareKind)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, &ManifestError{Err: ErrEmptyManifest, Hint: "write one with `stdiff hash FILE… > MANIFEST`"}
	}
	var order []string
	want := map[string]map[string]string{}
	for _, e := range entries {
		if want[e.Path] == nil {
			want[e.Path] = map[string]string{}
			order = append(order, e.Path)
		}
		want[e.Path][e.Kind] = e.Value
	}
	r := &VerifyReport{Schema: VerifySchema, Files: make([]VerifyResult, 0, len(order))}
	for _, path := range order {
		v, _ := verifyFile(ctx, path, want[path], opt)
		r.Files = append(r.Files, v)
	}
	return r, nil
}

// VerifyManifest verifies the manifest in the file at path (see Verify), or, when the file is a
// snapshot, the model it names (see VerifySnapshot). Its errors are *canon.ReadError
// values naming the manifest, with the hint of a ManifestError.
func VerifyManifest(ctx context.Context, path string, opt Options) (*VerifyReport, error) {
	f, _, err := canon.OpenRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	if snapshot.Sniff(head[:n]) {
		return VerifySnapshot(ctx, path, opt)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, canon.PathError("read", path, err)
	}
	r, err := Verify(ctx, f, opt)
	if err != nil {
		if me := (*ManifestError)(nil); errors.As(err, &me) {
			return nil, &canon.ReadError{Name: path, Err: err, Hint: me.Hint}
		}
		return nil, &canon.ReadError{Name: path, Op: "read", Err: err}
	}
	return r, nil
}

// verifyFile hashes one file as far as want needs and compares; it returns what it computed too.
func verifyFile(ctx context.Context, path string, want map[string]string, opt Options) (VerifyResult, *File) {
	v := VerifyResult{Path: path, Checked: []string{}}
	all := false
	for _, k := range Kinds {
		if _, ok := want[k]; ok {
			v.Checked = append(v.Checked, k)
			all = all || (k != "st1" && k != "ct1" && k != "xet" && k != "cf1")
		}
	}
	_, opt.Content = want["ct1"]
	_, opt.Xet = want["xet"]
	opt.All, opt.Canonical = all, false
	wholeFileOnly := !slices.Contains(v.Checked, "st1") && !slices.Contains(v.Checked, "ct1") && !slices.Contains(v.Checked, "cf1")
	var f File
	if opt.xetOnly() {
		f = xetFile(ctx, path, opt)
	} else if f = hashFile(ctx, path, opt, wholeFileOnly || (all && namesShard(path))); opt.Xet {
		addXet(ctx, &f, opt)
	}
	if f.Err != nil {
		v.Err = f.Err
		return v, &f
	}
	for _, k := range v.Checked {
		got, why := f.Hash(k)
		if got == "" && why != nil {
			v.Code, v.Why = unavailable[k], why
			v.Reason = "no " + KindName(k) + ": " + reason(why)
			return v, &f
		}
		if strings.ToLower(got) != want[k] {
			v.Mismatched = append(v.Mismatched, k)
		}
	}
	v.OK = len(v.Mismatched) == 0
	if !v.OK {
		v.Code = changeCode(v.Checked, v.Mismatched)
		v.Reason = changeReason(v.Code, v.Checked, v.Mismatched)
	}
	return v, &f
}

// changeCode says what changed, most telling first, from which hashes were checked and which differ.
func changeCode(checked, bad []string) Code {
	has := func(list []string, k string) bool { return slices.Contains(list, k) }
	switch {
	case has(bad, "st1"):
		return ChangeStructure
	case has(bad, "ct1"):
		return ChangeContent
	case has(bad, "cf1"):
		return ChangeCompanion
	case has(bad, "autov3") && has(checked, "ct1"):
		return ChangeLayout
	case has(checked, "autov3") && !has(bad, "autov3"):
		return ChangeHeader
	}
	return ChangeFile
}

// changeReason is a change code in words.
func changeReason(c Code, checked, bad []string) string {
	also := ""
	if c != ChangeCompanion && slices.Contains(bad, "cf1") {
		also = "; " + companionsChanged
	}
	switch c {
	case ChangeStructure:
		return "structure changed: tensor names, dtypes, shapes or count differ" + also
	case ChangeContent:
		return "tensor bytes changed; names, dtypes and shapes are the same" + also
	case ChangeCompanion:
		return companionsChanged
	case ChangeLayout:
		return "data layout changed (tensor order or gaps); every tensor is the same"
	case ChangeHeader:
		return "header changed (metadata or formatting); the data section is the same"
	}
	if slices.Contains(checked, "ct1") {
		return "file bytes changed; every tensor is the same (metadata or layout edited)"
	}
	return "file bytes changed (" + strings.Join(bad, ", ") + " differ)"
}

// companionsChanged is ChangeCompanion in words.
const companionsChanged = "files beside the tensors changed (config.json, tokenizer, chat template…)"

// VerifySnapshot checks the model the snapshot at path was made of (its recorded path: absolute, or
// relative to the snapshot's folder; or its URL) against the snapshot's structure and content IDs and
// the reference's verdict it recorded: one VerifyResult, checked "st1" and "ct1", whose Tensors name the
// tensors that changed when the content differs. A verdict that differs (valid or rejected, or the error
// kind) fails the check: ChangeVerdict when the IDs match, else the reason of the IDs' code says it too.
// Every path a snapshot may record is checked, as sha256sum checks every path a manifest names. A
// snapshot that cannot be read (see snapshot.ReadFile) is an error naming the snapshot.
func VerifySnapshot(ctx context.Context, path string, opt Options) (*VerifyReport, error) {
	s, err := snapshot.ReadFile(path)
	if err != nil {
		return nil, err
	}
	target := s.Of
	if !source.IsRemote(target) && !filepath.IsAbs(filepath.FromSlash(target)) {
		target = filepath.Join(filepath.Dir(path), filepath.FromSlash(target))
	}
	want := map[string]string{"st1": strings.TrimPrefix(s.StructureID, canon.StructurePrefix), "ct1": strings.TrimPrefix(s.ContentID, canon.ContentPrefix)}
	if s.Companions != nil { // a folder model: the files beside its tensors are checked too
		want["cf1"] = strings.TrimPrefix(companion.ID(s.Companions), companion.IDPrefix)
	}
	v, f := verifyFile(ctx, target, want, opt)
	if slices.Contains(v.Mismatched, "cf1") {
		v.Files = changedFiles(s.Companions, f.companions)
		if len(v.Files) > 0 && v.Code == ChangeCompanion {
			v.Reason = "files beside the tensors changed: " + strings.Join(v.Files[:min(len(v.Files), 3)], ", ")
			if len(v.Files) > 3 {
				v.Reason += fmt.Sprintf(" and %d more", len(v.Files)-3)
			}
		}
	}
	if f.tensors != nil && !v.OK {
		v.Tensors = changedTensors(s, f.tensors)
		if len(v.Tensors) > 0 {
			v.Reason += ": " + strings.Join(v.Tensors[:min(len(v.Tensors), 3)], ", ")
			if len(v.Tensors) > 3 {
				v.Reason += fmt.Sprintf(" and %d more", len(v.Tensors)-3)
			}
		}
	}
	if f.Err == nil {
		verifyVerdict(&v, s.Verdict, f)
	}
	return &VerifyReport{Schema: VerifySchema, Files: []VerifyResult{v}}, nil
}

// verifyVerdict fails v when the reference's verdict on the model, f, is not the one the snapshot
// recorded.
func verifyVerdict(v *VerifyResult, recorded snapshot.Verdict, f *File) {
	var kind finding.RefKind
	if f.RefErr != nil {
		kind = f.RefErr.Kind
	}
	if f.Valid == recorded.Valid && kind == recorded.Kind {
		return
	}
	say := func(valid bool, kind finding.RefKind) string {
		if valid {
			return "valid"
		}
		return "rejected (" + string(kind) + ")"
	}
	why := "the reference reader's verdict changed: " + say(recorded.Valid, recorded.Kind) + " → " + say(f.Valid, kind)
	switch {
	case v.OK:
		v.OK, v.Code, v.Reason = false, ChangeVerdict, why
	case v.Code != "":
		v.Reason += "; " + why
	}
}

// changedFiles names, in path order, the companion files whose digests differ between a snapshot's
// (recorded) and the model's (got), and those on one side only.
func changedFiles(recorded, got []companion.File) []string {
	digests := map[string]string{}
	for _, f := range recorded {
		digests[f.Path] = f.Digest
	}
	var out []string
	for _, f := range got {
		if d, ok := digests[f.Path]; !ok || d != f.Digest {
			out = append(out, f.Path)
		}
		delete(digests, f.Path)
	}
	for p := range digests {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// changedTensors names, in name order, the tensors whose digests differ from the snapshot's, and
// those only on one side.
func changedTensors(s *snapshot.Snapshot, got map[string][32]byte) []string {
	var out []string
	recorded := s.Digests()
	for i, t := range s.Tensors {
		if d, ok := got[t.Name]; !ok || d != recorded[i] {
			out = append(out, t.Name)
		}
	}
	for name := range got {
		if _, found := slices.BinarySearchFunc(s.Tensors, name, func(t snapshot.Tensor, n string) int { return strings.Compare(t.Name, n) }); !found {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
