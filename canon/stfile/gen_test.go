package stfile

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestWriteBenchFile writes the 50,000-tensor benchmark file where STDIFF_BENCH_FILE says (benchmark scripts use it).
func TestWriteBenchFile(t *testing.T) {
	path := os.Getenv("STDIFF_BENCH_FILE")
	if path == "" {
		t.Skip("STDIFF_BENCH_FILE not set (used by testdata/bench scripts)")
	}
	if err := os.WriteFile(path, ManyTensors(50000).Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	// A revision of it for diff benchmarks: every q_proj converted to F16 and every k_proj renamed.
	f := ManyTensors(50000)
	for i := range f.Tensors {
		switch t := &f.Tensors[i]; {
		case strings.HasSuffix(t.Name, "q_proj.weight"):
			t.DType = "F16"
		case strings.HasSuffix(t.Name, "k_proj.weight"):
			t.Name = strings.Replace(t.Name, "k_proj", "key_proj", 1)
		}
	}
	if err := os.WriteFile(strings.TrimSuffix(path, ".safetensors")+".changed.safetensors", f.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWriteBigBenchFile streams a checkpoint-shaped file of about STDIFF_BENCH_BIG_MIB MiB to
// STDIFF_BENCH_BIG (hash benchmarks): a few large tensors (embeddings) and many mid-sized ones, random
// bytes, without holding it in memory.
func TestWriteBigBenchFile(t *testing.T) {
	path := os.Getenv("STDIFF_BENCH_BIG")
	if path == "" {
		t.Skip("STDIFF_BENCH_BIG not set (used by testdata/bench scripts)")
	}
	mib, _ := strconv.Atoi(os.Getenv("STDIFF_BENCH_BIG_MIB"))
	if mib <= 0 {
		mib = 2048
	}
	total := uint64(mib) << 20
	var f File
	f.Metadata = []KV{{Key: "format", Value: "pt"}}
	f.Tensors = append(f.Tensors, Tensor{Name: "model.embed_tokens.weight", DType: "BF16", Shape: []uint64{total / 16 / 2048, 2048}})
	f.Tensors = append(f.Tensors, Tensor{Name: "lm_head.weight", DType: "BF16", Shape: []uint64{total / 16 / 2048, 2048}})
	used := 2 * ByteLen("BF16", f.Tensors[0].Shape)
	for l := 0; used < total; l++ {
		for _, k := range []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"} {
			tn := Tensor{Name: fmt.Sprintf("model.layers.%d.%s.weight", l, k), DType: "BF16", Shape: []uint64{1024, 2048}}
			if used+ByteLen(tn.DType, tn.Shape) > total {
				tn.Shape = []uint64{(total - used) / 2 / 2048, 2048}
			}
			f.Tensors = append(f.Tensors, tn)
			used += ByteLen(tn.DType, tn.Shape)
			if used >= total || tn.Shape[0] == 0 {
				used = total
				break
			}
		}
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w := bufio.NewWriterSize(out, 1<<20)
	if _, err := w.Write(f.HeaderBytes()); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 1<<20)
	for _, tn := range f.Tensors {
		for left := ByteLen(tn.DType, tn.Shape); left > 0; {
			c := buf[:min(uint64(len(buf)), left)]
			for i := 0; i+8 <= len(c); i += 8 {
				binary.LittleEndian.PutUint64(c[i:], rng.Uint64())
			}
			if _, err := w.Write(c); err != nil {
				t.Fatal(err)
			}
			left -= uint64(len(c))
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}
