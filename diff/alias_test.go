package diff

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stdiff/stdiff/canon/source"
)

// openExport opens a file of testdata/torchexport (made by make.py with torch and torch.onnx.export).
func openExport(t *testing.T, name string) *source.Opened {
	t.Helper()
	o, err := source.Open(t.Context(), filepath.Join("testdata", "torchexport", name), source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// TestTiedAliasDropped: torch.save's state dict holds head.weight as a view of emb.weight's storage;
// the safetensors conversion drops it, as transformers' save_model does. That is a note naming the
// alias, not a removed tensor: the faithful conversion is identical (before: "- head.weight", exit 1),
// either way round, with headers only too; an edited weight is still a change.
func TestTiedAliasDropped(t *testing.T) {
	for _, tc := range []struct {
		a, b       string
		headerOnly bool
		code       NoteCode
		changed    []string
	}{
		{"model.pt", "model.safetensors", false, NoteAliasDropped, nil},
		{"model.pt", "model.safetensors", true, NoteAliasDropped, nil},
		{"model.safetensors", "model.pt", false, NoteAliasAdded, nil},
		{"lightning.ckpt", "model.safetensors", true, NoteAliasDropped, nil},
		{"model.pt", "edited.safetensors", false, NoteAliasDropped, []string{"fc1.weight"}},
	} {
		r, err := Models(t.Context(), openExport(t, tc.a), openExport(t, tc.b), Options{HeaderOnly: tc.headerOnly})
		if err != nil {
			t.Fatal(err)
		}
		var changed []string
		for _, c := range r.Tensors.Changed {
			changed = append(changed, c.Name)
		}
		if !slices.Equal(changed, tc.changed) {
			t.Errorf("%s → %s: changed %v, want %v", tc.a, tc.b, changed, tc.changed)
		}
		if tc.a == "lightning.ckpt" { // the optimizer and training state are removed: a real difference
			if len(r.Tensors.Removed) != 22 || slices.ContainsFunc(r.Tensors.Removed, func(x Tensor) bool { return x.Name == "head.weight" }) {
				t.Errorf("%s → %s: removed %v", tc.a, tc.b, r.Tensors.Removed)
			}
		} else if len(r.Tensors.Removed)+len(r.Tensors.Added) > 0 || (tc.changed == nil) != (len(r.Categories) == 0) {
			t.Errorf("%s → %s: removed %v, added %v, categories %v", tc.a, tc.b, r.Tensors.Removed, r.Tensors.Added, r.Categories)
		}
		i := slices.IndexFunc(r.Notes, func(n Note) bool { return n.Code == tc.code })
		if i < 0 || r.Notes[i].Key != "head.weight" || r.Notes[i].Old != "emb.weight" {
			t.Errorf("%s → %s: notes %+v, want %s head.weight of emb.weight", tc.a, tc.b, r.Notes, tc.code)
		}
	}
}
