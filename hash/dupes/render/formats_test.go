package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/torch/torchw"
	"github.com/stdiff/stdiff/hash/dupes"
)

// TestBinBesideItsSafetensors (issue 33, item 8): a pytorch_model.bin whose scalar is [] and its
// safetensors conversion, where it is [1], share their tensor bytes under the same names: the group
// says so (not "under other names"), names the reshaped tensor with both shapes, keeps the
// safetensors file for its format and ends no line in a dangling "; ".
func TestBinBesideItsSafetensors(t *testing.T) {
	dir := t.TempDir()
	w := make([]byte, 4*64)
	for i := range w {
		w[i] = byte(i * 7)
	}
	s := []byte{0, 0, 128, 63}
	st := stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{8, 8}, Data: w}, {Name: "s", DType: "F32", Shape: []uint64{1}, Data: s}}}.Build()
	ts := []torchw.Tensor{{Name: "w", DType: "F32", Shape: []uint64{8, 8}, Data: w}, {Name: "s", DType: "F32", Shape: []uint64{}, Data: s}}
	for name, b := range map[string][]byte{"model.safetensors": st, "pytorch_model.bin": torchw.Zip("archive", torchw.StateDict(ts), ts)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 || rep.Groups[0].Level != dupes.LevelRenamed || rep.Groups[0].KeeperReason != dupes.ReasonSafetensors {
		t.Fatalf("groups %+v", rep.Groups)
	}
	var out bytes.Buffer
	if err := Write(&out, rep, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"under the same names", "kept: safetensors", "pytorch; the same names; 1 tensor of one element reshaped (s: [1] → [])"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			t.Errorf("dangling %q", line)
		}
	}
}
