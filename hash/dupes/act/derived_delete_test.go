//go:build unix

package act

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/hash/dupes"
)

// derivedFolder writes dreamy_v3.safetensors (F32, with EMA weights) and three copies derived from
// it, each newer than the original (so that --keep newest would pick a copy): rounded to F16 (with a
// metadata key of its own), EMA-pruned, pruned and rounded to F8_E4M3. It returns the folder and the
// paths, the original first.
func derivedFolder(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "dreamy_v3.safetensors"), filepath.Join(dir, "dreamy_v3-fp16.safetensors"),
		filepath.Join(dir, "dreamy_v3-pruned.safetensors"), filepath.Join(dir, "dreamy_v3-pruned8.safetensors")}
	data := [][]byte{derivedModel(1, "F32", false), derivedModel(1, "F16", false, stfile.KV{Key: "converted_by", Value: "a script"}),
		derivedModel(1, "F32", true), derivedModel(1, "F8_E4M3", true)}
	old := time.Now().Add(-time.Hour)
	for i, p := range paths {
		mustWrite(t, p, data[i])
		if err := os.Chtimes(p, old.Add(time.Duration(i)*time.Minute), old.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	return dir, paths
}

// scanDerived scans dir at LevelDerived with the keep rule newest: one derived group of members.
func scanDerived(t *testing.T, dir string, members int) *dupes.Report {
	t.Helper()
	rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{Level: dupes.LevelDerived, Keep: dupes.KeepRule{Kind: dupes.KeepNewest}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 || rep.Groups[0].Level != dupes.LevelDerived || len(rep.Groups[0].Members) != members {
		t.Fatalf("want one derived group of %d, got %+v", members, rep.Groups)
	}
	return rep
}

// TestDerivedDeleteKeepsOriginal: with Options.Derived (the user asked for --level derived by name),
// --delete deletes the copies derived from the original and keeps the original, though the keep rule
// (newest) would pick a copy; the metadata key only the F16 copy has is reported before it goes; the
// outcome is Clean (exit 0). A dry run plans the same and changes nothing.
func TestDerivedDeleteKeepsOriginal(t *testing.T) {
	dir, paths := derivedFolder(t)
	rep := scanDerived(t, dir, 4)
	if rep.Groups[0].Keeper != paths[0] {
		t.Fatalf("keeper %s, want the original %s", rep.Groups[0].Keeper, paths[0])
	}
	dry, err := Act(t.Context(), rep, Options{Delete: true, Derived: true, DryRun: true})
	if err != nil || dry.Deleted != 3 || dry.Outcome() != 1 || !slices.Equal(dry.Deletable(), paths[1:]) {
		t.Fatalf("dry run: %v, %+v", err, dry)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("a dry run deleted %s", p)
		}
	}
	r, err := Act(t.Context(), rep, Options{Delete: true, Derived: true})
	if err != nil || r.Deleted != 3 || r.Skipped != 0 || r.Failed != 0 || r.Outcome() != 0 {
		t.Fatalf("%v, %+v", err, r)
	}
	for _, a := range r.Actions {
		if a.Op != OpDelete || a.Keeper != paths[0] || a.Level != dupes.LevelDerived {
			t.Errorf("action %+v", a)
		}
		if want := []string(nil); a.Path == paths[1] {
			if want = []string{"converted_by"}; !slices.Equal(a.MetadataLost, want) {
				t.Errorf("%s: metadata lost %q, want %q", a.Path, a.MetadataLost, want)
			}
		} else if len(a.MetadataLost) != 0 {
			t.Errorf("%s: metadata lost %q", a.Path, a.MetadataLost)
		}
	}
	if _, err := os.Stat(paths[0]); err != nil {
		t.Errorf("the original went: %v", err)
	}
	for _, p := range paths[1:] {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s stayed", p)
		}
	}
}

// TestDerivedDeleteChangedSinceScan: a copy modified between the scan and --delete is left alone
// (changed since the scan), and so is one whose bytes were changed with its size and modification
// time put back, which only reading both again catches (not derived); the outcome is Found (exit 1)
// for the first, and nothing is deleted that is no longer derived.
func TestDerivedDeleteChangedSinceScan(t *testing.T) {
	dir, paths := derivedFolder(t)
	rep := scanDerived(t, dir, 4)
	// paths[1]: rewritten, another size and time.
	mustWrite(t, paths[1], derivedModel(2, "F16", false))
	// paths[2]: one byte of its last tensor changed, size and time as the scan saw them.
	st, err := os.Stat(paths[2])
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(paths[2])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0x40
	mustWrite(t, paths[2], b)
	if err := os.Chtimes(paths[2], st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	r, err := Act(t.Context(), rep, Options{Delete: true, Derived: true})
	if err != nil || r.Deleted != 1 || r.Skipped != 2 || r.Failed != 0 || r.Outcome() != 1 {
		t.Fatalf("%v, %+v", err, r)
	}
	reasons := map[string]SkipReason{}
	for _, a := range r.Actions {
		if a.Op == OpSkip {
			reasons[a.Path] = a.Reason
		}
	}
	if reasons[paths[1]] != SkipChanged || reasons[paths[2]] != SkipNotDerived {
		t.Errorf("reasons %v", reasons)
	}
	for _, p := range paths[:3] {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s went: %v", p, err)
		}
	}
	if _, err := os.Stat(paths[3]); err == nil {
		t.Errorf("%s stayed", paths[3])
	}
	var text strings.Builder
	if err := Write(&text, r, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{paths[1] + ": changed since the scan", paths[2] + ": checked again, it is not derived from its original as the scan said"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

// TestDerivedDeleteOnlyByName: without Options.Derived (the level not asked for by name), Delete and
// Link leave a derived group alone; Link never acts on one, even with Derived.
func TestDerivedDeleteOnlyByName(t *testing.T) {
	dir, paths := derivedFolder(t)
	rep := scanDerived(t, dir, 4)
	for _, o := range []Options{{Delete: true}, {Link: true}, {Link: true, Derived: true}} {
		r, err := Act(t.Context(), rep, o)
		if err != nil || len(r.Actions) != 0 || r.Outcome() != 0 {
			t.Errorf("%+v: %v, %+v", o, err, r)
		}
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s went: %v", p, err)
		}
	}
}

// TestDerivedDeleteSidecar: a derived copy with a sidecar its original lacks stays with it (its CivitAI
// record is of the copy's file); one with the original's very sidecar goes, and the sidecar with it.
func TestDerivedDeleteSidecar(t *testing.T) {
	dir, paths := derivedFolder(t)
	info := []byte(`{"modelId": 1, "id": 2}`)
	mustWrite(t, filepath.Join(dir, "dreamy_v3-fp16.civitai.info"), info)
	rep := scanDerived(t, dir, 4)
	r, err := Act(t.Context(), rep, Options{Delete: true, Derived: true})
	if err != nil || r.Deleted != 2 || r.Skipped != 1 || r.Outcome() != 1 {
		t.Fatalf("%v, %+v", err, r)
	}
	if _, err := os.Stat(paths[1]); err != nil {
		t.Errorf("the copy with a sidecar went: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "dreamy_v3-fp16.civitai.info")); err != nil || string(got) != string(info) {
		t.Errorf("its sidecar: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dreamy_v3.civitai.info")); err == nil {
		t.Error("the copy's sidecar moved to the original")
	}
	// The original given the same record: the copy and its sidecar go.
	mustWrite(t, filepath.Join(dir, "dreamy_v3.civitai.info"), info)
	rep = scanDerived(t, dir, 2)
	r, err = Act(t.Context(), rep, Options{Delete: true, Derived: true})
	if err != nil || r.Deleted != 1 || r.Outcome() != 0 {
		t.Fatalf("%v, %+v", err, r)
	}
	for _, p := range []string{paths[1], filepath.Join(dir, "dreamy_v3-fp16.civitai.info")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s stayed", p)
		}
	}
}
