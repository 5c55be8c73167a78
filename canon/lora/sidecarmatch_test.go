package lora

import (
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
)

// TestMatchSidecars: a CivitAI record whose files are all another file's (by size, and with hashes by
// hash) is dropped with a sidecar-mismatch warning; a renamed download is still its own file's.
func TestMatchSidecars(t *testing.T) {
	const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	kaede := ModelFile{Name: "kaede_v2.safetensors", Size: 37_000_000}
	verified := kaede
	verified.Hashes = map[string]string{"SHA256": sha, "AutoV2": sha[:10], "AutoV1": "", "CRC32": "85114A0D"}
	// kb is a size in CivitAI's sizeKB: bytes/1024, a float.
	kb := func(n int64) float64 { return float64(n) / 1024 }
	file := func(name string, sizeKB float64, hashes map[string]any) map[string]any {
		e := map[string]any{"name": name, "sizeKB": sizeKB}
		if hashes != nil {
			e["hashes"] = hashes
		}
		return e
	}
	cases := []struct {
		name  string
		file  ModelFile
		files []any // nil: no files key
		drop  bool
		says  []string
	}{
		{"same file", kaede, []any{file("kaede_v2.safetensors", kb(37_000_000), nil)}, false, nil},
		{"renamed download", kaede, []any{file("kaede-2.0-final.safetensors", kb(37_000_000), nil)}, false, nil},
		{"size rounded to a KiB", kaede, []any{file("kaede_v2.safetensors", 36133, nil)}, false, nil},
		{"another model", kaede, []any{file("aria_v2.safetensors", kb(151_000_000), nil)}, true,
			[]string{"sidecar kaede_v2.civitai.info", "its file is aria_v2.safetensors, not kaede_v2.safetensors", "size 144.0 MiB, not 35.3 MiB"}},
		{"same name, another size", kaede, []any{file("kaede_v2.safetensors", kb(37_002_048), nil)}, true, []string{"size "}},
		{"one of its files", kaede, []any{file("kaede_training.zip", 12, nil), file("x.safetensors", kb(37_000_000), nil)}, false, nil},
		{"primary described", kaede, []any{file("kaede_training.zip", 12, nil), map[string]any{"name": "aria.safetensors", "sizeKB": 1.0, "primary": true}}, true,
			[]string{"its file is aria.safetensors"}},
		{"no files", kaede, nil, false, nil},
		{"files say nothing", kaede, []any{map[string]any{"name": "aria.safetensors"}, "junk"}, false, nil},
		{"hash not read", kaede, []any{file("kaede_v2.safetensors", kb(37_000_000), map[string]any{"SHA256": strings.ToUpper(sha[1:] + "0")})}, false, nil},
		{"hashes agree", verified, []any{file("k.safetensors", kb(37_000_000), map[string]any{"SHA256": strings.ToUpper(sha), "AutoV2": strings.ToUpper(sha[:10]),
			"AutoV1": "12345678", "CRC32": "85114a0d"})}, false, nil},
		{"same size, another hash", verified, []any{file("aria_v2.safetensors", kb(37_000_000), map[string]any{"AutoV2": "ABCDEF0123"})}, true,
			[]string{"AutoV2 abcdef0123, not " + sha[:10]}},
		{"hashes only", verified, []any{map[string]any{"hashes": map[string]any{"SHA256": strings.Repeat("A", 64)}}}, true, []string{"SHA256 aaaaaaaaaaaa…, not " + sha[:12] + "…"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := map[string]any{"id": 1.0, "trainedWords": []any{"aria"}}
			if c.files != nil {
				data["files"] = c.files
			}
			in := []Sidecar{{Kind: SidecarA1111, Path: "/m/kaede_v2.json", Data: map[string]any{"x": "y"}},
				{Kind: SidecarCivitAI, Path: "/m/kaede_v2.civitai.info", Data: data}}
			kept, fs := MatchSidecars(in, c.file)
			if c.drop {
				if len(kept) != 1 || kept[0].Kind != SidecarA1111 || len(fs) != 1 || fs[0].Code != canon.CodeSidecarMismatch || fs[0].Severity != finding.SevWarning {
					t.Fatalf("kept %v, findings %+v; want the record dropped with one sidecar-mismatch warning", kept, fs)
				}
				for _, s := range c.says {
					if !strings.Contains(fs[0].Message, s) {
						t.Errorf("message %q lacks %q", fs[0].Message, s)
					}
				}
			} else if len(kept) != 2 || len(fs) != 0 {
				t.Errorf("kept %v, findings %+v; want both kept, nothing found", kept, fs)
			}
		})
	}
}
