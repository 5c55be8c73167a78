package derived

import (
	"slices"
	"testing"

	"github.com/stdiff/stdiff/canon"
)

// TestNarrowerOrSame: only a narrower float (or the same dtype) can be derived: F16 from F32, F8 from
// BF16; never F16 from BF16 (same width), F32 from F16, or an integer from a float.
func TestNarrowerOrSame(t *testing.T) {
	for _, c := range []struct {
		to, from canon.DType
		want     bool
	}{{"F16", "F32", true}, {"BF16", "F32", true}, {"F8_E4M3", "BF16", true}, {"F32", "F32", true}, {"I8", "I8", true},
		{"F16", "BF16", false}, {"F32", "F16", false}, {"I8", "F32", false}, {"F16", "I32", false}} {
		if got := narrowerOrSame(c.to, c.from); got != c.want {
			t.Errorf("narrowerOrSame(%s, %s) = %v", c.to, c.from, got)
		}
	}
}

// TestContainsAndLeftOut: a subset's tensor hashes are in its original's, repeats counted; what it
// leaves out is said by whole prefixes where a prefix is gone, else by name.
func TestContainsAndLeftOut(t *testing.T) {
	if !contains([]uint64{1, 2, 2, 5}, []uint64{2, 5}) || contains([]uint64{1, 2, 5}, []uint64{2, 2}) || contains([]uint64{1}, []uint64{3}) {
		t.Error("contains")
	}
	mk := func(names ...string) *loaded {
		l := &loaded{byName: map[string]*canon.Tensor{}}
		for _, n := range names {
			l.ts = append(l.ts, canon.Tensor{Name: n})
		}
		for i := range l.ts {
			l.byName[l.ts[i].Name] = &l.ts[i]
		}
		return l
	}
	o := mk("model.a", "model.b", "model_ema.a", "model_ema.b", "cond.x", "cond.y")
	lo := leftOut(o, mk("model.a", "model.b", "cond.x"))
	if lo.Count != 3 || !slices.Equal(lo.Names, []string{"cond.y", "model_ema.*"}) {
		t.Errorf("leftOut = %+v", lo)
	}
}
