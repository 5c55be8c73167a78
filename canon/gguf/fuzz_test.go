package gguf_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
)

// allocLimit is the most a read of an n-byte file may allocate: a small constant plus a multiple of the
// file's size, whatever the counts and lengths inside it claim.
func allocLimit(n int) uint64 { return 256<<10 + 32*uint64(n) }

func allocated(fn func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	fn()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// TestBoundedAllocation: no edge case, whatever its counts claim (2^60 pairs, 2^62-element arrays,
// 2^40 tensors), makes the reader allocate more than allocLimit.
func TestBoundedAllocation(t *testing.T) {
	for _, c := range edgeCases() {
		if a := allocated(func() { read(c.name, c.b) }); a > allocLimit(len(c.b)) {
			t.Errorf("%s: %d bytes allocated for a %d-byte file", c.name, a, len(c.b))
		}
	}
}

// checkArrays reads every element of every array lazily and checks it against the head.
func checkArrays(t *testing.T, g *gguf.File) {
	for _, kv := range g.KVs {
		a := kv.Value.Array
		if a == nil {
			continue
		}
		n := uint64(0)
		err := a.Each(func(i uint64, v gguf.Value) error {
			if i < uint64(len(a.Head)) && v.String() != a.Head[i].String() {
				t.Fatalf("%s[%d]: %q, head says %q", kv.Key, i, v, a.Head[i])
			}
			n++
			return nil
		})
		if err != nil || n != a.Len {
			t.Fatalf("%s: %d of %d elements read: %v", kv.Key, n, a.Len, err)
		}
	}
}

// FuzzRead feeds arbitrary files to the reader: it must never panic or hang, must allocate within
// allocLimit, its findings must agree with its verdict, and every array it read must be readable.
func FuzzRead(f *testing.F) {
	for _, c := range edgeCases() {
		f.Add(c.b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var g *gguf.File
		if a := allocated(func() { g = read("fuzz", b) }); a > allocLimit(len(b)) {
			t.Fatalf("%d bytes allocated for a %d-byte file", a, len(b))
		}
		checkInvariants(t, "fuzz", g, int64(len(b)))
		if g.Valid() {
			checkArrays(t, g)
		}
	})
}

// BenchmarkRead reads the header of a llama-like file with 50,000 tensors and a 150,000-token
// tokenizer (tokens, scores and token types) from memory. MB/s is of the header bytes.
func BenchmarkRead(b *testing.B) {
	data := ggufw.Synthetic(50000, 150000).Build()
	g := read("bench", data)
	if !g.Valid() || len(g.Tensors) != 50000 {
		b.Fatalf("bad file: %v, %d tensors", g.Verdict, len(g.Tensors))
	}
	b.SetBytes(g.DataOffset)
	b.ReportAllocs()
	r := bytes.NewReader(data)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := gguf.Read(r, int64(len(data)), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadFile is BenchmarkRead from a file on disk (through the page cache).
func BenchmarkReadFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "synthetic.gguf")
	if err := os.WriteFile(path, ggufw.Synthetic(50000, 150000).Build(), 0o644); err != nil {
		b.Fatal(err)
	}
	fh, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	st, _ := fh.Stat()
	g, err := gguf.Read(fh, st.Size(), path)
	if err != nil || !g.Valid() {
		b.Fatalf("bad file: %v %v", err, g.Verdict)
	}
	b.SetBytes(g.DataOffset)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := gguf.Read(fh, st.Size(), path); err != nil {
			b.Fatal(err)
		}
	}
}
