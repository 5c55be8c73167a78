package derived

import (
	"cmp"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/values"
)

// TestNarrowerOrSame: only a narrower float (or the same dtype) can be derived: F16 from F32, F8 from
// BF16; never F16 from BF16 (same width), F32 from F16, or an integer from a float.
func TestNarrowerOrSame(t *testing.T) {
	for _, c := range []struct {
		to, from tensor.DType
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
		l := &loaded{byName: map[string]*tensor.Tensor{}}
		for _, n := range names {
			l.ts = append(l.ts, tensor.Tensor{Name: n})
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

// TestSinkBottom: a Sink keeps the entries of the smallest hashes as it did when it kept them sorted
// as they came (an insertion into a sorted slice, of equal hashes the later first, the last one
// dropped when full): the same entries in the same order, hashes repeated or not, entries without
// bytes or values left out.
func TestSinkBottom(t *testing.T) {
	reference := func(es []entry) []entry {
		var bottom []entry
		for _, e := range es {
			if e.end <= e.begin || (len(bottom) == keptEntries && e.h >= bottom[keptEntries-1].h) || !values.Supported(e.dtype) {
				continue
			}
			i, _ := slices.BinarySearchFunc(bottom, e.h, func(x entry, h uint64) int { return cmp.Compare(x.h, h) })
			if len(bottom) < keptEntries {
				bottom = append(bottom, entry{})
			}
			copy(bottom[i+1:], bottom[i:])
			bottom[i] = e
		}
		return bottom
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 500 {
		n := rng.IntN(80)
		span := uint64(1 + rng.IntN(1000)) // small spans: many repeated hashes
		if round%2 == 0 {
			span = 1 << 62
		}
		var s Sink
		var es []entry
		for k := range n {
			e := entry{h: rng.Uint64N(span), dtype: "F16", begin: uint64(k) * 4, end: uint64(k)*4 + 4, seq: uint32(k + 1)}
			switch rng.IntN(10) {
			case 0:
				e.end = e.begin // no bytes
			case 1:
				e.dtype = "Q4_K" // no values
			}
			es = append(es, e)
			s.add(rng.Uint64(), e.h, e.dtype, e.begin, e.end) // the bottom goes by the name hash alone
		}
		want := reference(es)
		got := s.info().bottom
		if len(got) != len(want) {
			t.Fatalf("round %d: %d entries kept, want %d", round, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("round %d: entry %d is %+v, want %+v", round, i, got[i], want[i])
			}
		}
	}
}

// BenchmarkSinkKohya: a kohya SDXL LoRA's header skimmed into a Sink, as dupes' scan does for
// each file of a collection at --level derived.
func BenchmarkSinkKohya(b *testing.B) {
	f := stfile.KohyaSDXL(1).Build()
	n := binary.LittleEndian.Uint64(f)
	h, dataLen := f[8:8+n], int64(len(f))-8-int64(n)
	var spans [][2]uint64
	b.SetBytes(int64(n))
	for b.Loop() {
		var s Sink
		if _, ok := canon.Skim(canon.FormatSafetensors, h, dataLen, &spans, &s, false); !ok {
			b.Fatal("skim")
		}
		s.info()
	}
}
