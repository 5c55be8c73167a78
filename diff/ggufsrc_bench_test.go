package diff

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/values"
)

// TestWriteSourceBench writes the benchmark of testdata/bench/ggufsrc.sh into the folder
// STDIFF_BENCH_GGUFSRC names: a llama-shaped model of about a billion BF16 parameters (hidden 4096, 32
// heads, 8 KV heads, 5 blocks, 32,000 tokens) as save_pretrained writes it (model.safetensors,
// config.json), and model-q8_0.gguf, its Q8_0 quantisation (ggml's reference quantiser) with q and
// k permuted as convert_hf_to_gguf.py does: about 2 GiB and 1 GiB, written as they are made. With
// STDIFF_BENCH_GGUFSRC_DTYPE=F32 the source holds the same values in F32, in two shards
// (model-0000N-of-00002.safetensors and model.safetensors.index.json, as save_pretrained shards it): 4 GiB.
func TestWriteSourceBench(t *testing.T) {
	dir := os.Getenv("STDIFF_BENCH_GGUFSRC")
	if dir == "" {
		t.Skip("STDIFF_BENCH_GGUFSRC not set (used by testdata/bench/ggufsrc.sh)")
	}
	const hidden, heads, kvHeads, ffn, blocks, vocab = 4096, 32, 8, 11008, 5, 32000
	type tensor struct {
		hf, gguf string
		shape    []int64 // row-major
		permute  int     // heads to permute with, 0 for none
	}
	ts := []tensor{{"model.embed_tokens.weight", "token_embd.weight", []int64{vocab, hidden}, 0}}
	for b := range blocks {
		p, g := fmt.Sprintf("model.layers.%d.", b), fmt.Sprintf("blk.%d.", b)
		ts = append(ts,
			tensor{p + "input_layernorm.weight", g + "attn_norm.weight", []int64{hidden}, 0},
			tensor{p + "self_attn.q_proj.weight", g + "attn_q.weight", []int64{hidden, hidden}, heads},
			tensor{p + "self_attn.k_proj.weight", g + "attn_k.weight", []int64{hidden / heads * kvHeads, hidden}, kvHeads},
			tensor{p + "self_attn.v_proj.weight", g + "attn_v.weight", []int64{hidden / heads * kvHeads, hidden}, 0},
			tensor{p + "self_attn.o_proj.weight", g + "attn_output.weight", []int64{hidden, hidden}, 0},
			tensor{p + "post_attention_layernorm.weight", g + "ffn_norm.weight", []int64{hidden}, 0},
			tensor{p + "mlp.gate_proj.weight", g + "ffn_gate.weight", []int64{ffn, hidden}, 0},
			tensor{p + "mlp.up_proj.weight", g + "ffn_up.weight", []int64{ffn, hidden}, 0},
			tensor{p + "mlp.down_proj.weight", g + "ffn_down.weight", []int64{hidden, ffn}, 0})
	}
	ts = append(ts, tensor{"model.norm.weight", "output_norm.weight", []int64{hidden}, 0})

	elems := func(s []int64) int64 {
		n := int64(1)
		for _, d := range s {
			n *= d
		}
		return n
	}
	// The source's values: BF16, deterministic per tensor.
	sourceRows := func(k int, tt tensor) [][]float32 {
		rng := rand.New(rand.NewPCG(uint64(k), 7))
		rowLen := tt.shape[len(tt.shape)-1]
		rows := make([][]float32, elems(tt.shape)/rowLen)
		for r := range rows {
			row := make([]float32, rowLen)
			for i := range row {
				v := float32(rng.NormFloat64() * 0.02)
				if len(tt.shape) == 1 {
					v = 1 + v
				}
				row[i] = math.Float32frombits(math.Float32bits(v) &^ 0xffff) // a BF16 value (truncated)
			}
			rows[r] = row
		}
		return rows
	}

	// The source: model.safetensors (BF16), or two F32 shards and their index; each file its header, then
	// each tensor's bytes.
	f32 := os.Getenv("STDIFF_BENCH_GGUFSRC_DTYPE") == "F32"
	dtype, width, shards := "BF16", int64(2), 1
	if f32 {
		dtype, width, shards = "F32", 4, 2
	}
	shardOf := func(k int) int { return k * shards / len(ts) }
	shardName := func(i int) string {
		if shards == 1 {
			return "model.safetensors"
		}
		return fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, shards)
	}
	headers := make([]map[string]any, shards)
	offs := make([]int64, shards)
	weightMap := map[string]string{}
	for i := range headers {
		headers[i] = map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	}
	for k, tt := range ts {
		i, n := shardOf(k), elems(tt.shape)*width
		headers[i][tt.hf] = map[string]any{"dtype": dtype, "shape": tt.shape, "data_offsets": []int64{offs[i], offs[i] + n}}
		offs[i] += n
		weightMap[tt.hf] = shardName(i)
	}
	if shards > 1 {
		ib, _ := json.MarshalIndent(map[string]any{"metadata": map[string]any{"total_size": offs[0] + offs[1]}, "weight_map": weightMap}, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), ib, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var st *os.File
	var sw *bufio.Writer
	openShard := func(i int) {
		if sw != nil {
			if err := sw.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		}
		hb, _ := json.Marshal(headers[i])
		for len(hb)%8 != 0 {
			hb = append(hb, ' ')
		}
		var err error
		if st, err = os.Create(filepath.Join(dir, shardName(i))); err != nil {
			t.Fatal(err)
		}
		sw = bufio.NewWriterSize(st, 1<<20)
		sw.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(hb))))
		sw.Write(hb)
	}
	openShard(0)

	// model-q8_0.gguf: the header with its offsets, then each tensor's data (Q8_0, norms F32).
	file := ggufw.File{KVs: []ggufw.KV{
		{Key: "general.architecture", Val: ggufw.Str("llama")},
		{Key: "llama.block_count", Val: ggufw.U32(blocks)},
		{Key: "llama.embedding_length", Val: ggufw.U32(hidden)},
		{Key: "llama.attention.head_count", Val: ggufw.U32(heads)},
		{Key: "llama.attention.head_count_kv", Val: ggufw.U32(kvHeads)},
	}}
	var goff uint64
	for _, tt := range ts {
		typ := gguf.TypeQ8_0
		if len(tt.shape) == 1 {
			typ = gguf.TypeF32
		}
		dims := make([]int64, len(tt.shape))
		for i, d := range tt.shape {
			dims[len(dims)-1-i] = d
		}
		n, _ := ggufw.TensorBytes(typ, dims)
		file.Tensors = append(file.Tensors, ggufw.Tensor{Name: tt.gguf, Type: typ, Dims: dims, NoData: true})
		file.Offsets = append(file.Offsets, goff)
		goff += (n + 31) / 32 * 32
	}
	gf, err := os.Create(filepath.Join(dir, "model-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	gw := bufio.NewWriterSize(gf, 1<<20)
	gw.Write(file.Build())
	var written uint64
	for k, tt := range ts {
		if k > 0 && shardOf(k) != shardOf(k-1) {
			openShard(shardOf(k))
		}
		rows := sourceRows(k, tt)
		var buf []byte
		for _, row := range rows {
			buf = buf[:0]
			for _, v := range row {
				if f32 {
					buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
				} else {
					buf = binary.LittleEndian.AppendUint16(buf, uint16(math.Float32bits(v)>>16))
				}
			}
			sw.Write(buf)
		}
		if tt.permute > 0 { // as the converter: rows (head, 2, half) → (head, half, 2)
			half := len(rows) / tt.permute / 2
			perm := make([][]float32, len(rows))
			for u := range rows {
				h, rest := u/(2*half), u%(2*half)
				perm[u] = rows[h*2*half+rest%2*half+rest/2]
			}
			rows = perm
		}
		start := written
		for _, row := range rows {
			buf = buf[:0]
			if len(tt.shape) == 1 {
				for _, v := range row {
					buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
				}
				gw.Write(buf)
				written += uint64(len(buf))
				continue
			}
			for b := 0; b < len(row); b += 32 {
				amax := float32(0)
				for _, v := range row[b : b+32] {
					amax = max(amax, float32(math.Abs(float64(v))))
				}
				d := amax / 127
				id := float32(0)
				if d != 0 {
					id = 1 / d
				}
				code, _ := values.Encode("F16", float64(d))
				buf = binary.LittleEndian.AppendUint16(buf, uint16(code))
				for _, v := range row[b : b+32] {
					buf = append(buf, byte(int8(math.Round(float64(v*id)))))
				}
			}
			gw.Write(buf)
			written += uint64(len(buf))
		}
		for (written-start)%32 != 0 {
			gw.WriteByte(0)
			written++
		}
	}
	for _, f := range []struct {
		w *bufio.Writer
		f *os.File
	}{{sw, st}, {gw, gf}} {
		if err := f.w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	cfg := map[string]any{"architectures": []string{"LlamaForCausalLM"}, "model_type": "llama", "hidden_size": hidden,
		"num_attention_heads": heads, "num_key_value_heads": kvHeads, "num_hidden_layers": blocks, "intermediate_size": ffn,
		"vocab_size": vocab, "tie_word_embeddings": true}
	cb, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cb, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("wrote", dir, strconv.Itoa(len(ts)), "tensors")
}
