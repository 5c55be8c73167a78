package dupes

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/torch/torchw"
	"github.com/stdiff/stdiff/hash/dupes/internal/dupetest"
)

// safetensorsOf is a safetensors file of the tensors the model at path holds, as stdiff reads them
// (names, dtypes, shapes, row-major bytes), and no metadata.
func safetensorsOf(t *testing.T, path string) []byte {
	t.Helper()
	o, err := source.OpenFileModel(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var f stfile.File
	for _, tn := range o.Model.Tensors {
		b := make([]byte, tn.Len())
		if _, err := o.Source.ReadAt(b, int64(tn.Begin)); err != nil {
			t.Fatal(err)
		}
		f.Tensors = append(f.Tensors, stfile.Tensor{Name: tn.Name, DType: string(tn.DType), Shape: tn.Shape, Data: b})
	}
	return f.Build()
}

// torchTensors are the tensors of the safetensors file st, as torchw writes them.
func torchTensors(st []byte) []torchw.Tensor {
	m := canon.ReadBytes("st", st)
	var ts []torchw.Tensor
	for _, t := range m.Tensors {
		ts = append(ts, torchw.Tensor{Name: t.Name, DType: string(t.DType), Shape: t.Shape, Data: st[m.DataOffset()+int64(t.Begin) : m.DataOffset()+int64(t.End)]})
	}
	return ts
}

// buildMetadata is the state dict pickle p (torchw.StateDict) with an attribute set by BUILD on the
// OrderedDict, as torch.save writes a state_dict()'s _metadata: {"_metadata": {}}.
func buildMetadata(p string) string {
	return strings.TrimSuffix(p, ".") + "}" + torchw.Str("_metadata") + "}" + torchw.Str("version") + "K\x01ssb."
}

// padding are n metadata pairs (key, integer) for torchw.StateDict.
func padding(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("k%d", i), "1")
	}
	return out
}

// contentCopies are the groups Act deletes from (bytes and content groups) that hold path.
func contentCopies(rep *Report, path string) []Group {
	var out []Group
	for _, g := range rep.Groups {
		if (g.Level == LevelBytes || g.Level == LevelContent) && slices.Contains(g.Files, path) {
			out = append(out, g)
		}
	}
	return out
}

// TestCheckpointContentIsNeverLost (issue 31, items 1 and 2): a checkpoint is more than its tensors
// when its pickle holds anything else, and an ONNX model is more than its initializers: none of them
// is a content copy of a safetensors file of their tensors, whichever is older. Files written by the
// real writer (testdata/make_checkpoints.py: torch.save of a Lightning-like .ckpt with epoch,
// global_step, hyper_parameters and optimizer state; of nn.Linear's state_dict(), an OrderedDict
// whose _metadata BUILD sets) and by onnxw (a graph with a node). The same state dict without
// _metadata is a content copy, and the safetensors file is kept (issue 31, item 7: at equal content
// safetensors is kept over a pickle), even where the pickle is older.
func TestCheckpointContentIsNeverLost(t *testing.T) {
	st := stfile.File{Seed: 3, Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{2, 4}}}}.Build()
	old := time.Now().Add(-time.Hour)
	for _, c := range []struct {
		name  string
		bytes []byte
		copy  bool // a content copy of the safetensors file of its tensors
	}{
		{"lightning.ckpt", nil, false},
		{"state_dict_metadata.pt", nil, false},
		{"state_dict_plain.pt", nil, true},
		{"graph.onnx", dupetest.InFormat("onnx", st), false},
		{"epoch.pt", torchw.Zip("archive", torchw.StateDict(torchTensors(st), "epoch", "3"), torchTensors(st)), false},
		{"build.pt", torchw.Zip("archive", buildMetadata(torchw.StateDict(torchTensors(st))), torchTensors(st)), false},
		{"plain.pt", torchw.Zip("archive", torchw.StateDict(torchTensors(st)), torchTensors(st)), true},
		// item 7: a pickle that runs os.system, padded with 20 metadata keys to win most-info
		{"unsafe.pt", torchw.Zip("archive", torchw.StateDict(torchTensors(st), padding(20)...), torchTensors(st), "extra.pkl", torchw.Call("os", "system", "touch pwned")), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "a", c.name)
			b := c.bytes
			if b == nil {
				var err error
				if b, err = os.ReadFile(filepath.Join("testdata", c.name)); err != nil {
					t.Fatal(err)
				}
			}
			mustWrite(t, p, b)
			if err := os.Chtimes(p, old, old); err != nil { // the older: the keeper the old rule chose
				t.Fatal(err)
			}
			sp := filepath.Join(dir, "b", "model.safetensors")
			mustWrite(t, sp, safetensorsOf(t, p))
			rep := scan(t, dir)
			got := contentCopies(rep, p)
			switch {
			case !c.copy && len(got) > 0:
				t.Errorf("%s is a copy in %+v", c.name, got)
			case c.copy && (len(got) != 1 || got[0].Keeper != sp || got[0].KeeperReason != ReasonSafetensors):
				t.Errorf("groups %+v, want the safetensors file kept over %s (safetensors)", got, c.name)
			}
		})
	}
}

// TestKeeperWhenOnlyThePathDiffers (issue 31, item 8): copies with the same information and times,
// downloads/x and Loras/characters/x: the organised copy (the deeper path) is kept, not the shortest
// path; among roots given, the first root's copy is kept; the reason says which.
func TestKeeperWhenOnlyThePathDiffers(t *testing.T) {
	dir := t.TempDir()
	b := stfile.File{Seed: 5, Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{4, 4}}}}.Build()
	lib, dl := filepath.Join(dir, "Loras", "characters", "x.safetensors"), filepath.Join(dir, "downloads", "x.safetensors")
	// The library's copy is the newer, as cp leaves it: the path still decides (the oldest first kept
	// the download, and a first --delete emptied the library).
	when := time.Now().Add(-time.Hour)
	for i, p := range []string{dl, lib} {
		mustWrite(t, p, b)
		if err := os.Chtimes(p, when, when.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		roots  []string
		keeper string
		why    KeepReason
	}{
		{[]string{dir}, lib, ReasonDeeperPath},
		{[]string{filepath.Join(dir, "downloads"), filepath.Join(dir, "Loras")}, dl, ReasonFirstRoot},
		{[]string{filepath.Join(dir, "Loras"), filepath.Join(dir, "downloads")}, lib, ReasonFirstRoot},
	} {
		rep := scan(t, c.roots...)
		if len(rep.Groups) != 1 || rep.Groups[0].Keeper != c.keeper || rep.Groups[0].KeeperReason != c.why {
			t.Errorf("roots %v: groups %+v, want %s kept (%s)", c.roots, rep.Groups, c.keeper, c.why)
		}
	}
}

// TestUnsafeIsNeverTheKeeper (issue 31, item 7): whatever the rule, a copy whose pickle torch refuses
// is never kept over a safe one, however many metadata keys it carries (they count for nothing), and
// at equal content a safetensors file is kept over a pickle.
func TestUnsafeIsNeverTheKeeper(t *testing.T) {
	unsafe := &scanned{path: "/a/x.pt", format: canon.FormatPyTorch, unsafe: true, metaKeys: 20, mtime: 1}
	pickle := &scanned{path: "/b/x.pt", format: canon.FormatPyTorch, metaKeys: 5, mtime: 1}
	safe := &scanned{path: "/c/x.safetensors", mtime: 2}
	for _, rule := range []KeepRule{{}, {Kind: KeepOldest}, {Kind: KeepNewest}, {Kind: KeepPath, Prefix: "/a"}} {
		if g, why := keepSafe([]*scanned{unsafe, safe}, rule); g[0] != safe || why != ReasonSafe {
			t.Errorf("%s: kept %s (%s)", rule, g[0].path, why)
		}
		if g, why := keepSafe([]*scanned{pickle, safe}, rule); g[0] != safe || why != ReasonSafetensors {
			t.Errorf("%s: kept %s (%s)", rule, g[0].path, why)
		}
	}
	if unsafe.info() != 0 {
		t.Errorf("an unsafe file's metadata counts %d", unsafe.info())
	}
}

// TestInvalidIsNeverACopy: a file whose reader finds an error (here a pickle cut short: torch.load
// refuses it) is skipped, never grouped: neither a deletable copy nor a keeper, even beside an
// identical file or a valid file of the same tensors.
func TestInvalidIsNeverACopy(t *testing.T) {
	dir := t.TempDir()
	st := stfile.File{Seed: 3, Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{2, 4}}}}.Build()
	ts := torchTensors(st)
	bad := torchw.Zip("archive", strings.TrimSuffix(torchw.StateDict(ts), "u."), ts) // no SETITEMS, no STOP
	for _, p := range []string{"a/bad.pt", "b/bad.pt"} {
		mustWrite(t, filepath.Join(dir, p), bad)
	}
	mustWrite(t, filepath.Join(dir, "c", "good.pt"), torchw.Zip("archive", torchw.StateDict(ts), ts))
	rep := scan(t, dir)
	if len(rep.Skipped) != 2 {
		t.Errorf("skipped %+v", rep.Skipped)
	}
	for _, g := range rep.Groups {
		t.Errorf("%s group %v", g.Level, g.Files)
	}
}
