package inspect

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon"
)

// torchexport holds files torch and torch.onnx.export wrote (diff/testdata/torchexport/make.py), with
// what torch says of them (oracle.json).
var torchexport = filepath.Join("..", "..", "diff", "testdata", "torchexport")

// TestParamsCountWeightsOnce: a tied head is one storage, counted once, as model.parameters() counts
// it; a Lightning checkpoint's optimizer and training state and an ONNX graph's constants are counted
// apart. Before, model.pt counted 484 (the tied head twice), lightning.ckpt 1,204, model.onnx 486.
func TestParamsCountWeightsOnce(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(torchexport, "oracle.json"))
	if err != nil {
		t.Fatal(err)
	}
	var oracle struct {
		Parameters   uint64             `json:"parameters"`
		Initializers map[string][]int64 `json:"onnx_initializers"`
		Constants    int                `json:"onnx_constants"`
	}
	if err := json.Unmarshal(b, &oracle); err != nil {
		t.Fatal(err)
	}
	var initializers uint64
	for _, dims := range oracle.Initializers {
		n := uint64(1)
		for _, d := range dims {
			n *= uint64(d)
		}
		initializers += n
	}
	for _, tc := range []struct {
		file   string
		params uint64
		apart  map[canon.Role]int // tensors per role
	}{
		{"model.pt", oracle.Parameters, map[canon.Role]int{canon.RoleAlias: 1}},
		{"lightning.ckpt", oracle.Parameters, map[canon.Role]int{canon.RoleAlias: 1, canon.RoleOptimizer: 3 * 7, canon.RoleTraining: 1}},
		{"model.safetensors", oracle.Parameters, map[canon.Role]int{}},
		// the exporter writes the tied head again, transposed: a storage of its own in the graph
		{"model.onnx", initializers, map[canon.Role]int{canon.RoleConstant: oracle.Constants}},
	} {
		c, err := Inspect(context.Background(), filepath.Join(torchexport, tc.file), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c.ParamsTotal != tc.params {
			t.Errorf("%s: %d parameters, want %d", tc.file, c.ParamsTotal, tc.params)
		}
		got := map[canon.Role]int{}
		for _, a := range c.ParamsApart {
			got[a.Role] = a.Tensors
		}
		if len(got) != len(tc.apart) {
			t.Errorf("%s: apart %v, want %v", tc.file, got, tc.apart)
		}
		for r, n := range tc.apart {
			if got[r] != n {
				t.Errorf("%s: %d tensors of role %s, want %d", tc.file, got[r], r, n)
			}
		}
	}
	c, err := Inspect(context.Background(), filepath.Join(torchexport, "model.pt"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range c.Tensors {
		want := map[string]string{"head.weight": "emb.weight"}[tn.Name]
		if (want == "") != (tn.TensorRole == nil) || want != "" && (tn.Role != canon.RoleAlias || tn.AliasOf != want) {
			t.Errorf("%s: role %+v, want alias of %q", tn.Name, tn.TensorRole, want)
		}
	}
}
