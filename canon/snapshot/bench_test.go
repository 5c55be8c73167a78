package snapshot_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/snapshot"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/values"
)

// bigSnapshot is the snapshot of a model of n tensors with realistic names and summaries.
func bigSnapshot(n int) []byte {
	m := &canon.Model{Name: "m", Format: canon.FormatSafetensors, HeaderParsed: true}
	digests, stats := make([][32]byte, n), make([]*values.Stats, n)
	rng := rand.New(rand.NewPCG(1, 2))
	var off uint64
	for i := range n {
		m.Tensors = append(m.Tensors, tensor.Tensor{Name: fmt.Sprintf("model.layers.%d.self_attn.q_proj.weight", i), DType: "BF16", Shape: []uint64{64, 128}, Begin: off, End: off + 16384})
		off += 16384
		for k := range digests[i] {
			digests[i][k] = byte(rng.Uint32())
		}
		stats[i] = &values.Stats{Count: 8192, Min: -rng.Float64() / 10, Max: rng.Float64() / 10, Mean: rng.NormFloat64() / 1000, Std: rng.Float64() / 50, L2: rng.Float64() * 2}
	}
	var b bytes.Buffer
	snapshot.Write(&b, snapshot.New(m, "m.safetensors", digests, stats))
	return b.Bytes()
}

// BenchmarkReadSnapshot reads (and checks) the snapshot of a 50,000-tensor model.
func BenchmarkReadSnapshot(b *testing.B) {
	data := bigSnapshot(50_000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := snapshot.Read(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
