package xet

import (
	"context"
	"testing"
)

func benchData() []byte { return splitmix(9, 64<<20) }

// BenchmarkSum: the Xet hash of 64 MiB of random bytes on all cores, in place (as SumFile hashes a
// mapped file).
func BenchmarkSum(b *testing.B) {
	data := benchData()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Sum(context.Background(), sliceReader(data), int64(len(data)), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCuts: the Gear chunker alone, serially.
func BenchmarkCuts(b *testing.B) {
	data := benchData()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		Cuts(data)
	}
}

// BenchmarkChunkHashes: keyed BLAKE3 of 64 KiB chunks alone, serially.
func BenchmarkChunkHashes(b *testing.B) {
	data := benchData()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for i := 0; i+TargetChunk <= len(data); i += TargetChunk {
			ChunkHash(data[i : i+TargetChunk])
		}
	}
}
