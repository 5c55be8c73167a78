package values

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stdiff/stdiff/canon/tensor"
)

// TestAddSameIsAdd: the path for chunks whose bytes are equal gives what Add gives them, bit for bit,
// for every dtype, NaN, infinities, −0 and huge values included, with and without a tolerance.
func TestAddSameIsAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	v := sample(r, 3*blockLen+17, 1, true)
	v[5], v[300] = 1e200, -3e160 // squares overflow in F64
	for dt := range formats {
		for _, tol := range []Tolerance{{}, {Atol: 1e-3, Rtol: 1e-2}, {EqualNaN: true}} {
			b := encodeAll(dt, v)
			n, _ := Elements(dt, int64(len(b)))
			b = b[:(n/4*4)/int64(formats[dt].group)*int64(formats[dt].groupBytes)]
			p, _ := NewPairStats(dt, dt, tol)
			q, _ := NewPairStats(dt, dt, tol)
			if err := p.Add(b, bytes.Clone(b)); err != nil {
				t.Fatal(err)
			}
			if err := q.addSame(b); err != nil {
				t.Fatal(err)
			}
			if x, y := fmt.Sprintf("%#v", p.Result()), fmt.Sprintf("%#v", q.Result()); x != y {
				t.Errorf("%s %+v:\nAdd     %s\naddSame %s", dt, tol, x, y)
			}
		}
	}
}

// manyPairs builds pairs that cover CompareAll's paths: equal tensors, tensors changed everywhere,
// in one late chunk only (the rest compared on the equal-bytes path), across dtypes, of dtypes that do
// not decode, and empty ones.
func manyPairs(r *rand.Rand) (pairs []Pair, want []Comparison) {
	add := func(dta tensor.DType, a []byte, dtb tensor.DType, b []byte) {
		ta := Tensor{DType: dta, R: byteReader(a), Len: int64(len(a))}
		tb := Tensor{DType: dtb, R: byteReader(b), Len: int64(len(b))}
		pairs = append(pairs, Pair{A: ta, B: tb})
		c := Comparison{Equal: dta == dtb && bytes.Equal(a, b)}
		if !c.Equal && Supported(dta) && Supported(dtb) {
			d, err := CompareTensors(context.Background(), ta, tb, Options{Workers: 1, Tolerance: Tolerance{Atol: 1e-3}})
			if err != nil {
				panic(err)
			}
			c.Diff = &d
		}
		want = append(want, c)
	}
	n := 3*ChunkElements + 1000
	va := sample(r, n, 1, true)
	vb := perturb(r, va, 0.01)
	late := append([]float64(nil), va...)
	late[n-5] += 1
	add("BF16", encodeAll("BF16", va), "BF16", encodeAll("BF16", va))
	add("BF16", encodeAll("BF16", va), "BF16", encodeAll("BF16", vb))
	add("F32", encodeAll("F32", va), "F32", encodeAll("F32", late))
	add("F32", encodeAll("F32", va), "BF16", encodeAll("BF16", va))
	add("F32", encodeAll("F32", va[:100]), "F32", encodeAll("F32", vb[:100]))
	q := make([]byte, 3*scanBytes+5)
	for i := range q {
		q[i] = byte(r.Uint32())
	}
	q2 := bytes.Clone(q)
	q2[2*scanBytes+7]++
	add("Q4_K", q, "Q4_K", q2)
	add("Q4_K", q, "Q4_K", bytes.Clone(q))
	add("F16", nil, "F16", nil)
	add("C64", encodeAll("C64", va[:3000]), "C64", encodeAll("C64", vb[:3000]))
	add("F4", encodeAll("F4", va[:ChunkElements+8]), "F4", encodeAll("F4", vb[:ChunkElements+8]))
	return pairs, want
}

// TestCompareAll: CompareAll finds what CompareTensors finds, pair by pair, bit for bit, whatever the
// number of cores, goroutines and the memory budget; it tells Progress of each byte it read once.
func TestCompareAll(t *testing.T) {
	pairs, want := manyPairs(rand.New(rand.NewPCG(71, 72)))
	var total int64
	for _, p := range pairs {
		total += p.A.Len + p.B.Len
	}
	for _, procs := range []int{1, 2, 8} {
		old := runtime.GOMAXPROCS(procs)
		for _, opt := range []Options{{}, {Workers: 1}, {Workers: 3}, {Workers: 8, Memory: 1}} {
			opt.Tolerance = Tolerance{Atol: 1e-3}
			var read atomic.Int64
			opt.Progress = func(n int64) { read.Add(n) }
			got := make([]*Comparison, len(pairs))
			err := CompareAll(context.Background(), pairs, opt, func(i int, c Comparison) bool {
				if got[i] != nil {
					t.Errorf("pair %d reported twice", i)
				}
				got[i] = &c
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range pairs {
				x, _ := json.Marshal(want[i])
				if got[i] == nil {
					t.Errorf("GOMAXPROCS %d, %+v: pair %d not reported", procs, opt, i)
					continue
				}
				if y, _ := json.Marshal(*got[i]); !bytes.Equal(x, y) {
					t.Errorf("GOMAXPROCS %d, %+v: pair %d:\n%s\nwant\n%s", procs, opt, i, y, x)
				}
			}
			if read.Load() > total || read.Load() < total/2 {
				t.Errorf("progress told of %d bytes, the pairs hold %d", read.Load(), total)
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// TestCompareAllStops: once done says stop, no more pair is reported and CompareAll returns nil; the
// first byte difference of a pair that does not decode is reported before any comparison by value.
func TestCompareAllStops(t *testing.T) {
	pairs, _ := manyPairs(rand.New(rand.NewPCG(73, 74)))
	for stopAt := range pairs {
		calls := 0
		err := CompareAll(context.Background(), pairs, Options{Workers: 2}, func(i int, c Comparison) bool {
			calls++
			return calls <= stopAt
		})
		if err != nil || calls != stopAt+1 {
			t.Errorf("stop after %d: %d calls, %v", stopAt+1, calls, err)
		}
	}
	var first int = -1
	_ = CompareAll(context.Background(), pairs, Options{Workers: 1}, func(i int, c Comparison) bool {
		first = i
		return false
	})
	if first != 5 { // the Q4_K pair that differs: known in the byte pass
		t.Errorf("first report: pair %d", first)
	}
}

// TestCompareAllErrors: mismatched pairs are refused before anything is read; read errors and
// cancellation are errors.
func TestCompareAllErrors(t *testing.T) {
	ctx := context.Background()
	r := byteReader(make([]byte, 64))
	never := func(int, Comparison) bool { t.Error("reported"); return true }
	for _, p := range []Pair{
		{A: Tensor{DType: "F32", R: r, Len: 8}, B: Tensor{DType: "F32", R: r, Len: 12}},
		{A: Tensor{DType: "F32", R: r, Len: 8}, B: Tensor{DType: "BF16", R: r, Len: 8}},
		{A: Tensor{DType: "F32", R: r, Len: 6}, B: Tensor{DType: "F32", R: r, Len: 6}},
		{A: Tensor{DType: "F32", R: r, Len: -4}, B: Tensor{DType: "F32", R: r, Len: -4}},
	} {
		if err := CompareAll(ctx, []Pair{p}, Options{}, never); !errors.Is(err, ErrLength) {
			t.Errorf("%+v: %v", p, err)
		}
	}
	if err := CompareAll(ctx, []Pair{{A: Tensor{DType: "Q4_K", R: r, Len: 8}, B: Tensor{DType: "F32", R: r, Len: 8}}}, Options{}, never); !errors.Is(err, ErrDType) {
		t.Errorf("Q4_K against F32: %v", err)
	}
	if err := CompareAll(ctx, []Pair{{A: Tensor{DType: "F32", R: shortReader{}, Len: 8}, B: Tensor{DType: "F32", R: shortReader{}, Len: 8}}},
		Options{Tolerance: Tolerance{Rtol: -1}}, never); !errors.Is(err, ErrTolerance) {
		t.Errorf("a negative rtol, refused before reading: %v", err)
	}
	short := Tensor{DType: "F32", R: shortReader{n: 100}, Len: 4 * ChunkElements}
	full := Tensor{DType: "F32", R: byteReader(make([]byte, 4*ChunkElements)), Len: 4 * ChunkElements}
	for _, p := range []Pair{{A: short, B: full}, {A: full, B: Tensor{DType: "BF16", R: shortReader{n: 100}, Len: 2 * ChunkElements}}} {
		if err := CompareAll(ctx, []Pair{p}, Options{}, never); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("short read: %v", err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := CompareAll(cctx, []Pair{{A: full, B: full}}, Options{}, func(int, Comparison) bool { return true }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestSummarizeAll: SummarizeAll gives what SummarizeTensor gives, tensor by tensor, in order, whatever
// the number of goroutines; it stops when asked.
func TestSummarizeAll(t *testing.T) {
	r := rand.New(rand.NewPCG(75, 76))
	var tensors []Tensor
	for _, dt := range []tensor.DType{"BF16", "F32", "F8_E4M3", "F16", "I64", "F6_E3M2"} {
		b := encodeAll(dt, sample(r, 2*ChunkElements+r.IntN(1000)*4, 0.1, true))
		tensors = append(tensors, Tensor{DType: dt, R: byteReader(b), Len: int64(len(b))}, Tensor{DType: dt, R: byteReader(nil)})
	}
	for _, workers := range []int{1, 2, 5} {
		next := 0
		err := SummarizeAll(context.Background(), tensors, Options{Workers: workers}, func(i int, s Stats) bool {
			if i != next {
				t.Errorf("tensor %d reported after %d", i, next-1)
			}
			next++
			want, err := SummarizeTensor(context.Background(), tensors[i], Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			if x, y := fmt.Sprintf("%#v", want), fmt.Sprintf("%#v", s); x != y {
				t.Errorf("%d workers, tensor %d:\n%s\nwant\n%s", workers, i, y, x)
			}
			return true
		})
		if err != nil || next != len(tensors) {
			t.Fatalf("%d workers: %d reported, %v", workers, next, err)
		}
	}
	calls := 0
	if err := SummarizeAll(context.Background(), tensors, Options{}, func(int, Stats) bool { calls++; return false }); err != nil || calls != 1 {
		t.Errorf("stop: %d calls, %v", calls, err)
	}
	if err := SummarizeAll(context.Background(), []Tensor{{DType: "Q4_K", R: byteReader(nil)}}, Options{}, nil); !errors.Is(err, ErrDType) {
		t.Errorf("Q4_K: %v", err)
	}
}

// TestCompareAllBytesOnly: a pair marked BytesOnly that differs is reported from the byte pass, with
// no statistics, before any pair is compared by value.
func TestCompareAllBytesOnly(t *testing.T) {
	pairs, _ := manyPairs(rand.New(rand.NewPCG(77, 78)))
	for i := range pairs {
		pairs[i].BytesOnly = true
	}
	var got []int
	err := CompareAll(context.Background(), pairs, Options{Workers: 1}, func(i int, c Comparison) bool {
		if c.Diff != nil && pairs[i].A.DType == pairs[i].B.DType {
			t.Errorf("pair %d: statistics of a BytesOnly pair", i)
		}
		got = append(got, i)
		return true
	})
	// One goroutine: the pairs of one dtype that differ as the byte pass meets them, then the equal
	// ones, then the pair across dtypes (BytesOnly does not apply).
	if want := []int{1, 2, 4, 5, 8, 9, 0, 6, 7, 3}; err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reported %v, want %v (%v)", got, want, err)
	}
}

// TestCompareAllRuns: many small tensors laid end to end in one reader a side (as a file's are) are
// read in runs; each pair is still judged on its own bytes, a change at either end of a run is found,
// and a side cut short names the offset of the first tensor it cuts, not the run's.
func TestCompareAllRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var a, b []byte
	var lens []int64
	for range 3000 {
		n := 4 * int64(r.IntN(40)) // F32, 0 to 39 elements
		lens = append(lens, n)
		for range n {
			x := byte(r.Uint32())
			a, b = append(a, x), append(b, x)
		}
	}
	changed := map[int]bool{}
	var off int64
	for i, n := range lens {
		if n > 0 && (i%97 == 0 || i == len(lens)-1 || r.IntN(50) == 0) {
			b[off+int64(r.IntN(int(n)))] ^= 0x40 // the sign or exponent of one element
			changed[i] = true
		}
		off += n
	}
	pairsOf := func(rb io.ReaderAt) []Pair {
		var pairs []Pair
		off, ra := int64(0), byteReader(a)
		for _, n := range lens {
			pairs = append(pairs, Pair{A: Tensor{DType: "F32", R: ra, Off: off, Len: n}, B: Tensor{DType: "F32", R: rb, Off: off, Len: n}})
			off += n
		}
		return pairs
	}
	for _, workers := range []int{1, 2, 5} {
		pairs := pairsOf(byteReader(b))
		got := map[int]bool{}
		err := CompareAll(context.Background(), pairs, Options{Workers: workers}, func(i int, c Comparison) bool {
			if c.Equal == changed[i] || !c.Equal && c.Diff == nil {
				t.Errorf("workers %d: pair %d: equal %v, diff %v; changed %v", workers, i, c.Equal, c.Diff != nil, changed[i])
			}
			got[i] = true
			return true
		})
		if err != nil || len(got) != len(pairs) {
			t.Fatalf("workers %d: %d of %d pairs reported, err %v", workers, len(got), len(pairs), err)
		}
	}
	// Cut side b inside tensor k: the error names tensor k's bytes, past the start of its run.
	k, cut := 2000, int64(0)
	for lens[k] == 0 {
		k++
	}
	for _, n := range lens[:k] {
		cut += n
	}
	err := CompareAll(context.Background(), pairsOf(byteReader(b[:cut+2])), Options{Workers: 1}, func(int, Comparison) bool { return true })
	if want := fmt.Sprintf("at offset %d:", cut); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("cut inside tensor %d: error %v, want one %q", k, err, want)
	}
}
