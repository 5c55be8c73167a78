package ggufsrc

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/values"
)

// The fixtures are diff's: tiny random Hugging Face models and the GGUF files llama.cpp's
// convert_hf_to_gguf.py wrote of them (make.py beside them).
const srcDir = "../testdata/ggufsrc"

func open(t *testing.T, path string) *source.Opened {
	t.Helper()
	o, err := source.Open(t.Context(), path, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// compare compares fixture model with its GGUF file m (the source first).
func compare(t *testing.T, model, m string, opt Options) *Result {
	t.Helper()
	h, g := open(t, filepath.Join(srcDir, model)), open(t, filepath.Join(srcDir, m+".gguf"))
	if side := Side(h.Model, g.Model); side != 1 {
		t.Fatalf("Side = %d, want 1", side)
	}
	res, err := Compare(t.Context(), h, g, 1, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pairs) != len(res.Report.Pairs) {
		t.Fatalf("%d pair results for %d pairs", len(res.Pairs), len(res.Report.Pairs))
	}
	return res
}

// TestBands: the statistics are the same, bit for bit, whatever the band size (many bands of a few
// rows each, merged in order).
func TestBands(t *testing.T) {
	for _, m := range []string{"llama-q8_0", "gpt2-f16", "mixtral-q8_0", "gemma2-q8_0"} {
		model := strings.Split(m, "-")[0]
		want := compare(t, model, m, Options{ReadValues: true, Config: true})
		old := bandElements
		bandElements = 32
		got := compare(t, model, m, Options{ReadValues: true, Config: true})
		bandElements = old
		for i := range got.Pairs {
			g, w := got.Pairs[i].Values, want.Pairs[i].Values
			if (g == nil) != (w == nil) {
				t.Fatalf("%s: %s: values %v against %v", m, got.Report.Pairs[i].Name, g, w)
			}
			if g != nil && (g.MaxAbsDiffIndex != w.MaxAbsDiffIndex || g.Differing != w.Differing || math.Abs(g.RelL2-w.RelL2) > 1e-12 ||
				math.Abs(*g.RMSE-*w.RMSE) > 1e-12) {
				t.Errorf("%s: %s: %+v against %+v", m, got.Report.Pairs[i].Name, g, w)
			}
		}
		if len(got.Pairs) != len(want.Pairs) || len(got.Pairs) == 0 {
			t.Errorf("%s: %d pairs against %d", m, len(got.Pairs), len(want.Pairs))
		}
	}
}

// TestResult: what Compare returns beside its Report: the tensors' indexes, the statistics of the
// pairs that differ, nothing unpaired for a converter's own output; Keep filters the pairs; without
// ReadValues nothing is compared by value, and without Config no key.
func TestResult(t *testing.T) {
	res := compare(t, "llama", "llama-q8_0", Options{ReadValues: true, Config: true})
	if len(res.UnpairedGGUF)+len(res.UnpairedSource) != 0 || len(res.Report.ConfigKeys) == 0 {
		t.Fatalf("unpaired %v %v, config keys %v", res.UnpairedGGUF, res.UnpairedSource, res.Report.ConfigKeys)
	}
	h, g := open(t, filepath.Join(srcDir, "llama")), open(t, filepath.Join(srcDir, "llama-q8_0.gguf"))
	differ := 0
	for i, pr := range res.Pairs {
		sp := res.Report.Pairs[i]
		if g.Model.Tensors[pr.GGUF].Name != sp.NameB || h.Model.Tensors[pr.Source[0]].Name != sp.Name || pr.SourceName != sp.Name {
			t.Errorf("pair %d: %+v, %+v", i, pr, sp)
		}
		if (sp.Status == PairDiffers || g.Model.Tensors[pr.GGUF].DType != h.Model.Tensors[pr.Source[0]].DType) != (pr.Values != nil) {
			t.Errorf("%s: status %s, values %v", sp.Name, sp.Status, pr.Values)
		}
		if pr.Values != nil {
			differ++
			if pr.Values.RMSE == nil {
				t.Errorf("%s: no rmse", sp.Name)
			}
		}
	}
	if differ == 0 {
		t.Error("no Q8_0 pair differs")
	}

	kept := compare(t, "llama", "llama-q8_0", Options{Keep: func(names ...string) bool {
		for _, n := range names {
			if strings.Contains(n, "attn_q") {
				return true
			}
		}
		return false
	}})
	for i, sp := range kept.Report.Pairs {
		if !strings.Contains(sp.NameB, "attn_q") || sp.Status != PairNotCompared || kept.Pairs[i].Values != nil {
			t.Errorf("kept %+v", sp)
		}
	}
	if len(kept.Pairs) == 0 || len(kept.Report.ConfigKeys) != 0 || kept.Report.Types[0].RMSE != nil {
		t.Errorf("kept %d pairs, config keys %v, types %+v", len(kept.Pairs), kept.Report.ConfigKeys, kept.Report.Types)
	}
}

// TestUnknownArch: a model that is no GGUF of an architecture the name map knows cannot be paired.
func TestUnknownArch(t *testing.T) {
	h := open(t, filepath.Join(srcDir, "llama"))
	if Side(h.Model, h.Model) != -1 {
		t.Error("two sources paired as a GGUF and its source")
	}
	h.Model.Format = canon.FormatGGUF // with no general.architecture
	if _, err := Compare(t.Context(), h, h, 0, Options{}); !errors.Is(err, ErrUnknownArchitecture) {
		t.Errorf("err = %v", err)
	}
}

// TestHostileHeads: head counts near 2^63, negative, fractional or absurd, in config.json or in the
// GGUF's own keys, never panic (2·heads overflowed and d0/heads was 0, a division by zero): q and
// k are then not compared under the permutation, and the comparison ends.
func TestHostileHeads(t *testing.T) {
	hostile := []string{"9223372036854775807", "9223372036854775806", "4611686018427387904", "-9223372036854775808",
		"-1", "0", "0.5", "3", "1e300", "16777216", "16777217", "NaN"}
	for _, inConfig := range []bool{false, true} {
		for _, v := range hostile {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(filepath.Join(srcDir, "llama"))); err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join(dir, "config.json")
			b, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case !inConfig:
				err = os.Remove(cfg) // the head counts come from the GGUF
			case v != "NaN":
				b = bytes.Replace(b, []byte(`"num_attention_heads": 4`), []byte(`"num_attention_heads": `+v), 1)
				b = bytes.Replace(b, []byte(`"num_key_value_heads": 2`), []byte(`"num_key_value_heads": `+v), 1)
				err = os.WriteFile(cfg, b, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			h, g := open(t, dir), open(t, filepath.Join(srcDir, "llama-f16.gguf"))
			for i := range g.Model.Metadata {
				if e := &g.Model.Metadata[i]; strings.HasPrefix(e.Key, "llama.attention.head_count") {
					e.Value = v
				}
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("heads %s (config %v): panic: %v", v, inConfig, r)
					}
				}()
				if _, err := Compare(t.Context(), h, g, 1, Options{ReadValues: true, Config: true}); err != nil {
					t.Errorf("heads %s (config %v): %v", v, inConfig, err)
				}
			}()
		}
	}
}

// TestConfigKeys: every config key the converter writes into the GGUF is compared with config.json:
// intermediate_size (feed_forward_length), head_dim (key_length, value_length, rope.dimension_count)
// and rope_scaling (type, factor); each mismatch is a key not equal, each match equal.
func TestConfigKeys(t *testing.T) {
	keysOf := func(edit func(cfg []byte) []byte, meta map[string]string) map[string]ConfigKey {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(filepath.Join(srcDir, "llama"))); err != nil {
			t.Fatal(err)
		}
		cfg := filepath.Join(dir, "config.json")
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, edit(b), 0o644); err != nil {
			t.Fatal(err)
		}
		h, g := open(t, dir), open(t, filepath.Join(srcDir, "llama-f16.gguf"))
		for k, v := range meta {
			g.Model.Metadata = append(g.Model.Metadata, canon.MetaEntry{Key: k, Value: v, Offset: -1})
		}
		res, err := Compare(t.Context(), h, g, 1, Options{Config: true})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]ConfigKey{}
		for _, ck := range res.Report.ConfigKeys {
			out[ck.Key] = ck
		}
		return out
	}
	same := func(b []byte) []byte { return b }
	keys := keysOf(same, nil)
	for _, k := range []string{"llama.feed_forward_length", "llama.attention.key_length", "llama.attention.value_length", "llama.rope.dimension_count"} {
		if ck, ok := keys[k]; !ok || !ck.Equal {
			t.Errorf("converter's own %s: %+v (compared %v)", k, ck, ok)
		}
	}
	for _, ck := range keys {
		if !ck.Equal {
			t.Errorf("converter's own file: %+v", ck)
		}
	}
	keys = keysOf(func(b []byte) []byte {
		b = bytes.Replace(b, []byte(`"intermediate_size": 64`), []byte(`"intermediate_size": 96`), 1)
		return bytes.Replace(b, []byte(`"head_dim": 8`), []byte(`"head_dim": 16`), 1)
	}, nil)
	for _, k := range []string{"llama.feed_forward_length", "llama.attention.key_length", "llama.attention.value_length", "llama.rope.dimension_count"} {
		if ck, ok := keys[k]; !ok || ck.Equal {
			t.Errorf("changed %s: %+v (compared %v)", k, ck, ok)
		}
	}
	scaling := func(typ, factor string) func([]byte) []byte {
		return func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"rope_type": "default"`), []byte(`"rope_type": "`+typ+`", "factor": `+factor), 1)
		}
	}
	gguf := map[string]string{"llama.rope.scaling.type": "linear", "llama.rope.scaling.factor": "4"}
	for _, c := range []struct {
		typ, factor    string
		typeEq, factEq bool
	}{
		{"linear", "4.0", true, true},
		{"linear", "2.0", true, false},
		{"yarn", "4.0", false, true},
	} {
		keys = keysOf(scaling(c.typ, c.factor), gguf)
		if ck, ok := keys["llama.rope.scaling.type"]; !ok || ck.Equal != c.typeEq {
			t.Errorf("rope_scaling %s %s: type %+v (compared %v)", c.typ, c.factor, ck, ok)
		}
		if ck, ok := keys["llama.rope.scaling.factor"]; !ok || ck.Equal != c.factEq {
			t.Errorf("rope_scaling %s %s: factor %+v (compared %v)", c.typ, c.factor, ck, ok)
		}
	}
}

// TestWorkersDeterministic: the statistics are the same, bit for bit, whatever order the bands of a
// pair end in (the sum of squares behind RMSE was summed in that order, and its last bits varied with
// four workers in 5 of 30 runs).
func TestWorkersDeterministic(t *testing.T) {
	defer func(b int64) { bandElements = b }(bandElements)
	bandElements = 32
	bad := 0
	for _, m := range []string{"llama-q8_0", "gpt2-q8_0", "mixtral-q8_0", "qwen3-q8_0", "gemma2-q8_0", "phi3-q8_0"} {
		model := strings.Split(m, "-")[0]
		var want string
		for i := range 6 {
			g, h := open(t, filepath.Join(srcDir, m+".gguf")), open(t, filepath.Join(srcDir, model))
			w := 1
			if i > 0 {
				w = 4
			}
			r, err := Compare(t.Context(), h, g, 1, Options{ReadValues: true, Values: values.Options{Workers: w}})
			if err != nil {
				t.Fatal(err)
			}
			j, _ := json.Marshal(r)
			if i == 0 {
				want = string(j)
			} else if string(j) != want {
				bad++
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of 30 runs differ from one worker's", bad)
	}
}
