package dequant

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stdiff/stdiff/canon/gguf"
)

// FuzzRow: blocks of any bytes, of any type Row dequantises, never panic nor index past a table (a
// codebook index, a scale, a sign pattern all come from the file); Row fills exactly the elements the
// blocks hold, the same way twice; bytes that are not whole blocks are an error, never a panic. The
// seeds are two random blocks of every supported type.
func FuzzRow(f *testing.F) {
	rng := rand.New(rand.NewSource(1))
	for ty := range rows {
		info, _ := ty.Info()
		b := make([]byte, 2*int(info.TypeSize)+1)
		rng.Read(b)
		f.Add(uint8(ty), b)
	}
	f.Fuzz(func(t *testing.T, k uint8, data []byte) {
		ty := gguf.GGMLType(k)
		if !Supported(ty) {
			return
		}
		info, _ := ty.Info()
		bs, ts := int(info.BlockSize), int(info.TypeSize)
		n := len(data) / ts
		src := data[:n*ts]
		dst, again := make([]float32, n*bs), make([]float32, n*bs)
		if err := Row(ty, src, dst); err != nil {
			t.Fatalf("%s: %d whole blocks: %v", info.Name, n, err)
		}
		if err := Row(ty, src, again); err != nil {
			t.Fatal(err)
		}
		for i := range dst {
			if math.Float32bits(dst[i]) != math.Float32bits(again[i]) {
				t.Fatalf("%s: element %d is %v, then %v", info.Name, i, dst[i], again[i])
			}
		}
		if len(data)%ts != 0 {
			if err := Row(ty, data, make([]float32, n*bs)); err == nil {
				t.Fatalf("%s: %d bytes, not whole blocks of %d, accepted", info.Name, len(data), ts)
			}
		}
	})
}
