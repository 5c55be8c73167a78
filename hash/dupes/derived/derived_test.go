package derived

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"io"
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

// countingReaderAt counts the reads it serves.
type countingReaderAt struct {
	r     io.ReaderAt
	reads int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// TestReadRanges: readRanges serves a read within one of the ranges read already from their bytes,
// and any other (across two ranges, one byte past one, before the data section) from the file, the
// same bytes either way. (TestPresampleFromSampleBytes in package dupes counts the file's reads only:
// a read served from the wrong bytes, or a byte past its range, it let pass.)
func TestReadRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for round := range 200 {
		file := make([]byte, 1+rng.IntN(4000))
		for i := range file {
			file[i] = byte(rng.Uint32())
		}
		off := int64(rng.IntN(min(len(file), 64)))
		var ranges [][2]uint64
		var data []byte
		for at := uint64(rng.IntN(8)); at < uint64(len(file))-uint64(off); at += 1 + uint64(rng.IntN(300)) {
			n := min(1+uint64(rng.IntN(300)), uint64(len(file))-uint64(off)-at)
			ranges = append(ranges, [2]uint64{at, n})
			data = append(data, file[off+int64(at):off+int64(at+n)]...)
			at += n
		}
		src := &countingReaderAt{r: bytes.NewReader(file)}
		r := &readRanges{src: src, off: off, ranges: ranges, data: data}
		for range 50 {
			at, n := int64(rng.IntN(len(file))), 1+rng.IntN(40)
			if k := rng.IntN(3); k > 0 && len(ranges) > 0 { // at a range's edge
				rg := ranges[rng.IntN(len(ranges))]
				at = off + int64(rg[0]) + int64(rg[1]) - int64(n) + int64(k-1) // its last bytes, or one past
			}
			if at < 0 || at+int64(n) > int64(len(file)) {
				continue
			}
			inside := false
			for _, rg := range ranges {
				inside = inside || (at-off >= int64(rg[0]) && at-off+int64(n) <= int64(rg[0]+rg[1]))
			}
			before := src.reads
			p := make([]byte, n)
			if got, err := r.ReadAt(p, at); err != nil || got != n || !bytes.Equal(p, file[at:at+int64(n)]) {
				t.Fatalf("round %d: ReadAt(%d bytes at %d) = %d, %v, %x; want %x", round, n, at, got, err, p, file[at:at+int64(n)])
			}
			if fromFile := src.reads != before; fromFile == inside {
				t.Fatalf("round %d: %d bytes at %d (data section at %d, ranges %v): read from the file: %v", round, n, at, off, ranges, fromFile)
			}
		}
	}
}
