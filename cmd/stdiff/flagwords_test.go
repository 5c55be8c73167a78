package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"
)

// TestHashAllOfASetNamesTheFlag: `stdiff hash --all` of a shard set still says, in its error and its
// JSON, that --all asks for hashes of files, and to drop it; the library says so without the flag.
func TestHashAllOfASetNamesTheFlag(t *testing.T) {
	dir := t.TempDir()
	for i, name := range []string{"a", "b"} {
		shard := stfile.File{Tensors: []stfile.Tensor{{Name: name, DType: "F16", Shape: []uint64{2}}}}
		p := filepath.Join(dir, []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}[i])
		if err := os.WriteFile(p, shard.Build(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	index := filepath.Join(dir, "model.safetensors.index.json")
	os.WriteFile(index, []byte(`{"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}`), 0o644)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"hash", "--all", index}, &stdout, &stderr); code != exitTrouble {
		t.Errorf("exit %d", code)
	}
	want := "stdiff: " + index + ": ecosystem hashes (--all) are hashes of files, and this is a set of shards\nhint: hash the shard files one by one, or drop --all\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	stdout.Reset()
	stderr.Reset()
	run([]string{"--json", "hash", "--all", index}, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "ecosystem hashes (--all) are hashes of files, and this is a set of shards") {
		t.Errorf("JSON %s", stdout.String())
	}
}
