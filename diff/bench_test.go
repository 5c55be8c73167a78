package diff

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
)

// BenchmarkCompare50k compares two 50,000-tensor headers (5,000 dtype changes, 5,000 renames) and
// renders the text report; reading the headers is measured by canon's BenchmarkRead50k.
func BenchmarkCompare50k(b *testing.B) {
	f := stfile.ManyTensors(50000)
	a := canon.ReadBytes("a", f.Build())
	for i := range f.Tensors {
		switch t := &f.Tensors[i]; {
		case strings.HasSuffix(t.Name, "q_proj.weight"):
			t.DType = "F16"
		case strings.HasSuffix(t.Name, "k_proj.weight"):
			t.Name = strings.Replace(t.Name, "k_proj", "key_proj", 1)
		}
	}
	c := canon.ReadBytes("b", f.Build())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := Compare(Side{Model: a}, Side{Model: c}, Options{})
		if len(r.Tensors.Changed) != 5000 || len(r.Tensors.Renamed) != 5000 {
			b.Fatalf("%d changed, %d renamed", len(r.Tensors.Changed), len(r.Tensors.Renamed))
		}
		if err := Write(io.Discard, r, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWriteValueBenchPair writes the models of testdata/bench/values.sh into the folder
// STDIFF_BENCH_VALUES: a.safetensors, 64 BF16 tensors of 2048×4096 with normal(0, 0.02) weights (1 GiB),
// and b.safetensors, the same with every other tensor nudged by normal(0, 0.001) noise, as a fine-tune
// does. Each tensor's values come from a seed of their own; nothing is held whole in memory.
func TestWriteValueBenchPair(t *testing.T) {
	dir := os.Getenv("STDIFF_BENCH_VALUES")
	if dir == "" {
		t.Skip("STDIFF_BENCH_VALUES not set (used by testdata/bench/values.sh)")
	}
	var f stfile.File
	for l := range 16 {
		for _, k := range []string{"q_proj", "k_proj", "v_proj", "o_proj"} {
			f.Tensors = append(f.Tensors, stfile.Tensor{Name: fmt.Sprintf("model.layers.%d.self_attn.%s.weight", l, k), DType: "BF16", Shape: []uint64{2048, 4096}})
		}
	}
	bf16 := func(x float64) uint16 { // round to nearest even, written here on its own
		b := math.Float32bits(float32(x))
		return uint16((b + 0x7FFF + (b >> 16 & 1)) >> 16)
	}
	for _, name := range []string{"a.safetensors", "b.safetensors"} {
		out, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriterSize(out, 1<<20)
		w.Write(f.HeaderBytes())
		buf := make([]byte, 2*4096)
		for i, tn := range f.Tensors {
			weights := rand.New(rand.NewPCG(uint64(i), 1))
			noise := rand.New(rand.NewPCG(uint64(i), 2))
			nudge := name == "b.safetensors" && i%2 == 1
			for range tn.Shape[0] {
				for j := 0; j < len(buf); j += 2 {
					x := weights.NormFloat64() * 0.02
					if nudge {
						x += noise.NormFloat64() * 0.001
					}
					binary.LittleEndian.PutUint16(buf[j:], bf16(x))
				}
				w.Write(buf)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
