package stfile

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
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

// TestWriteLoRACollection writes a LoRA collection for the dupes benchmark into STDIFF_BENCH_COLLECTION:
// 280 distinct kohya-style LoRAs of 4 to 20 MB (twelve architectures, so many share a structure; real-
// looking metadata that differs per file) plus planted duplicates, about 7% of the files: 4 byte copies,
// 4 copies with edited metadata, 4 re-saved copies (other tensor and key order, no padding), 4 copies
// re-keyed to PEFT's names without kohya's alpha scalars, and 4 near misses (one flipped byte). It
// writes the expected groups to planted.txt beside the collection.
func TestWriteLoRACollection(t *testing.T) {
	dir := os.Getenv("STDIFF_BENCH_COLLECTION")
	if dir == "" {
		t.Skip("STDIFF_BENCH_COLLECTION not set (used by testdata/bench/dupes.sh)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	type arch struct {
		rank    uint64
		modules [][2]uint64
	}
	var archs []arch
	for a := 0; a < 12; a++ {
		r := []uint64{4, 8, 16, 32}[a%4]
		target := uint64(4+rng.IntN(16)) << 20
		var mods [][2]uint64
		for size := uint64(0); size < target; {
			in, out := []uint64{320, 640, 768, 1280, 2048}[rng.IntN(5)], []uint64{320, 640, 1280}[rng.IntN(3)]
			mods = append(mods, [2]uint64{in, out})
			size += r * (in + out) * 2
		}
		archs = append(archs, arch{r, mods})
	}
	type model struct {
		f    File
		seed uint64
		// from names the tensor whose bytes a tensor holds (a renamed copy's are the original's).
		from map[string]string
	}
	newModel := func(i int) model {
		a := archs[rng.IntN(len(archs))]
		f := File{Metadata: []KV{{Key: "ss_output_name", Value: fmt.Sprintf("character_%03d", i)},
			{Key: "ss_session_id", Value: fmt.Sprint(rng.Int64())},
			{Key: "ss_training_started_at", Value: fmt.Sprint(1700000000 + rng.IntN(9999999))},
			{Key: "ss_network_module", Value: "networks.lora"},
			{Key: "ss_network_dim", Value: fmt.Sprint(a.rank)},
			{Key: "ss_tag_frequency", Value: fmt.Sprintf(`{"10_char%03d woman": {"char%03d": %d, "smile": %d, "outdoors": %d}}`, i, i, 20+rng.IntN(50), rng.IntN(30), rng.IntN(30))},
			{Key: "ss_training_comment", Value: strings.Repeat(fmt.Sprintf("notes for %d. ", i), 1+rng.IntN(20))}}}
		for k, m := range a.modules {
			base := fmt.Sprintf("lora_unet_block_%d_attn_%d", k/4, k%4)
			f.Tensors = append(f.Tensors,
				Tensor{Name: base + ".alpha", DType: "F16", Shape: []uint64{}},
				Tensor{Name: base + ".lora_down.weight", DType: "F16", Shape: []uint64{a.rank, m[0]}},
				Tensor{Name: base + ".lora_up.weight", DType: "F16", Shape: []uint64{m[1], a.rank}})
		}
		// As the reference writer (which kohya uses) saves them: sorted by name within a dtype.
		sort.Slice(f.Tensors, func(i, j int) bool { return f.Tensors[i].Name < f.Tensors[j].Name })
		return model{f, rng.Uint64(), nil}
	}
	// write streams a model: each tensor's bytes come from the model's seed and the tensor's name, so a
	// re-saved copy in another order holds the same tensors. flip, when not negative, flips one data byte.
	write := func(name string, m model, flip int64) {
		out, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriterSize(out, 1<<20)
		w.Write(m.f.HeaderBytes())
		buf := make([]byte, 1<<20)
		var pos int64
		for _, i := range m.f.order() {
			tn := m.f.Tensors[i]
			h := uint64(14695981039346656037)
			name := tn.Name
			if from, ok := m.from[name]; ok {
				name = from
			}
			for _, c := range name {
				h = (h ^ uint64(c)) * 1099511628211
			}
			tr := rand.New(rand.NewPCG(m.seed, h))
			for left := ByteLen(tn.DType, tn.Shape); left > 0; {
				c := buf[:min(uint64(len(buf)), left)]
				for k := 0; k < len(c); k += 8 {
					var word [8]byte
					binary.LittleEndian.PutUint64(word[:], tr.Uint64())
					copy(c[k:], word[:])
				}
				if flip >= pos && flip < pos+int64(len(c)) {
					c[flip-pos] ^= 1
				}
				w.Write(c)
				pos += int64(len(c))
				left -= uint64(len(c))
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		out.Close()
	}
	var planted []string
	models := make([]model, 280)
	for i := range models {
		models[i] = newModel(i)
		write(fmt.Sprintf("lora_%03d.safetensors", i), models[i], -1)
	}
	for k := 0; k < 4; k++ {
		i := k * 7
		write(fmt.Sprintf("copy_of_lora_%03d.safetensors", i), models[i], -1)
		planted = append(planted, fmt.Sprintf("bytes lora_%03d.safetensors copy_of_lora_%03d.safetensors", i, i))
	}
	for k := 0; k < 4; k++ {
		i := 100 + k*7
		m := models[i]
		m.f.Metadata = append([]KV{{Key: "ssmd_display_name", Value: fmt.Sprintf("My character %d (edited)", i)}}, m.f.Metadata...)
		write(fmt.Sprintf("edited_lora_%03d.safetensors", i), m, -1)
		planted = append(planted, fmt.Sprintf("content lora_%03d.safetensors edited_lora_%03d.safetensors", i, i))
	}
	for k := 0; k < 4; k++ {
		i := 180 + k*7
		m := models[i]
		n := len(m.f.Tensors)
		m.f.Tensors = append([]Tensor(nil), m.f.Tensors...)
		for a, b := 0, n-1; a < b; a, b = a+1, b-1 {
			m.f.Tensors[a], m.f.Tensors[b] = m.f.Tensors[b], m.f.Tensors[a]
		}
		m.f.DataOrder = make([]int, n)
		for a := range m.f.DataOrder {
			m.f.DataOrder[a] = (a * 7) % n
			if n%7 == 0 {
				m.f.DataOrder[a] = n - 1 - a
			}
		}
		m.f.Metadata = append([]KV(nil), m.f.Metadata...)
		m.f.Metadata[0], m.f.Metadata[len(m.f.Metadata)-1] = m.f.Metadata[len(m.f.Metadata)-1], m.f.Metadata[0]
		m.f.NoPad = true
		write(fmt.Sprintf("resaved_lora_%03d.safetensors", i), m, -1)
		planted = append(planted, fmt.Sprintf("content lora_%03d.safetensors resaved_lora_%03d.safetensors", i, i))
	}
	for k := 0; k < 4; k++ {
		i := 250 + k*3
		write(fmt.Sprintf("nearmiss_lora_%03d.safetensors", i), models[i], int64(1000+k*777777))
		planted = append(planted, fmt.Sprintf("none lora_%03d.safetensors nearmiss_lora_%03d.safetensors", i, i))
	}
	for k := 0; k < 4; k++ { // re-keyed to PEFT's names (unet.block.0.attn.1.lora_A.weight), alphas dropped
		i := 40 + k*9
		m := models[i]
		r := model{seed: m.seed, from: map[string]string{}}
		r.f.Metadata = []KV{{Key: "format", Value: "pt"}}
		for _, t := range m.f.Tensors {
			base, role, _ := strings.Cut(t.Name, ".")
			if role == "alpha" {
				continue
			}
			name := "unet." + strings.ReplaceAll(strings.TrimPrefix(base, "lora_unet_"), "_", ".") + "." +
				map[string]string{"lora_down.weight": "lora_A.weight", "lora_up.weight": "lora_B.weight"}[role]
			r.from[name] = t.Name
			r.f.Tensors = append(r.f.Tensors, Tensor{Name: name, DType: t.DType, Shape: t.Shape})
		}
		sort.Slice(r.f.Tensors, func(a, b int) bool { return r.f.Tensors[a].Name < r.f.Tensors[b].Name })
		write(fmt.Sprintf("peft_lora_%03d.safetensors", i), r, -1)
		planted = append(planted, fmt.Sprintf("renamed lora_%03d.safetensors peft_lora_%03d.safetensors", i, i))
	}
	if err := os.WriteFile(filepath.Join(dir, "..", "planted.txt"), []byte(strings.Join(planted, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWriteKohyaCollection writes STDIFF_BENCH_KOHYA_N (default 1,000) kohya SDXL LoRAs (KohyaSDXL:
// headers of about 110 KB, small data) into the folder STDIFF_BENCH_KOHYA, for testdata/bench/collection.sh.
func TestWriteKohyaCollection(t *testing.T) {
	dir := os.Getenv("STDIFF_BENCH_KOHYA")
	if dir == "" {
		t.Skip("STDIFF_BENCH_KOHYA not set (used by testdata/bench/collection.sh)")
	}
	n, _ := strconv.Atoi(os.Getenv("STDIFF_BENCH_KOHYA_N"))
	if n <= 0 {
		n = 1000
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("char%04d.safetensors", i)), KohyaSDXL(i).Build(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
