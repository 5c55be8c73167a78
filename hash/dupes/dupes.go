// Package dupes finds duplicate models among many: files, shard sets and URLs that hold the same bytes,
// the same tensors under other metadata or layout, the same tensors under other names, or the same
// architecture. It reads headers first, then a small sample of tensor bytes, and compares whole
// tensors only where samples agree, each file read once; a Cache remembers what it learnt of files
// that have not changed since. It counts each real file once (hard and symbolic links, shards shared
// between sets) and never offers a model that other models need, or a file that is one part of a model
// made of several, as a copy to delete; nor, as a content copy, a model that holds more than its
// tensors (an ONNX graph, a checkpoint's other content: canon/holds). A model folder (config.json
// and tokenizer files beside the weights: internal/folder) is one model, a copy only of a folder whose
// every other file is the same. Find returns a Report: plain data, each group naming the copy
// to keep (a KeepRule chooses) and how the others differ from it as keys and codes; package render
// (hash/dupes/render) writes it as text, JSON, JSONL, Markdown or HTML.
// Package act (hash/dupes/act) deletes the other copies or replaces them with hard links, checking
// each again first: it is the only code that changes users' files.
//
// It never prints (the writers write to the io.Writer they are given) and reads no environment: where
// the cache lives is the caller's choice (the CLI's default is $STDIFF_CACHE_DIR, else the user cache
// folder).
package dupes

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/holds"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/store"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/hash/dupes/derived"
	"github.com/stdiff/stdiff/hash/dupes/dupecache"
	"github.com/stdiff/stdiff/hash/dupes/internal/diskfile"
	"github.com/stdiff/stdiff/hash/dupes/internal/folder"
	"github.com/zeebo/blake3"
)

// Level is how alike the models of a group are.
type Level string

// Duplicate levels, from the strictest.
const (
	// LevelBytes: identical files.
	LevelBytes Level = "bytes"
	// LevelContent: the same tensors (names, dtypes, shapes, bytes); metadata or layout differ.
	LevelContent Level = "content"
	// LevelRenamed: the same tensor bytes (dtypes, shapes) under other names: a LoRA re-keyed from
	// kohya's names to diffusers' or PEFT's, a checkpoint saved with a prefix.
	LevelRenamed Level = "renamed"
	// LevelRun: the same architecture, saved by one training run (its epochs): the same
	// ss_session_id or ss_training_started_at, or one output name with epoch suffixes
	// (name-000010.safetensors beside name.safetensors). The weights differ.
	LevelRun Level = "run"
	// LevelStructure: the same architecture (names, dtypes, shapes); the weights differ.
	LevelStructure Level = "structure"
	// LevelDerived: a model and the copies derived from it (package hash/dupes/derived): rounded to
	// a narrower dtype, a subset of its tensors, the same tensors in another container. Asked for by
	// name only (it is not among the levels of the others); acted on only by package act's
	// Options.Derived, which keeps the original.
	LevelDerived Level = "derived"
)

// levelRank orders levels from the strictest.
var levelRank = map[Level]int{LevelBytes: 0, LevelContent: 1, LevelRenamed: 2, LevelDerived: 3, LevelRun: 4, LevelStructure: 5}

// ErrOtherFormat was wrapped by the error of an ONNX, PyTorch or NumPy model, which dupes left out.
//
// Deprecated: dupes compares every format stdiff reads; no error wraps it.
var ErrOtherFormat = errors.New("an ONNX, PyTorch or NumPy model")

// ErrInvalid is wrapped by the error of a model left out because the reference reader of its format
// rejects it (safetensors' reference, or llama.cpp's gguf.cpp for GGUF).
var ErrInvalid = errors.New("not a valid model")

// invalidModel is the error of a model its format's reference rejects: "not valid GGUF (string-length)".
type invalidModel struct {
	format canon.Format
	kind   string
}

func (e *invalidModel) Error() string {
	name := map[canon.Format]string{canon.FormatGGUF: "GGUF", canon.FormatPyTorch: "PyTorch", canon.FormatNumPy: "NumPy",
		canon.FormatONNX: "ONNX", canon.FormatDDUF: "DDUF"}[e.format]
	if name == "" {
		name = "safetensors"
	}
	return fmt.Sprintf("not valid %s (%s): stdiff check says more", name, e.kind)
}

func (e *invalidModel) Is(target error) bool { return target == ErrInvalid }

// invalid is the error of m, which is not valid or has errors.
func invalid(m *canon.Model) error {
	kind := "the shard set is inconsistent"
	if m.RefErr != nil {
		kind = string(m.RefErr.Kind)
	}
	return &invalidModel{format: m.Format, kind: kind}
}

// Options tune Find.
type Options struct {
	// Level is the loosest kind of group reported: LevelBytes (identical files only), LevelContent
	// (also the same tensors with other metadata or layout), LevelRenamed (also the same tensor bytes
	// under other names; the zero Level means it), LevelRun (also files of one architecture saved by
	// one training run) or LevelStructure (also files of one architecture with other weights).
	Level Level
	// Keep is the rule that chooses the model of each group to keep (the zero rule: KeepMostInfo).
	Keep KeepRule
	// Cache, when set, remembers what scans learnt of files that have not changed since (keys,
	// samples, what comparisons proved): a scan of an unchanged collection reads no tensor byte.
	// PyTorch, NumPy and ONNX models are not kept in it: their headers and samples are read each time.
	Cache *dupecache.Cache
	// Source tunes opening shard sets and remote models (the Hub's endpoint and token).
	Source source.Options
	// Workers is how many files are read at once (default 2 × GOMAXPROCS).
	Workers int
	// Progress, when set, is called (from several goroutines) as files are read: stage is "headers",
	// "samples", "content", "renamed" or "differences"; n files (groups, for "content", "renamed" and
	// "differences") of total done; bytes is tensor bytes read so far.
	Progress func(stage string, n, total int, bytes int64)
}

// Member is one model of a group: a file, a shard set named by its index (or, without one, by its first
// shard; a split GGUF model by its first file), or a URL.
type Member struct {
	Path string `json:"path"`
	// Size is the model's size on disk: for a shard set, its index and shards (each file once).
	Size    int64 `json:"size"`
	DataLen int64 `json:"data_len"`
	// Shards is the number of shards of a shard set; 0 for a model in one file.
	Shards int `json:"shards,omitempty"`
	// Files are a local shard set's files, its index and shards (each once); nil for one file.
	Files []string `json:"files,omitempty"`
	// Companions are the other files of a model folder (config.json, tokenizer files…: see package
	// hash/dupes/internal/folder): part of the model. A model folder is a copy only of one whose
	// companions have the same names and bytes, and it is deleted with them, never file by file.
	Companions []string `json:"companions,omitempty"`
	// ModTime is when the file (a set's index) was last modified; zero for a URL.
	ModTime time.Time `json:"mtime,omitzero"`
	// MetadataKeys is how many metadata keys the model has; Sidecars are the files next to it that
	// belong to it (lora.SidecarFiles: CivitAI records, preview images). With them the keeper rule
	// KeepMostInfo weighs what each copy carries.
	MetadataKeys int                `json:"metadata_keys"`
	Sidecars     []lora.SidecarFile `json:"sidecars"`
	// Header is the BLAKE3 of the file's header bytes (a set's: of its shards' names and headers; a GGUF
	// file's: of every byte before its data section): within a content group, equal headers mean
	// identical files.
	Header string `json:"header_blake3,omitempty"`
	// Differences say how a member of a content group differs from the group's keeper; nil for the
	// keeper, for members of other groups, and for a member that could not be read again to compare.
	Differences *Differences `json:"differences,omitempty"`
	// IdenticalTo is the keeper's path when the member's header bytes are the keeper's: the two are
	// the same file (a member of a content group only).
	IdenticalTo string `json:"identical_to,omitempty"`
	// Managed is the program whose store the model lies in (store.ManagedBy), "" for none: such a model
	// is never deleted, replaced, linked or moved (it may be the keeper), and frees nothing.
	Managed store.Store `json:"managed,omitempty"`
	// Format is the format of a PyTorch, NumPy or ONNX model ("pytorch", "numpy", "onnx"), "" for
	// safetensors and GGUF. Such a model holds the same tensors as a safetensors file when its tensors'
	// names, dtypes, shapes and bytes (row-major) are the same: `stdiff hash --content` gives both one
	// content ID.
	Format canon.Format `json:"format,omitempty"`
	// Unsafe is set for a PyTorch (or NumPy) file whose pickle names globals outside
	// torch.load(weights_only=True)'s allowlist (findings pickle-unsafe-global, pickle-unknown-global):
	// loading it can run code. Its tensors are read without running anything, but its pickle holds
	// more than they: it is only ever a byte copy of an identical file, never kept over a safe one
	// (ReasonSafe), and its metadata counts for nothing in KeepMostInfo.
	Unsafe bool `json:"unsafe,omitempty"`
	// Relation, RoundedTo and LeftOut say how a member of a derived group comes from its original
	// (derived.Member): for derived groups only.
	Relation  derived.Relation `json:"relation,omitempty"`
	RoundedTo tensor.DType     `json:"rounded_to,omitempty"`
	LeftOut   *derived.LeftOut `json:"left_out,omitempty"`
	// Pipeline is set for a diffusers pipeline folder in a content group with DDUF files holding its
	// very files: Path is its model_index.json, Companions every other file under it; it is deleted
	// whole, the folder and all, or not at all.
	Pipeline bool `json:"pipeline,omitempty"`
}

// Group is a set of models that are the same at Level.
type Group struct {
	Level Level `json:"level"`
	// Files are the paths of Members, in the same order.
	Files []string `json:"files"`
	// Members are the group's models. In bytes and content groups the first is the one to keep (see
	// Keeper), the others in path order; deleting those others, with their shards, breaks no scanned
	// model, since models that share files with others are never among them. Structure groups are
	// in path order.
	Members     []Member `json:"members"`
	StructureID string   `json:"structure_id"`
	// Keeper is the path of the first model, the one to keep (Options.Keep chooses it), and
	// KeeperReason why: for bytes and content groups.
	Keeper       string     `json:"keeper,omitempty"`
	KeeperReason KeepReason `json:"keeper_reason,omitempty"`
	// Reclaimable is what deleting all models but the first would free, counting each real file once
	// and only files that deleting frees: for bytes and content groups.
	Reclaimable int64 `json:"reclaimable"`
	// Run says how a run group's models are known to come from one training run: "ss_session_id
	// 1234567890", "ss_training_started_at …" or "output name mychar".
	Run string `json:"run,omitempty"`
}

// Skipped is a file left out of the scan, and why.
type Skipped struct {
	Path string `json:"path"`
	// Reason is Err in words, without the path.
	Reason string `json:"reason"`
	// Err is why: the error reading the model, or one wrapping ErrInvalid; nil for a model reached
	// twice (through links).
	Err error `json:"-"`
}

// skip is the record of a model left out for err.
func skip(path string, err error) Skipped {
	return Skipped{Path: path, Reason: diskfile.Reason(err), Err: err}
}

// Failure is a path named to Find that could not be scanned: one that does not exist, or a folder
// (or a file under it) that cannot be read.
type Failure struct {
	Path string `json:"path"`
	// Error is Err in words, without the path.
	Error string `json:"error"`
	// Err is the error: a *canon.ReadError naming the path; errors.Is(Err, fs.ErrNotExist) for a
	// path that does not exist.
	Err error `json:"-"`
}

// ErrNoSuchPath is the cause of the Failure of a path that does not exist: "no such file or folder".
// It matches fs.ErrNotExist.
var ErrNoSuchPath error = noSuchPath{}

type noSuchPath struct{}

func (noSuchPath) Error() string        { return "no such file or folder" }
func (noSuchPath) Is(target error) bool { return target == fs.ErrNotExist }

// Schema is the report's schema: the first field of its JSON and of each JSONL record.
const Schema = "stdiff.dupes/v1"

// Report is the outcome of a scan.
type Report struct {
	// Schema is always the constant Schema.
	Schema  string    `json:"schema"`
	Groups  []Group   `json:"groups"`
	Skipped []Skipped `json:"skipped"`
	// Notes are about models that are no duplicates but bear on deleting (models sharing files).
	Notes []Note `json:"notes"`
	// Files is the number of models scanned; TensorBytesRead how many tensor bytes were read (samples
	// and content), which the cache brings to zero on an unchanged collection.
	Files           int   `json:"files"`
	TensorBytesRead int64 `json:"tensor_bytes_read"`
	// Reclaimable is what deleting the copies of the groups Act deletes from would free (the bytes and
	// content groups of the level asked for, a bytes group inside a content group counted once), each
	// real file counted once: the sum of those groups' Reclaimable.
	Reclaimable int64 `json:"reclaimable"`
	// Errors are the paths that could not be scanned at all (a missing path, an unreadable folder):
	// the scan went on without them, but its answer is incomplete. Writers leave them out; callers
	// report them (the CLI on stderr).
	Errors []Failure `json:"errors"`
}

// Outcome is what the scan comes to: Trouble when a path could not be scanned or a model could not be
// read (a skipped model whose Err wraps canon.ErrUnreadable), else Found when there are duplicates,
// else Clean. Invalid models, skipped too, do not change it.
func (r *Report) Outcome() canon.Outcome {
	if len(r.Errors) > 0 {
		return canon.Trouble
	}
	for _, s := range r.Skipped {
		if errors.Is(s.Err, canon.ErrUnreadable) {
			return canon.Trouble
		}
	}
	if len(r.Groups) > 0 {
		return canon.Found
	}
	return canon.Clean
}

// ActsOn reports whether acting on r's copies (package act) touches group g: a bytes or content
// group with a keeper; when deleting (link false), not a bytes group inside a content group (the
// content group covers it); when linking, bytes groups only. Report.Reclaimable sums the groups a
// deletion acts on.
func (r *Report) ActsOn(g *Group, link bool) bool {
	switch {
	case g.Keeper == "" || len(g.Members) < 2 || g.Level == LevelDerived:
		return false
	case link:
		return g.Level == LevelBytes
	case g.Level == LevelContent:
		return true
	}
	return g.Level == LevelBytes && !r.within(g)
}

// within reports whether bytes group g is part of a content group of r.
func (r *Report) within(g *Group) bool {
	for i := range r.Groups {
		c := &r.Groups[i]
		if c.Level == LevelContent && isSubset(c.Files, g.Files) {
			return true
		}
	}
	return false
}

// isSubset reports whether every path of sub is in set.
func isSubset(set, sub []string) bool {
	in := map[string]bool{}
	for _, p := range set {
		in[p] = true
	}
	for _, p := range sub {
		if !in[p] {
			return false
		}
	}
	return true
}

// scanned is what the scan keeps of one file: small, so that a collection of any size fits.
type scanned struct {
	path    string
	size    int64
	mtime   int64
	ctime   int64 // the inode's change time (0: unknown), which an edit in place changes
	ino     uint64
	dev     uint64
	nlink   uint64
	dataLen int64
	// k are the keys the scan groups by, from the header (or the cache, without the picks: picked is
	// false then).
	k      keys
	picked bool
	// ident is what besides its tensors makes the model what it is (see identOf), once known: only
	// models of one ident are compared.
	ident string
	// structure is the structure ID, once known (models in a group; the cache).
	structure  string
	headerHash [32]byte
	// hasHeaderHash is set once headerHash is known (it is computed only where it decides something).
	hasHeaderHash bool
	// sample hashes a few KiB of up to 16 tensors (picks), once hasSample.
	sample    uint64
	hasSample bool
	// cs is what comparing the model's tensor bytes in name order learnt.
	cs crcState
	// class numbers the set of models found to hold the same tensors (0: none yet).
	class int
	// renamed is what the search for renamed copies learnt (nil: not a candidate).
	renamed *renamedInfo
	// model is the model's header, read again for a comparison, kept for a model found in a class:
	// read whole (fullModel), or its tensors alone (lightModel).
	model     *canon.Model
	fullModel bool
	// names are model's names mapped (mapNames), once worked out.
	names *mapped
	// err is why the model could not be read (after its header was): it is then skipped.
	err error
	// symlink is true when the path is a symbolic link.
	symlink bool
	// shards is the number of shards of a shard set (0: one file).
	shards int
	// set is true for a model opened whole by source.Open: a shard set named by its index, a set
	// without an index or a split GGUF model named by its first file (splitSet; a set's header hash is
	// that of its shards' headers) or a URL.
	set bool
	// files are a local set's real files (index and shards, each once, sorted; size is their sum); nil
	// for anything else.
	files []fileRef
	// shared is true for a model that shares a file with another scanned model; part for a file that
	// is one part of a model made of several (partOfModel). Neither is ever a copy to delete.
	shared bool
	part   bool
	// managed is the store the model lies in (store.ManagedBy), "" for none.
	managed store.Store
	// format is the model's format ("" for safetensors read by the skim or the cache); virtual is set
	// when its tensor bytes are not a data section of the file but read through its format's reader
	// (PyTorch, NumPy, ONNX: canonical, row-major bytes one tensor after another); unsafe for a pickle
	// with globals torch refuses (Member.Unsafe); external for an ONNX model with external data, a
	// model made of several files, which is never a copy to delete (part).
	format                    canon.Format
	virtual, unsafe, external bool
	// inner is, for a DDUF file (a diffusers pipeline in one archive), the ID of the files its
	// members hold beside the tensors (configs, tokenizer files: companion.ID): a copy of it at the
	// content level has the same ones, so that deleting it loses none of them.
	inner string
	// companions are the other regular files of the model's folder when it is a model folder
	// (folder.Lister): part of the model, deleted with it; folderSum is their digest (folder.Digest),
	// once hasFolderSum: only models with equal ones are compared.
	companions   []fileRef
	folderSum    [32]byte
	hasFolderSum bool
	// externalFiles are the files an ONNX model's external data is in (joined to its folder): parts
	// of it, not models of their own.
	externalFiles []string
	// pipeline is set for a diffusers pipeline folder (pipelineGroups), named by its model_index.json.
	pipeline bool
	// opt opens the model (the scan's, shared).
	opt *source.Options
	// root is the index of the first root given to Find that the model lies under (the keep rule's
	// ReasonFirstRoot).
	root int
	// metaKeys is the number of metadata keys; sidecars the model's sidecar files (looked for only
	// in groups).
	metaKeys int
	sidecars []lora.SidecarFile
	// summary receives the header's entries as the skim reads them, for derivedGroups (nil otherwise).
	summary *derived.Sink
}

// Find groups the models under roots by what they share. Roots are files, shard sets (their
// *.safetensors.index.json), URLs and folders, searched recursively (source.Walk); the files of a set
// without an index or of a split GGUF model, all there, are one model (splitSet); a root that does
// not exist, or a folder that cannot be read, is a Failure in Report.Errors and the scan goes on.
//
// It is staged so that most files need their header only, and no file is read twice: headers are
// skimmed for keys (skim); files are grouped by their tensors' names, dtypes and shapes (a file alone
// there is nobody's duplicate); the rest are split by a sample of tensor bytes (a few KiB of up to 16
// tensors, chosen by name, so the sample ignores layout); what is left is compared byte for byte, all
// the files of a group side by side, each read once and only until it differs (no hash is needed to
// tell two files apart). Identical headers within a content group make a bytes group; the other
// members of a content group are compared with its keeper (their headers, read again) to say how they
// differ. Copies under other names are searched for among models with the same tensor shapes
// (renamed). Unreadable and invalid files are skipped with a reason. The error is ctx's, when it is
// done before the scan is.
func Find(ctx context.Context, roots []string, opt Options) (*Report, error) {
	s := newFinder(opt)
	paths := joinSets(walk(ctx, roots, s.rep))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.roots = roots
	live, err := s.readHeaders(ctx, paths)
	if err != nil {
		return nil, err
	}
	candidates := sameStructure(live)
	// Renamed copies are looked for among models with the same shapes: the search starts now, from
	// the headers, beside the comparison of contents, and compares once that is done.
	var renamed *renamedSearch
	if s.wants(LevelRenamed) {
		renamed = prepareRenamed(ctx, live, s.workers, &s.bytesRead)
		defer func() { <-renamed.done }()
	}
	if err := s.compareContents(ctx, candidates); err != nil {
		return nil, err
	}
	contentGroups := s.contentGroups(ctx, candidates)
	// How each copy in a content group differs from its keeper is worked out while renamed copies are
	// searched for: it needs the group and its models' headers alone.
	diffsDone := s.differences(ctx, contentGroups)
	defer func() { <-diffsDone }()
	if s.wants(LevelContent) {
		s.pipelineGroups(ctx, live)
	}
	if s.wants(LevelRenamed) {
		if err := s.renamedGroups(ctx, renamed); err != nil {
			return nil, err
		}
	}
	if s.level == LevelStructure || s.level == LevelRun {
		s.structureGroups(ctx, live)
	}
	if s.level == LevelDerived {
		if err := s.derivedGroups(ctx, live); err != nil {
			return nil, err
		}
	}
	s.skippedLate(live)
	s.rep.TensorBytesRead = s.bytesRead.Load()
	<-diffsDone // the sidecars' differences go into the differences
	if err := s.finish(ctx, live); err != nil {
		return nil, err
	}
	return s.rep, nil
}

// finder is one run of Find: its options, the report it fills, and what it has read.
type finder struct {
	opt       Options
	roots     []string
	level     Level
	workers   int
	rep       *Report
	bytesRead atomic.Int64
	// pipelines are the folders partOfModel looked at, true for a diffusers pipeline's.
	pipelines map[string]bool
}

func newFinder(opt Options) *finder {
	workers := opt.Workers
	if workers <= 0 {
		workers = 2 * runtime.GOMAXPROCS(0)
	}
	return &finder{opt: opt, level: cmp.Or(opt.Level, LevelRenamed), workers: workers,
		rep: &Report{Schema: Schema, Groups: []Group{}, Skipped: []Skipped{}, Notes: []Note{}, Errors: []Failure{}}}
}

// wants reports whether the scan reports groups of level l (the levels up to the one asked for).
func (s *finder) wants(l Level) bool { return levelRank[s.level] >= levelRank[l] }

// progress tells Options.Progress that n of total are done at stage.
func (s *finder) progress(stage string, n, total int) {
	if s.opt.Progress != nil {
		s.opt.Progress(stage, n, total, s.bytesRead.Load())
	}
}

// readHeaders is stage 1: every model's header (or the cache's entry), in parallel. Models that
// cannot be read are skipped; the same model reached twice (links) counts once; models that share
// files, and files that are one part of a model made of several, are marked. It returns the models
// scanned.
func (s *finder) readHeaders(ctx context.Context, paths []string) ([]*scanned, error) {
	files := make([]*scanned, len(paths))
	errs := make([]error, len(paths))
	var done atomic.Int64
	pool.Run(ctx, s.workers, len(paths), func(ctx context.Context, i int) error {
		files[i], errs[i] = scanHeader(ctx, paths[i], s.opt.Cache, &s.opt.Source, s.level == LevelDerived)
		s.progress("headers", int(done.Add(1)), len(paths))
		return nil
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// ONNX models' external data files are parts of them, not models (a weights.bin is no checkpoint):
	// neither skipped nor compared on their own.
	parts := map[string]bool{}
	for _, f := range files {
		for _, p := range f.externalFilesOrNil() {
			parts[p] = true
		}
	}
	for i, f := range files {
		if f != nil {
			f.root = rootIndex(s.roots, paths[i])
		}
		switch {
		case parts[filepath.Clean(paths[i])] && (f == nil || f.format != canon.FormatONNX):
			files[i] = nil
		case f == nil:
			s.rep.Skipped = append(s.rep.Skipped, skip(paths[i], errs[i]))
		}
	}
	lister := folder.NewLister()
	for _, f := range files {
		if f == nil {
			continue
		}
		var own []string
		for _, r := range f.ownFiles() {
			own = append(own, r.path)
		}
		for _, p := range lister.Companions(own) {
			if st, err := os.Stat(p); err == nil {
				f.companions = append(f.companions, refOf(p, st))
			}
		}
	}
	live := onlyOnce(files, func(path, reason string) {
		s.rep.Skipped = append(s.rep.Skipped, Skipped{Path: path, Reason: textfmt.Escape(reason)})
	})
	s.rep.Files = len(live)
	if notes := markShared(live); notes != nil {
		s.rep.Notes = notes
	}
	pipelines := map[string]bool{}
	for _, f := range live {
		f.part = f.external || partOfModel(f, pipelines)
	}
	s.pipelines = pipelines
	return live, nil
}

// rootIndex is the index of the first of roots that path is or lies under (len(roots) for none).
func rootIndex(roots []string, path string) int {
	if i := slices.IndexFunc(roots, func(r string) bool { return diskfile.Under(path, r) }); i >= 0 {
		return i
	}
	return len(roots)
}

// externalFilesOrNil is f's externalFiles, nil for a nil f (a model skipped).
func (f *scanned) externalFilesOrNil() []string {
	if f == nil {
		return nil
	}
	return f.externalFiles
}

// sameStructure is stage 2: the models that share their structure and data size with another; only
// they can hold the same tensors.
func sameStructure(live []*scanned) []*scanned {
	var candidates []*scanned
	for _, g := range groupBy(live, structureKey) {
		if len(g) > 1 {
			candidates = append(candidates, g...)
		}
	}
	return candidates
}

// compareContents is stage 3: a sample of each candidate's tensor bytes, then a comparison of the
// files whose samples agree, which numbers the classes of models holding the same tensors.
func (s *finder) compareContents(ctx context.Context, candidates []*scanned) error {
	var done atomic.Int64
	pool.Run(ctx, s.workers, len(candidates), func(ctx context.Context, i int) error {
		f := candidates[i]
		if f.ident == "" || f.tensorless() || f.ident == identWhole {
			f.err = f.identify(ctx)
		}
		if f.err == nil && !f.hasSample {
			f.err = f.takeSample(ctx, &s.bytesRead)
		}
		if f.err == nil && f.companions != nil && !f.shared {
			paths := make([]string, len(f.companions))
			for i, r := range f.companions {
				paths[i] = r.path
			}
			f.folderSum, f.err = folder.Digest(filepath.Dir(f.path), paths)
			f.hasFolderSum = f.err == nil
		}
		s.progress("samples", int(done.Add(1)), len(candidates))
		return nil
	})
	var sampleGroups [][]*scanned
	for _, g := range groupBy(candidates, func(f *scanned) string {
		if f.err != nil || !f.hasSample || (f.companions != nil && !f.hasFolderSum) {
			return "\x00" + f.path // alone (a model folder that shares files with another model too)
		}
		return fmt.Sprintf("%s/%x/%s/%x/%s", structureKey(f), f.sample, f.ident, f.folderSum, f.inner)
	}) {
		if len(g) > 1 {
			sampleGroups = append(sampleGroups, g)
		}
	}
	done.Store(0)
	var classes atomic.Int64
	pool.Run(ctx, s.workers, len(sampleGroups), func(ctx context.Context, i int) error {
		resolve(ctx, sampleGroups[i], s.opt.Cache != nil, &classes, &s.bytesRead)
		s.progress("content", int(done.Add(1)), len(sampleGroups))
		return nil
	})
	return ctx.Err()
}

// ranked is a group as keepSafe ordered it, and why its first is kept.
type ranked struct {
	g   []*scanned
	why KeepReason
}

// classResult is what a class of models holding the same tensors comes to.
type classResult struct {
	all   ranked
	bytes []ranked // the bytes groups within it
	// content is set when the class is a content group (models with other headers).
	content bool
}

// contentGroups adds the content groups, and the bytes groups within them, to the report; each class
// is made ready (sidecars, keeper, header hashes, structure IDs) in parallel, then reported in order.
// Only models that could safely be deleted join a group (keepSafe): never one that shares files. It
// returns the content groups, whose differences are yet to be worked out.
func (s *finder) contentGroups(ctx context.Context, candidates []*scanned) []contentGroup {
	var classGroups [][]*scanned
	for _, g := range groupBy(candidates, func(f *scanned) string { return classKey(f) }) {
		if len(g) > 1 && g[0].class != 0 {
			classGroups = append(classGroups, g)
		}
	}
	results := make([]classResult, len(classGroups))
	pool.Run(ctx, s.workers, len(classGroups), func(ctx context.Context, i int) error {
		results[i] = s.class(ctx, classGroups[i])
		return nil
	})
	var contentGroups []contentGroup
	for _, r := range results {
		if r.all.g == nil {
			continue
		}
		for _, b := range r.bytes {
			s.rep.Groups = append(s.rep.Groups, makeGroup(LevelBytes, b.g, b.why))
		}
		if r.content {
			grp := makeGroup(LevelContent, r.all.g, r.all.why)
			s.rep.Groups = append(s.rep.Groups, grp)
			contentGroups = append(contentGroups, newContentGroup(grp, r.all.g))
		}
	}
	return contentGroups
}

// class makes the class g ready: its sidecars, its keeper, its members' header hashes (equal headers:
// a bytes group) and structure IDs.
func (s *finder) class(ctx context.Context, g []*scanned) classResult {
	for _, f := range g {
		if !f.set && !source.IsRemote(f.path) {
			f.sidecars = lora.SidecarFiles(f.path)
		}
	}
	var why KeepReason
	if g, why = keepSafe(g, s.opt.Keep); len(g) < 2 {
		return classResult{}
	}
	r := classResult{all: ranked{g, why}}
	for _, f := range g {
		if f.model != nil && f.model.RawHeader != nil && !f.hasHeaderHash && f.model.Shards == nil {
			f.headerHash, f.hasHeaderHash = blake3.Sum256(f.model.RawHeader), true
		}
		if err := f.hashHeader(); err != nil {
			f.headerHash = blake3.Sum256([]byte(f.path)) // unknown: alone in its bytes group
		}
	}
	byHeader := groupBy(g, func(f *scanned) string { return string(f.headerHash[:]) })
	for _, same := range byHeader {
		if same, why := keepSafe(same, s.opt.Keep); len(same) > 1 {
			same[0].structureID(ctx)
			r.bytes = append(r.bytes, ranked{same, why})
		}
	}
	if r.content = len(byHeader) > 1 && s.level != LevelBytes; r.content {
		g[0].structureID(ctx)
	}
	return r
}

// differences works out, in the background, how each copy in the content groups differs from its
// keeper; the channel is closed when it is done.
func (s *finder) differences(ctx context.Context, groups []contentGroup) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var n atomic.Int64
		pool.Run(ctx, s.workers, len(groups), func(ctx context.Context, i int) error {
			differences(ctx, groups[i])
			s.progress("differences", int(n.Add(1)), len(groups))
			return nil
		})
	}()
	return done
}

// renamedGroups adds the groups of copies under other names: of each structure among them, the
// model keepSafe ranks first stands for its content copies.
func (s *finder) renamedGroups(ctx context.Context, renamed *renamedSearch) error {
	for _, g := range renamed.find(ctx, s.workers, s.opt.Cache != nil, &s.bytesRead, func(n, total int) { s.progress("renamed", n, total) }) {
		var reps []*scanned // one model of each structure: the others are its content copies
		for _, same := range groupBy(g, structureKey) {
			for _, f := range same {
				if !f.set && !source.IsRemote(f.path) {
					f.sidecars = lora.SidecarFiles(f.path)
				}
			}
			ranked, _ := keepSafe(same, s.opt.Keep)
			reps = append(reps, ranked[0])
		}
		if g, why := keepSafe(reps, s.opt.Keep); len(g) > 1 {
			s.rep.Groups = append(s.rep.Groups, renamedGroup(ctx, g, why))
		}
	}
	return ctx.Err()
}

// structureGroups adds the groups of models of one architecture (LevelStructure) and the runs among
// them (LevelRun and LevelStructure).
func (s *finder) structureGroups(ctx context.Context, live []*scanned) {
	copies := map[string]bool{}        // a copy in a group above is its keeper's: runs are of other weights
	for _, grp := range s.rep.Groups { // Files, not Members: their differences are being worked out
		for _, p := range grp.Files[1:] {
			copies[p] = true
		}
	}
	for _, g := range groupBy(live, structureKey) {
		if len(g) > 1 && g[0].tensorless() { // without tensors, no architecture: nothing to share
			continue
		}
		if len(g) > 1 && !sameClass(g) {
			if err := g[0].structureID(ctx); err != nil {
				continue
			}
			if s.level == LevelStructure {
				s.rep.Groups = append(s.rep.Groups, makeGroup(LevelStructure, g, ""))
			}
			s.rep.Groups = append(s.rep.Groups, runs(ctx, slices.DeleteFunc(slices.Clone(g), func(f *scanned) bool { return copies[f.path] }))...)
		}
	}
}

// skippedLate skips the models that failed after their header was read (a comparison, renamed).
func (s *finder) skippedLate(live []*scanned) {
	reported := map[string]bool{}
	for _, sk := range s.rep.Skipped {
		reported[sk.Path] = true
	}
	for _, f := range live {
		if f.err != nil && !reported[f.path] {
			s.rep.Skipped = append(s.rep.Skipped, skip(f.path, f.err))
		}
	}
}

// finish adds the sidecars' differences, puts groups and skipped models in order, sums what deleting
// would free, and records what was learnt in the cache.
func (s *finder) finish(ctx context.Context, live []*scanned) error {
	rep := s.rep
	pool.Run(ctx, s.workers, len(rep.Groups), func(ctx context.Context, i int) error {
		sidecarsOf(ctx, &rep.Groups[i])
		return nil
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	sort.SliceStable(rep.Groups, func(i, j int) bool {
		a, b := rep.Groups[i], rep.Groups[j]
		if a.Level != b.Level {
			return levelRank[a.Level] < levelRank[b.Level]
		}
		return a.Files[0] < b.Files[0]
	})
	sort.Slice(rep.Skipped, func(i, j int) bool { return rep.Skipped[i].Path < rep.Skipped[j].Path })
	for i := range rep.Groups {
		if rep.ActsOn(&rep.Groups[i], false) {
			rep.Reclaimable += rep.Groups[i].Reclaimable
		}
	}
	if s.opt.Cache != nil {
		for _, f := range live {
			// A virtual model's header is read again (the cache keeps no reader's state), and so is one
			// that failed (the cache never says a file the reference rejects is fine).
			if !f.set && !f.virtual && f.err == nil {
				cachePut(s.opt.Cache, f)
			}
		}
	}
	return nil
}

// structureKey is what stage 2 groups by: the structure key (which holds the data length).
func structureKey(f *scanned) string {
	return fmt.Sprintf("%016x%016x", f.k.structure[0], f.k.structure[1])
}

// classKey groups the models of one class (models in no class stay alone).
func classKey(f *scanned) string {
	if f.class == 0 || f.err != nil {
		return "\x00" + f.path
	}
	return fmt.Sprint(f.class)
}

// sameClass reports whether the models of g all hold the same tensors.
func sameClass(g []*scanned) bool {
	for _, f := range g {
		if f.class == 0 || f.class != g[0].class {
			return false
		}
	}
	return true
}

// makeGroup makes a group of g: bytes and content groups as keepSafe ordered them, structure groups in
// path order.
func makeGroup(level Level, g []*scanned, why KeepReason) Group {
	if level == LevelStructure || level == LevelRun {
		g = append([]*scanned(nil), g...)
		sort.Slice(g, func(i, j int) bool { return g[i].path < g[j].path })
	}
	grp := Group{Level: level, Files: make([]string, len(g)), Members: make([]Member, len(g)), StructureID: g[0].structure}
	for i, f := range g {
		grp.Files[i] = f.path
		grp.Members[i] = Member{Path: f.path, Size: f.size, DataLen: f.dataLen, Shards: f.shards, MetadataKeys: f.metaKeys,
			Sidecars: f.sidecars, Managed: f.managed, Unsafe: f.unsafe, Pipeline: f.pipeline}
		if f.virtual {
			grp.Members[i].Format = f.format
		}
		if f.sidecars == nil {
			grp.Members[i].Sidecars = []lora.SidecarFile{}
		}
		for _, r := range f.files {
			grp.Members[i].Files = append(grp.Members[i].Files, r.path)
		}
		for _, r := range f.companions {
			grp.Members[i].Companions = append(grp.Members[i].Companions, r.path)
		}
		if !source.IsRemote(f.path) {
			grp.Members[i].ModTime = time.Unix(0, f.mtime).UTC()
		}
		if f.hasHeaderHash {
			grp.Members[i].Header = hex.EncodeToString(f.headerHash[:])
		}
	}
	if level != LevelStructure && level != LevelRun {
		grp.Keeper, grp.KeeperReason, grp.Reclaimable = g[0].path, why, freed(g)
	}
	return grp
}

// groupBy groups files by a key, groups in order of their first file's path.
func groupBy(fs []*scanned, key func(*scanned) string) [][]*scanned {
	idx := map[string]int{}
	var out [][]*scanned
	sorted := append([]*scanned(nil), fs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].path < sorted[j].path })
	for _, f := range sorted {
		k := key(f)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], f)
	}
	return out
}

// scanHeader reads a model's header (a file, a shard set named by its index, or a URL) and what the
// scan keeps of it. A model the reference rejects, or that cannot be read, is skipped: the error says why.
func scanHeader(ctx context.Context, path string, cache *dupecache.Cache, opt *source.Options, derive bool) (*scanned, error) {
	_, split := splitSet(path)
	f := &scanned{path: path, set: isIndex(path) || split || source.IsRemote(path), opt: opt}
	if derive {
		f.summary = &derived.Sink{} // what the skim reads, for derivedGroups
	}
	if !source.IsRemote(path) {
		st, err := os.Stat(path)
		if err != nil {
			return nil, canon.PathError("stat", path, err)
		}
		f.size, f.mtime, f.ctime = st.Size(), st.ModTime().UnixNano(), diskfile.ChangeTime(st)
		if lst, err := os.Lstat(path); err == nil {
			f.symlink = lst.Mode()&os.ModeSymlink != 0
		}
		f.dev, f.ino, f.nlink = diskfile.ID(st)
		f.managed = store.ManagedBy(path)
	}
	// A file unchanged since the cache saw it needs no reading at all. (A set's index can stay the same
	// while its shards change, and a URL has no modification time: those are always read.)
	if cache != nil && !f.set && cacheFill(cache, f) {
		return f, nil
	}
	if !f.set { // most headers are skimmed; what skim is unsure of canon.Read reads
		k, ok, err := f.skimFile()
		if ok {
			f.k, f.dataLen, f.metaKeys, f.picked = k, k.dataLen, k.metaKeys, true
			f.ident = skimIdent(k)
		}
		if ok || err != nil {
			return f, err
		}
	}
	o, err := f.open(ctx)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	m := o.Model
	if err := usable(m); err != nil {
		return nil, err
	}
	torchSet := m.Shards != nil && (m.Format == canon.FormatPyTorch || m.Format == canon.FormatNumPy)
	f.format, f.virtual, f.unsafe = m.Format, m.InSpace || m.Archive != nil || torchSet, holds.UnsafePickle(m)
	if m.Archive != nil {
		f.format, f.inner = canon.FormatDDUF, companion.ID(o.Companions)
	}
	for _, loc := range m.External { // tensor bytes in files beside the model file
		f.external = true
		if loc != "" && !source.IsRemote(path) {
			f.externalFiles = append(f.externalFiles, filepath.Join(filepath.Dir(path), filepath.FromSlash(loc)))
		}
	}
	if (!f.set && fileSizeOf(m) != f.size) || (split && m.Shards == nil) { // a set's file gone: read as one file
		return nil, &canon.ReadError{Name: path, Op: "read", Err: canon.ErrChanged}
	}
	if f.set {
		if source.IsRemote(path) {
			f.size = m.FileSize
		} else {
			if f.files, err = setFiles(path, f.ownFiles()[0], m); err != nil {
				return nil, err
			}
			f.size = 0
			for _, r := range f.files {
				f.size += r.size
			}
		}
	}
	if f.set && !torchSet { // a sharded PyTorch checkpoint's header hash is its files' (hashHeader)
		h := blake3.New()
		if m.Shards == nil {
			h.Write(m.RawHeader)
		}
		for _, sh := range m.Shards {
			h.Write([]byte(sh.Name + "\x00"))
			if sh.RawHeader == nil && m.Format == canon.FormatGGUF && !source.IsRemote(path) {
				// A GGUF file's header is every byte before its data section (HeaderLen).
				b, err := diskfile.ReadHead(filepath.Join(filepath.Dir(path), filepath.FromSlash(sh.Name)), int64(sh.HeaderLen))
				if err != nil {
					return nil, err
				}
				h.Write(b)
			}
			h.Write(sh.RawHeader)
		}
		h.Sum(f.headerHash[:0])
		f.hasHeaderHash = true
	}
	f.k, f.picked = keysOf(m), true
	if f.ident, err = identOf(m, fileOf(o), path); err != nil {
		return nil, err
	}
	f.dataLen, f.structure, f.shards, f.metaKeys = dataLenOf(m), canon.StructureID(m), len(m.Shards), len(m.Metadata)
	return f, nil
}

// isIndex reports whether path names a shard set's index
// (*.safetensors.index.json, or a sharded PyTorch checkpoint's *.bin.index.json).
func isIndex(path string) bool {
	return strings.HasSuffix(path, ".safetensors.index.json") || strings.HasSuffix(path, ".bin.index.json")
}

// open opens a shard set by its index or a URL with source.Open, and anything else as the one file it
// is (a shard found on its own is a file here, not its set).
func (f *scanned) open(ctx context.Context) (*source.Opened, error) {
	if f.set {
		return source.Open(ctx, f.path, *f.opt)
	}
	return source.OpenFileModel(ctx, f.path)
}

// hashHeader fills in the BLAKE3 of the file's header bytes (needed only within content groups): for
// safetensors the N bytes after the 8-byte length N, for GGUF (told by its magic, as canon.Read tells
// it) every byte before the data section, the magic included.
func (f *scanned) hashHeader() error {
	if f.hasHeaderHash {
		return nil
	}
	if f.virtual && f.set {
		return f.hashSetFiles()
	}
	if f.virtual {
		return f.hashFile()
	}
	src, err := source.OpenFile(f.path)
	if err != nil {
		return err
	}
	defer src.Close()
	var n [8]byte
	if _, err := src.ReadAt(n[:], 0); err != nil {
		return err
	}
	start := int64(8)
	if f.format == canon.FormatGGUF { // its header is every byte before the data section, the magic too
		start = 0
	}
	hb := make([]byte, f.size-f.dataLen-start)
	if _, err := src.ReadAt(hb, start); err != nil {
		return err
	}
	if start == 8 && binary.LittleEndian.Uint64(n[:]) != uint64(len(hb)) {
		return &canon.ReadError{Name: f.path, Op: "read", Err: canon.ErrChanged}
	}
	f.headerHash, f.hasHeaderHash = blake3.Sum256(hb), true
	return src.Unchanged()
}

// hashFile fills in the BLAKE3 of the whole file as its header hash: for a model whose tensor bytes are
// read through its format's reader (a pickle's, a zip's, a protobuf's), within a content group only
// identical files have equal ones.
func (f *scanned) hashFile() (err error) {
	f.headerHash, err = diskfile.Hash(f.path, f.size)
	f.hasHeaderHash = err == nil
	return err
}

// hashSetFiles fills in the BLAKE3 of a sharded PyTorch checkpoint's files (its index and shards,
// their names relative to the index's folder and their bytes, in name order: folder.Digest) as its
// header hash: within a content group only sets of identical files have equal ones.
func (f *scanned) hashSetFiles() error {
	if f.files == nil { // a remote set: its files are not read whole
		return &canon.ReadError{Name: f.path, Op: "read", Err: errors.New("a remote checkpoint's files are not hashed")}
	}
	paths := make([]string, 0, len(f.files))
	for _, r := range f.files {
		paths = append(paths, r.path)
	}
	sum, err := folder.Digest(filepath.Dir(f.path), paths)
	f.headerHash, f.hasHeaderHash = sum, err == nil
	return err
}

// Comparable reports whether Find compares m's tensors: m is one its format's reference accepts, or
// a PyTorch or NumPy file whose only errors are globals outside torch.load(weights_only=True)'s
// allowlist (its tensors are read all the same, without running anything; Member.Unsafe).
func Comparable(m *canon.Model) bool {
	return m.Valid() && !m.HasErrors() || holds.UnsafePickle(m) && holds.OnlyGlobals(m)
}

// usable is nil for a model Find compares (Comparable), else the error that leaves it out
// (ErrInvalid).
func usable(m *canon.Model) error {
	if Comparable(m) {
		return nil
	}
	return invalid(m)
}

// fileSizeOf is the size of the file m was read from: a DDUF file's archive, whose Model is the
// pipeline it holds (FileSize its components' data).
func fileSizeOf(m *canon.Model) int64 {
	if m.Archive != nil {
		return m.Archive.Size
	}
	return m.FileSize
}

// dataLenOf is the length of m's tensor bytes as dupes reads them: its data section, or for a model
// whose bytes are read through its format's reader (InSpace: PyTorch, NumPy, ONNX) or from its members
// (DDUF) the space they lie in, one tensor after another.
func dataLenOf(m *canon.Model) int64 {
	if !m.InSpace && m.Archive == nil {
		return m.DataLen()
	}
	var n uint64
	for i := range m.Tensors {
		n = max(n, m.Tensors[i].End)
	}
	return int64(n)
}
