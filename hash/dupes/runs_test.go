package dupes

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/onnx/onnxw"
	"github.com/stdiff/stdiff/canon/stfile"
)

// TestRuns: at level run, the files of one architecture saved by one training run are a group of their
// own (one session, or one output name with epoch suffixes); others of the architecture are not in it;
// at level structure the architecture's group comes too. Run groups have no keeper and free nothing.
func TestRuns(t *testing.T) {
	dir := t.TempDir()
	lora := func(seed int64, meta ...stfile.KV) []byte {
		f := loraFile(seed, "x")
		f.Metadata = meta
		return f.Build()
	}
	files := map[string][]byte{
		"a/witch-run1-e1.safetensors": lora(1, stfile.KV{Key: "ss_session_id", Value: "111"}),
		"a/witch-run1-e2.safetensors": lora(2, stfile.KV{Key: "ss_session_id", Value: "111"}),
		"b/other.safetensors":         lora(3, stfile.KV{Key: "ss_session_id", Value: "222"}),
		"c/pepper-000002.safetensors": lora(4),
		"c/pepper-000004.safetensors": lora(5),
		"c/pepper.safetensors":        lora(6),
		"d/carrot.safetensors":        lora(7),
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, level := range []Level{LevelRun, LevelStructure} {
		rep, err := Find(t.Context(), []string{dir}, Options{Level: level})
		if err != nil {
			t.Fatal(err)
		}
		var runs [][]string
		structures := 0
		for _, g := range rep.Groups {
			var names []string
			for _, f := range g.Files {
				rel, _ := filepath.Rel(dir, f)
				names = append(names, rel)
			}
			switch g.Level {
			case LevelRun:
				runs = append(runs, names)
				if g.Keeper != "" || g.Reclaimable != 0 || g.Run == "" {
					t.Errorf("run group %+v", g)
				}
			case LevelStructure:
				structures++
			}
		}
		want := [][]string{{"a/witch-run1-e1.safetensors", "a/witch-run1-e2.safetensors"},
			{"c/pepper-000002.safetensors", "c/pepper-000004.safetensors", "c/pepper.safetensors"}}
		if !slices.EqualFunc(runs, want, slices.Equal) {
			t.Errorf("level %s: runs %q, want %q", level, runs, want)
		}
		if structures != map[Level]int{LevelRun: 0, LevelStructure: 1}[level] {
			t.Errorf("level %s: %d structure groups", level, structures)
		}
	}
}

// TestOtherFormatsByContent: a model of another format (ONNX here), even under a .safetensors name,
// is read as the format its bytes say: two identical files are a bytes group, each known as ONNX.
// (dupes skipped them, ErrOtherFormat, before it compared every format.)
func TestOtherFormatsByContent(t *testing.T) {
	dir := t.TempDir()
	b := onnxw.Model(onnxw.Tensor("w", 1, []int64{2}, onnxw.Raw(make([]byte, 8))))
	for _, name := range []string{"a.safetensors", "b.safetensors"} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Find(t.Context(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 || rep.Groups[0].Level != LevelBytes || rep.Groups[0].Members[1].Format != canon.FormatONNX || len(rep.Skipped) != 0 {
		t.Errorf("groups %+v, skipped %+v", rep.Groups, rep.Skipped)
	}
}
