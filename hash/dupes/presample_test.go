package dupes

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/hash/dupes/derived"
)

// countingReader counts the reads it serves.
type countingReader struct {
	r     io.ReaderAt
	reads int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// TestPresampleFromSampleBytes: the sample package derived takes of a model while dupes samples it
// (derived.Sink.Sample) reads only bytes dupes read for its own sample: none from the file, on
// headers of tensors of every size about a sample's bounds (odd and even element counts, one to
// eight bytes an element). (A derived sample whose middle started half an element before dupes'
// middle range, or whose small-tensor read spanned the gap between dupes' two ranges, read the file
// again for each such tensor.)
func TestPresampleFromSampleBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	dtypes := []struct {
		name string
		size uint64
	}{{"F8_E4M3", 1}, {"F16", 2}, {"BF16", 2}, {"F32", 4}, {"F64", 8}}
	served := 0
	for round := range 300 {
		var f stfile.File
		for k := range 1 + rng.IntN(20) {
			dt := dtypes[rng.IntN(len(dtypes))]
			var count uint64
			switch rng.IntN(3) {
			case 0:
				count = 1 + rng.Uint64N(40)
			case 1: // about sampleSpan and twice sampleBytes, where dupes reads a tensor whole or in two
				count = (2*sampleBytes)/dt.size - 20 + rng.Uint64N(40)
			default:
				count = 1 + rng.Uint64N(12000)
			}
			f.Tensors = append(f.Tensors, stfile.Tensor{Name: fmt.Sprintf("t%d.%d", round, k), DType: dt.name, Shape: []uint64{count}})
		}
		f.Seed = int64(round)
		b := f.Build()
		n := binary.LittleEndian.Uint64(b)
		h, dataLen := b[8:8+n], int64(len(b))-8-int64(n)
		var spans [][2]uint64
		var sink derived.Sink
		k, ok := skim(h, dataLen, &spans, nil, &sink)
		if !ok {
			t.Fatalf("round %d: the header does not skim", round)
		}
		file := &countingReader{r: bytes.NewReader(b)}
		ranges := k.sample.ranges()
		var keep []byte
		var err error
		sampleHash(file, int64(8+n), ranges, "x", new(atomic.Int64), &keep, &err)
		if err != nil {
			t.Fatal(err)
		}
		before := file.reads
		sink.Sample(file, int64(8+n), ranges, keep)
		if file.reads != before {
			t.Fatalf("round %d: the derived sample read the file %d times beyond dupes' sample %v", round, file.reads-before, ranges)
		}
		served += sink.Sampled()
	}
	if served < 300 {
		t.Errorf("the derived samples hold %d tensors in 300 rounds: they were not taken", served)
	}
}
