package lora

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"
)

// FuzzTagFrequency: tagFrequency reads every input as json.Unmarshal into a map[string]map[string]float64
// does (its fast path is checked against it), mostFrequent is the head of the full sort, and
// tagSummary (and its one-pass path, scanTopTags) gives the folders and the head of the full sort of
// the counts summed by trimmed tag.
func FuzzTagFrequency(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"10_a b": {"x": 1, "y": 20}}`, `{"d": {"t": 1.5}}`, `{"d": {"t": 01}}`,
		`{"d": {"t": 1}, "d": {"u": 2}}`, `{"d": {"t": 1, "t": 3}}`, `{"d": {"\u00e9\ud83d\ude00 \"q\" \\ \/": 2}}`,
		`{"d": {"\ud800": 1}}`, `{"d": {"t": 1, "\u0074": 3}}`, `{"d": {"b": 2, "a": 2, "c": 1}}`, `{"d": {"t": 1, "t ": 4}}`,
		`{"d": {"t": 1}, "e": {"t": 2}}`, ` { "d" : { "t" : 1 , "u" : 2 } } `, `{"d": {}}`, `{} x`, `{"d": {"t": 1}}}`, `{"d": {"t": 1}} x`, `{"d": {"t": -1}}`, `{"d": {"t": 1e2}}`, `{"d": null}`,
		"{\"d\": {\"\xff\": 1}}", `{"d": {" t ": 1, "t": 2}}`, `{"d": {"t": 123456789012345678}}`,
		// a repeated tag first out of the top five, then in it; first in it, then out (topSeen)
		`{"d": {"a": 9, "b": 8, "c": 7, "d": 6, "e": 5, "f": 1, "f": 10}}`, `{"d": {"f": 10, "a": 9, "b": 8, "c": 7, "d": 6, "e": 5, "f": 1}}`,
		`{"d": {"f": 10, "a": 9, "b": 8, "c": 7, "d": 6, "e": 5, "g": 4, "\u0066": 1}}`,
		stfile.KohyaSDXL(3).Metadata[len(stfile.KohyaSDXL(3).Metadata)-1].Value} {
		f.Add(s)
	}
	for _, kv := range stfile.KohyaSDXL(3).Metadata {
		if kv.Key == "ss_tag_frequency" {
			f.Add(kv.Value)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want map[string]map[string]float64
		wantOK := json.Unmarshal([]byte(s), &want) == nil
		got, ok := tagFrequency(s)
		if ok != wantOK || ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("tagFrequency(%q) = %v, %v; json.Unmarshal: %v, %v", s, got, ok, want, wantOK)
		}
		if fast, ok := scanTagFrequency(s); ok && !reflect.DeepEqual(fast, want) {
			t.Fatalf("scanTagFrequency(%q) = %v; json.Unmarshal: %v", s, fast, want)
		}
		counts := map[string]float64{}
		for _, tags := range want {
			for tag, n := range tags {
				counts[tag] += n
			}
		}
		all := make([]string, 0, len(counts))
		for t := range counts {
			all = append(all, t)
		}
		sort.Slice(all, func(i, j int) bool {
			if counts[all[i]] != counts[all[j]] {
				return counts[all[i]] > counts[all[j]]
			}
			return all[i] < all[j]
		})
		for _, n := range []int{1, 5} {
			if top := mostFrequent(counts, n); !reflect.DeepEqual(top, all[:min(n, len(all))]) {
				t.Fatalf("mostFrequent(%v, %d) = %q, want %q", counts, n, top, all[:min(n, len(all))])
			}
		}
		summed, dirs := map[string]float64{}, []string{}
		for d, tags := range want {
			dirs = append(dirs, d)
			for tag, n := range tags {
				summed[strings.TrimSpace(tag)] += n
			}
		}
		all = all[:0]
		for t := range summed {
			all = append(all, t)
		}
		sort.Slice(all, func(i, j int) bool {
			if summed[all[i]] != summed[all[j]] {
				return summed[all[i]] > summed[all[j]]
			}
			return all[i] < all[j]
		})
		sort.Strings(dirs)
		gotDirs, top, ok := tagSummary(s, 5)
		sort.Strings(gotDirs)
		if ok != wantOK || ok && (!reflect.DeepEqual(append([]string{}, gotDirs...), dirs) || !reflect.DeepEqual(append([]string{}, top...), all[:min(5, len(all))])) {
			t.Fatalf("tagSummary(%q) = %q, %q, %v; want %q, %q, %v", s, gotDirs, top, ok, dirs, all[:min(5, len(all))], wantOK)
		}
		if fastDirs, fastTop, ok := scanTopTags(s, 5); ok && (!wantOK || len(fastDirs) != len(dirs) || !reflect.DeepEqual(append([]string{}, fastTop...), all[:min(5, len(all))])) {
			t.Fatalf("scanTopTags(%q) = %q, %q; want %q, %q, %v", s, fastDirs, fastTop, dirs, all[:min(5, len(all))], wantOK)
		}
	})
}

// FuzzKohyaNames: the prefix checks that replaced regular expressions say what those said.
func FuzzKohyaNames(f *testing.F) {
	sdBlock := regexp.MustCompile(`^(lora|oft)_unet_(down_blocks|up_blocks|mid_block)_`)
	teLayer := regexp.MustCompile(`^(?:lora|oft)_te_text_model_encoder_layers_(\d+)_`)
	for _, s := range []string{"lora_unet_down_blocks_0_attentions_0_proj_in", "oft_unet_mid_block_x", "lora_unet_up_blocks",
		"lora_unet_input_blocks_4_1", "lora_te_text_model_encoder_layers_11_mlp_fc1", "oft_te_text_model_encoder_layers_3_",
		"lora_te_text_model_encoder_layers__x", "lora_te_text_model_encoder_layers_12", "lora_te_text_model_encoder_layers_99999999999999999999_a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := isKohyaSDBlock(name), sdBlock.MatchString(name); got != want {
			t.Fatalf("isKohyaSDBlock(%q) = %v, want %v", name, got, want)
		}
		layer, ok := kohyaTELayer(name)
		g := teLayer.FindStringSubmatch(name)
		if ok != (g != nil) || ok && layer != g[1] {
			t.Fatalf("kohyaTELayer(%q) = %q, %v; regexp: %q", name, layer, ok, g)
		}
		if ok {
			a, _ := strconv.Atoi(layer)
			b, _ := strconv.Atoi(g[1])
			if a != b {
				t.Fatal(a, b)
			}
		}
	})
}

// FuzzNameWords: blocksOf and llmLayer say what strings.Contains of each word says.
func FuzzNameWords(f *testing.F) {
	for _, s := range []string{"double_blocks.0", "x_single_transformer_blocks_1", "joint_blocks", "a_blocks_double_blocks",
		"model.layers.0.self_attn.q_proj.weight", "mlp.gate_proj", "h.0.attn.c_attn.weight", "lora_unet_input_blocks_4_1_transformer_blocks_0_attn1_to_q.alpha", "._blocks"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		flux, joint := blocksOf(name)
		c := strings.Contains
		if want := c(name, "double_blocks") || c(name, "single_blocks") || c(name, "single_transformer_blocks"); flux != want {
			t.Fatalf("blocksOf(%q) flux = %v", name, flux)
		}
		if want := c(name, "joint_blocks"); joint != want {
			t.Fatalf("blocksOf(%q) joint = %v", name, joint)
		}
		if want := c(name, "self_attn.q_proj") || c(name, "mlp.gate_proj") || c(name, "attn.c_attn"); llmLayer(name) != want {
			t.Fatalf("llmLayer(%q) = %v", name, !want)
		}
	})
}

// TestPlainRun: plainRun stops at the first quote, backslash or control character, or in the last
// seven bytes before it, never past it, whatever surrounds it (bytes above 0x7f included).
func TestPlainRun(t *testing.T) {
	alphabet := []byte{'a', ' ', '"', '\\', 0, 0x1f, 0x20, 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff}
	rng := rand.New(rand.NewSource(1))
	for range 20000 {
		b := make([]byte, rng.Intn(40))
		for k := range b {
			if rng.Intn(3) == 0 {
				b[k] = alphabet[rng.Intn(len(alphabet))]
			} else {
				b[k] = 'a' + byte(rng.Intn(26))
			}
		}
		s := string(b)
		start := rng.Intn(len(s) + 1)
		want := start
		for want < len(s) && s[want] != '"' && s[want] != '\\' && s[want] >= 0x20 {
			want++
		}
		got := plainRun(s, start)
		if got > want || got < want && got+8 <= len(s) {
			t.Fatalf("plainRun(%q, %d) = %d, want %d", s, start, got, want)
		}
	}
}

// TestSpaced: spaced says whether strings.TrimSpace changes a string, for every byte at either end.
func TestSpaced(t *testing.T) {
	for _, mid := range []string{"", "a", "x y", "\u00a0", "é"} {
		for c := range 256 {
			for _, s := range []string{string(rune(c)) + mid, mid + string(rune(c)), string([]byte{byte(c)}) + mid, mid + string([]byte{byte(c)}), "\u0085" + mid, mid + "\u3000"} {
				if got, want := spaced(s), strings.TrimSpace(s) != s; got != want {
					t.Fatalf("spaced(%q) = %v, want %v", s, got, want)
				}
			}
		}
	}
}
