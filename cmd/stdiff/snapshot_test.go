package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/snapshot"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/diff"
	"github.com/stdiff/stdiff/hash"
)

// TestSnapshotIsTheLibrarys: `stdiff snapshot` prints (and with -o writes) byte for byte what
// hash.Snapshot and snapshot.Write make, and `stdiff diff --json` of a snapshot prints what
// diff.Models makes of it.
func TestSnapshotIsTheLibrarys(t *testing.T) {
	td := func(name string) string { return filepath.Join("..", "..", "testdata", name) }
	dir := t.TempDir()
	for _, model := range []string{"weights.safetensors", "base.safetensors", "llama.gguf", "nul-padded.safetensors"} {
		s, _, err := hash.Snapshot(t.Context(), td(model), "", hash.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var want, stdout, stderr bytes.Buffer
		if err := snapshot.Write(&want, s); err != nil {
			t.Fatal(err)
		}
		if code := run([]string{"snapshot", td(model)}, &stdout, &stderr); code != exitOK || !bytes.Equal(stdout.Bytes(), want.Bytes()) {
			t.Fatalf("stdiff snapshot %s: exit %d, stderr %q, stdout\n%s\nwant\n%s", model, code, stderr.String(), stdout.Bytes(), want.Bytes())
		}
		out := filepath.Join(dir, model+".snap")
		s, _, _ = hash.Snapshot(t.Context(), td(model), out, hash.Options{})
		want.Reset()
		snapshot.Write(&want, s)
		if code := run([]string{"snapshot", td(model), "-o", out}, io.Discard, io.Discard); code != exitOK {
			t.Fatalf("stdiff snapshot -o: exit %d", code)
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, want.Bytes()) || !strings.Contains(string(got), `"model":"../`) {
			t.Fatalf("-o wrote\n%s\nwant\n%s", got, want.Bytes())
		}
	}
	for _, c := range [][2]string{
		{filepath.Join(dir, "weights.safetensors.snap"), td("weights-finetuned.safetensors")},
		{td("base.safetensors"), filepath.Join(dir, "base.safetensors.snap")},
		{filepath.Join(dir, "weights.safetensors.snap"), filepath.Join(dir, "weights.safetensors.snap")},
	} {
		opened := make([]*source.Opened, 2)
		for i, spec := range c {
			o, err := source.Open(t.Context(), spec, source.Options{Snapshots: true})
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			opened[i] = o
		}
		r, err := diff.Models(t.Context(), opened[0], opened[1], diff.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var want, stdout, stderr bytes.Buffer
		diff.Write(&want, r, diff.WriteOptions{Format: textfmt.JSON})
		if code := run([]string{"diff", "--json", c[0], c[1]}, &stdout, &stderr); code != int(r.Outcome()) || !bytes.Equal(stdout.Bytes(), want.Bytes()) {
			t.Errorf("stdiff diff --json %s %s: exit %d, stderr %q, stdout\n%s\nwant\n%s", c[0], c[1], code, stderr.String(), stdout.Bytes(), want.Bytes())
		}
	}
}
