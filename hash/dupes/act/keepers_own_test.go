//go:build unix

package act

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stdiff/stdiff/hash/dupes"
)

// TestKeepersOwnSidecarsStay: a copy that shares the keeper's stem (another case of the extension, an
// extensionless GGUF beside a .gguf) lists the keeper's sidecar as its own, and a copy's sidecar can be
// what the keeper's sidecar links to: deleting the copy (or a dry run) never deletes or moves it.
func TestKeepersOwnSidecarsStay(t *testing.T) {
	lora := loraFile(1, "same").Build()
	gguf := ggufFile("same")
	for _, c := range []struct {
		name  string
		build func(t *testing.T, dir string) []string // the sidecars that must survive, with their bytes
		keep  dupes.KeepRule
	}{
		{"extension-case", func(t *testing.T, dir string) []string {
			mustWrite(t, filepath.Join(dir, "m.safetensors"), lora)
			mustWrite(t, filepath.Join(dir, "m.SAFETENSORS"), lora)
			mustWrite(t, filepath.Join(dir, "m.civitai.info"), []byte(`{"id": 1}`))
			return []string{filepath.Join(dir, "m.civitai.info")}
		}, dupes.KeepRule{}},
		{"extensionless", func(t *testing.T, dir string) []string {
			mustWrite(t, filepath.Join(dir, "m.gguf"), gguf)
			mustWrite(t, filepath.Join(dir, "m"), gguf)
			mustWrite(t, filepath.Join(dir, "m.json"), []byte(`{"activation text": "m"}`))
			return []string{filepath.Join(dir, "m.json")}
		}, dupes.KeepRule{}},
		{"keeper-links-to-copy", func(t *testing.T, dir string) []string {
			mustWrite(t, filepath.Join(dir, "lib", "k.safetensors"), lora)
			mustWrite(t, filepath.Join(dir, "dl", "c.safetensors"), lora)
			mustWrite(t, filepath.Join(dir, "dl", "c.civitai.info"), []byte(`{"id": 2}`))
			mustSymlink(t, filepath.Join("..", "dl", "c.civitai.info"), filepath.Join(dir, "lib", "k.civitai.info"))
			return []string{filepath.Join(dir, "lib", "k.civitai.info")}
		}, dupes.KeepRule{Kind: dupes.KeepPath, Prefix: "lib"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			must := c.build(t, dir)
			want := map[string][]byte{}
			for _, p := range must {
				want[p], _ = os.ReadFile(p)
			}
			keep := c.keep
			if keep.Prefix != "" {
				keep.Prefix = filepath.Join(dir, keep.Prefix)
			}
			rep := findIn(t, dir, dupes.Options{Keep: keep})
			groupOf(t, rep, dupes.LevelBytes)
			for _, dry := range []bool{true, false} {
				r, err := Act(t.Context(), rep, Options{Delete: true, DryRun: dry})
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range r.Actions {
					if a.Op == OpDeleteSidecar || a.Op == OpMoveSidecar {
						t.Errorf("dry run %v: %s %s (the keeper's own)", dry, a.Op, a.Path)
					}
				}
				if !dry && (r.Deleted != 1 || r.Failed != 0) {
					t.Errorf("%+v", r)
				}
			}
			for p, b := range want {
				if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, b) {
					t.Errorf("%s: %v, %q", p, err, got)
				}
			}
		})
	}
}

// TestFIFOAtKeepersSidecar: a named pipe where the keeper's sidecar would be is never opened for
// reading (nothing would ever write to it: --delete and --dry-run would wait for ever); the copy whose
// sidecar cannot be compared with it stays, with its sidecar.
func TestFIFOAtKeepersSidecar(t *testing.T) {
	dir := t.TempDir()
	b := loraFile(1, "fifo").Build()
	mustWrite(t, filepath.Join(dir, "lib", "k.safetensors"), b)
	mustWrite(t, filepath.Join(dir, "dl", "c.safetensors"), b)
	mustWrite(t, filepath.Join(dir, "dl", "c.civitai.info"), []byte(`{"id": 3}`))
	if err := syscall.Mkfifo(filepath.Join(dir, "lib", "k.civitai.info"), 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	rep := findIn(t, dir, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Join(dir, "lib")}})
	for _, dry := range []bool{true, false} {
		done := make(chan *Report, 1)
		go func() {
			r, _ := Act(t.Context(), rep, Options{Delete: true, DryRun: dry})
			done <- r
		}()
		select {
		case r := <-done:
			if r.Deleted != 0 || r.Skipped != 1 || r.Actions[0].Reason != SkipSidecarKept {
				t.Errorf("dry run %v: %+v", dry, r.Actions)
			}
		case <-time.After(20 * time.Second): // a hang guard, not a speed check
			t.Fatalf("dry run %v: Act waits on the named pipe", dry)
		}
	}
	if !exists(filepath.Join(dir, "dl", "c.safetensors")) || !exists(filepath.Join(dir, "dl", "c.civitai.info")) {
		t.Error("the copy or its sidecar went")
	}
}

// TestHardLinkWithSidecarsStandsForThePair: of two hard links to one file, the one with sidecars (in
// the library) stands for both, and is the keeper of its copies; the bare path is the link left out.
func TestHardLinkWithSidecarsStandsForThePair(t *testing.T) {
	dir := t.TempDir()
	b := loraFile(1, "pair").Build()
	lib, bare, other := filepath.Join(dir, "lib", "m.safetensors"), filepath.Join(dir, "dl", "m.safetensors"), filepath.Join(dir, "old", "m.safetensors")
	mustWrite(t, lib, b)
	mustWrite(t, filepath.Join(dir, "lib", "m.civitai.info"), []byte(`{"id": 4}`))
	mustWrite(t, other, b)
	if err := os.MkdirAll(filepath.Dir(bare), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(lib, bare); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(lib, old, old)
	os.Chtimes(other, old, old.Add(time.Hour))
	for _, rule := range []dupes.KeepRule{{}, {Kind: dupes.KeepOldest}} {
		rep := findIn(t, dir, dupes.Options{Keep: rule})
		g := groupOf(t, rep, dupes.LevelBytes)
		if g.Keeper != lib || len(g.Files) != 2 || len(rep.Skipped) != 1 || rep.Skipped[0].Path != bare {
			t.Errorf("%s: keeper %s of %v, skipped %+v", rule, g.Keeper, g.Files, rep.Skipped)
		}
	}
}
