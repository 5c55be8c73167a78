package xet

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// kinds of data that chunk differently: random (cuts by content), constant (every chunk MaxChunk),
// a short repeating pattern, and runs of each.
func testData(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	data := make([]byte, n)
	for i := 0; i < n; {
		run := min(n-i, 1+rng.IntN(3*MaxChunk))
		switch rng.IntN(4) {
		case 0, 1:
			for j := i; j < i+run; j++ {
				data[j] = byte(rng.Uint32())
			}
		case 2:
			b := byte(rng.Uint32())
			for j := i; j < i+run; j++ {
				data[j] = b
			}
		case 3:
			p := make([]byte, 1+rng.IntN(300))
			for j := range p {
				p[j] = byte(rng.Uint32())
			}
			for j := i; j < i+run; j++ {
				data[j] = p[(j-i)%len(p)]
			}
		}
		i += run
	}
	return data
}

func sameChunks(t *testing.T, what string, got, want []Chunk) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d chunks, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: chunk %d is %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestSumParallelEqualsSerial: cut into pieces as small as Sum allows, on several workers, a file gets
// the chunks of one serial pass, whatever its bytes (random, constant, patterned, mixed), and the
// progress counts each byte once.
func TestSumParallelEqualsSerial(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"one byte", []byte{1}},
		{"hello", []byte("Hello World!")},
		{"splitmix", splitmix(0, 1_500_000)},
		{"zeros", make([]byte, 2_000_000+17)},
		{"mixed", testData(1, 3_000_000)},
		{"mixed2", testData(2, 4*MaxChunk+3)},
	} {
		want := Chunks(tc.data)
		for _, workers := range []int{1, 3, 8} {
			for _, piece := range []int64{0, 2 * MaxChunk, 3*MaxChunk + 12345} {
				var read atomic.Int64
				var r io.ReaderAt = bytes.NewReader(tc.data)
				if piece == 0 {
					r = sliceReader(tc.data) // in place, as SumFile hashes a mapped file
				}
				res, err := Sum(context.Background(), r, int64(len(tc.data)),
					Options{Workers: workers, Piece: piece, Progress: func(n int64) { read.Add(n) }})
				if err != nil {
					t.Fatal(err)
				}
				sameChunks(t, tc.name, res.Chunks, want)
				if res.Hash != FileHash(want) || res.Size != int64(len(tc.data)) {
					t.Fatalf("%s: hash %s", tc.name, res.Hash)
				}
				if read.Load() != int64(len(tc.data)) {
					t.Fatalf("%s: progress %d of %d bytes", tc.name, read.Load(), len(tc.data))
				}
			}
		}
	}
}

// TestSumCancelled: a cancelled context stops Sum with its error.
func TestSumCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	data := testData(3, 20<<20)
	if _, err := Sum(ctx, bytes.NewReader(data), int64(len(data)), Options{Piece: 2 * MaxChunk}); err == nil {
		t.Fatal("no error")
	}
}

// TestSumShortFile: a reader shorter than the size it was given is an error, never a hash.
func TestSumShortFile(t *testing.T) {
	data := testData(4, 1<<20)
	if _, err := Sum(context.Background(), bytes.NewReader(data), int64(len(data))+10, Options{}); err == nil {
		t.Fatal("no error")
	}
}

// FuzzSumParallel compares Sum's pieces with the serial chunker on data the fuzzer makes: the seed is
// stretched (repeated, with the fuzzer's bytes flipping runs) to a few MiB so pieces meet.
func FuzzSumParallel(f *testing.F) {
	f.Add([]byte("Hello World!"), uint32(1<<20), uint8(3))
	f.Add([]byte{0}, uint32(3<<20), uint8(2))
	f.Add(splitmix(5, 4096), uint32(2<<20), uint8(4))
	f.Fuzz(func(t *testing.T, seed []byte, n uint32, workers uint8) {
		n %= 2 << 20
		data := make([]byte, n)
		if len(seed) > 0 {
			for i := range data {
				data[i] = seed[i%len(seed)] ^ byte(i/(len(seed)*7919+1))
			}
		}
		want := Chunks(data)
		var r io.ReaderAt = bytes.NewReader(data)
		if workers%2 == 1 {
			r = sliceReader(data) // in place, as a mapped file
		}
		res, err := Sum(context.Background(), r, int64(n), Options{Workers: int(workers%8) + 1, Piece: 2*MaxChunk + int64(len(seed))})
		if err != nil {
			t.Fatal(err)
		}
		sameChunks(t, "fuzz", res.Chunks, want)
	})
}

// TestSumFile: a file, mapped or read, gets the serial pass's chunks.
func TestSumFile(t *testing.T) {
	data := testData(5, 3_000_000)
	p := filepath.Join(t.TempDir(), "f.bin")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := SumFile(context.Background(), f, int64(len(data)), Options{Piece: 2 * MaxChunk})
	if err != nil {
		t.Fatal(err)
	}
	sameChunks(t, "file", res.Chunks, Chunks(data))
	if res, err = SumFile(context.Background(), f, 0, Options{}); err != nil || res.Hash != (Hash{}) {
		t.Fatalf("empty: %v %v", res, err)
	}
}

// TestSumFileCutShort: a mapped file cut short while it is hashed is ErrChanged, never a crash.
func TestSumFileCutShort(t *testing.T) {
	data := testData(6, 3_000_000)
	p := filepath.Join(t.TempDir(), "f.bin")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Truncate(p, 100_000); err != nil {
		t.Fatal(err)
	}
	if _, err := SumFile(context.Background(), f, int64(len(data)), Options{Piece: 2 * MaxChunk}); !errors.Is(err, ErrChanged) {
		t.Fatalf("%v, want ErrChanged", err)
	}
}
