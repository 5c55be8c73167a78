package diff

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/snapshot"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/canon/values"
	"github.com/stdiff/stdiff/diff/ggufsrc"
	"github.com/stdiff/stdiff/hash"
)

// The fixtures in testdata/ggufsrc are tiny random Hugging Face models and the GGUF files llama.cpp's
// convert_hf_to_gguf.py wrote of them (make.py beside them).
const srcDir = "testdata/ggufsrc"

func openPath(t *testing.T, path string) *source.Opened {
	t.Helper()
	o, err := source.Open(t.Context(), path, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// sourceReport compares a source folder with a GGUF file, in that order, or the other way round.
func sourceReport(t *testing.T, hf, gguf string, ggufFirst bool, opt Options) *Report {
	t.Helper()
	h, g := openPath(t, hf), openPath(t, gguf)
	a, b := h, g
	if ggufFirst {
		a, b = g, h
	}
	r, err := Models(t.Context(), a, b, opt)
	if err != nil {
		t.Fatal(err)
	}
	if r.Source == nil {
		t.Fatalf("%s against %s: no gguf_source in the report", hf, gguf)
	}
	return r
}

// matches says whether a comparison found equal values, or the exact rounding of the source's.
func matches(d *values.Diff) bool {
	return d != nil && (d.Differing == 0 || d.ExactRounding != nil && *d.ExactRounding)
}

// valueChanges are the changed tensors whose values or shape differ: not those whose dtype alone
// changed (a faithful conversion, which --fail-on -dtype accepts).
func valueChanges(r *Report) []Change {
	var out []Change
	for _, ch := range r.Tensors.Changed {
		if slices.Contains(ch.Fields, "data") || slices.Contains(ch.Fields, "shape") {
			out = append(out, ch)
		}
	}
	return out
}

// noDType is --fail-on -dtype: a faithful conversion passes.
var noDType, _ = ParseCategories([]string{"-dtype"})

func statuses(r *Report) map[ggufsrc.PairStatus]int {
	n := map[ggufsrc.PairStatus]int{}
	for _, p := range r.Source.Pairs {
		n[p.Status]++
	}
	return n
}

func transforms(r *Report) map[ggufsrc.Transform]int {
	n := map[ggufsrc.Transform]int{}
	for _, p := range r.Source.Pairs {
		n[p.Transform]++
	}
	return n
}

// TestSourceConverted: every model the converter wrote pairs whole with its source, in either order,
// through the transforms its architecture calls for; F16 and BF16 files are equal or the exact
// rounding of the source, a dtype change where the dtypes differ (exit 1, 0 with --fail-on -dtype),
// Q8_0 files differ by a small, nonzero RMSE (exit 1).
func TestSourceConverted(t *testing.T) {
	cases := []struct {
		model     string
		types     []string
		transform ggufsrc.Transform
		n         int // pairs under transform
		pairs     int
	}{
		{"llama", []string{"f16", "bf16", "q8_0"}, ggufsrc.TransformPermuteQK, 4, 21},
		{"qwen2", []string{"f16", "q8_0"}, ggufsrc.TransformNone, 27, 27},
		{"qwen3", []string{"f16", "q8_0"}, ggufsrc.TransformNone, 24, 24},
		{"gemma2", []string{"f16", "q8_0"}, ggufsrc.TransformNormPlusOne, 9, 24},
		{"gemma3", []string{"f16"}, ggufsrc.TransformNormPlusOne, 13, 28},
		{"mixtral", []string{"f16", "q8_0"}, ggufsrc.TransformStackExperts, 6, 23},
		{"gpt2", []string{"f16", "bf16", "q8_0"}, ggufsrc.TransformTranspose, 8, 28},
		{"phi3", []string{"f16", "q8_0"}, ggufsrc.TransformNone, 15, 15},       // fused qkv_proj and gate_up_proj, as they are
		{"starcoder2", []string{"f16", "q8_0"}, ggufsrc.TransformNone, 36, 36}, // biases and all, names only
	}
	for _, c := range cases {
		for _, typ := range c.types {
			for _, ggufFirst := range []bool{false, true} {
				name := c.model + "-" + typ
				r := sourceReport(t, filepath.Join(srcDir, c.model), filepath.Join(srcDir, name+".gguf"), ggufFirst, Options{})
				if len(r.Tensors.Added)+len(r.Tensors.Removed) > 0 {
					t.Errorf("%s: unpaired: added %v, removed %v", name, r.Tensors.Added, r.Tensors.Removed)
				}
				if len(r.Source.Pairs) != c.pairs || transforms(r)[c.transform] != c.n {
					t.Errorf("%s: %d pairs, transforms %v; want %d pairs, %d under %s", name, len(r.Source.Pairs), transforms(r), c.pairs, c.n, c.transform)
				}
				st := statuses(r)
				configOK := len(r.Metadata.Changed) == 0
				if c.model == "gemma3" { // this converter reads config.json through transformers 5, which moved rope_theta: it wrote its default
					configOK = len(r.Metadata.Changed) == 1 && r.Metadata.Changed[0].Key == "gemma3.rope.freq_base"
				}
				if !configOK || len(r.Source.ConfigKeys) < 5 {
					t.Errorf("%s: config keys %+v, changed %+v", name, r.Source.ConfigKeys, r.Metadata.Changed)
				}
				switch typ {
				case "f16", "bf16":
					// A conversion is a dtype change wherever the dtypes differ (exit 1, as between two
					// files), each such tensor equal or the exact rounding by value; --fail-on -dtype
					// accepts it.
					if st[ggufsrc.PairDiffers]+st[ggufsrc.PairShape]+st[ggufsrc.PairNotCompared] > 0 || len(r.Tensors.Changed) == 0 {
						t.Errorf("%s: %v, changed %+v", name, st, r.Tensors.Changed)
					}
					for _, ch := range r.Tensors.Changed {
						if len(ch.Fields) != 1 || ch.Fields[0] != "dtype" || ch.Old.DType == ch.New.DType || !matches(ch.Values) {
							t.Errorf("%s: %s: %+v, values %+v", name, ch.Name, ch, ch.Values)
						}
					}
					if r.Outcome() != canon.Found || !slices.Contains(r.Categories, CategoryDType) || slices.Contains(r.Categories, CategoryValues) {
						t.Errorf("%s: outcome %v, categories %v", name, r.Outcome(), r.Categories)
					}
					gate, _ := ParseCategories([]string{"-dtype"})
					if g := sourceReport(t, filepath.Join(srcDir, c.model), filepath.Join(srcDir, name+".gguf"), ggufFirst, Options{FailOn: gate}); c.model != "gemma3" && g.Outcome() != canon.Clean {
						t.Errorf("%s --fail-on -dtype: outcome %v, categories %v", name, g.Outcome(), g.Categories)
					}
					if c.model == "gpt2" && st[ggufsrc.PairExactRounding] == 0 { // F32 source: rounded, not equal
						t.Errorf("%s: no pair is an exact rounding: %v", name, st)
					}
				case "q8_0":
					if r.Outcome() != canon.Found || st[ggufsrc.PairDiffers] == 0 {
						t.Errorf("%s: outcome %v, %v", name, r.Outcome(), st)
					}
					for _, ch := range r.Tensors.Changed {
						if !slices.Contains(ch.Fields, "data") { // an F32 norm of a BF16 source: its dtype alone
							if !matches(ch.Values) {
								t.Errorf("%s: %s: %+v", name, ch.Name, ch)
							}
							continue
						}
						if v := ch.Values; v == nil || v.RMSE == nil || *v.RMSE <= 0 || *v.RMSE > 0.01 || v.RelL2 > 0.02 || ch.MatchesUnder != nil || v.ExactRounding != nil {
							t.Errorf("%s: %s: %+v", name, ch.Name, ch)
						}
					}
					var q8 *ggufsrc.TypeSummary
					for i := range r.Source.Types {
						if r.Source.Types[i].Type == "Q8_0" {
							q8 = &r.Source.Types[i]
						}
					}
					if q8 == nil || q8.BitsPerWeight != 8.5 || q8.RMSE == nil || *q8.RMSE <= 0 || *q8.RMSE > 0.01 || q8.MaxError == nil || *q8.MaxError <= 0 {
						t.Errorf("%s: Q8_0 summary %+v", name, q8)
					}
				}
				// Names follow the order of the sides.
				for _, p := range r.Source.Pairs {
					gname := p.Name
					if !ggufFirst {
						gname = p.NameB
					}
					if !strings.HasPrefix(gname, "blk.") && !strings.Contains(gname, "token_embd") && !strings.HasPrefix(gname, "output") && !strings.HasPrefix(gname, "position_embd") {
						t.Errorf("%s: pair %+v: %q is no GGUF name", name, p, gname)
					}
				}
			}
		}
	}
}

// copyModel copies a fixture's folder to a temporary one, config.json edited by edit (removed when
// edit returns nil).
func copyModel(t *testing.T, model string, edit func([]byte) []byte) string {
	t.Helper()
	dir := t.TempDir()
	st, err := os.ReadFile(filepath.Join(srcDir, model, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(srcDir, model, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), st, 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg = edit(cfg); cfg != nil {
		if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestSourceWrongHeads: a config.json whose head counts are not those the converter permuted with
// makes q and k differ; they match under the GGUF's head counts, which the report says, and the head
// counts are reported as changed keys.
func TestSourceWrongHeads(t *testing.T) {
	dir := copyModel(t, "llama", func(b []byte) []byte {
		b = bytes.Replace(b, []byte(`"num_attention_heads": 4`), []byte(`"num_attention_heads": 2`), 1)
		return bytes.Replace(b, []byte(`"num_key_value_heads": 2`), []byte(`"num_key_value_heads": 1`), 1)
	})
	r := sourceReport(t, dir, filepath.Join(srcDir, "llama-f16.gguf"), false, Options{})
	if r.Outcome() != canon.Found || len(valueChanges(r)) != 4 {
		t.Fatalf("outcome %v, changed %+v", r.Outcome(), valueChanges(r))
	}
	for _, ch := range valueChanges(r) {
		want := 4
		if strings.Contains(ch.NameB, "attn_k") {
			want = 2
		}
		if ch.Transform != ggufsrc.TransformPermuteQK || ch.MatchesUnder == nil || ch.MatchesUnder.Transform != ggufsrc.TransformPermuteQK || ch.MatchesUnder.Heads != want ||
			!matches(ch.MatchesUnder.Values) {
			t.Errorf("%s: %+v, matches under %+v", ch.Name, ch, ch.MatchesUnder)
		}
	}
	keys := map[string]bool{}
	for _, m := range r.Metadata.Changed {
		keys[m.Key] = true
	}
	if !keys["llama.attention.head_count"] || !keys["llama.attention.head_count_kv"] || len(keys) != 2 {
		t.Errorf("metadata changed: %+v", r.Metadata.Changed)
	}
}

// TestSourceNoConfig: without config.json the head counts come from the GGUF: the pairs still match,
// and no key is compared.
func TestSourceNoConfig(t *testing.T) {
	dir := copyModel(t, "llama", func([]byte) []byte { return nil })
	r := sourceReport(t, dir, filepath.Join(srcDir, "llama-f16.gguf"), true, Options{FailOn: noDType})
	if r.Outcome() != canon.Clean || r.Source.Config != "" || len(r.Source.ConfigKeys) != 0 || transforms(r)[ggufsrc.TransformPermuteQK] != 4 {
		t.Errorf("outcome %v, config %q, keys %v, transforms %v", r.Outcome(), r.Source.Config, r.Source.ConfigKeys, transforms(r))
	}
}

// ggufCopy copies a fixture GGUF file to a temporary one and lets edit change its bytes, given the
// model read from it (tensor offsets).
func ggufCopy(t *testing.T, name string, edit func(b []byte, m *canon.Model)) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(srcDir, name))
	if err != nil {
		t.Fatal(err)
	}
	o := openPath(t, filepath.Join(srcDir, name))
	edit(b, o.Model)
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSourceMissedTransforms: a GGUF whose q is not permuted, or whose Gemma norm lacks its +1, is
// reported as such: the values differ under the converter's transform and match without it.
func TestSourceMissedTransforms(t *testing.T) {
	unpermuted := ggufCopy(t, "llama-f16.gguf", func(b []byte, m *canon.Model) {
		q := m.Tensor("blk.0.attn_q.weight") // F16 [32, 32], 4 heads: undo the converter's permutation
		off := m.DataOffset() + int64(q.Begin)
		rows, row := 32, 64
		half := rows / 4 / 2
		old := bytes.Clone(b[off : off+int64(rows*row)])
		for u := range rows {
			h, rest := u/(2*half), u%(2*half)
			src := h*2*half + rest%2*half + rest/2
			copy(b[off+int64(src*row):], old[u*row:(u+1)*row])
		}
	})
	r := sourceReport(t, filepath.Join(srcDir, "llama"), unpermuted, false, Options{})
	if len(valueChanges(r)) != 1 || valueChanges(r)[0].NameB != "blk.0.attn_q.weight" || valueChanges(r)[0].MatchesUnder == nil ||
		valueChanges(r)[0].MatchesUnder.Transform != ggufsrc.TransformNone {
		t.Errorf("unpermuted q: %+v", valueChanges(r))
	}

	noPlusOne := ggufCopy(t, "gemma2-f16.gguf", func(b []byte, m *canon.Model) {
		n := m.Tensor("blk.1.attn_norm.weight") // F32: take the +1 away
		off := m.DataOffset() + int64(n.Begin)
		for k := off; k < off+int64(n.Len()); k += 4 {
			v := math.Float32frombits(binary.LittleEndian.Uint32(b[k:]))
			binary.LittleEndian.PutUint32(b[k:], math.Float32bits(v-1))
		}
	})
	r = sourceReport(t, filepath.Join(srcDir, "gemma2"), noPlusOne, true, Options{})
	if len(valueChanges(r)) != 1 || valueChanges(r)[0].Name != "blk.1.attn_norm.weight" || valueChanges(r)[0].Transform != ggufsrc.TransformNormPlusOne ||
		valueChanges(r)[0].MatchesUnder == nil || valueChanges(r)[0].MatchesUnder.Transform != ggufsrc.TransformNone {
		t.Errorf("norm without +1: %+v", valueChanges(r))
	}
}

// TestSourceUnknownArch: a GGUF whose architecture llama.cpp's name map does not know cannot be
// paired: an error (exit 2), not a report of every tensor added and removed.
func TestSourceUnknownArch(t *testing.T) {
	p := ggufCopy(t, "llama-f16.gguf", func(b []byte, _ *canon.Model) {
		k := bytes.Index(b, []byte("general.architecture"))
		v := k + len("general.architecture") + 4 + 8 // type, then the string's length
		copy(b[v:], "zzzzz")
	})
	h, g := openPath(t, filepath.Join(srcDir, "llama")), openPath(t, p)
	_, err := Models(t.Context(), h, g, Options{})
	var re *canon.ReadError
	if !errors.Is(err, ggufsrc.ErrUnknownArchitecture) || !errors.As(err, &re) || re.Hint == "" || !strings.Contains(err.Error(), `"zzzzz"`) {
		t.Errorf("err = %v", err)
	}
	// Metadata alone needs no pairing.
	if _, err := Models(t.Context(), h, g, Options{MetadataOnly: true}); err != nil {
		t.Errorf("metadata only: %v", err)
	}
}

// TestSourceHeaderOnly: without reading values, the pairs and their shapes are still compared.
func TestSourceHeaderOnly(t *testing.T) {
	r := sourceReport(t, filepath.Join(srcDir, "gpt2"), filepath.Join(srcDir, "gpt2-q8_0.gguf"), false, Options{HeaderOnly: true})
	if r.ContentCompared || statuses(r)[ggufsrc.PairNotCompared] != 28 || len(valueChanges(r)) != 0 {
		t.Errorf("content %v, %v, changed %+v", r.ContentCompared, statuses(r), r.Tensors.Changed)
	}
	// Every dtype that differs is a dtype change, values read or not: never "identical" (exit 1).
	for _, ch := range r.Tensors.Changed {
		if len(ch.Fields) != 1 || ch.Fields[0] != "dtype" || ch.Old.DType == ch.New.DType {
			t.Errorf("%s: %+v", ch.Name, ch)
		}
	}
	if len(r.Tensors.Changed) == 0 || r.Outcome() != canon.Found || r.Tensors.Unchanged != 28-len(r.Tensors.Changed) {
		t.Errorf("changed %d, unchanged %d, outcome %v", len(r.Tensors.Changed), r.Tensors.Unchanged, r.Outcome())
	}
}

// TestSourceTrimmedEmbedding: Gemma 3's converter keeps the embedding rows of the tokens the
// vocabulary has: the GGUF's rows pair with the source's first rows (trim-rows).
func TestSourceTrimmedEmbedding(t *testing.T) {
	dir := t.TempDir()
	const rows, kept, width = 6, 4, 32
	var src, gg []byte
	for i := range rows * width {
		v := float32(i%13)/8 - 0.75 // exact in BF16
		src = binary.LittleEndian.AppendUint16(src, uint16(math.Float32bits(v)>>16))
		if i < kept*width {
			gg = binary.LittleEndian.AppendUint32(gg, math.Float32bits(v))
		}
	}
	header := `{"model.embed_tokens.weight":{"dtype":"BF16","shape":[6,32],"data_offsets":[0,384]}}`
	st := append(binary.LittleEndian.AppendUint64(nil, uint64(len(header))), header...)
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), append(st, src...), 0o644); err != nil {
		t.Fatal(err)
	}
	f := ggufw.File{KVs: []ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("gemma3")}},
		Tensors: []ggufw.Tensor{{Name: "token_embd.weight", Type: gguf.TypeF32, Dims: []int64{width, kept}, Data: gg}}}
	gp := filepath.Join(t.TempDir(), "model.gguf")
	if err := os.WriteFile(gp, f.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := sourceReport(t, dir, gp, false, Options{FailOn: noDType})
	if len(r.Source.Pairs) != 1 || r.Source.Pairs[0].Transform != ggufsrc.TransformTrimRows || r.Source.Pairs[0].Status != ggufsrc.PairEqual || r.Outcome() != canon.Clean {
		t.Errorf("pairs %+v, outcome %v, changed %+v", r.Source.Pairs, r.Outcome(), r.Tensors.Changed)
	}
	// Rows the source lacks are no trimming.
	f.Tensors[0].Dims, f.Tensors[0].Data = []int64{width, rows + 1}, make([]byte, (rows+1)*width*4)
	if err := os.WriteFile(gp, f.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	r = sourceReport(t, dir, gp, false, Options{})
	if len(r.Source.Pairs) != 1 || r.Source.Pairs[0].Status != ggufsrc.PairShape || r.Outcome() != canon.Found {
		t.Errorf("more rows: pairs %+v, outcome %v", r.Source.Pairs, r.Outcome())
	}
}

// TestSourceHostile: a truncated GGUF, or a config.json with absurd head counts, never panics: the
// pairs that cannot be compared say why, and the outcome is a difference.
func TestSourceHostile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(srcDir, "llama-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.gguf")
	if err := os.WriteFile(cut, b[:len(b)-3000], 0o644); err != nil {
		t.Fatal(err)
	}
	r := sourceReport(t, filepath.Join(srcDir, "llama"), cut, false, Options{})
	if r.Outcome() != canon.Found || len(r.Tensors.NotCompared) == 0 || r.Tensors.NotCompared[0].Reason != NotReadBytesMissing {
		t.Errorf("truncated: outcome %v, not compared %+v", r.Outcome(), r.Tensors.NotCompared)
	}
	for _, heads := range []string{"0", "-3", "1e300", "3", "64", "\"x\""} {
		dir := copyModel(t, "llama", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"num_attention_heads": 4`), []byte(`"num_attention_heads": `+heads), 1)
		})
		r := sourceReport(t, dir, filepath.Join(srcDir, "llama-f16.gguf"), false, Options{})
		if heads != `"x"` && r.Outcome() != canon.Found {
			t.Errorf("heads %s: outcome %v", heads, r.Outcome())
		}
	}
}

// TestSourceSnapshot: a snapshot on either side pairs by name and shape, its values not compared.
func TestSourceSnapshot(t *testing.T) {
	for _, snapGGUF := range []bool{false, true} {
		snap := filepath.Join(srcDir, "llama", "model.safetensors")
		other := filepath.Join(srcDir, "llama-q8_0.gguf")
		if snapGGUF {
			snap, other = other, snap
		}
		o := openPath(t, snap)
		d, err := hash.TensorDigests(t.Context(), o.Source, o.Model, hash.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "model.snap")
		if err := snapshot.WriteFile(t.Context(), p, snapshot.New(o.Model, "model", d, make([]*values.Stats, len(d)))); err != nil {
			t.Fatal(err)
		}
		so, err := source.Open(t.Context(), p, source.Options{Snapshots: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { so.Close() })
		r, err := Models(t.Context(), so, openPath(t, other), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Source == nil || statuses(r)[ggufsrc.PairNotCompared] != 21 || r.ContentCompared || r.Notes[len(r.Notes)-1].Reason != NotReadSnapshot {
			t.Errorf("snapshot of the gguf %v: %+v, notes %+v", snapGGUF, r.Source, r.Notes)
		}
	}
}

// writePair writes a safetensors source and a GGUF file of architecture arch holding the same F32
// values under the names of each pair (source name, GGUF name, row-major shape).
func writePair(t *testing.T, arch string, pairs []struct {
	hf, gguf string
	shape    []int64
}) (string, string) {
	t.Helper()
	dir := t.TempDir()
	header := map[string]any{}
	var data []byte
	f := ggufw.File{KVs: []ggufw.KV{{Key: "general.architecture", Val: ggufw.Str(arch)}}}
	for k, p := range pairs {
		n := int64(1)
		dims := make([]int64, len(p.shape))
		for i, d := range p.shape {
			n *= d
			dims[len(dims)-1-i] = d
		}
		var b []byte
		for i := range n {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(int64(k)*1000+i)/64))
		}
		header[p.hf] = map[string]any{"dtype": "F32", "shape": p.shape, "data_offsets": []int{len(data), len(data) + len(b)}}
		data = append(data, b...)
		f.Tensors = append(f.Tensors, ggufw.Tensor{Name: p.gguf, Type: gguf.TypeF32, Dims: dims, Data: b})
	}
	hb, _ := json.Marshal(header)
	st := append(binary.LittleEndian.AppendUint64(nil, uint64(len(hb))), hb...)
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), append(st, data...), 0o644); err != nil {
		t.Fatal(err)
	}
	gp := filepath.Join(t.TempDir(), "model.gguf")
	if err := os.WriteFile(gp, f.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, gp
}

// TestSourceNamesOnly: architectures whose converter only renames (phi3's fused projections stay
// fused, starcoder2's biases) pair every tensor through the map, with no transform. Synthetic files,
// beside the converter's own output of both (TestSourceConverted).
func TestSourceNamesOnly(t *testing.T) {
	type pair = struct {
		hf, gguf string
		shape    []int64
	}
	for arch, pairs := range map[string][]pair{
		"phi3": {
			{"model.embed_tokens.weight", "token_embd.weight", []int64{8, 32}},
			{"model.layers.0.self_attn.qkv_proj.weight", "blk.0.attn_qkv.weight", []int64{96, 32}},
			{"model.layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight", []int64{32, 32}},
			{"model.layers.0.mlp.gate_up_proj.weight", "blk.0.ffn_up.weight", []int64{128, 32}},
			{"model.layers.0.mlp.down_proj.weight", "blk.0.ffn_down.weight", []int64{32, 64}},
			{"model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight", []int64{32}},
			{"model.norm.weight", "output_norm.weight", []int64{32}},
			{"lm_head.weight", "output.weight", []int64{8, 32}},
		},
		"starcoder2": {
			{"model.embed_tokens.weight", "token_embd.weight", []int64{8, 32}},
			{"model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight", []int64{32, 32}},
			{"model.layers.1.self_attn.q_proj.bias", "blk.1.attn_q.bias", []int64{32}},
			{"model.layers.1.mlp.c_fc.weight", "blk.1.ffn_up.weight", []int64{64, 32}},
			{"model.layers.1.mlp.c_proj.bias", "blk.1.ffn_down.bias", []int64{32}},
			{"model.layers.1.input_layernorm.bias", "blk.1.attn_norm.bias", []int64{32}},
			{"model.norm.weight", "output_norm.weight", []int64{32}},
		},
	} {
		dir, gp := writePair(t, arch, pairs)
		r := sourceReport(t, dir, gp, false, Options{})
		if r.Outcome() != canon.Clean || len(r.Source.Pairs) != len(pairs) || transforms(r)[ggufsrc.TransformNone] != len(pairs) || statuses(r)[ggufsrc.PairEqual] != len(pairs) {
			t.Errorf("%s: outcome %v, pairs %+v, added %v, removed %v", arch, r.Outcome(), r.Source.Pairs, r.Tensors.Added, r.Tensors.Removed)
		}
	}
}

// TestSourceMarkdownHTML: the Markdown and HTML reports show the GGUF-source summary: the name map and
// config.json, the pairs per status and the transforms undone, the per-type table, the pairs that
// differ with their transform and the one their values match under, and the config.json keys the
// GGUF restates otherwise; a name from the files adds no markup.
func TestSourceMarkdownHTML(t *testing.T) {
	dir := copyModel(t, "llama", func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"num_attention_heads": 4`), []byte(`"num_attention_heads": 2`), 1)
	})
	hostile := filepath.Join(filepath.Dir(dir), "m<i>x|y")
	if err := os.Rename(dir, hostile); err != nil {
		t.Fatal(err)
	}
	r := sourceReport(t, hostile, filepath.Join(srcDir, "llama-f16.gguf"), false, Options{})
	var md, page bytes.Buffer
	if err := Write(&md, r, WriteOptions{Format: textfmt.Markdown}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&page, r, WriteOptions{Format: textfmt.HTML}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**gguf source**: `llama`, paired through llama.cpp gguf-py",
		"- pairs: 21: 18 equal, 1 exact rounding, 2 differ\n",
		"m<i>x\\|y/config.json`\n", // in a code span, the cell's bar escaped
		"- undone: permute-qk × 4\n",
		"| type | tensors | parameters | bits/weight | rmse | max error |\n",
		"| `F16` | 16 | 22,528 | 16.00 |",
		"| pair that differs | gguf | differs | transform | matches under |\n",
		"| `model.layers.0.self_attn.q_proj.weight` | `blk.0.attn_q.weight` | rel L2 ",
		" | permute-qk (2 heads) | permute-qk (4 heads) |\n",
		"| `llama.attention.head_count` | `num_attention_heads` | 4 | 2 |\n",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	for _, want := range []string{
		"<h2>GGUF source</h2>", "pairs 21: 18 equal, 1 exact rounding, 2 differ · undone: permute-qk × 4",
		`<td class="mono">F16</td><td class="num">16</td><td class="num">22,528</td><td class="num">16.00</td>`,
		`<td class="mono">blk.1.attn_q.weight</td>`, `<td class="bad">permute-qk (4 heads)</td>`,
		`<td class="mono">llama.attention.head_count</td><td class="mono">num_attention_heads</td><td class="bad">4</td><td class="good">2</td>`,
		"m&lt;i&gt;x|y",
	} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if strings.Contains(page.String(), "<i>") {
		t.Error("a path from the files adds markup")
	}
}

// TestSourceMaxIndex: where the values differ most is said in the named tensor's own coordinates:
// a permuted q's GGUF row 5 is its source's row 6 (4 heads of 8 rows: GGUF unit (h, i, s) is source
// unit (h, s, i)), and a transposed gpt2 matrix's element (r, k) is its source's (k, r).
func TestSourceMaxIndex(t *testing.T) {
	bump := func(name string, row, col int) func(b []byte, m *canon.Model) {
		return func(b []byte, m *canon.Model) {
			tt := m.Tensor(name)
			width := int(tt.Shape[len(tt.Shape)-1])
			at := m.DataOffset() + int64(tt.Begin) + int64(row*width+col)*2 // F16
			binary.LittleEndian.PutUint16(b[at:], 0x5640)                   // 100
		}
	}
	for _, c := range []struct {
		model, gguf, name string
		row, col          int
		wantGGUF, wantSrc [2]int // (row, col) under each name
	}{
		{"llama", "llama-f16.gguf", "blk.0.attn_q.weight", 5, 7, [2]int{5, 7}, [2]int{6, 7}},
		{"gpt2", "gpt2-f16.gguf", "blk.0.attn_qkv.weight", 3, 10, [2]int{3, 10}, [2]int{10, 3}},
	} {
		p := ggufCopy(t, c.gguf, bump(c.name, c.row, c.col))
		for _, ggufFirst := range []bool{true, false} {
			r := sourceReport(t, filepath.Join(srcDir, c.model), p, ggufFirst, Options{})
			var ch *Change
			for i := range r.Tensors.Changed {
				if r.Tensors.Changed[i].Name == c.name || r.Tensors.Changed[i].NameB == c.name {
					ch = &r.Tensors.Changed[i]
				}
			}
			if ch == nil || ch.Values == nil {
				t.Fatalf("%s: %s not changed: %+v", c.gguf, c.name, r.Tensors.Changed)
			}
			want := c.wantSrc
			if ggufFirst {
				want = c.wantGGUF
			}
			width := int64(ch.Old.Shape[len(ch.Old.Shape)-1])
			if got := ch.Values.MaxAbsDiffIndex; got != int64(want[0])*width+int64(want[1]) {
				t.Errorf("%s (gguf first %v): max |a−b| at flat %d = [%d,%d] of %v, want [%d,%d]", c.name, ggufFirst, got, got/width, got%width, ch.Old.Shape, want[0], want[1])
			}
		}
	}
}
