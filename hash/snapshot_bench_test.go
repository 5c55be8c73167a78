package hash

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/snapshot"
	"github.com/stdiff/stdiff/canon/stfile"
)

// snapshotBenchFile is a checkpoint-shaped model of n tensors with realistic names (a transformer's
// layers: projections, MLP weights, norms) and about totalBytes of BF16 data, values of a weight's
// range (never NaN), made block by block from seeded random numbers.
func snapshotBenchFile(n int, totalBytes uint64) stfile.File {
	f := stfile.File{Metadata: []stfile.KV{{Key: "format", Value: "pt"}}}
	kinds := []string{"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight", "self_attn.o_proj.weight",
		"mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight", "input_layernorm.weight", "post_attention_layernorm.weight"}
	rows := max(totalBytes/uint64(n)/2/128, 1)
	for i := range n {
		shape := []uint64{rows, 128}
		if i%len(kinds) >= 7 {
			shape = []uint64{128}
		}
		f.Tensors = append(f.Tensors, stfile.Tensor{Name: fmt.Sprintf("model.layers.%d.%s", i/len(kinds), kinds[i%len(kinds)]), DType: "BF16", Shape: shape})
	}
	return f
}

// writeBenchData writes f's header and its tensors' data (BF16 values within ±0.1) to w.
func writeBenchData(w io.Writer, f stfile.File) error {
	if _, err := w.Write(f.HeaderBytes()); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	block := make([]byte, 1<<16)
	for i := 0; i < len(block); i += 2 {
		binary.LittleEndian.PutUint16(block[i:], uint16(math.Float32bits(float32(rng.NormFloat64()*0.02))>>16))
	}
	for k, t := range f.Tensors {
		for left, off := stfile.ByteLen(t.DType, t.Shape), 2*k%len(block); left > 0; off = 0 {
			c := block[off:min(uint64(len(block)), uint64(off)+left)]
			if _, err := w.Write(c); err != nil {
				return err
			}
			left -= uint64(len(c))
		}
	}
	return nil
}

// TestWriteSnapshotBenchFile writes the model of testdata/bench/snapshot.sh to STDIFF_BENCH_SNAPSHOT:
// STDIFF_BENCH_SNAPSHOT_TENSORS tensors (default 50,000) and about STDIFF_BENCH_SNAPSHOT_MIB MiB of
// data (default 1024).
func TestWriteSnapshotBenchFile(t *testing.T) {
	path := os.Getenv("STDIFF_BENCH_SNAPSHOT")
	if path == "" {
		t.Skip("STDIFF_BENCH_SNAPSHOT not set (used by testdata/bench/snapshot.sh)")
	}
	n, _ := strconv.Atoi(os.Getenv("STDIFF_BENCH_SNAPSHOT_TENSORS"))
	mib, _ := strconv.Atoi(os.Getenv("STDIFF_BENCH_SNAPSHOT_MIB"))
	n, mib = cmp(n, 50_000), cmp(mib, 1024)
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w := bufio.NewWriterSize(out, 1<<20)
	if err := writeBenchData(w, snapshotBenchFile(n, uint64(mib)<<20)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

func cmp(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// BenchmarkSnapshot makes and writes the snapshot of a 50,000-tensor model of 256 MiB (digests and
// value summaries in one pass, on all cores); bytes/tensor is the size of the snapshot per tensor.
func BenchmarkSnapshot(b *testing.B) {
	var buf bytes.Buffer
	if err := writeBenchData(&buf, snapshotBenchFile(50_000, benchMiB<<20)); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	src := canon.SourceOf(bytes.NewReader(data), int64(len(data)), "bench")
	m, err := canon.Read(src, src.Size(), src.Name())
	if err != nil || !m.Valid() {
		b.Fatal(err, m.RefErr)
	}
	b.SetBytes(int64(len(data)))
	var out bytes.Buffer
	for b.Loop() {
		d, st, err := DigestsAndStats(context.Background(), src, m, Options{})
		if err != nil {
			b.Fatal(err)
		}
		out.Reset()
		if err := snapshot.Write(&out, snapshot.New(m, "bench", d, st)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(out.Len())/float64(len(m.Tensors)), "bytes/tensor")
}

// BenchmarkContentDigests is what `stdiff hash --content` reads of the model of BenchmarkSnapshot.
func BenchmarkContentDigests(b *testing.B) {
	var buf bytes.Buffer
	if err := writeBenchData(&buf, snapshotBenchFile(50_000, benchMiB<<20)); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	src := canon.SourceOf(bytes.NewReader(data), int64(len(data)), "bench")
	m, _ := canon.Read(src, src.Size(), src.Name())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		d, err := TensorDigests(context.Background(), src, m, Options{})
		if err != nil {
			b.Fatal(err)
		}
		_ = canon.ContentID(m, d)
	}
}

// benchMiB is the data of the model of BenchmarkSnapshot and BenchmarkContentDigests.
const benchMiB = 256
