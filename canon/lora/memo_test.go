package lora

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
)

// memoCases are models in pairs (and more) that a key covering less than what survey reads would
// take for one another: each differs from the one before it in one thing survey reads, or in nothing
// it reads (a dtype, a data offset, other metadata), so that a wrong key hands the second the first's
// facts.
func memoCases() []stfile.File {
	lora := func(rank uint64, in uint64) stfile.File {
		return tensors(kohyaK+".alpha", []uint64{}, kohyaK+".lora_down.weight", []uint64{rank, in}, kohyaK+".lora_up.weight", []uint64{320, rank})
	}
	withMeta := func(f stfile.File, kv ...stfile.KV) stfile.File { f.Metadata = kv; return f }
	dtype := func(f stfile.File, dt string) stfile.File {
		for i := range f.Tensors {
			f.Tensors[i].DType = dt
		}
		return f
	}
	return []stfile.File{
		// The same names, other shapes: rank 4 then 8; SD1's context width 768 then SDXL's 2048.
		lora(4, 768), lora(8, 768), lora(8, 2048),
		// The same names and shapes in another dtype, other metadata: the same facts (a hit).
		withMeta(dtype(lora(8, 2048), "F32"), stfile.KV{Key: "ss_network_dim", Value: "8"}),
		// Shapes that run together alike without their lengths: [4, 768] [320, 4] then [4] [768, 320, 4].
		tensors(kohyaK+".lora_down.weight", []uint64{4, 768}, kohyaK+".lora_up.weight", []uint64{320, 4}),
		tensors(kohyaK+".lora_down.weight", []uint64{4}, kohyaK+".lora_up.weight", []uint64{768, 320, 4}),
		// Names that run together alike: two tokens, then one name that is no token.
		tensors("<a>", []uint64{768}, "<b>", []uint64{768}),
		tensors("<a><", []uint64{768}, "b>", []uint64{768}),
		// The same names and shapes in another order: the tokens' order, and the width of the last.
		tensors("<a>", []uint64{768}, "<b>", []uint64{1024}),
		tensors("<b>", []uint64{1024}, "<a>", []uint64{768}),
		// The same tensors, marked as lora_diffusion's tokens or not (the metadata survey reads).
		withMeta(tensors("<s1>", []uint64{768}, "x", []uint64{4}), stfile.KV{Key: "<s1>", Value: "<embed>"}),
		tensors("<s1>", []uint64{768}, "x", []uint64{4}),
		withMeta(tensors("<s1>", []uint64{768}, "x", []uint64{4}), stfile.KV{Key: "x", Value: "<embed>"}),
		// Bundled embeddings: the tokens are parts of the names.
		tensors(kohyaK+".lora_down.weight", []uint64{8, 768}, kohyaK+".lora_up.weight", []uint64{320, 8}, "bundle_emb.pepper.emb_params", []uint64{1, 768}),
		tensors(kohyaK+".lora_down.weight", []uint64{8, 768}, kohyaK+".lora_up.weight", []uint64{320, 8}, "bundle_emb.carrot.emb_params", []uint64{1, 768}),
		// Ranks that differ within a file (Ranks), twice.
		tensors(kohyaK+".lora_down.weight", []uint64{8, 768}, kohyaK+".lora_up.weight", []uint64{320, 8},
			"lora_unet_x.lora_down.weight", []uint64{4, 320}, "lora_unet_x.lora_up.weight", []uint64{320, 4}),
		tensors(kohyaK+".lora_down.weight", []uint64{8, 768}, kohyaK+".lora_up.weight", []uint64{320, 8},
			"lora_unet_x.lora_down.weight", []uint64{4, 320}, "lora_unet_x.lora_up.weight", []uint64{320, 4}),
		{}, // no tensors
		stfile.KohyaSDXL(1), stfile.KohyaSDXL(2), loraDiffusionSD1(1, "F32", "<s1>", "<s2>"), loraDiffusionSD1(1, "F16", "<s1>", "<s2>"),
		loraDiffusionSD1(4, "F16"), smartFalconLoKr(),
	}
}

// TestSurveyMemo: Derive gives the same Info with the memo of surveys as without it, over models whose
// tensors are the same, or differ only in what a key covering less than all survey reads would miss
// (shapes, their lengths, the names' bounds, their order, the tokens marked in the metadata); and a
// model of the same names, shapes and marks as one surveyed before is not surveyed again.
func TestSurveyMemo(t *testing.T) {
	resetMemo()
	cases := memoCases()
	want := make([]Info, len(cases))
	memo.off.Store(true)
	for i, f := range cases {
		want[i] = deriveBytes("m.safetensors", f)
	}
	memo.off.Store(false)
	for round := range 2 { // the second round finds every model's facts in the memo
		for i, f := range cases {
			if got := deriveBytes("m.safetensors", f); !reflect.DeepEqual(got, want[i]) {
				t.Errorf("round %d, model %d: with the memo\n%+v\nwithout\n%+v", round, i, got, want[i])
			}
		}
	}
	a, b := canon.ReadBytes("a", cases[2].Build()), canon.ReadBytes("b", cases[3].Build())
	if factsOf(a) != factsOf(b) {
		t.Error("a model of the same names and shapes as one surveyed before was surveyed again")
	}
	if factsOf(a) == factsOf(canon.ReadBytes("c", cases[1].Build())) {
		t.Error("models of other shapes share their facts")
	}
}

// TestSurveyMemoOutlivesHeader: the tokens the memo keeps are copies, not parts of the header of the
// model first surveyed, which a reader of many files reuses for the next one (canon.ReadInto).
func TestSurveyMemoOutlivesHeader(t *testing.T) {
	resetMemo()
	f := tensors(kohyaK+".lora_down.weight", []uint64{8, 768}, kohyaK+".lora_up.weight", []uint64{320, 8}, "bundle_emb.pepper.emb_params", []uint64{1, 768})
	b := f.Build()
	buf := make([]byte, 0, len(b))
	m, err := canon.ReadInto(bytes.NewReader(b), int64(len(b)), "first", buf)
	if err != nil {
		t.Fatal(err)
	}
	if in := Derive(m, nil, "first"); !reflect.DeepEqual(in.EmbeddedTokens, []string{"pepper"}) {
		t.Fatalf("first: tokens %q", in.EmbeddedTokens)
	}
	clear(buf[:cap(buf)]) // the next file's header goes where the first's was
	if in := deriveBytes("second", f); !reflect.DeepEqual(in.EmbeddedTokens, []string{"pepper"}) || !reflect.DeepEqual(in.Triggers, []string{"pepper"}) {
		t.Errorf("second: tokens %q, triggers %q", in.EmbeddedTokens, in.Triggers)
	}
}

// resetMemo empties the memo of surveys.
func resetMemo() {
	memo.Lock()
	memo.facts = nil
	memo.Unlock()
}

// BenchmarkDeriveKohyaSurveyed is BenchmarkDeriveKohya with every model surveyed (the memo off): what
// Derive costs for a layout not seen before.
func BenchmarkDeriveKohyaSurveyed(b *testing.B) {
	m := canon.ReadBytes("kohya", stfile.KohyaSDXL(1).Build())
	memo.off.Store(true)
	defer memo.off.Store(false)
	for b.Loop() {
		Derive(m, nil, "kohya.safetensors")
	}
}
