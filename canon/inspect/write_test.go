package inspect

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stdiff/stdiff/canon"
)

// TestShortenApart: PEFT's long names differ in their layer index, in the middle; shortened, every row
// still shows its own index and no two rows look alike.
func TestShortenApart(t *testing.T) {
	var names []string
	for layer := range 12 {
		for _, m := range []string{"q_proj", "v_proj"} {
			for _, ab := range []string{"lora_A", "lora_B"} {
				names = append(names, fmt.Sprintf("base_model.model.model.layers.%d.self_attn.%s.%s.weight", layer, m, ab))
			}
		}
	}
	const width = 40
	got := shortenApart(names, width)
	for i, s := range got {
		if n := utf8.RuneCountInString(s); n > width {
			t.Errorf("%q: %d runes, want at most %d", s, n, width)
		}
		layer := strings.Split(names[i], ".")[4]
		if !strings.Contains(s, "."+layer+".self_attn") {
			t.Errorf("%q (of %q) does not show layer %s", s, names[i], layer)
		}
	}
	assertApart(t, names, got)
}

// TestShortenApartRandom: for any set of names, shortened names that were different stay different,
// and a name is shortened only by cutting runs of it out, never changed.
func TestShortenApartRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	parts := []string{"a", "b", "layers", "0", "1", "12", "block", "lora_up", "lora_down", "weight", "_", ".", "é"}
	for range 300 {
		names := make([]string, 1+rng.IntN(20))
		for i := range names {
			var b strings.Builder
			for range 3 + rng.IntN(25) {
				b.WriteString(parts[rng.IntN(len(parts))])
			}
			names[i] = b.String()
		}
		width := 8 + rng.IntN(40)
		got := shortenApart(names, width)
		assertApart(t, names, got)
		for i, s := range got {
			if s == names[i] {
				continue
			}
			head, tail, ok := strings.Cut(s, "…")
			if !ok || !strings.HasPrefix(names[i], head) || !strings.HasSuffix(names[i], tail) || utf8.RuneCountInString(s) != width {
				t.Fatalf("%q shortened to %q (width %d)", names[i], s, width)
			}
		}
	}
}

func assertApart(t *testing.T, names, got []string) {
	t.Helper()
	stands := map[string]string{}
	for i, s := range got {
		if o, ok := stands[s]; ok && o != names[i] {
			t.Fatalf("%q and %q both shown as %q", o, names[i], s)
		}
		stands[s] = names[i]
	}
}

// TestVerifiedHashesRow: the hashes row says what --verify found: matched, not matched, or not verified.
func TestVerifiedHashesRow(t *testing.T) {
	for _, c := range []struct {
		verified bool
		counts   map[string]int
		want     string
	}{
		{false, nil, "(not verified: --verify)"},
		{true, map[string]int{canon.CodeHashMatch: 1}, "(verified: matches the file)"},
		{true, map[string]int{canon.CodeHashMatch: 1, canon.CodeHashMismatch: 1}, "(verified: does not match the file, see findings)"},
	} {
		card := &Card{Path: "m.safetensors", Valid: true, HeaderParsed: true, Verified: c.verified, FindingCounts: c.counts}
		card.Info.EmbeddedHashes = map[string]string{"sshs_model_hash": "abc"}
		var b strings.Builder
		flags := func(option string) string { return map[string]string{"Verify": "--verify"}[option] } // the CLI's
		if err := Write(&b, card, WriteOptions{Flags: flags}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "  hashes      sshs_model_hash abc  "+c.want+"\n") {
			t.Errorf("verified %v, %v: want %q in\n%s", c.verified, c.counts, c.want, b.String())
		}
		b.Reset() // a Go program's: no flag named
		if err := Write(&b, card, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if want := strings.Replace(c.want, ": --verify", "", 1); !strings.Contains(b.String(), "  hashes      sshs_model_hash abc  "+want+"\n") {
			t.Errorf("verified %v, %v, without flags: want %q in\n%s", c.verified, c.counts, want, b.String())
		}
	}
}

// TestShortWidth: the short table's lines fit the width asked for, trigger words cut from the end and
// counted ("+2 more"), then the file name shortened in the middle; with Full nothing is cut.
func TestShortWidth(t *testing.T) {
	r := &ShortReport{Files: []Row{
		{Path: "loras/pepper-the-witch-v2.safetensors", Name: "Pepper", Kind: "lora", Family: "sdxl", BaseModel: "sdxl_base_v1-0", Rank: 16,
			HeaderParsed: true, Valid: true, Triggers: []string{"pepper", "witch hat", "carrot", "broom"}},
		{Path: strings.Repeat("deep/", 30) + "m.safetensors", Name: strings.Repeat("n", 50), Kind: "lora", HeaderParsed: true, Valid: true},
	}}
	for _, width := range []int{90, 120, 160} {
		var b strings.Builder
		if err := WriteShort(&b, r, WriteOptions{Width: width}); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			if n := utf8.RuneCountInString(line); n > width {
				t.Errorf("width %d: a line of %d: %q", width, n, line)
			}
		}
		if !strings.Contains(b.String(), "SDXL") || !strings.Contains(b.String(), "m.safetensors") {
			t.Errorf("width %d: the base model or the file's end is lost:\n%s", width, b.String())
		}
	}
	var b strings.Builder
	WriteShort(&b, r, WriteOptions{Width: 130})
	if !strings.Contains(b.String(), "pepper +3 more · loras/pepper-the-witch-v2.safetensors") {
		t.Errorf("width 130: words not cut from the end:\n%s", b.String())
	}
	b.Reset()
	WriteShort(&b, r, WriteOptions{Width: 70, Full: true})
	if !strings.Contains(b.String(), "pepper, witch hat, carrot, broom · loras/pepper-the-witch-v2.safetensors") || !strings.Contains(b.String(), strings.Repeat("n", 50)) {
		t.Errorf("full: something cut:\n%s", b.String())
	}
}
