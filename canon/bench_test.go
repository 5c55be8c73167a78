package canon

import (
	"testing"

	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/stfile"
)

// BenchmarkRead50k reads a 50,000-tensor header (about 5.5 MB) from memory: parse, validate, findings.
func BenchmarkRead50k(b *testing.B) {
	data := stfile.ManyTensors(50000).Build()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := ReadBytes("bench", data)
		if !m.Valid() || len(m.Tensors) != 50000 {
			b.Fatalf("bad read: %v, %d tensors", m.RefErr, len(m.Tensors))
		}
	}
}

// BenchmarkReadGGUF reads a llama-like GGUF header with 50,000 tensors and a 150,000-token tokenizer
// from memory into a Model: package gguf's reading plus the Model made of it. MB/s is of the header.
func BenchmarkReadGGUF(b *testing.B) {
	data := ggufw.Synthetic(50000, 150000).Build()
	m := ReadBytes("bench", data)
	if !m.Valid() || len(m.Tensors) != 50000 {
		b.Fatalf("bad read: %v, %d tensors", m.RefErr, len(m.Tensors))
	}
	b.SetBytes(m.DataOffset())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ReadBytes("bench", data)
	}
}

// BenchmarkParseHeader reads typical safetensors headers from memory (parse, validate, findings);
// MB/s is of the header: a kohya SDXL LoRA's (about 110 KB, a third of it metadata holding JSON in
// strings) and a 50,000-tensor checkpoint's (about 5.5 MB).
func BenchmarkParseHeader(b *testing.B) {
	for _, c := range []struct {
		name string
		f    stfile.File
	}{{"kohya", stfile.KohyaSDXL(1)}, {"50k", stfile.ManyTensors(50000)}} {
		b.Run(c.name, func(b *testing.B) {
			data := c.f.Build()
			m := ReadBytes("bench", data)
			if !m.Valid() || len(m.Tensors) != len(c.f.Tensors) {
				b.Fatalf("bad read: %v, %d tensors", m.RefErr, len(m.Tensors))
			}
			b.SetBytes(int64(m.HeaderLen))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ReadBytes("bench", data)
			}
		})
	}
}
