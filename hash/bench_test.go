package hash

import (
	"bytes"
	"context"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
)

func benchModel(b *testing.B) (*canon.Model, canon.Source) {
	f := stfile.File{}
	for i := 0; i < 64; i++ {
		f.Tensors = append(f.Tensors, stfile.Tensor{Name: "t" + string(rune('a'+i%26)) + string(rune('a'+i/26)), DType: "BF16", Shape: []uint64{1024, 1024}, Data: make([]byte, 2<<20)})
	}
	data := f.Build()
	src := canon.SourceOf(bytes.NewReader(data), int64(len(data)), "bench")
	m, err := canon.Read(src, src.Size(), src.Name())
	if err != nil || !m.Valid() {
		b.Fatal(err, m.RefErr)
	}
	b.SetBytes(int64(len(data)))
	return m, src
}

// BenchmarkTensorDigests hashes 128 MiB of tensors on all cores (content ID).
func BenchmarkTensorDigests(b *testing.B) {
	m, src := benchModel(b)
	for i := 0; i < b.N; i++ {
		if _, err := TensorDigests(context.Background(), src, m, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFileHashes computes every ecosystem hash of 128 MiB in one pass.
func BenchmarkFileHashes(b *testing.B) {
	m, src := benchModel(b)
	for i := 0; i < b.N; i++ {
		if _, _, err := FileHashes(context.Background(), src, m, false, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
