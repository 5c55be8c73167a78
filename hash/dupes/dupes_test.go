package dupes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/hash/dupes/dupecache"
)

func modelsIn(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".safetensors") {
			paths = append(paths, p)
		}
		return nil
	})
	return paths
}

func groupsOf(rep *Report) map[Level][]string {
	got := map[Level][]string{}
	for _, g := range rep.Groups {
		var names []string
		for _, f := range g.Members {
			names = append(names, filepath.Base(f.Path))
		}
		sort.Strings(names)
		if _, dup := got[g.Level]; dup {
			got[g.Level+" (2nd)"] = names
			continue
		}
		got[g.Level] = names
	}
	return got
}

func TestFindDuplicatesPlanted(t *testing.T) {
	dir, want := plantedCollection(t)
	rep, err := Find(context.Background(), modelsIn(t, dir), Options{Level: LevelStructure})
	if err != nil {
		t.Fatal(err)
	}
	if got := groupsOf(rep); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("groups:\n got  %v\n want %v", got, want)
	}
	if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Path, "broken") || !errors.Is(rep.Skipped[0].Err, ErrInvalid) {
		t.Errorf("skipped: %+v", rep.Skipped)
	}
	if rep.Files != 16 {
		t.Errorf("%d files scanned", rep.Files)
	}
	// Only the six candidates are read (six samples, one file hashed, four compared with it, the near
	// miss hashed): the ten unrelated files cost their headers only.
	data := int64(20 * 8 * 64 * 2)
	if max := 6*data + data + 4*2*data + data; rep.TensorBytesRead > max {
		t.Errorf("read %d tensor bytes, more than the candidates hold (%d)", rep.TensorBytesRead, max)
	}
}

// TestSkippedKeepErrors: a model that vanishes after its header was read is skipped with the error
// itself (a missing file), not with an error's text in place of its content ID; the others are grouped.
func TestSkippedKeepErrors(t *testing.T) {
	dir := t.TempDir()
	b := loraFile(1, "x").Build()
	paths := []string{filepath.Join(dir, "a.safetensors"), filepath.Join(dir, "b.safetensors"), filepath.Join(dir, "c.safetensors")}
	for _, p := range paths {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gone := paths[1]
	rep, err := Find(t.Context(), paths, Options{Workers: 1, Progress: func(stage string, n, total int, _ int64) {
		if stage == "headers" && n == total {
			os.Remove(gone)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].Path != gone || !errors.Is(rep.Skipped[0].Err, fs.ErrNotExist) || rep.Skipped[0].Reason != "no such file" {
		t.Errorf("skipped: %+v", rep.Skipped)
	}
	if len(rep.Groups) != 1 || len(rep.Groups[0].Files) != 2 || rep.Groups[0].StructureID == "" {
		t.Errorf("groups: %+v", rep.Groups)
	}
	if rep.Outcome() != canon.Trouble {
		t.Errorf("outcome %v with a model that could not be read", rep.Outcome())
	}
}

func TestDupesCache(t *testing.T) {
	dir, want := plantedCollection(t)
	delete(want, LevelStructure)
	delete(want, LevelRun) // the default level, renamed, reports no runs
	cache, err := dupecache.OpenCache(filepath.Join(t.TempDir(), dupecache.CacheFile))
	if err != nil {
		t.Fatal(err)
	}
	scan := func() *Report {
		rep, err := Find(context.Background(), modelsIn(t, dir), Options{Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		if err := cache.Save(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := groupsOf(rep); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("groups %v, want %v", got, want)
		}
		return rep
	}
	if first := scan(); first.TensorBytesRead == 0 {
		t.Fatal("first scan read nothing")
	}
	// A fresh Cache from the saved file: the second run reads no tensor bytes.
	cache, err = dupecache.OpenCache(cache.Path())
	if err != nil {
		t.Fatal(err)
	}
	if second := scan(); second.TensorBytesRead != 0 {
		t.Errorf("second scan of an unchanged collection read %d tensor bytes", second.TensorBytesRead)
	}
	// A changed file is read again, and the change is seen.
	p := filepath.Join(dir, "b", "copy of orig.safetensors")
	b, _ := os.ReadFile(p)
	b[len(b)-3] ^= 0xff
	os.WriteFile(p, b, 0o644)
	os.Chtimes(p, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	rep, err := Find(context.Background(), modelsIn(t, dir), Options{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if rep.TensorBytesRead == 0 || len(groupsOf(rep)[LevelBytes]) != 0 {
		t.Errorf("changed file not re-read or still a duplicate: %+v", groupsOf(rep))
	}
}

// TestLargeGroup: forty identical files and their near miss are resolved in bounded batches.
func TestLargeGroup(t *testing.T) {
	dir := t.TempDir()
	b := loraFile(1, "same").Build()
	for i := 0; i < 40; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("copy%02d.safetensors", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	miss := append([]byte(nil), b...)
	miss[len(miss)-1] ^= 1
	os.WriteFile(filepath.Join(dir, "miss.safetensors"), miss, 0o644)
	rep, err := Find(context.Background(), modelsIn(t, dir), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 || len(rep.Groups[0].Files) != 40 || rep.Groups[0].Level != LevelBytes {
		t.Fatalf("groups: %+v", groupsOf(rep))
	}
}

// TestLinksCountOnce: a hard link is the same file, not a duplicate to reclaim.
func TestLinksCountOnce(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.safetensors")
	os.WriteFile(a, loraFile(1, "x").Build(), 0o644)
	if err := os.Link(a, filepath.Join(dir, "b.safetensors")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	rep, err := Find(context.Background(), modelsIn(t, dir), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 0 || len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Reason, "same file as") {
		t.Errorf("hard link: groups %+v, skipped %+v", groupsOf(rep), rep.Skipped)
	}
}

// TestSamePathTwice: a path given twice (or as ./path) is one model, not a link to itself.
func TestSamePathTwice(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.safetensors")
	os.WriteFile(a, loraFile(1, "x").Build(), 0o644)
	rep, err := Find(context.Background(), []string{a, a, filepath.Join(dir, ".", "a.safetensors")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files != 1 || len(rep.Skipped) != 0 || len(rep.Groups) != 0 {
		t.Errorf("%d models, skipped %+v, groups %+v", rep.Files, rep.Skipped, groupsOf(rep))
	}
}

// TestEqualPieces: bytes split into pieces at other places compare as the bytes they hold, a
// difference found in any piece, at a piece's edge too.
func TestEqualPieces(t *testing.T) {
	data := []byte("abcdefghijklmnopqrstuvwxyz0123456789")
	split := func(b []byte, cuts ...int) [][]byte {
		var out [][]byte
		prev := 0
		for _, c := range cuts {
			out = append(out, b[prev:c])
			prev = c
		}
		return append(out, b[prev:])
	}
	for _, a := range [][]int{nil, {1}, {5, 6, 20}, {35}, {0, 0, 10}} {
		for _, b := range [][]int{nil, {2, 3}, {17}, {5, 6, 20}, {1, 2, 3, 4, 30}} {
			if !equalPieces(split(data, a...), split(data, b...)) {
				t.Errorf("cut at %v and %v: not equal", a, b)
			}
			for _, at := range []int{0, 4, 5, 6, 19, 20, 35} {
				other := append([]byte(nil), data...)
				other[at] ^= 1
				if equalPieces(split(data, a...), split(other, b...)) {
					t.Errorf("cut at %v and %v, byte %d flipped: equal", a, b, at)
				}
			}
		}
	}
}

// TestCutShortWhileCompared: a file cut short after it was mapped for a comparison (truncated by
// another program while the scan runs) faults when its missing pages are read; the comparison must
// neither crash nor blame the files read beside it: the cut file is skipped as changed, and the
// others are still found the same, in a group larger than a batch too, where the model cut can be
// the lead read again beside the next batch.
func TestCutShortWhileCompared(t *testing.T) {
	for _, tc := range []struct{ victim, open int }{{0, 1}, {2, 1}, {0, 2}} {
		dir := t.TempDir()
		var g []*scanned
		for i := range compareBatch + 2 {
			f := stfile.File{Seed: 5, Metadata: []stfile.KV{{Key: "tag", Value: fmt.Sprint(i)}}}
			for k := range 3 {
				f.Tensors = append(f.Tensors, stfile.Tensor{Name: fmt.Sprintf("t%d", k), DType: "F32", Shape: []uint64{512, 512}})
			}
			p := filepath.Join(dir, fmt.Sprintf("%02d.safetensors", i))
			if err := os.WriteFile(p, f.Build(), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := scanHeader(context.Background(), p, nil, &source.Options{}, false)
			if err != nil {
				t.Fatal(err)
			}
			g = append(g, s)
		}
		cut, opens := g[tc.victim], 0
		order := func(f *scanned, m *canon.Model) ([]int, []string, bool) {
			if opens += b2i(f == cut); f == cut && opens == tc.open { // read again, not yet mapped
				// At a page's end: the bytes before are the others', the page after is gone.
				if err := os.Truncate(f.path, (f.size-f.dataLen+(1<<20))/(64<<10)*(64<<10)+(64<<10)); err != nil {
					t.Fatal(err)
				}
			}
			return canonicalStream(f, m)
		}
		c := comparer{ctx: context.Background(), order: order, state: func(f *scanned) *crcState { return &f.cs }, read: new(atomic.Int64)}
		classes := c.compare(g)
		if !errors.Is(cut.err, canon.ErrChanged) {
			t.Errorf("%+v: the cut file's error is %v, want ErrChanged", tc, cut.err)
		}
		var want []string
		for i, f := range g {
			if i != tc.victim {
				want = append(want, f.path)
				if f.err != nil {
					t.Errorf("%+v: %s, not cut, has error %v", tc, filepath.Base(f.path), f.err)
				}
			}
		}
		if len(classes) != 1 || fmt.Sprint(pathsOf(classes[0])) != fmt.Sprint(want) {
			t.Errorf("%+v: %d classes, want one of %d", tc, len(classes), len(want))
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func pathsOf(g []*scanned) []string {
	var out []string
	for _, f := range g {
		out = append(out, f.path)
	}
	return out
}
