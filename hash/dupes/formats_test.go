package dupes

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/onnx/onnxw"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/torch/torchw"
	"github.com/stdiff/stdiff/hash/dupes/internal/dupetest"
)

// formatTensors is a small model of F32 and F16 tensors; seed varies its bytes.
func formatTensors(seed int64) stfile.File {
	return stfile.File{Seed: seed, Metadata: []stfile.KV{{Key: "note", Value: "x"}}, Tensors: []stfile.Tensor{
		{Name: "layers.0.weight", DType: "F32", Shape: []uint64{4, 8}}, {Name: "layers.0.bias", DType: "F16", Shape: []uint64{8}},
		{Name: "embed.weight", DType: "F32", Shape: []uint64{16, 4}}}}
}

// TestFormatsAreContentCopies: a PyTorch zip archive, a legacy checkpoint (each a flat dict of
// tensors) and a safetensors file of the same tensors are one content group, whatever their names
// say, with the structure ID `stdiff hash` gives each; an ONNX model (its graph is more than its
// tensors) and a checkpoint whose second pickle calls builtins.eval (more than its tensors, and
// refused) are not in it; other weights in two formats are a content group of their own.
func TestFormatsAreContentCopies(t *testing.T) {
	dir := t.TempDir()
	st := formatTensors(1).Build()
	files := map[string][]byte{"model.safetensors": st, "other.safetensors": formatTensors(2).Build(),
		"other.pt": dupetest.InFormat("pt", formatTensors(2).Build()), "named.safetensors.bin": dupetest.InFormat("onnx", st)}
	for _, f := range dupetest.Formats {
		files["model-"+f+".bin"] = dupetest.InFormat(f, st)
	}
	for name, b := range files {
		mustWrite(t, filepath.Join(dir, name), b)
	}
	rep := scan(t, dir)
	if len(rep.Skipped) != 0 {
		t.Fatalf("skipped %+v", rep.Skipped)
	}
	content := groupAt(t, rep, LevelContent)
	want := map[string]canon.Format{"model.safetensors": "", "model-pt.bin": canon.FormatPyTorch, "model-legacy.bin": canon.FormatPyTorch}
	if len(content.Members) != len(want) {
		t.Fatalf("content group %v, want %d members", content.Files, len(want))
	}
	id := canon.StructureID(canon.ReadBytes("st", st))
	if content.StructureID != id {
		t.Errorf("structure ID %s, want %s", content.StructureID, id)
	}
	for _, m := range content.Members {
		name := filepath.Base(m.Path)
		if f, ok := want[name]; !ok || m.Format != f || m.Unsafe {
			t.Errorf("member %s: format %q, unsafe %v", name, m.Format, m.Unsafe)
		}
	}
	others := 0 // the other weights: a content group of their own, beside the model's in a structure group
	for _, g := range rep.Groups {
		for _, p := range g.Files {
			if base := filepath.Base(p); strings.HasPrefix(base, "other.") && (g.Level == LevelContent || g.Level == LevelBytes) {
				others++
				if len(g.Files) != 2 {
					t.Errorf("%s in %s group %v", base, g.Level, g.Files)
				}
			}
		}
	}
	if others != 2 {
		t.Errorf("the other weights in %d content groups' places, want 2", others)
	}
	structure := groupAt(t, rep, LevelStructure) // one architecture, whatever the format
	if len(structure.Members) != len(files) || structure.StructureID != id {
		t.Errorf("structure group %v (%s)", structure.Files, structure.StructureID)
	}
}

// TestONNXWithExternalDataIsNeverACopy: an ONNX model whose tensors lie in a file beside it is one
// model of two files, and its graph is more than its tensors: it is never a copy to delete (its data
// file is never left behind nor its model deleted without it), and no safetensors file of its
// tensors is its content copy.
func TestONNXWithExternalDataIsNeverACopy(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 32)
	for i := range data {
		data[i] = byte(i)
	}
	st := stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{8}, Data: data}}}.Build()
	ext := onnxw.Model(onnxw.Tensor("w", 1, []int64{8}, onnxw.External("w.data", 0, 32)))
	mustWrite(t, filepath.Join(dir, "a", "model.onnx"), ext)
	mustWrite(t, filepath.Join(dir, "a", "w.data"), data)
	mustWrite(t, filepath.Join(dir, "b", "model.safetensors"), st)
	mustWrite(t, filepath.Join(dir, "c", "model.safetensors"), st)
	rep, err := Find(t.Context(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	onnxPath := filepath.Join(dir, "a", "model.onnx")
	for _, g := range rep.Groups {
		if g.Keeper != "" && slices.Contains(g.Files, onnxPath) {
			t.Errorf("the ONNX model in %s group %v", g.Level, g.Files)
		}
	}
	// Kept by path, the safetensors copy is the keeper: the ONNX model leaves the group.
	if rep, err = Find(t.Context(), []string{dir}, Options{Keep: KeepRule{Kind: KeepPath, Prefix: filepath.Join(dir, "b")}}); err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Groups {
		for _, m := range g.Members[1:] {
			if m.Path == onnxPath {
				t.Errorf("the ONNX model with external data is a copy in %+v", g)
			}
		}
	}
	if _, err := os.Stat(onnxPath); err != nil {
		t.Fatal(err)
	}
}

// TestTorchSetIsOneModel: a sharded PyTorch checkpoint is one model, named by its index (its shards
// are not models of their own): a content copy of a safetensors file of the same tensors, a byte copy
// of the same files elsewhere, and not a byte copy of other files of the same tensors (views of larger
// storages). One whose shard holds a pickle torch refuses holds more than its tensors: it is in no
// content group.
func TestTorchSetIsOneModel(t *testing.T) {
	dir := t.TempDir()
	st := formatTensors(1).Build()
	unsafe := dupetest.TorchSet(st, 2, false)
	m := canon.ReadBytes("st", st)
	last := m.Tensors[2] // the second shard's only tensor
	part := []torchw.Tensor{{Name: last.Name, DType: string(last.DType), Shape: last.Shape, Data: st[m.DataOffset()+int64(last.Begin) : m.DataOffset()+int64(last.End)]}}
	unsafe["pytorch_model-00002-of-00002.bin"] = torchw.Zip("pytorch_model-00002-of-00002", torchw.StateDict(part), part, "extra.pkl", torchw.Call("builtins", "eval", "print(1)"))
	for sub, files := range map[string]map[string][]byte{"a": dupetest.TorchSet(st, 2, false), "b": dupetest.TorchSet(st, 2, false),
		"views": dupetest.TorchSet(st, 2, true), "unsafe": unsafe, "c": {"model.safetensors": st}} {
		for name, b := range files {
			mustWrite(t, filepath.Join(dir, sub, name), b)
		}
	}
	rep := scan(t, dir)
	if len(rep.Skipped) != 0 {
		t.Fatalf("skipped %+v", rep.Skipped)
	}
	index := func(sub string) string { return filepath.Join(dir, sub, "pytorch_model.bin.index.json") }
	content := groupAt(t, rep, LevelContent)
	if got := strings.Join(content.Files, " "); len(content.Files) != 4 || strings.Contains(got, index("unsafe")) || content.Keeper != filepath.Join(dir, "c", "model.safetensors") || !strings.Contains(got, index("views")) || !strings.Contains(got, filepath.Join(dir, "c", "model.safetensors")) {
		t.Errorf("content group %v", content.Files)
	}
	for _, m := range content.Members {
		if m.Path == index("views") && (m.Format != canon.FormatPyTorch || m.Shards != 2 || len(m.Files) != 3) || m.Unsafe {
			t.Errorf("member %+v", m)
		}
	}
	bytes := groupAt(t, rep, LevelBytes)
	// the keeper comes first, and the keep rule looks at times: the two sets are written in map order
	if got := slices.Sorted(slices.Values(bytes.Files)); len(got) != 2 || got[0] != index("a") || got[1] != index("b") {
		t.Errorf("bytes group %v", bytes.Files)
	}
	for _, g := range rep.Groups {
		for _, p := range g.Files {
			if strings.HasSuffix(p, ".bin") {
				t.Errorf("a shard on its own in %s group %v", g.Level, g.Files)
			}
		}
	}
}

// TestONNXExternalBinIsPartOfTheModel: an ONNX model's external data file named *.bin (as exporters
// name it) is part of that model: not skipped as a PyTorch checkpoint that is not valid, nor a model
// of its own, even where two such files are identical.
func TestONNXExternalBinIsPartOfTheModel(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 32)
	for i := range data {
		data[i] = byte(i)
	}
	st := stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{8}, Data: data}}}.Build()
	for _, sub := range []string{"a", "b"} {
		mustWrite(t, filepath.Join(dir, sub, "model.onnx"), onnxw.Model(onnxw.Tensor("w", 1, []int64{8}, onnxw.External("weights.bin", 0, 32))))
		mustWrite(t, filepath.Join(dir, sub, "weights.bin"), data)
	}
	mustWrite(t, filepath.Join(dir, "c", "model.safetensors"), st)
	rep, err := Find(t.Context(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 0 || rep.Files != 3 {
		t.Errorf("%d models, skipped %+v", rep.Files, rep.Skipped)
	}
	for _, g := range rep.Groups {
		for _, p := range g.Files {
			if strings.HasSuffix(p, ".bin") {
				t.Errorf("an external data file in %s group %v", g.Level, g.Files)
			}
		}
	}
	for _, g := range rep.Groups { // an ONNX model is no content copy of its tensors; parts are never copies
		if g.Keeper != "" && strings.Contains(strings.Join(g.Files, " "), "model.onnx") {
			t.Errorf("an ONNX model in %s group %v", g.Level, g.Files)
		}
	}
}

// TestNumPyIsAContentCopy: a .npy file (its one array is the tensor "array") and a safetensors file of
// the same tensor are content copies, as are an .npz archive (stored or deflated) and a safetensors
// file of its arrays; other values are not.
func TestNumPyIsAContentCopy(t *testing.T) {
	dir := t.TempDir()
	st := formatTensors(4).Build()
	m := canon.ReadBytes("st", st)
	var ts []torchw.Tensor
	for _, tn := range m.Tensors {
		ts = append(ts, torchw.Tensor{Name: tn.Name, DType: string(tn.DType), Shape: tn.Shape, Data: st[m.DataOffset()+int64(tn.Begin) : m.DataOffset()+int64(tn.End)]})
	}
	array := ts[0]
	array.Name = "array"
	other := array
	other.Data = append([]byte(nil), array.Data...)
	other.Data[0] ^= 1
	files := map[string][]byte{
		"one.npy":         torchw.NPY(array),
		"one.safetensors": stfile.File{Tensors: []stfile.Tensor{{Name: "array", DType: array.DType, Shape: array.Shape, Data: array.Data}}}.Build(),
		"other.npy":       torchw.NPY(other),
		"all.npz":         torchw.NPZ(ts, false),
		"all-small.npz":   torchw.NPZ(ts, true),
		"all.safetensors": st,
	}
	for name, b := range files {
		mustWrite(t, filepath.Join(dir, name), b)
	}
	rep := scan(t, dir)
	if len(rep.Skipped) != 0 {
		t.Fatalf("skipped %+v", rep.Skipped)
	}
	var got []string
	for _, g := range rep.Groups {
		if g.Level == LevelContent || g.Level == LevelBytes {
			var names []string
			for _, p := range g.Files {
				names = append(names, filepath.Base(p))
			}
			sort.Strings(names)
			got = append(got, string(g.Level)+": "+strings.Join(names, " "))
		}
	}
	sort.Strings(got)
	want := []string{"content: all-small.npz all.npz all.safetensors", "content: one.npy one.safetensors"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("groups\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestUnlistedTensorsAreNoContentCopy: a checkpoint that holds a tensor its reader does not list (a
// quantized one, _rebuild_qtensor) holds more than the tensors compared: it is never a content copy of
// a safetensors file of the others (deleting it would lose that tensor), only a byte copy of its own
// bytes.
func TestUnlistedTensorsAreNoContentCopy(t *testing.T) {
	dir := t.TempDir()
	st := formatTensors(1).Build()
	m := canon.ReadBytes("st", st)
	var ts []torchw.Tensor
	for _, tn := range m.Tensors {
		ts = append(ts, torchw.Tensor{Name: tn.Name, DType: string(tn.DType), Shape: tn.Shape, Data: st[m.DataOffset()+int64(tn.Begin) : m.DataOffset()+int64(tn.End)]})
	}
	pkl := torchw.StateDict(ts)
	q := torchw.Str("q") + "ctorch._utils\n_rebuild_qtensor\n((" + torchw.Str("storage") + "ctorch\nQInt8Storage\n" + torchw.Str("9") +
		torchw.Str("cpu") + "K\x04tQK\x00(K\x04t(K\x01t\x89ccollections\nOrderedDict\n)RtR"
	pkl = strings.TrimSuffix(pkl, "u.") + q + "u."
	pt := torchw.Zip("archive", pkl, ts, "data/9", "\x01\x02\x03\x04")
	if md := canon.ReadBytes("q.pt", pt); !Comparable(md) || len(md.Tensors) != len(ts) {
		t.Fatalf("the quantized checkpoint: comparable %v, %d tensors, findings %+v", Comparable(md), len(md.Tensors), md.Findings)
	}
	mustWrite(t, filepath.Join(dir, "model.safetensors"), st)
	mustWrite(t, filepath.Join(dir, "model.pt"), pt)
	mustWrite(t, filepath.Join(dir, "copy", "model.pt"), pt)
	for _, keep := range []KeepRule{{}, {Kind: KeepNewest}, {Kind: KeepPath, Prefix: filepath.Join(dir, "model.safetensors")}} {
		rep, err := Find(t.Context(), []string{dir}, Options{Keep: keep})
		if err != nil {
			t.Fatal(err)
		}
		var bytesGroups int
		for _, g := range rep.Groups {
			switch g.Level {
			case LevelContent:
				t.Errorf("keep %s: content group %v", keep, g.Files)
			case LevelBytes:
				bytesGroups++
				if len(g.Files) != 2 || filepath.Base(g.Files[0]) != "model.pt" || filepath.Base(g.Files[1]) != "model.pt" {
					t.Errorf("keep %s: bytes group %v", keep, g.Files)
				}
			}
		}
		if bytesGroups != 1 {
			t.Errorf("keep %s: %d bytes groups, want the two checkpoints'", keep, bytesGroups)
		}
	}
}
