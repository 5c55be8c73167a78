//go:build unix

package act

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/hash/dupes"
	"github.com/stdiff/stdiff/hash/dupes/render"
)

// collectorLayout is what a collector has: the original LoRA with its metadata, a byte copy that
// carries the sidecars, a metadata-stripped re-save (first by path), and an edited copy with a key
// the original lacks. All are one content group; the original and the copy a bytes group.
func collectorLayout(t *testing.T) (dir string, paths map[string]string) {
	t.Helper()
	dir = t.TempDir()
	orig := loraFile(1, "orig")
	orig.Metadata = append(orig.Metadata, stfile.KV{Key: "ss_network_dim", Value: "8"}, stfile.KV{Key: "ss_epoch", Value: "10"})
	stripped := loraFile(1, "")
	stripped.Metadata = nil
	edited := loraFile(1, "orig")
	edited.Metadata = append(edited.Metadata, stfile.KV{Key: "ssmd_display_name", Value: "Pepper"})
	paths = map[string]string{
		"orig":     filepath.Join(dir, "library", "pepper.safetensors"),
		"copy":     filepath.Join(dir, "downloads", "pepper (1).safetensors"),
		"stripped": filepath.Join(dir, "a-resaved", "pepper.safetensors"),
		"edited":   filepath.Join(dir, "downloads", "pepper-edited.safetensors"),
	}
	mustWrite(t, paths["orig"], orig.Build())
	mustWrite(t, paths["copy"], orig.Build())
	mustWrite(t, paths["stripped"], stripped.Build())
	mustWrite(t, paths["edited"], edited.Build())
	mustWrite(t, filepath.Join(dir, "downloads", "pepper (1).civitai.info"), []byte(`{"trainedWords": ["pepper"]}`))
	mustWrite(t, filepath.Join(dir, "downloads", "pepper (1).preview.png"), []byte("png"))
	old := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, k := range []string{"orig", "copy", "stripped", "edited"} {
		os.Chtimes(paths[k], old, old.Add(time.Duration(i)*time.Hour))
	}
	return dir, paths
}

func findIn(t *testing.T, dir string, opt dupes.Options) *dupes.Report {
	t.Helper()
	rep, err := dupes.Find(t.Context(), []string{dir}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func groupOf(t *testing.T, rep *dupes.Report, level dupes.Level) *dupes.Group {
	t.Helper()
	for i := range rep.Groups {
		if rep.Groups[i].Level == level {
			return &rep.Groups[i]
		}
	}
	t.Fatalf("no %s group in %+v", level, rep.Groups)
	return nil
}

// TestKeeperRules: every group names its keeper and why; by default the copy with the most
// information (not the first path: the stripped re-save), then by each rule --keep names.
func TestKeeperRules(t *testing.T) {
	dir, p := collectorLayout(t)
	for _, c := range []struct {
		rule   string
		keeper string
		why    dupes.KeepReason
	}{
		{"most-info", "copy", dupes.ReasonMostInfo}, // the original's keys and two sidecars
		{"oldest", "orig", dupes.ReasonOldest},
		{"newest", "edited", dupes.ReasonNewest},
		{"path:" + filepath.Join(dir, "library"), "orig", dupes.ReasonPathPrefix},
		{"path:" + filepath.Join(dir, "a-resaved") + "/", "stripped", dupes.ReasonPathPrefix},
	} {
		rule, err := dupes.ParseKeepRule(c.rule)
		if err != nil {
			t.Fatal(err)
		}
		g := groupOf(t, findIn(t, dir, dupes.Options{Keep: rule}), dupes.LevelContent)
		if g.Keeper != p[c.keeper] || g.Members[0].Path != g.Keeper || g.KeeperReason != c.why {
			t.Errorf("--keep %s: keeper %s (%s), want %s (%s)", c.rule, g.Keeper, g.KeeperReason, p[c.keeper], c.why)
		}
	}
	// Without the sidecars, the original carries the most; the bytes group inside keeps the same one.
	os.Remove(filepath.Join(dir, "downloads", "pepper (1).civitai.info"))
	os.Remove(filepath.Join(dir, "downloads", "pepper (1).preview.png"))
	rep := findIn(t, dir, dupes.Options{})
	if g := groupOf(t, rep, dupes.LevelContent); g.Keeper != p["orig"] || g.KeeperReason != dupes.ReasonOldest { // orig and copy tie on info
		t.Errorf("keeper %s (%s)", g.Keeper, g.KeeperReason)
	}
	if g := groupOf(t, rep, dupes.LevelBytes); g.Keeper != p["orig"] {
		t.Errorf("bytes keeper %s", g.Keeper)
	}
	for _, bad := range []string{"largest", "path:", ""} {
		if _, err := dupes.ParseKeepRule(bad); err == nil {
			t.Errorf("rule %q accepted", bad)
		}
	}
}

// TestSidecarDifferences: how each copy's sidecars differ from the keeper's is data.
func TestSidecarDifferences(t *testing.T) {
	dir, p := collectorLayout(t)
	mustWrite(t, filepath.Join(dir, "library", "pepper.civitai.info"), []byte(`{"trainedWords": ["other"]}`))
	mustWrite(t, filepath.Join(dir, "library", "pepper.json"), []byte(`{}`))
	rep := findIn(t, dir, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepOldest}})
	g := groupOf(t, rep, dupes.LevelBytes)
	if g.Keeper != p["orig"] || len(g.Members[0].Sidecars) != 2 {
		t.Fatalf("keeper %+v", g.Members[0])
	}
	want := []dupes.SidecarDifference{
		{Kind: ".civitai.info", Change: dupes.SidecarChanged, Path: filepath.Join(dir, "downloads", "pepper (1).civitai.info")},
		{Kind: ".json", Change: dupes.SidecarRemoved, Path: filepath.Join(dir, "library", "pepper.json")},
		{Kind: ".preview.png", Change: dupes.SidecarAdded, Path: filepath.Join(dir, "downloads", "pepper (1).preview.png")},
	}
	if got := g.Members[1].Differences.Sidecars; !reflect.DeepEqual(got, want) {
		t.Errorf("sidecars %+v\nwant %+v", got, want)
	}
	var text bytes.Buffer
	render.Write(&text, rep, render.WriteOptions{})
	if !strings.Contains(text.String(), "sidecars: ~.civitai.info, -.json, +.preview.png") {
		t.Errorf("text:\n%s", text.String())
	}
}

// snapshot is what a file is: its bytes, inode and modification time.
type snapshot struct {
	data  []byte
	ino   uint64
	mtime time.Time
}

func snap(t *testing.T, path string) snapshot {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, _ := os.ReadFile(path)
	_, ino, _ := fileID(st)
	return snapshot{b, ino, st.ModTime()}
}

func exists(path string) bool { _, err := os.Lstat(path); return err == nil }

// TestActDelete: --delete deletes every copy but the keeper, moves the sidecars the keeper lacks next
// to it under its stem, reports the metadata the keeper lacks, and never touches the keeper; a dry
// run says exactly that and changes nothing.
func TestActDelete(t *testing.T) {
	dir, p := collectorLayout(t)
	rep := findIn(t, dir, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Join(dir, "library")}})
	before := snap(t, p["orig"])
	dry, err := Act(t.Context(), rep, Options{Delete: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"copy", "stripped", "edited"} {
		if !exists(p[k]) {
			t.Fatalf("dry run deleted %s", p[k])
		}
	}
	real, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	strip := func(r *Report) []Action {
		out := slices.Clone(r.Actions)
		for i := range out {
			out[i].Done = false
		}
		return out
	}
	if !reflect.DeepEqual(strip(dry), strip(real)) || !dry.DryRun || dry.Outcome() != 1 {
		t.Errorf("the dry run is not what was done:\n%+v\n%+v", dry.Actions, real.Actions)
	}
	if real.Deleted != 3 || real.Moved != 2 || real.Failed != 0 || real.Skipped != 0 || real.Outcome() != 0 {
		t.Errorf("report %+v", real)
	}
	for _, k := range []string{"copy", "stripped", "edited"} {
		if exists(p[k]) {
			t.Errorf("%s not deleted", p[k])
		}
	}
	if after := snap(t, p["orig"]); !reflect.DeepEqual(before, after) {
		t.Error("the keeper changed")
	}
	for _, e := range []string{".civitai.info", ".preview.png"} {
		if !exists(filepath.Join(dir, "library", "pepper"+e)) || exists(filepath.Join(dir, "downloads", "pepper (1)"+e)) {
			t.Errorf("sidecar %s not moved next to the keeper", e)
		}
	}
	var freed int64
	for _, a := range real.Actions {
		freed += a.Freed
		if a.Op == OpDelete && a.Path == p["edited"] && !slices.Equal(a.MetadataLost, []string{"ssmd_display_name"}) {
			t.Errorf("edited copy: metadata lost %q", a.MetadataLost)
		}
		if !a.Done {
			t.Errorf("not done: %+v", a)
		}
	}
	if freed != real.Freed || freed != rep.Reclaimable {
		t.Errorf("freed %d, report %d, reclaimable %d", freed, real.Freed, rep.Reclaimable)
	}
	// Nothing left to do.
	again, _ := Act(t.Context(), findIn(t, dir, dupes.Options{}), Options{Delete: true})
	if len(again.Actions) != 0 || again.Outcome() != 0 {
		t.Errorf("second run: %+v", again.Actions)
	}
}

// TestActLeavesChangedFilesAlone: a copy changed between the scan and the action is left alone, as is
// one whose bytes changed behind an unchanged size and time (checked again), and a whole group whose
// keeper changed; a copy whose sidecar differs from the keeper's stays too.
func TestActLeavesChangedFilesAlone(t *testing.T) {
	dir, p := collectorLayout(t)
	rep := findIn(t, dir, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepOldest}})
	// The copy's bytes change, its size and time do not.
	b, _ := os.ReadFile(p["copy"])
	st, _ := os.Stat(p["copy"])
	b[len(b)-1] ^= 1
	mustWrite(t, p["copy"], b)
	os.Chtimes(p["copy"], st.ModTime(), st.ModTime())
	// The stripped re-save is touched.
	os.Chtimes(p["stripped"], time.Now(), time.Now())
	// The edited copy has a sidecar of a kind the keeper has, with other bytes.
	mustWrite(t, filepath.Join(dir, "library", "pepper.json"), []byte(`{"a": 1}`))
	mustWrite(t, filepath.Join(dir, "downloads", "pepper-edited.json"), []byte(`{"a": 2}`))
	r, _ := Act(t.Context(), rep, Options{Delete: true})
	reasons := map[string]SkipReason{}
	for _, a := range r.Actions {
		if a.Op == OpSkip {
			reasons[filepath.Base(a.Path)] = a.Reason
		} else if a.Op != OpMoveSidecar {
			t.Errorf("acted: %+v", a)
		}
	}
	want := map[string]SkipReason{"pepper (1).safetensors": SkipNotACopy, "pepper.safetensors": SkipChanged, "pepper-edited.safetensors": SkipSidecarKept}
	if !reflect.DeepEqual(reasons, want) || r.Outcome() != 1 {
		t.Errorf("skipped %v, want %v", reasons, want)
	}
	for _, k := range []string{"copy", "stripped", "edited"} {
		if !exists(p[k]) {
			t.Errorf("%s deleted", p[k])
		}
	}
	// The keeper changes: nothing of its group is touched.
	rep = findIn(t, dir, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepOldest}})
	os.Chtimes(p["orig"], time.Now(), time.Now())
	r, _ = Act(t.Context(), rep, Options{Delete: true})
	if len(r.Actions) != 1 || r.Actions[0].Reason != SkipKeeperChanged {
		t.Errorf("keeper changed: %+v", r.Actions)
	}
}

// TestActLink: --link replaces byte copies with hard links to the keeper, atomically (no temporary
// file is left), and never touches a content copy.
func TestActLink(t *testing.T) {
	dir, p := collectorLayout(t)
	rep := findIn(t, dir, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepOldest}})
	before := snap(t, p["orig"])
	stripped := snap(t, p["stripped"])
	r, err := Act(t.Context(), rep, Options{Link: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Linked != 1 || len(r.Actions) != 1 || r.Actions[0].Path != p["copy"] || r.Outcome() != 0 {
		t.Fatalf("report %+v", r)
	}
	a, _ := os.Stat(p["orig"])
	c, _ := os.Stat(p["copy"])
	if !os.SameFile(a, c) || !reflect.DeepEqual(snap(t, p["orig"]), before) || !reflect.DeepEqual(snap(t, p["stripped"]), stripped) {
		t.Error("not linked, or the keeper or a content copy changed")
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "*", ".stdiff-*")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	if _, err := Act(t.Context(), rep, Options{Link: true, Delete: true}); err != ErrOptions {
		t.Errorf("link and delete: %v", err)
	}
}

// TestActReadOnlyFolder: a copy in a folder it cannot be deleted from fails, says why, and loses
// nothing: its sidecars stay where they were.
func TestActReadOnlyFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("permissions do not stop root")
	}
	dir, p := collectorLayout(t)
	rep := findIn(t, dir, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepOldest}})
	downloads := filepath.Join(dir, "downloads")
	os.Chmod(downloads, 0o555)
	defer os.Chmod(downloads, 0o755)
	r, _ := Act(t.Context(), rep, Options{Delete: true})
	if r.Failed == 0 || r.Outcome() != 2 || !exists(p["copy"]) || !exists(filepath.Join(downloads, "pepper (1).civitai.info")) {
		t.Errorf("report %+v", r)
	}
	if exists(filepath.Join(dir, "library", "pepper.civitai.info")) {
		t.Error("a sidecar that could not move is both here and there")
	}
	if exists(p["stripped"]) {
		t.Error("a copy in a writable folder was not deleted")
	}
	var text bytes.Buffer
	Write(&text, r, WriteOptions{})
	if !strings.Contains(text.String(), "failed        "+filepath.Join(downloads, "pepper (1).civitai.info")+": permission denied") {
		t.Errorf("text:\n%s", text.String())
	}
}

// TestActInterrupted: once ctx is done Act stops between actions: what it reports was done, whole,
// and nothing else was touched.
func TestActInterrupted(t *testing.T) {
	dir, p := collectorLayout(t)
	rep := findIn(t, dir, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepOldest}})
	ctx, cancel := context.WithCancel(t.Context())
	r, _ := Act(ctx, rep, Options{Delete: true, Progress: func(a Action) {
		if a.Op == OpDelete {
			cancel()
		}
	}})
	var deleted []string
	for _, a := range r.Actions {
		if a.Op == OpDelete && a.Done {
			deleted = append(deleted, a.Path)
		}
	}
	if !r.Interrupted || len(deleted) != 1 || r.Outcome() != 2 {
		t.Fatalf("report %+v", r)
	}
	for _, k := range []string{"copy", "stripped", "edited"} {
		if exists(p[k]) == slices.Contains(deleted, p[k]) {
			t.Errorf("%s: exists %v, reported deleted %v", p[k], exists(p[k]), slices.Contains(deleted, p[k]))
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "*", ".stdiff-*")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// TestDeletable: the files --delete would delete, for xargs, from a dry run: every copy but the
// keepers, a set's index and shards; and exactly what Act then deletes.
func TestDeletable(t *testing.T) {
	dir, p := collectorLayout(t)
	set := writeSet(t, filepath.Join(dir, "set"), 1, 2, "")
	cp := writeSet(t, filepath.Join(dir, "setcopy"), 1, 2, "")
	rep := findIn(t, dir, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepOldest}})
	want := []string{p["copy"], p["edited"], p["stripped"], cp, filepath.Join(dir, "setcopy", setShard1), filepath.Join(dir, "setcopy", setShard2)}
	dry, err := Act(t.Context(), rep, Options{Delete: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	got := dry.Deletable()
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("deletable %q\nwant %q", got, want)
	}
	var b bytes.Buffer
	Write(&b, dry, WriteOptions{Deletable: true, Null: true})
	if b.String() != strings.Join(got, "\x00")+"\x00" {
		t.Errorf("-0: %q", b.String())
	}
	done, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil || !slices.Equal(done.Deletable(), got) {
		t.Errorf("deleted %q, %v; listed %q", done.Deletable(), err, got)
	}
	_ = set
}

// TestActOnPlanted: every action on the planted collection. --link turns the byte copy into a link and
// leaves the content copies; --delete then deletes every copy but the keeper, and a new scan finds no
// copy left; the near miss, the other weights and the unrelated files are untouched throughout.
func TestActOnPlanted(t *testing.T) {
	dir, _ := plantedCollection(t)
	untouched := map[string]snapshot{}
	for _, n := range []string{"e/other-weights.safetensors", "f/near-miss.safetensors", "g/unrelated-3.safetensors"} {
		untouched[n] = snap(t, filepath.Join(dir, n))
	}
	opt := dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Join(dir, "a")}}
	linked, err := Act(t.Context(), findIn(t, dir, opt), Options{Link: true})
	if err != nil || linked.Linked != 1 || linked.Outcome() != 0 {
		t.Fatalf("link: %v %+v", err, linked)
	}
	rep := findIn(t, dir, opt)
	if len(rep.Skipped) != 2 || !strings.Contains(rep.Skipped[0].Reason+rep.Skipped[1].Reason, "(a link)") {
		t.Errorf("after --link: skipped %+v", rep.Skipped)
	}
	deleted, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil || deleted.Deleted != 2 || deleted.Failed != 0 {
		t.Fatalf("delete: %v %+v", err, deleted)
	}
	for _, g := range findIn(t, dir, opt).Groups {
		t.Errorf("a group is left: %s %v", g.Level, g.Files)
	}
	for n, s := range untouched {
		if !reflect.DeepEqual(snap(t, filepath.Join(dir, n)), s) {
			t.Errorf("%s changed", n)
		}
	}
	if !exists(filepath.Join(dir, "a", "orig.safetensors")) {
		t.Error("the keeper went")
	}
}

// TestActOnSets: a shard set that copies another is deleted whole (its index and every shard) and
// never linked file by file; the set kept keeps every file.
func TestActOnSets(t *testing.T) {
	dir := t.TempDir()
	keep := writeSet(t, filepath.Join(dir, "library"), 1, 2, "")
	cp := writeSet(t, filepath.Join(dir, "copy"), 1, 2, "")
	opt := dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Join(dir, "library")}}
	setFiles := func(index string) []string {
		d := filepath.Dir(index)
		return []string{index, filepath.Join(d, setShard1), filepath.Join(d, setShard2)}
	}
	linked, err := Act(t.Context(), findIn(t, dir, opt), Options{Link: true})
	if err != nil || linked.Linked != 0 || linked.Skipped == 0 {
		t.Fatalf("link: %v %+v", err, linked)
	}
	for _, a := range linked.Actions {
		if a.Op != OpSkip || a.Reason != SkipShardSet {
			t.Errorf("link of a set: %+v", a)
		}
	}
	deleted, err := Act(t.Context(), findIn(t, dir, opt), Options{Delete: true})
	if err != nil || deleted.Deleted != 1 || deleted.Failed != 0 {
		t.Fatalf("delete: %v %+v", err, deleted)
	}
	for _, f := range setFiles(cp) {
		if exists(f) {
			t.Errorf("%s is left of the deleted set", f)
		}
	}
	for _, f := range setFiles(keep) {
		if !exists(f) {
			t.Errorf("%s of the kept set went", f)
		}
	}
}

// TestReclaimableIsWhatDeleteFrees: at every level, the report's Reclaimable is the sum of the groups
// --delete acts on, and what a dry run of Act frees.
func TestReclaimableIsWhatDeleteFrees(t *testing.T) {
	dir, paths := collectorLayout(t)
	for _, level := range []dupes.Level{dupes.LevelBytes, dupes.LevelContent, dupes.LevelRenamed, dupes.LevelStructure} {
		rep := findIn(t, dir, dupes.Options{Level: level, Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Dir(paths["orig"])}})
		var sum int64
		for i := range rep.Groups {
			if rep.ActsOn(&rep.Groups[i], false) {
				sum += rep.Groups[i].Reclaimable
			}
		}
		dry, err := Act(t.Context(), rep, Options{Delete: true, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Reclaimable != sum || rep.Reclaimable != dry.Freed || sum == 0 {
			t.Errorf("%s: reclaimable %d, the groups acted on %d, a dry run frees %d", level, rep.Reclaimable, sum, dry.Freed)
		}
	}
}
