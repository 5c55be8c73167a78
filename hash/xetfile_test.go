package hash

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestRunXetShared: a file made of another with bytes inserted in its middle shares all its chunks
// but those around the insertion; the first file shares nothing with nobody before it.
func TestRunXetShared(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	a := make([]byte, 4<<20)
	for i := range a {
		a[i] = byte(rng.Uint32())
	}
	b := append(append(append([]byte(nil), a[:2<<20]...), []byte("an edit in the middle")...), a[2<<20:]...)
	pa, pb := filepath.Join(dir, "a.bin"), filepath.Join(dir, "b.bin")
	if err := os.WriteFile(pa, a, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pb, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := Run(context.Background(), []string{pa, pb}, Options{Xet: true})
	for _, f := range r.Files {
		if f.Err != nil || f.Xet == nil {
			t.Fatalf("%s: %v", f.Path, f.Err)
		}
	}
	xa, xb := r.Files[0].Xet, r.Files[1].Xet
	if xa.Shared != nil {
		t.Errorf("the first file shares %+v", xa.Shared)
	}
	s := xb.Shared
	if s == nil || s.Chunks < xb.Chunks-3 || s.Chunks >= xb.Chunks || s.Bytes < int64(len(b))-3*(128<<10) || s.Bytes >= int64(len(b)) {
		t.Fatalf("b shares %+v of %d chunks, %d bytes", s, xb.Chunks, len(b))
	}
	if got := SharedChunks(xa.XetChunks(), xb.XetChunks()); got != *s {
		t.Errorf("SharedChunks %+v, Run %+v", got, *s)
	}
	if r.Outcome() != 0 {
		t.Errorf("outcome %v", r.Outcome())
	}
}

// TestXetNotLocal: the Xet hash of a folder or URL is an error naming why, never a hash.
func TestXetNotLocal(t *testing.T) {
	for _, spec := range []string{t.TempDir(), "hf://org/repo/x.bin", "https://example.com/x"} {
		if _, err := XetOfFile(context.Background(), spec, Options{}); !errors.Is(err, ErrXetNotLocal) {
			t.Errorf("%s: %v", spec, err)
		}
	}
}
