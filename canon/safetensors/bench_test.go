package safetensors_test

import (
	"encoding/binary"
	"testing"

	"github.com/stdiff/stdiff/canon/safetensors"
	"github.com/stdiff/stdiff/canon/stfile"
)

// BenchmarkParse parses and validates typical headers already in memory (the format's parser alone; canon's
// BenchmarkParseHeader also reads them into a new buffer, as a one-off read of a file does): a kohya SDXL
// LoRA's (about 110 KB) and a 50,000-tensor checkpoint's (about 5.5 MB). MB/s is of the header.
func BenchmarkParse(b *testing.B) {
	for _, c := range []struct {
		name string
		f    stfile.File
	}{{"kohya", stfile.KohyaSDXL(1)}, {"50k", stfile.ManyTensors(50000)}} {
		b.Run(c.name, func(b *testing.B) {
			data := c.f.Build()
			n := binary.LittleEndian.Uint64(data)
			hb := data[8 : 8+n]
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				h := safetensors.Parse(hb, int64(len(data)))
				if h.RefErr != nil {
					b.Fatal(h.RefErr)
				}
			}
		})
	}
}
