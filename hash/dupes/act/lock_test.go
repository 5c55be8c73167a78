//go:build unix

package act

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stdiff/stdiff/hash/dupes"
)

// TestActConcurrentKeepRulesDisagree: two runs at once, one keeping the oldest copy and one the
// newest, seeing the files through different roots (a folder, and the folder above or a symbolic link to it): at least one
// copy survives, whichever run acts first. Each run waits between its content check and its unlink,
// where another run could slip in.
func TestActConcurrentKeepRulesDisagree(t *testing.T) {
	for _, link := range []bool{false, true} {
		dir := t.TempDir()
		a, b := filepath.Join(dir, "m", "a.safetensors"), filepath.Join(dir, "m", "b.safetensors")
		data := loraFile(1, "").Build()
		mustWrite(t, a, data)
		mustWrite(t, b, data)
		old := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
		os.Chtimes(a, old, old)
		os.Chtimes(b, old, old.Add(time.Hour))
		root2 := dir // the folder above: the same files by another root
		if link {
			root2 = filepath.Join(t.TempDir(), "other-root")
			if err := os.Symlink(filepath.Join(dir, "m"), root2); err != nil {
				t.Fatal(err)
			}
			root2 += string(filepath.Separator)
		}
		oldest, err := dupes.Find(t.Context(), []string{filepath.Join(dir, "m")}, dupes.Options{Level: dupes.LevelBytes, Keep: dupes.KeepRule{Kind: dupes.KeepOldest}})
		if err != nil {
			t.Fatal(err)
		}
		newest, err := dupes.Find(t.Context(), []string{root2}, dupes.Options{Level: dupes.LevelBytes, Keep: dupes.KeepRule{Kind: dupes.KeepNewest}})
		if err != nil {
			t.Fatal(err)
		}
		if len(oldest.Groups) != 1 || len(newest.Groups) != 1 {
			t.Fatalf("link %v: groups %d and %d", link, len(oldest.Groups), len(newest.Groups))
		}
		actHook = func(string) { time.Sleep(200 * time.Millisecond) }
		var wg sync.WaitGroup
		reps := make([]*Report, 2)
		for i, r := range []*dupes.Report{oldest, newest} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				reps[i], _ = Act(t.Context(), r, Options{Delete: true})
			}()
		}
		wg.Wait()
		actHook = nil
		_, errA := os.Stat(a)
		_, errB := os.Stat(b)
		if errA != nil && errB != nil {
			t.Fatalf("link %v: both copies deleted: %+v %+v", link, reps[0].Actions, reps[1].Actions)
		}
		if reps[0].Deleted+reps[1].Deleted != 1 || reps[0].Skipped+reps[1].Skipped != 1 {
			t.Errorf("link %v: want one deletion and one copy left alone: %+v %+v", link, reps[0].Actions, reps[1].Actions)
		}
	}
}

// TestActKeeperEditedAfterCheck: a keeper rewritten in place after the content check, its size and
// modification time put back, leaves its group alone: the copy stays.
func TestActKeeperEditedAfterCheck(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.safetensors"), filepath.Join(dir, "b.safetensors")
	mtime := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{a, b} {
		mustWrite(t, p, loraFile(1, "").Build())
		os.Chtimes(p, mtime, mtime)
	}
	rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{Level: dupes.LevelBytes, Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: a}})
	if err != nil || len(rep.Groups) != 1 {
		t.Fatalf("%v %+v", err, rep)
	}
	actHook = func(stage string) {
		if stage == "verified" {
			time.Sleep(10 * time.Millisecond) // a change time of its own
			os.WriteFile(a, loraFile(2, "").Build(), 0o644)
			os.Chtimes(a, mtime, mtime)
		}
	}
	defer func() { actHook = nil }()
	got, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil || got.Deleted != 0 || len(got.Actions) != 1 || got.Actions[0].Reason != SkipKeeperChanged {
		t.Errorf("%v %+v", err, got.Actions)
	}
	if _, err := os.Stat(b); err != nil {
		t.Errorf("the copy went: %v", err)
	}
}
