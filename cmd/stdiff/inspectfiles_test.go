package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestInspectListsRealCompanions: inspect of folders the real writers wrote (transformers 5.17's
// save_pretrained, PEFT 0.21's adapter) lists the files beside the tensors with what they say; before
// issue 33's item 1 the card had no such line.
func TestInspectListsRealCompanions(t *testing.T) {
	peft := filepath.Join(filepath.Dir(realLlama), "..", "peft-0.21", "peft-dora")
	for _, c := range []struct {
		dir   string
		lines []string
		json  map[string]string
	}{
		{realLlama, []string{`(?m)^  files       2 files beside the tensors$`, `(?m)^    config.json  +716 B  llama · LlamaForCausalLM$`, `(?m)^    generation_config.json  +195 B$`},
			map[string]string{"config.json": "llama · LlamaForCausalLM", "generation_config.json": ""}},
		{peft, []string{`(?m)^  files       1 file beside the tensors$`, `(?m)^    adapter_config.json  +[0-9.]+ KiB  LORA · r 4`},
			map[string]string{"adapter_config.json": ""}},
	} {
		if _, err := os.Stat(c.dir); err != nil {
			t.Skipf("%s is not there: the real corpus is needed", c.dir)
		}
		var stdout, stderr bytes.Buffer
		if code := run([]string{"inspect", c.dir}, &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d, want 0; %s", c.dir, code, stderr.String())
		}
		for _, re := range c.lines {
			if !regexp.MustCompile(re).Match(stdout.Bytes()) {
				t.Errorf("%s: no line %s in\n%s", c.dir, re, stdout.String())
			}
		}
		stdout.Reset()
		if code := run([]string{"inspect", "--format", "json", c.dir}, &stdout, &stderr); code != 0 {
			t.Fatalf("%s --format json: exit %d", c.dir, code)
		}
		var card struct {
			Companions []struct {
				Path, Kind, Digest, Summary string
				Size                        int64
			} `json:"companions"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &card); err != nil {
			t.Fatal(err)
		}
		if len(card.Companions) != len(c.json) {
			t.Fatalf("%s: companions %+v", c.dir, card.Companions)
		}
		for _, f := range card.Companions {
			want, ok := c.json[f.Path]
			if !ok || f.Kind != "json" || f.Size <= 0 || len(f.Digest) != 67 || want != "" && f.Summary != want {
				t.Errorf("%s: %+v", c.dir, f)
			}
		}
	}
}
