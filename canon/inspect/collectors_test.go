package inspect_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// triggerLoRA is a kohya LoRA whose words come from three places: a CivitAI sidecar (declared), its
// ssmd_keywords (declared) and its dataset folder name (guessed).
func triggerLoRA(t *testing.T, withSidecar bool) string {
	t.Helper()
	f := stfile.File{Metadata: []stfile.KV{{Key: "ss_output_name", Value: "pepper_v1"}, {Key: "ssmd_keywords", Value: "carrot"},
		{Key: "ss_tag_frequency", Value: `{"10_pepper girl": {"pepper girl": 30, "smile": 12}}`}},
		Tensors: []stfile.Tensor{{Name: "lora_unet_x.lora_down.weight", DType: "F16", Shape: []uint64{4, 8}},
			{Name: "lora_unet_x.lora_up.weight", DType: "F16", Shape: []uint64{8, 4}}}}
	dir := t.TempDir()
	path := write(t, dir, "pepper.safetensors", f.Build())
	if withSidecar {
		write(t, dir, "pepper.civitai.info", []byte(`{"trainedWords": ["pepper", "witch"]}`))
	}
	return path
}

func cardText(t *testing.T, path string, full bool) (*inspect.Card, string) {
	t.Helper()
	card, err := inspect.Inspect(t.Context(), path, inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := inspect.Write(&b, card, inspect.WriteOptions{Full: full, Flags: func(option string) string {
		return map[string]string{"Full": "--full"}[option] // as the CLI names it
	}}); err != nil {
		t.Fatal(err)
	}
	return card, b.String()
}

// TestTriggersCreditedToSource: the text credits each word to the source that gave it, declared words
// on "triggers" rows and guessed ones on a "guessed" row; JSON, Markdown and the short table never
// present a guessed word as a trigger (the short table marks guessed words when nothing is declared).
func TestTriggersCreditedToSource(t *testing.T) {
	path := triggerLoRA(t, true)
	card, text := cardText(t, path, false)
	for _, want := range []string{
		"\n  triggers    pepper, witch  (sidecar pepper.civitai.info trainedWords)\n              carrot  (metadata ssmd_keywords)\n",
		"\n  guessed     pepper girl  (folder name 10_pepper girl)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	info := cardJSON(t, card)["info"].(map[string]any)
	if fmt.Sprint(info["triggers"]) != "[pepper witch carrot]" || !strings.Contains(fmt.Sprint(info["guessed_triggers"]), "pepper girl") {
		t.Errorf("JSON triggers %v, guessed %v", info["triggers"], info["guessed_triggers"])
	}
	var md bytes.Buffer
	inspect.Write(&md, card, inspect.WriteOptions{Format: textfmt.Markdown})
	if !strings.Contains(md.String(), "| triggers | pepper, witch, carrot |\n") || !strings.Contains(md.String(), "| guessed triggers | pepper girl, smile |\n") {
		t.Errorf("markdown:\n%s", md.String())
	}

	// Without the sidecar and the keywords, the words are all guessed: the table says so.
	f := stfile.File{Metadata: []stfile.KV{{Key: "ss_tag_frequency", Value: `{"10_pepper girl": {"pepper girl": 30}}`}},
		Tensors: []stfile.Tensor{{Name: "lora_unet_x.lora_down.weight", DType: "F16", Shape: []uint64{4, 8}}}}
	guessedOnly := write(t, t.TempDir(), "g.safetensors", f.Build())
	r := inspect.Short(t.Context(), []string{path, guessedOnly}, inspect.Options{Workers: 1})
	var st, sm, sj bytes.Buffer
	inspect.WriteShort(&st, r, inspect.WriteOptions{})
	inspect.WriteShort(&sm, r, inspect.WriteOptions{Format: textfmt.Markdown})
	inspect.WriteShort(&sj, r, inspect.WriteOptions{Format: textfmt.JSON})
	for _, out := range []string{st.String(), sm.String()} {
		if !strings.Contains(out, "pepper, witch, carrot") || !strings.Contains(out, "(guessed) pepper girl") || strings.Contains(out, "carrot, pepper girl") {
			t.Errorf("short table:\n%s", out)
		}
	}
	if !strings.Contains(sj.String(), `"guessed_triggers": [`+"\n        \"pepper girl\"") || strings.Contains(sj.String(), `"triggers": [`+"\n        \"pepper girl\"") {
		t.Errorf("short JSON:\n%s", sj.String())
	}
}

// TestMetadataFolded: the card shows the keys that matter and folds the others into a count; --full
// lists every key.
func TestMetadataFolded(t *testing.T) {
	f := stfile.File{Metadata: []stfile.KV{{Key: "ss_output_name", Value: "pepper_v1"}, {Key: "ss_network_dim", Value: "16"}},
		Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{1}}}}
	for i := range 30 {
		f.Metadata = append(f.Metadata, stfile.KV{Key: fmt.Sprintf("ss_bucket_%02d", i), Value: "x"})
	}
	f.Metadata = append(f.Metadata, stfile.KV{Key: "ss_learning_rate", Value: "0.0001"})
	path := write(t, t.TempDir(), "m.safetensors", f.Build())
	_, folded := cardText(t, path, false)
	want := "  metadata    33 keys\n    ss_output_name    pepper_v1\n    ss_network_dim    16\n    ss_learning_rate  0.0001\n    … 30 more (--full lists all)\n"
	if !strings.Contains(folded, want) || strings.Contains(folded, "ss_bucket") {
		t.Errorf("folded:\n%s\nwant:\n%s", folded, want)
	}
	_, full := cardText(t, path, true)
	if strings.Count(full, "ss_bucket_") != 30 || strings.Contains(full, "more (--full") {
		t.Errorf("full:\n%s", full)
	}
}

// TestLongNamesAligned: long tensor names and metadata keys do not push the columns after them out
// of line: shortened in the middle (start and end kept), or with --full on a line of their own.
func TestLongNamesAligned(t *testing.T) {
	long := "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k.lora_down.weight"
	longKey := "a_very_long_metadata_key_from_some_trainer_nobody_knows"
	f := stfile.File{Metadata: []stfile.KV{{Key: longKey, Value: "v1"}, {Key: "ss_output_name", Value: "v2"}},
		Tensors: []stfile.Tensor{{Name: long, DType: "F16", Shape: []uint64{4, 768}}, {Name: "short.alpha", DType: "F16", Shape: []uint64{}}}}
	path := write(t, t.TempDir(), "m.safetensors", f.Build())
	for _, full := range []bool{false, true} {
		_, text := cardText(t, path, full)
		// The column where each tensor's dtype starts, and each metadata value.
		cols := map[string][]int{}
		for _, line := range strings.Split(text, "\n") {
			for _, marker := range []string{"F16 ", "v1", "v2"} {
				if i := strings.Index(line, marker); i >= 0 && strings.HasPrefix(line, "    ") {
					kind := map[string]string{"F16 ": "dtype", "v1": "value", "v2": "value"}[marker]
					cols[kind] = append(cols[kind], utf8.RuneCountInString(line[:i]))
				}
			}
		}
		if !full { // the long key folds: it is not one that matters
			cols["value"] = append(cols["value"], cols["value"]...)
		}
		for kind, cs := range cols {
			if len(cs) != 2 || cs[0] != cs[1] {
				t.Errorf("full %v: %s columns at %v:\n%s", full, kind, cs, text)
			}
		}
		if !full && (!strings.Contains(text, "lora_unet_down_blocks_0_atten…_0_attn2_to_k.lora_down.weight") || strings.Contains(text, long)) {
			t.Errorf("long name not shortened in the middle:\n%s", text)
		}
		if full && (!strings.Contains(text, "    "+long+"\n") || !strings.Contains(text, "    "+longKey+"\n")) {
			t.Errorf("full: long names not whole on a line of their own:\n%s", text)
		}
	}
}
