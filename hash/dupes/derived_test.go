package dupes

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/hash/dupes/derived"
)

// TestDerivedTorch: on files Debian's python3-torch 1.13 wrote (testdata/derived/make.py: an F32 state
// dict with EMA weights as safetensors and torch.save, its .half() and .bfloat16(), an EMA-pruned copy
// and a pruned .half() one saved by torch, and an unrelated model of the same shapes with its .half()),
// --level derived groups each copy with its original and names the relation; the unrelated model of
// the same shapes is never in the group; the safetensors original is the original of its .pt twin.
func TestDerivedTorch(t *testing.T) {
	dir := filepath.Join("testdata", "derived")
	rep, err := Find(t.Context(), []string{dir}, Options{Level: LevelDerived})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		rel     derived.Relation
		to      tensor.DType
		leftOut int
	}
	p := func(n string) string { return filepath.Join(dir, n) }
	wants := map[string]map[string]want{
		p("dreamy_v3.safetensors"): {
			p("dreamy_v3.safetensors"):        {derived.Original, "", 0},
			p("dreamy_v3.pt"):                 {derived.SameTensors, "", 0},
			p("dreamy_v3-fp16.safetensors"):   {derived.Rounded, "F16", 0},
			p("dreamy_v3-bf16.safetensors"):   {derived.Rounded, "BF16", 0},
			p("dreamy_v3-pruned.safetensors"): {derived.Subset, "", 3},
			p("dreamy_v3-pruned-fp16.pt"):     {derived.Subset, "F16", 3},
		},
		p("unrelated.safetensors"): {
			p("unrelated.safetensors"):      {derived.Original, "", 0},
			p("unrelated-fp16.safetensors"): {derived.Rounded, "F16", 0},
		},
	}
	var n int
	for _, g := range rep.Groups {
		if g.Level != LevelDerived {
			continue
		}
		n++
		w, ok := wants[g.Keeper]
		if !ok || g.Members[0].Path != g.Keeper || len(g.Members) != len(w) || g.Reclaimable != 0 || rep.ActsOn(&g, false) {
			t.Errorf("unexpected derived group %+v", g)
			continue
		}
		for _, m := range g.Members {
			x, ok := w[m.Path]
			got := want{m.Relation, m.RoundedTo, 0}
			if m.LeftOut != nil {
				got.leftOut = m.LeftOut.Count
				if !slices.Equal(m.LeftOut.Names, []string{"model_ema.*"}) {
					t.Errorf("%s left out %v, want model_ema.*", m.Path, m.LeftOut.Names)
				}
			}
			if !ok || got != x {
				t.Errorf("%s: %+v, want %+v", m.Path, got, x)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d derived groups, want 2: %+v", n, rep.Groups)
	}
	// Asked for another level, there is none.
	rep, err = Find(t.Context(), []string{dir}, Options{Level: LevelStructure})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Groups {
		if g.Level == LevelDerived {
			t.Errorf("derived group at level structure: %+v", g)
		}
	}
}
