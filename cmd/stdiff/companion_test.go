package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// realLlama is a folder transformers 5.17 wrote (save_pretrained of a small Llama: 5 shards, index,
// config.json, generation_config.json), read in place.
var realLlama = filepath.Join("..", "..", "..", "shared", "corpus", "real", "writers-2026-11", "transformers-5.17", "hf-llama-sharded")

// releaseFolders makes two folder models whose tensors are the same files (links to them) and whose
// config.json differ in rope_theta (10000 → 500000) and max_position_embeddings, as issue 33's release
// engineer had them: from the transformers-written folder when it is at hand, else from a generated
// safetensors file and a config.json written here.
func releaseFolders(t *testing.T) (a, c string) {
	t.Helper()
	root := t.TempDir()
	a, c = filepath.Join(root, "llama-a"), filepath.Join(root, "llama-c")
	src, config := realLlama, []byte(`{"architectures":["LlamaForCausalLM"],"max_position_embeddings":2048,"rope_parameters":{"rope_theta":10000.0,"rope_type":"default"}}`)
	if _, err := os.Stat(src); err != nil {
		t.Logf("%s is not there: a generated folder stands in for it", src)
		src = ""
	}
	for _, dir := range []string{a, c} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if src == "" {
			abs, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "base.safetensors"))
			if err := os.Symlink(abs, filepath.Join(dir, "model.safetensors")); err != nil {
				t.Fatal(err)
			}
			continue
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			abs, _ := filepath.Abs(filepath.Join(src, e.Name()))
			if e.Name() == "config.json" {
				if config, err = os.ReadFile(abs); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.Symlink(abs, filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	var v map[string]any
	if err := json.Unmarshal(config, &v); err != nil {
		t.Fatal(err)
	}
	write := func(dir string, theta, positions float64) {
		v["rope_parameters"].(map[string]any)["rope_theta"] = theta
		v["max_position_embeddings"] = positions
		b, _ := json.MarshalIndent(v, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(a, 10000, 2048)
	write(c, 500000, 8192)
	return a, c
}

// TestFolderConfigChangeIsADifference: two save_pretrained folders whose tensors are the same and whose
// config.json differ in rope_theta were "identical", exit 0 (issue 33). Now diff exits 1 naming the
// keys, in text and in JSON (category companion); --fail-on=-companion leaves them out of the gate.
func TestFolderConfigChangeIsADifference(t *testing.T) {
	a, c := releaseFolders(t)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"diff", a, c}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s\n%s", code, stderr.String(), stdout.String())
	}
	for _, want := range []string{"config.json", "rope_parameters.rope_theta", "10000 → 500000", "max_position_embeddings", "2048 → 8192", "files: 1 changed"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("text does not say %q:\n%s", want, stdout.String())
		}
	}
	stdout.Reset()
	if code := run([]string{"diff", "--json", a, c}, &stdout, &stderr); code != 1 {
		t.Fatalf("--json: exit %d, want 1", code)
	}
	var r struct {
		Identical  bool     `json:"identical"`
		Categories []string `json:"categories"`
		Companions struct {
			Compared bool `json:"compared"`
			Changed  []struct {
				Path string `json:"path"`
				Keys []struct{ Path, Change, Old, New string }
			} `json:"changed"`
		} `json:"companions"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.Identical || !slices.Equal(r.Categories, []string{"companion"}) || !r.Companions.Compared || len(r.Companions.Changed) != 1 {
		t.Fatalf("report %+v", r)
	}
	keys := r.Companions.Changed[0].Keys
	if len(keys) != 2 || keys[0].Path != "max_position_embeddings" || keys[1].Path != "rope_parameters.rope_theta" || keys[1].Old != "10000" || keys[1].New != "500000" {
		t.Errorf("keys %+v", keys)
	}
	if code := run([]string{"diff", "--fail-on=-companion", a, c}, &bytes.Buffer{}, &stderr); code != 0 {
		t.Errorf("--fail-on=-companion: exit %d, want 0", code)
	}
	if code := run([]string{"diff", a, a}, &bytes.Buffer{}, &stderr); code != 0 {
		t.Errorf("a folder against itself: exit %d, want 0", code)
	}
}

// TestFolderSnapshotAndManifestCoverConfig: a snapshot of a folder model records its config.json, so
// `diff SNAP MODEL` names the changed key and `hash --check SNAP` fails naming the file; a manifest
// `stdiff hash FOLDER` writes has a cf1 line that `hash --check` fails on (change.companion).
func TestFolderSnapshotAndManifestCoverConfig(t *testing.T) {
	a, c := releaseFolders(t)
	snap := filepath.Join(t.TempDir(), "a.snap.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"snapshot", "-o", snap, a}, &stdout, &stderr); code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, stderr.String())
	}
	stdout.Reset()
	if code := run([]string{"diff", snap, c}, &stdout, &stderr); code != 1 || !strings.Contains(stdout.String(), "rope_parameters.rope_theta") {
		t.Errorf("diff SNAP MODEL: exit %d, want 1 naming rope_theta:\n%s", code, stdout.String())
	}
	if code := run([]string{"diff", snap, a}, &bytes.Buffer{}, &stderr); code != 0 {
		t.Errorf("diff SNAP its model: exit %d, want 0", code)
	}
	stdout.Reset()
	if code := run([]string{"hash", a}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "cf1:") {
		t.Fatalf("hash: exit %d, no cf1 line:\n%s", code, stdout.String())
	}
	manifest := filepath.Join(t.TempDir(), "MANIFEST")
	if err := os.WriteFile(manifest, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"hash", "--check", manifest}, &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("hash --check of the folder as it is: exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(c, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := run([]string{"hash", "--check", "--json", manifest}, &stdout, &stderr); code != 1 || !strings.Contains(stdout.String(), `"change.companion"`) {
		t.Errorf("hash --check after config.json changed: exit %d, want 1 with change.companion:\n%s", code, stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"hash", "--check", snap}, &stdout, &stderr); code != 1 || !strings.Contains(stdout.String(), "config.json") {
		t.Errorf("hash --check SNAP after config.json changed: exit %d, want 1 naming config.json:\n%s", code, stdout.String())
	}
}
