package diff

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/hash"
)

// writeU8 writes a safetensors file of one U8 tensor holding data.
func writeU8(t *testing.T, path string, data []byte) {
	t.Helper()
	hdr := fmt.Sprintf(`{"w":{"dtype":"U8","shape":[%d],"data_offsets":[0,%d]}}`, len(data), len(data))
	hdr += strings.Repeat(" ", (8-len(hdr)%8)%8)
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, uint64(len(hdr)))
	b.WriteString(hdr)
	b.Write(data)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestModelsXet: with Options.Xet, a one-byte edit in the middle of a 3 MB file leaves all of B's
// chunks but one shared with A; without it, no Xet field (the default diff reads no more).
func TestModelsXet(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 3_000_000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	pa, pb := filepath.Join(dir, "a.safetensors"), filepath.Join(dir, "b.safetensors")
	writeU8(t, pa, data)
	data[1_500_000] ^= 1
	writeU8(t, pb, data)
	ctx := context.Background()
	open := func(p string) *source.Opened {
		o, err := source.Open(ctx, p, source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { o.Close() })
		return o
	}
	r, err := Models(ctx, open(pa), open(pb), Options{})
	if err != nil || r.Xet != nil {
		t.Fatalf("default diff: xet %+v, %v", r.Xet, err)
	}
	r, err = Models(ctx, open(pa), open(pb), Options{Xet: true})
	if err != nil {
		t.Fatal(err)
	}
	x := r.Xet
	if x == nil || x.SharedChunks != x.BChunks-1 || x.BBytes != fileSize(t, pb) || x.SharedBytes >= x.BBytes || x.SharedBytes < x.BBytes-(128<<10) || x.A == x.B {
		t.Fatalf("xet %+v", x)
	}
	var text bytes.Buffer
	if err := Write(&text, r, WriteOptions{}); err != nil || !strings.Contains(text.String(), "of B is made of A's chunks: ") {
		t.Errorf("text:\n%s", text.String())
	}
	if _, err := Models(ctx, open(pa), &source.Opened{Model: open(pb).Model, Remote: true}, Options{Xet: true, HeaderOnly: true}); !errors.Is(err, hash.ErrXetNotLocal) {
		t.Errorf("remote side: %v", err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
