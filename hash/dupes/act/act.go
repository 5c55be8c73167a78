// Package act acts on the duplicates dupes.Find reports: it deletes the copies of a group but its
// keeper, or replaces them with hard links to it, checking each again just before, under a lock, and
// never touching a program's store. It is the only code of stdiff that deletes, links or moves users'
// files. Act returns a Report of what it did, which Write renders in
// the format WriteOptions.Format names, or, with WriteOptions.Deletable, as the list of what a deletion
// removes, for xargs.
package act

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/delta"
	"github.com/stdiff/stdiff/canon/holds"
	"github.com/stdiff/stdiff/canon/lockfile"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/store"
	"github.com/stdiff/stdiff/hash/dupes"
	"github.com/stdiff/stdiff/hash/dupes/derived"
	"github.com/stdiff/stdiff/hash/dupes/internal/diskfile"
	"github.com/stdiff/stdiff/hash/dupes/internal/folder"
	"github.com/stdiff/stdiff/hash/dupes/internal/pipeline"
)

// Schema is the schema of a Report: the first field of its JSON and of each JSONL record.
const Schema = "stdiff.dupes-act/v1"

// Options say what Act does. Delete and Link exclude each other.
type Options struct {
	// Delete deletes every copy of a bytes or content group but its keeper.
	Delete bool
	// Link replaces every copy of a bytes group but its keeper with a hard link to the keeper.
	Link bool
	// Derived, with Delete, deletes the copies of derived groups too (dupes.LevelDerived: rounded to
	// a narrower dtype, a subset), always keeping the group's original, the side with more
	// information, whatever the keep rule. Set it only when the user asked for that level by name:
	// without it derived groups are a report, never acted on. Link never acts on them (a derived
	// copy holds other bytes than its original: a link would change what it loads as), nor does
	// Delete on a member that holds the original's very tensors (relation same-tensors: its
	// content group acts on it, under the keep rule).
	Derived bool
	// DryRun changes nothing: the report says what would be done (every check is made).
	DryRun bool
	// Source opens shard sets (as Find's Options.Source).
	Source source.Options
	// Progress, when set, is called after each action, in order, from the goroutine that called Act.
	Progress func(Action)
}

// Op is what an action does. Codes are stable and safe to match in scripts.
type Op string

// Actions.
const (
	// OpDelete deletes a copy: its file, or a shard set's index and shards.
	OpDelete Op = "delete"
	// OpLink replaces a copy with a hard link to its keeper.
	OpLink Op = "link"
	// OpMoveSidecar moves a copy's sidecar next to the keeper, renamed to the keeper's stem, when the
	// keeper has none of its kind: deleting a copy never loses its sidecars.
	OpMoveSidecar Op = "move-sidecar"
	// OpDeleteSidecar deletes a copy's sidecar that holds the same bytes as the keeper's of its kind.
	OpDeleteSidecar Op = "delete-sidecar"
	// OpSkip does nothing: Reason says why.
	OpSkip Op = "skip"
)

// SkipReason says why a copy (or a sidecar) was left alone. Codes are stable and safe to match in
// scripts.
type SkipReason string

// Reasons for leaving a copy alone.
const (
	// SkipChanged: the copy changed (or went) since the scan.
	SkipChanged SkipReason = "changed"
	// SkipKeeperChanged: the keeper changed or went since the scan: its whole group is left alone.
	SkipKeeperChanged SkipReason = "keeper-changed"
	// SkipNotACopy: checked again just before acting, the copy does not hold the keeper's bytes (for a
	// bytes group) or tensors (for a content group), or a pipeline folder and a DDUF file do not hold
	// the same files, name for name and byte for byte (or the DDUF rules reject the DDUF file).
	SkipNotACopy SkipReason = "not-a-copy"
	// SkipRemote: a URL; nothing can be done to it.
	SkipRemote SkipReason = "remote"
	// SkipOtherFilesystem: Link: the copy is not on the keeper's filesystem.
	SkipOtherFilesystem SkipReason = "other-filesystem"
	// SkipShardSet: Link: shard sets are not linked, file by file.
	SkipShardSet SkipReason = "shard-set"
	// SkipLinked: Link: the copy is already the keeper's file.
	SkipLinked SkipReason = "already-linked"
	// SkipSidecarKept: the keeper has a sidecar of the kind, with other bytes: the copy's stays where
	// it is, and so does the copy.
	SkipSidecarKept SkipReason = "sidecar-kept"
	// SkipManaged: the copy lies in a program's store (Action.Store; store.ManagedBy), which owns it: it is
	// never deleted, replaced or linked, whatever the keeper. With To set, the keeper lies in one and
	// the copy's sidecar To would have to move into it: the copy stays, with its sidecar.
	SkipManaged SkipReason = "managed-store"
	// SkipNotDerived: Options.Derived: checked again just before deleting, reading every tensor of
	// both, the copy is not derived from its original as the scan said (or its file holds more than
	// tensors, which deleting it would lose).
	SkipNotDerived SkipReason = "not-derived"
	// SkipDerivedSidecar: Options.Derived: the derived copy has a sidecar (To) and its original none of
	// that kind. A derived copy's CivitAI record and preview are of its own file (another hash, another
	// version): they are not moved to the original, and the copy stays with them.
	SkipDerivedSidecar SkipReason = "derived-sidecar"
	// SkipKeeperManaged: Link: the keeper lies in a program's store (Action.Store): no file is
	// hard-linked to a store's, which the program may delete or count as its own.
	SkipKeeperManaged SkipReason = "keeper-managed"
)

// Actionable reports whether a copy left alone for this reason is one the user could still act on:
// not one in a program's store (SkipManaged), a URL, a copy already linked, or one that proved no copy.
func (r SkipReason) Actionable() bool {
	switch r {
	case SkipManaged, SkipRemote, SkipLinked, SkipNotACopy, SkipNotDerived:
		return false
	}
	return true
}

// Action is one thing Act did, would do (DryRun), left alone (OpSkip) or failed to do (Err).
type Action struct {
	Op    Op          `json:"op"`
	Level dupes.Level `json:"level"`
	// Path is the copy (or the sidecar) acted on; Keeper the model of its group that stays.
	Path   string `json:"path"`
	Keeper string `json:"keeper"`
	// To is where a sidecar moved.
	To string `json:"to,omitempty"`
	// Store is the program's store that left the copy alone (SkipManaged, SkipKeeperManaged).
	Store store.Store `json:"store,omitempty"`
	// Files are the files a deletion removes (a shard set's index and shards).
	Files []string `json:"files,omitempty"`
	// Freed is what the action freed (or would): files with no other hard link.
	Freed int64 `json:"freed"`
	// MetadataLost are the metadata keys a deleted copy had that its keeper lacks or holds with another
	// value: reported before the copy goes.
	MetadataLost []string `json:"metadata_lost,omitempty"`
	// Done is true when the action was carried out (never in a dry run, nor for OpSkip).
	Done   bool       `json:"done"`
	Reason SkipReason `json:"reason,omitempty"`
	// Error is Err in words: the action failed, and changed nothing.
	Error string `json:"error,omitempty"`
	Err   error  `json:"-"`
}

// Report is what Act did, in order.
type Report struct {
	Schema  string   `json:"schema"`
	DryRun  bool     `json:"dry_run"`
	Actions []Action `json:"actions"`
	// Counts of actions done (planned, in a dry run), of copies left alone, and of failures; Freed is
	// what the done (planned) actions freed.
	Deleted int `json:"deleted"`
	Linked  int `json:"linked"`
	Moved   int `json:"sidecars_moved"`
	Skipped int `json:"skipped"`
	// Left counts the copies left alone that the user could still act on (SkipReason.Actionable):
	// not a copy in a program's store, a URL, a copy already linked, or one that proved no copy.
	Left   int   `json:"left"`
	Failed int   `json:"failed"`
	Freed  int64 `json:"freed"`
	// Interrupted is true when ctx ended Act before it was through: what is listed was done, and
	// each action was done whole or not at all.
	Interrupted bool `json:"interrupted"`
}

// Outcome is Trouble when an action failed or Act was interrupted, Found when a copy the user could
// act on was left alone (Left) or nothing was done (a dry run), else Clean: every copy Act could act
// on was acted on (a copy in the Hugging Face cache, left alone as always, does not count).
func (r *Report) Outcome() canon.Outcome {
	switch {
	case r.Failed > 0 || r.Interrupted:
		return canon.Trouble
	case r.Left > 0 || (r.DryRun && len(r.Actions) > 0):
		return canon.Found
	}
	return canon.Clean
}

// ErrOptions is the error of Act given both Delete and Link, or neither.
var ErrOptions = errors.New("act: give one of Delete and Link")

// Act deletes (opt.Delete) or hard-links (opt.Link) the copies r found, group by group, keeping each
// group's keeper. A copy in a program's store (store.ManagedBy: the Hugging Face cache, ollama's blobs) is
// never touched, nor is any file linked to a keeper there, or a sidecar moved next to it. Only bytes and
// content groups are acted on (renamed and structure groups hold other bytes), and with
// Options.Derived the derived copies of derived groups, their original kept; Link only on bytes groups. Just before it acts on a copy, it checks again that the
// keeper and the copy are as the scan saw them (size and modification time) and that the copy holds
// the keeper's bytes (bytes groups) or tensors (content groups), reading both; a copy that fails is
// left alone (OpSkip), a keeper that fails leaves its group alone. From that check to the action it
// holds an exclusive advisory lock (lockfile.Lock) on the keeper's file and the copy's (a set's
// index), waiting for another run of Act that holds them, and immediately before the unlink or the
// link it checks again that both paths lead to the files checked, with the same size, modification
// and change times: two runs at once whose keep rules disagree never delete both copies.
//
// Deleting never loses what only a copy has: a copy's sidecar files move next to the keeper
// (renamed to its stem) when the keeper has none of their kind; a copy whose sidecar differs from
// the keeper's of its kind is left alone; the metadata keys the keeper lacks are reported
// (Action.MetadataLost). A keeper, or any file of it, is never deleted or replaced, nor is a sidecar
// that is, links followed, one of the keeper's own (a copy that shares its stem lists it too).
//
// Each action is whole or not done: a link is made under a temporary name in the copy's folder,
// checked, and renamed over the copy; a sidecar moves by rename (or copy, sync and rename across
// filesystems); a deletion is one unlink per file, but a diffusers pipeline folder's (a content group
// with DDUF files of its very files: dupes.Member.Pipeline), which moves aside in one rename, is
// listed again (moved back when a file changed) and then deleted. Act stops between actions once ctx is done and
// returns what it did (Interrupted). The error is ErrOptions for bad options; failures of single
// actions are in the report.
func Act(ctx context.Context, r *dupes.Report, opt Options) (*Report, error) {
	if opt.Delete == opt.Link {
		return nil, ErrOptions
	}
	a := &actor{ctx: ctx, opt: opt, rep: &Report{Schema: Schema, DryRun: opt.DryRun, Actions: []Action{}}, gone: map[string]string{}}
	for i := range r.Groups {
		g := &r.Groups[i]
		deriv := opt.Derived && opt.Delete && g.Level == dupes.LevelDerived && len(g.Members) > 1 && g.Members[0].Relation == derived.Original
		if !r.ActsOn(g, opt.Link) && !deriv {
			continue
		}
		k := &g.Members[0]
		if deriv {
			k = a.originalOf(g)
		}
		for j := 1; j < len(g.Members); j++ {
			if ctx.Err() != nil {
				a.rep.Interrupted = true
				return a.rep, nil
			}
			m := &g.Members[j]
			if deriv && (m == k || m.Relation == derived.SameTensors || m.Relation == derived.Original || a.gone[m.Path] != "") {
				continue // the original's twin is its content group's; a copy gone with its content group is gone
			}
			if !a.member(g, k, m) {
				break // the keeper changed: the group is left alone
			}
		}
	}
	return a.rep, nil
}

// actHook, when set (by tests), runs after a copy's content check ("verified") and between the last
// checks and the action on it ("act").
var actHook func(stage string)

type actor struct {
	ctx context.Context
	opt Options
	rep *Report
	// gone are the copies deleted (in a dry run, to be deleted), each with its keeper.
	gone map[string]string
	// listed are the files of the pipeline folder verify compared last, as it listed them.
	listed []pipeline.File
}

// originalOf is the model derived group g keeps: its original, or where a content group of the same
// run deleted the original for a twin holding the same tensors (its keep rule), that twin.
func (a *actor) originalOf(g *dupes.Group) *dupes.Member {
	if kept, ok := a.gone[g.Members[0].Path]; ok {
		for j := range g.Members {
			if g.Members[j].Path == kept && g.Members[j].Relation == derived.SameTensors {
				return &g.Members[j]
			}
		}
	}
	return &g.Members[0]
}

// log records an action and tells Progress.
func (a *actor) log(act Action) {
	switch {
	case act.Err != nil:
		act.Error, act.Done = diskfile.Reason(act.Err), false
		a.rep.Failed++
	case act.Op == OpSkip:
		a.rep.Skipped++
		if act.Reason.Actionable() {
			a.rep.Left++
		}
	default:
		act.Done = !a.opt.DryRun
		a.rep.Freed += act.Freed
		switch act.Op {
		case OpDelete:
			a.rep.Deleted++
			a.gone[act.Path] = act.Keeper
		case OpLink:
			a.rep.Linked++
		case OpMoveSidecar:
			a.rep.Moved++
		}
	}
	a.rep.Actions = append(a.rep.Actions, act)
	if a.opt.Progress != nil {
		a.opt.Progress(act)
	}
}

// member acts on copy m of g, whose keeper is k. It returns false when the keeper is not as the scan
// saw it (then nothing of the group is touched).
func (a *actor) member(g *dupes.Group, k, m *dupes.Member) bool {
	base := Action{Level: g.Level, Path: m.Path, Keeper: k.Path, Op: OpDelete}
	if a.opt.Link {
		base.Op = OpLink
	}
	skip := func(why SkipReason) {
		s := base
		s.Op, s.Reason = OpSkip, why
		a.log(s)
	}
	if source.IsRemote(m.Path) || source.IsRemote(k.Path) {
		skip(SkipRemote)
		return true
	}
	if s := managedOf(m); s != "" {
		base.Store = s
		skip(SkipManaged)
		return true
	}
	if s := managedOf(k); s != "" && a.opt.Link {
		base.Store = s
		skip(SkipKeeperManaged)
		return true
	}
	if !unchanged(k) {
		skip(SkipKeeperChanged)
		return false
	}
	if !unchanged(m) {
		skip(SkipChanged)
		return true
	}
	if a.opt.Link && (m.Shards > 0 || k.Shards > 0) {
		skip(SkipShardSet)
		return true
	}
	kst, kerr := os.Stat(k.Path)
	mst, merr := os.Stat(m.Path)
	if err := errors.Join(kerr, merr); err != nil {
		base.Err = err
		a.log(base)
		return true
	}
	if os.SameFile(kst, mst) {
		skip(SkipLinked)
		return true
	}
	if kdev, _, _ := diskfile.ID(kst); a.opt.Link && kdev != devOfInfo(mst) {
		skip(SkipOtherFilesystem)
		return true
	}
	// From here to the action, the keeper and the copy are locked against other runs of Act.
	kh, mh, err := a.lockBoth(k.Path, m.Path)
	switch {
	case err == nil:
	case !unchanged(k): // gone (or changed) since it was looked at, as another run may do
		skip(SkipKeeperChanged)
		return false
	case !unchanged(m):
		skip(SkipChanged)
		return true
	default:
		base.Err = err
		a.log(base)
		return true
	}
	defer kh.release()
	defer mh.release()
	if !unchanged(k) || !kh.still() {
		skip(SkipKeeperChanged)
		return false
	}
	if !unchanged(m) || !mh.still() {
		skip(SkipChanged)
		return true
	}
	same, files, lost, err := a.verify(g, k, m)
	switch {
	case err != nil:
		base.Err = err
		a.log(base)
		return true
	case !same && g.Level == dupes.LevelDerived:
		skip(SkipNotDerived)
		return true
	case !same:
		skip(SkipNotACopy)
		return true
	}
	if actHook != nil {
		actHook("verified")
	}
	// Immediately before acting: the keeper and the copy are the files checked, unchanged since.
	if !kh.still() {
		skip(SkipKeeperChanged)
		return false
	}
	if !mh.still() {
		skip(SkipChanged)
		return true
	}
	if actHook != nil {
		actHook("act")
	}
	if a.opt.Link {
		base.Freed = freedBy(m.Path)
		if !a.opt.DryRun {
			base.Err = linkOver(k.Path, m.Path)
		}
		a.log(base)
		return true
	}
	if err := linkedOut(files); err != nil { // refused in a dry run too: its plan is a list to delete
		base.Err = err
		a.log(base)
		return true
	}
	// Delete: the sidecars first, so that nothing only the copy has is lost.
	later, ok := a.sidecars(g, k, m)
	if !ok {
		return true
	}
	if d := m.Differences; d != nil {
		base.MetadataLost = append(append([]string{}, d.Metadata.Added...), d.Metadata.Changed...)
	}
	if g.Level == dupes.LevelDerived {
		base.MetadataLost = lost
	}
	base.Files = files
	for _, f := range files {
		base.Freed += freedBy(f)
	}
	// Moving the sidecars may have taken a while (a copy across filesystems): the keeper and the
	// copy are checked once more, immediately before the unlink.
	if !kh.still() {
		skip(SkipKeeperChanged)
		return false
	}
	if !mh.still() {
		skip(SkipChanged)
		return true
	}
	switch {
	case a.opt.DryRun:
	case k.Pipeline && !folderStill(filepath.Dir(k.Path), a.listed, nil):
		skip(SkipKeeperChanged) // the pipeline folder kept is no longer what the copy was compared with
		return false
	case m.Pipeline:
		if base.Err = removeFolder(filepath.Dir(m.Path), a.listed, k); errors.Is(base.Err, errFolderChanged) {
			skip(SkipChanged)
			return true
		}
	default:
		base.Err = removeAll(files, k)
	}
	a.log(base)
	if base.Err == nil {
		for _, s := range later {
			a.removeSidecar(base, s)
		}
	}
	return true
}

func devOfInfo(st fs.FileInfo) uint64 {
	dev, _, _ := diskfile.ID(st)
	return dev
}

// actLockWait is how long Act waits for another run's lock on a keeper or a copy (a run that holds
// it is reading both to compare them); a variable for tests.
var actLockWait = 5 * time.Minute

// held is a file Act has open and locked (lockfile.Lock) while it acts on it, and what it was when
// locked.
type held struct {
	path string
	f    *os.File
	lock *lockfile.Locked
	st   fs.FileInfo
}

// lockBoth opens and locks the keeper's file (a set's index) and the copy's, in the order of their
// device and inode, so that two runs that lock the same two files (through any paths) never wait on
// each other for long. The lock is on the files themselves: it needs no lock file beside them, and two
// runs that reach one file through different roots lock the same thing.
func (a *actor) lockBoth(kpath, mpath string) (kh, mh *held, err error) {
	kh, err = openHeld(kpath)
	if err != nil {
		return nil, nil, err
	}
	mh, err = openHeld(mpath)
	if err != nil {
		kh.release()
		return nil, nil, err
	}
	first, second := kh, mh
	kdev, kino, _ := diskfile.ID(kh.st)
	if mdev, mino, _ := diskfile.ID(mh.st); mdev < kdev || (mdev == kdev && mino < kino) {
		first, second = mh, kh
	}
	for _, h := range []*held{first, second} {
		if h.lock, err = lockfile.Lock(a.ctx, h.f, actLockWait); err != nil {
			kh.release()
			mh.release()
			return nil, nil, err
		}
	}
	return kh, mh, nil
}

// openHeld opens the regular file at path, read only.
func openHeld(path string) (*held, error) {
	f, st, err := canon.OpenRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	return &held{path: path, f: f, st: st}, nil
}

// release unlocks and closes h.
func (h *held) release() {
	h.lock.Unlock()
	h.f.Close()
}

// still reports whether h's path still leads to the file locked, with the size, modification time
// and change time it had then.
func (h *held) still() bool {
	st, err := os.Stat(h.path)
	return err == nil && os.SameFile(st, h.st) && st.Size() == h.st.Size() && st.ModTime().Equal(h.st.ModTime()) &&
		diskfile.ChangeTime(st) == diskfile.ChangeTime(h.st)
}

// unchanged reports whether m's file (a set's index) has the size and modification time the scan saw.
func unchanged(m *dupes.Member) bool {
	st, err := os.Stat(m.Path)
	if err != nil || !st.ModTime().Equal(m.ModTime) {
		return false
	}
	return m.Shards > 0 || m.Pipeline || st.Size() == m.Size // a pipeline folder's files are compared by verify
}

// verify checks, reading both, that m holds k's bytes (a file of a bytes group) or k's tensors, or
// for a derived group that m is derived from k as the scan said (derived.Check: every tensor read
// again), and returns the files deleting m removes: its path, or a set's index and shards; for a
// derived copy, also the metadata keys it has that k lacks or holds with another value.
func (a *actor) verify(g *dupes.Group, k, m *dupes.Member) (bool, []string, []string, error) {
	if k.Pipeline || m.Pipeline {
		return a.samePipeline(g, k, m)
	}
	if same, err := a.sameCompanions(k, m); err != nil || !same {
		return false, nil, nil, err
	}
	if g.Level == dupes.LevelBytes && m.Shards == 0 && k.Shards == 0 {
		same, err := diskfile.SameBytes(a.ctx, k.Path, m.Path)
		return same, append([]string{m.Path}, m.Companions...), nil, err
	}
	ko, err := a.open(k)
	if err != nil {
		return false, nil, nil, err
	}
	defer ko.Close()
	mo, err := a.open(m)
	if err != nil {
		return false, nil, nil, err
	}
	defer mo.Close()
	if (m.Shards > 0) != (mo.Model.Shards != nil) {
		return false, nil, nil, &canon.ReadError{Name: m.Path, Op: "read", Err: canon.ErrChanged}
	}
	if (ko.Model.Archive != nil || mo.Model.Archive != nil) && companion.ID(ko.Companions) != companion.ID(mo.Companions) {
		return false, nil, nil, nil // a DDUF file's configs and tokenizer files are inside it: the same, or no copy
	}
	files := []string{m.Path}
	for _, sh := range mo.Model.Shards { // a set named by its first file lists that file once
		if mo.Model.Archive != nil {
			break // a DDUF file's components are members of it, not files
		}
		if p := filepath.Join(filepath.Dir(m.Path), filepath.FromSlash(sh.Name)); filepath.Clean(p) != filepath.Clean(m.Path) {
			files = append(files, p)
		}
	}
	if g.Level == dupes.LevelDerived {
		if moreThanTensors(mo) || !ko.Model.Valid() || !mo.Model.Valid() {
			return false, nil, nil, nil // what the copy holds besides tensors would be lost
		}
		d, ok := derived.Check(a.ctx, ko.Model, ko.Source, mo.Model, mo.Source)
		if !ok || d.Relation != m.Relation || d.RoundedTo != m.RoundedTo {
			return false, nil, nil, a.ctx.Err()
		}
		added, _, changed := delta.Keys(delta.Metadata(ko.Model, mo.Model, func(string) bool { return false }))
		lost := append(added, changed...)
		if mo.Model.Format == canon.FormatGGUF && slices.ContainsFunc(lost, functionalKV) {
			return false, nil, nil, nil // a GGUF copy's tokenizer, chat template, hyperparameters are the model too
		}
		return true, append(files, m.Companions...), lost, errors.Join(ko.Unchanged(), mo.Unchanged())
	}
	if g.Level != dupes.LevelBytes && (moreThanTensors(ko) || moreThanTensors(mo)) {
		return false, nil, nil, nil // an ONNX graph, a checkpoint's other content: never a content copy
	}
	same, err := sameTensors(a.ctx, ko, mo)
	return same, append(files, m.Companions...), nil, err
}

// functionalKV reports whether a GGUF key a derived copy has (and its original lacks, or holds with
// another value) is one llama.cpp reads (holds.Descriptive), other than general.file_type, which says
// what the copy was rounded to: deleting the copy would lose it.
func functionalKV(key string) bool {
	return key != "general.file_type" && !holds.Descriptive(key)
}

// moreThanTensors reports whether the model o holds more than its tensors: an ONNX model (its
// graph), a DDUF file (every member of the archive, its tensors' files' metadata included), a
// checkpoint whose pickle holds anything besides a flat dict of tensors (holds.OnlyTensors), a model of
// a format registered beside the built-in ones whose reader does not say it holds only tensors
// (canon.TensorsOnly).
func moreThanTensors(o *source.Opened) bool {
	m := o.Model
	switch m.Format {
	case canon.FormatSafetensors, canon.FormatGGUF, canon.FormatPyTorch, canon.FormatNumPy, canon.FormatONNX, canon.FormatDDUF:
		return m.Format == canon.FormatONNX || m.Archive != nil || (holds.Checkpoint(m) && (o.File == nil || !holds.OnlyTensors(m, o.File)))
	}
	r := o.File
	if r == nil {
		r = o.Source
	}
	return !canon.TensorsOnly(m, r)
}

// sameCompanions reports whether the copy m's folder companions (config.json, tokenizer files…)
// have the names and the bytes of the keeper k's: a model folder goes whole or not at all, and only
// where nothing of it is lost.
func (a *actor) sameCompanions(k, m *dupes.Member) (bool, error) {
	if len(k.Companions) == 0 && len(m.Companions) == 0 {
		return true, nil
	}
	kdir, mdir := filepath.Dir(k.Path), filepath.Dir(m.Path)
	kn, mn := folder.Relative(kdir, k.Companions), folder.Relative(mdir, m.Companions)
	if !slices.Equal(kn, mn) {
		return false, nil
	}
	for _, name := range mn {
		if _, err := os.Stat(filepath.Join(mdir, filepath.FromSlash(name))); err != nil {
			return false, err
		}
		same, err := diskfile.SameBytes(a.ctx, filepath.Join(kdir, filepath.FromSlash(name)), filepath.Join(mdir, filepath.FromSlash(name)))
		if err != nil || !same {
			return false, err
		}
	}
	return true, nil
}

// open opens a member as the scan saw it: a set (by its index or any file of it) whole, a model in one
// file as that file alone (a shard found on its own is not its set).
func (a *actor) open(m *dupes.Member) (*source.Opened, error) {
	if m.Shards > 0 || source.IsRemote(m.Path) {
		return source.Open(a.ctx, m.Path, a.opt.Source)
	}
	return source.OpenFileModel(a.ctx, m.Path)
}

// sameTensors reports whether two models hold the same tensors: names, dtypes, shapes and bytes,
// whatever their layout. It reads both side by side and stops at the first difference.
func sameTensors(ctx context.Context, a, b *source.Opened) (bool, error) {
	ma, mb := a.Model, b.Model
	if !dupes.Comparable(ma) || !dupes.Comparable(mb) || len(ma.Tensors) != len(mb.Tensors) {
		return false, nil
	}
	oa, ob := canon.CanonicalOrder(ma), canon.CanonicalOrder(mb)
	ba, bb := make([]byte, diskfile.Chunk), make([]byte, diskfile.Chunk)
	for k := range oa {
		ta, tb := &ma.Tensors[oa[k]], &mb.Tensors[ob[k]]
		if ta.Name != tb.Name || ta.DType != tb.DType || !slices.Equal(ta.Shape, tb.Shape) || ta.Len() != tb.Len() {
			return false, nil
		}
		for off := uint64(0); off < ta.Len(); {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			n := min(ta.Len()-off, diskfile.Chunk)
			if _, err := a.Source.ReadAt(ba[:n], ma.DataOffset()+int64(ta.Begin+off)); err != nil {
				return false, err
			}
			if _, err := b.Source.ReadAt(bb[:n], mb.DataOffset()+int64(tb.Begin+off)); err != nil {
				return false, err
			}
			if !bytes.Equal(ba[:n], bb[:n]) {
				return false, nil
			}
			off += n
		}
	}
	return true, errors.Join(a.Unchanged(), b.Unchanged())
}

// sidecars moves (or plans to move) the copy m's sidecars that the keeper k lacks next to k, and
// returns those that hold the same bytes as k's of their kind, to delete with m. It returns false,
// having logged why, when m must stay: a sidecar differs from k's of its kind, or one could not move.
func (a *actor) sidecars(g *dupes.Group, k, m *dupes.Member) ([]lora.SidecarFile, bool) {
	if m.Shards > 0 || k.Shards > 0 || len(m.Companions) > 0 || len(k.Companions) > 0 { // a folder's are its companions
		return nil, true
	}
	var moves, later []lora.SidecarFile
	own := keeperOwn(k)
	for _, s := range lora.SidecarFiles(m.Path) {
		if st, err := os.Stat(s.Path); err != nil || own.has(st) {
			continue // the keeper's own (one stem, or a link), or gone: it stays where it is
		}
		to := lora.SidecarPath(k.Path, s.Ending)
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) && g.Level == dupes.LevelDerived {
			a.log(Action{Op: OpSkip, Level: g.Level, Path: m.Path, Keeper: k.Path, Reason: SkipDerivedSidecar, To: s.Path})
			return nil, false
		} else if errors.Is(err, fs.ErrNotExist) {
			moves = append(moves, s)
			continue
		}
		if same, err := diskfile.SameBytes(a.ctx, to, s.Path); err != nil || !same {
			a.log(Action{Op: OpSkip, Level: g.Level, Path: m.Path, Keeper: k.Path, Reason: SkipSidecarKept, To: s.Path})
			return nil, false
		}
		later = append(later, s)
	}
	if st := managedOf(k); st != "" && len(moves) > 0 {
		a.log(Action{Op: OpSkip, Level: g.Level, Path: m.Path, Keeper: k.Path, Reason: SkipManaged, Store: st, To: moves[0].Path})
		return nil, false
	}
	for _, s := range moves {
		act := Action{Op: OpMoveSidecar, Level: g.Level, Path: s.Path, Keeper: k.Path, To: lora.SidecarPath(k.Path, s.Ending)}
		if !a.opt.DryRun {
			act.Err = moveFile(s.Path, act.To)
		}
		a.log(act)
		if act.Err != nil {
			return nil, false
		}
	}
	return later, true
}

// managedOf is the store a member, or any file of it (a set's shards), lies in ("" for none).
func managedOf(m *dupes.Member) store.Store {
	for _, p := range append([]string{m.Path}, m.Files...) {
		if s := store.ManagedBy(p); s != "" {
			return s
		}
	}
	return ""
}

// keeperOwn are the real files (links followed) of the keeper k and of every sidecar it has: a copy's
// sidecar that is one of them (the copy shares the keeper's stem, a case-insensitive name, a link) is
// the keeper's too, and is never moved or deleted.
func keeperOwn(k *dupes.Member) realFiles {
	var own realFiles
	paths := append(append([]string{k.Path}, k.Files...), k.Companions...)
	for _, e := range lora.SidecarEndings {
		paths = append(paths, lora.SidecarPath(k.Path, e))
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			own = append(own, st)
		}
	}
	return own
}

// realFiles are files as os.Stat saw them.
type realFiles []fs.FileInfo

// has reports whether st is one of the files (os.SameFile: links followed, the same device and inode).
func (r realFiles) has(st fs.FileInfo) bool {
	return slices.ContainsFunc(r, func(o fs.FileInfo) bool { return os.SameFile(o, st) })
}

// removeSidecar deletes a sidecar of a deleted copy that the keeper has too, byte for byte.
func (a *actor) removeSidecar(del Action, s lora.SidecarFile) {
	act := Action{Op: OpDeleteSidecar, Level: del.Level, Path: s.Path, Keeper: del.Keeper, Freed: freedBy(s.Path)}
	if !a.opt.DryRun {
		act.Err = os.Remove(s.Path)
	}
	a.log(act)
}

// freedBy is what deleting the file at path frees: its size, unless another hard link keeps it.
func freedBy(path string) int64 {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return 0
	}
	if _, _, nlink := diskfile.ID(st); nlink > 1 {
		return 0
	}
	return st.Size()
}

// removeAll deletes files, none of which may be one of the keeper's files (a set's shards shared with
// it, through links): those are refused, before anything is deleted.
func removeAll(files []string, k *dupes.Member) error {
	var kept realFiles
	for _, p := range append(append([]string{k.Path}, k.Files...), k.Companions...) {
		if st, err := os.Stat(p); err == nil {
			kept = append(kept, st)
		}
	}
	if err := linkedOut(files); err != nil {
		return err
	}
	for _, p := range files {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if kept.has(st) {
			return fmt.Errorf("%s is a file of the keeper %s: not deleted", p, k.Path)
		}
	}
	for _, p := range files {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	if len(files) > 1 {
		os.Remove(filepath.Dir(files[0])) // a model folder (or a set's) left empty goes too; one with other files stays
	}
	return nil
}

// linkedOut refuses files of which one lies outside the folder of the first (a model's file, a set's
// index) through a symbolic link: a set's shards may lie in subfolders of its index's
// ("sub/model-00001-of-00002.safetensors"), and one that links to a folder elsewhere would reach files
// the user never named.
func linkedOut(files []string) error {
	base, err := filepath.EvalSymlinks(filepath.Dir(files[0]))
	if err != nil {
		return err
	}
	for _, p := range files[1:] {
		d, err := filepath.EvalSymlinks(filepath.Dir(p))
		if err != nil {
			return err
		}
		if rel, err := filepath.Rel(base, d); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("%s lies outside %s, through a symbolic link: not deleted", p, filepath.Dir(files[0]))
		}
	}
	return nil
}

// tempName is a name for a temporary file in dir that no other file has.
func tempName(dir, what string) string {
	var b [8]byte
	rand.Read(b[:])
	return filepath.Join(dir, ".stdiff-"+what+"-"+hex.EncodeToString(b[:])+".tmp")
}

// linkOver replaces the file at path with a hard link to keeper: the link is made under a temporary
// name in path's folder, checked to be keeper's file, and renamed over path (one atomic step).
func linkOver(keeper, path string) error {
	keeper, err := filepath.EvalSymlinks(keeper) // a link to a link would be a link to the symbolic link
	if err != nil {
		return err
	}
	tmp := tempName(filepath.Dir(path), "link")
	if err := os.Link(keeper, tmp); err != nil {
		return err
	}
	kst, err1 := os.Stat(keeper)
	tst, err2 := os.Lstat(tmp)
	if err := errors.Join(err1, err2); err != nil || !os.SameFile(kst, tst) {
		os.Remove(tmp)
		if err == nil {
			err = fmt.Errorf("%s changed while it was linked", keeper)
		}
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// moveFile moves from to to, which must not exist, never replacing a file there: on one filesystem
// by a hard link and an unlink; elsewhere (or where links are not allowed) by a copy under a
// temporary name beside to, synced, then renamed to to, and the unlink of from.
func moveFile(from, to string) error {
	err := os.Link(from, to)
	if err == nil {
		if err := os.Remove(from); err != nil {
			os.Remove(to) // undone: the sidecar stays where it was
			return err
		}
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return err
	}
	src, st, err := canon.OpenRegular(from, os.O_RDONLY)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp := tempName(filepath.Dir(to), "move")
	dst, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if err = errors.Join(err, dst.Sync(), dst.Close()); err == nil {
		os.Chtimes(tmp, time.Now(), st.ModTime())
		if _, serr := os.Lstat(to); serr == nil {
			err = &fs.PathError{Op: "move", Path: to, Err: fs.ErrExist}
		} else {
			err = os.Rename(tmp, to)
		}
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Remove(from); err != nil {
		os.Remove(to) // undone: the sidecar stays where it was
		return err
	}
	return nil
}
