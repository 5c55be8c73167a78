package inspect_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/hash"
)

// TestSidecarOfAnotherModel: a .civitai.info holding another model's record (its file's name, size or
// hashes) is flagged sidecar-mismatch, and its name, trigger words and ids are not presented as this
// model's: by size from the header alone, by hash with Verify. A renamed download keeps its record.
func TestSidecarOfAnotherModel(t *testing.T) {
	f := stfile.File{Metadata: []stfile.KV{{Key: "ss_output_name", Value: "kaede_v2"}, {Key: "ssmd_keywords", Value: "kaede"}},
		Tensors: []stfile.Tensor{{Name: "lora_unet_x.lora_down.weight", DType: "F16", Shape: []uint64{4, 8}},
			{Name: "lora_unet_x.lora_up.weight", DType: "F16", Shape: []uint64{8, 4}}}}
	b := f.Build()
	sum := sha256.Sum256(b)
	sha := strings.ToUpper(hex.EncodeToString(sum[:]))
	record := func(name string, size int, sha string) string {
		return fmt.Sprintf(`{"id": 222, "modelId": 111, "name": "v2", "baseModel": "Pony", "trainedWords": ["aria", "silver hair"],
			"model": {"name": "Aria V2", "type": "LORA"},
			"files": [{"name": %q, "sizeKB": %g, "primary": true, "hashes": {"SHA256": %q, "AutoV2": %q}}]}`,
			name, float64(size)/1024, sha, sha[:10])
	}
	other := strings.Repeat("AB", 32)
	for _, c := range []struct {
		name, record string
		verify, ours bool
	}{
		{"another model", record("aria_v2.safetensors", 151_000_000, other), false, false},
		{"same size, not verified", record("aria_v2.safetensors", len(b), other), false, true},
		{"same size, another hash", record("aria_v2.safetensors", len(b), other), true, false},
		{"renamed download", record("kaede-v2-final.safetensors", len(b), sha), true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := write(t, dir, "kaede_v2.safetensors", b)
			write(t, dir, "kaede_v2.civitai.info", []byte(c.record))
			card, err := inspect.Inspect(t.Context(), path, inspect.Options{Verify: c.verify, FileHashes: hash.FileHashesOf})
			if err != nil {
				t.Fatal(err)
			}
			in := card.Info
			flagged := slices.ContainsFunc(card.Findings, func(f finding.Finding) bool {
				return f.Code == canon.CodeSidecarMismatch && f.Severity == finding.SevWarning && strings.Contains(f.Message, "kaede_v2.civitai.info")
			})
			if c.ours {
				if in.Name != "Aria V2" || !slices.Contains(in.Triggers, "aria") || flagged {
					t.Errorf("its own record was not used: name %q, triggers %v, findings %+v", in.Name, in.Triggers, card.Findings)
				}
				return
			}
			if in.Name != "kaede_v2" || !slices.Equal(in.Triggers, []string{"kaede"}) || in.CivitAI.ModelID != 0 || in.CivitAI.VersionID != 0 || in.BaseModel == "Pony" {
				t.Errorf("another model's record presented as this one's: name %q, triggers %v, ids %+v, base %q", in.Name, in.Triggers, in.CivitAI, in.BaseModel)
			}
			if !flagged {
				t.Errorf("no sidecar-mismatch warning naming the sidecar: %+v", card.Findings)
			}
		})
	}
}

// TestHTMLDescriptionAsText: CivitAI's HTML description reads as text in the card, its paragraphs
// kept (joined by ¶, or a row each with Full); JSON keeps it as the sidecar has it.
func TestHTMLDescriptionAsText(t *testing.T) {
	f := stfile.File{Metadata: []stfile.KV{{Key: "ss_output_name", Value: "aria"}},
		Tensors: []stfile.Tensor{{Name: "lora_unet_x.lora_down.weight", DType: "F16", Shape: []uint64{4, 8}},
			{Name: "lora_unet_x.lora_up.weight", DType: "F16", Shape: []uint64{8, 4}}}}
	dir := t.TempDir()
	path := write(t, dir, "aria.safetensors", f.Build())
	const desc = `<p>Aria is a <strong>character</strong> LoRA.</p><p>Use weight 0.8 &amp; clip skip 2.</p>`
	write(t, dir, "aria.civitai.info", []byte(fmt.Sprintf(`{"description": %q}`, desc)))
	card, text := cardText(t, path, false)
	if want := "\n  about       Aria is a character LoRA. ¶ Use weight 0.8 & clip skip 2.\n"; !strings.Contains(text, want) {
		t.Errorf("text lacks %q:\n%s", want, text)
	}
	if _, full := cardText(t, path, true); !strings.Contains(full, "\n  about       Aria is a character LoRA.\n              Use weight 0.8 & clip skip 2.\n") {
		t.Errorf("full text has not a row per paragraph:\n%s", full)
	}
	if got := cardJSON(t, card)["info"].(map[string]any)["description"]; got != desc {
		t.Errorf("JSON description %q, want the sidecar's %q", got, desc)
	}
}
