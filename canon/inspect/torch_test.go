package inspect_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/torch/torchw"
)

// TestPyTorchFacts: a checkpoint's card says its container and what kind of checkpoint it is (from its
// keys: Lightning, an A1111 embedding or hypernetwork, else a state dict), and the globals its pickle
// names, classed.
func TestPyTorchFacts(t *testing.T) {
	w := []torchw.Tensor{{Name: "w", DType: "F32", Shape: []uint64{2}, Data: make([]byte, 8)}}
	emb := []torchw.Tensor{{Name: "string_to_param.*", DType: "F32", Shape: []uint64{1, 2}, Data: make([]byte, 8)}}
	dir := t.TempDir()
	for _, c := range []struct {
		name, kind string
		file       []byte
	}{
		{"plain.pt", "state-dict", torchw.Zip("plain", torchw.StateDict(w), w)},
		{"lightning.ckpt", "lightning", torchw.Zip("lightning", torchw.StateDict(w, "pytorch-lightning_version", "2", "epoch", "3"), w)},
		{"hyper.pt", "a1111-hypernetwork", torchw.Zip("hyper", torchw.StateDict(w, "layer_structure", "1"), w)},
		{"emb.pt", "a1111-embedding", torchw.Zip("emb", torchw.StateDict(emb, "step", "100"), emb)},
		{"legacy.pt", "state-dict", torchw.Legacy(torchw.StateDict(w), w)},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		card, err := inspect.Inspect(t.Context(), p, inspect.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if card.PyTorch == nil || card.PyTorch.Kind != c.kind || card.PyTorch.Pickles == 0 || len(card.PyTorch.Globals) == 0 {
			t.Errorf("%s: %+v, want kind %s", c.name, card.PyTorch, c.kind)
			continue
		}
		for _, g := range card.PyTorch.Globals {
			if g.Class != "allowed" {
				t.Errorf("%s: global %+v", c.name, g)
			}
		}
	}
}
