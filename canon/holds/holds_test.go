package holds

import (
	"bytes"
	"github.com/stdiff/stdiff/canon"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/torch"
	"github.com/stdiff/stdiff/canon/torch/torchw"
)

var tensors = []torchw.Tensor{{Name: "w", DType: "F32", Shape: []uint64{2}, Data: make([]byte, 8)}}

// cases are checkpoints and whether they hold nothing but their tensors.
var cases = map[string]struct {
	b    []byte
	only bool
}{
	"zip":       {torchw.Zip("a", torchw.StateDict(tensors), tensors), true},
	"legacy":    {torchw.Legacy(torchw.StateDict(tensors), tensors), true},
	"npy":       {torchw.NPY(tensors[0]), true},
	"epoch":     {torchw.Zip("a", torchw.StateDict(tensors, "epoch", "3"), tensors), false},
	"_metadata": {torchw.Zip("a", strings.TrimSuffix(torchw.StateDict(tensors), ".")+"}"+torchw.Str("_metadata")+"}s"+"b.", tensors), false},
	"unsafe":    {torchw.Zip("a", torchw.StateDict(tensors), tensors, "extra.pkl", torchw.Call("os", "system", "x")), false},
	"hostile":   {torchw.Zip("a", torchw.Call("os", "system", "x"), nil), false},
}

// TestOnlyTensors: flat dicts of tensors (zip, legacy, .npy) hold nothing else; an epoch, an
// OrderedDict's BUILD state, a second pickle naming a refused global, a root that is no dict do.
func TestOnlyTensors(t *testing.T) {
	for name, c := range cases {
		if got := OnlyTensors(&canon.Model{Detail: torch.Read(bytes.NewReader(c.b), int64(len(c.b)), name)}, bytes.NewReader(c.b)); got != c.only {
			t.Errorf("%s: OnlyTensors %v, want %v", name, got, c.only)
		}
	}
}

// TestRealCheckpoints: files torch.save wrote (hash/dupes/testdata/make_checkpoints.py): a state
// dict without _metadata holds its tensors alone; nn.Linear's state_dict() (its _metadata) and a
// Lightning-like checkpoint do not.
func TestRealCheckpoints(t *testing.T) {
	for name, want := range map[string]bool{"state_dict_plain.pt": true, "state_dict_metadata.pt": false, "lightning.ckpt": false} {
		b, err := os.ReadFile(filepath.Join("..", "..", "hash", "dupes", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if got := OnlyTensors(&canon.Model{Detail: torch.Read(bytes.NewReader(b), int64(len(b)), name)}, bytes.NewReader(b)); got != want {
			t.Errorf("%s: OnlyTensors %v, want %v", name, got, want)
		}
	}
}

// FuzzOnlyTensors: any bytes torch.Read reads give an answer, never a panic or a hang.
func FuzzOnlyTensors(f *testing.F) {
	for _, c := range cases {
		f.Add(c.b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		OnlyTensors(&canon.Model{Detail: torch.Read(bytes.NewReader(b), int64(len(b)), "f")}, bytes.NewReader(b))
	})
}
