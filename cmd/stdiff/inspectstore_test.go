package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectStoreExit: inspect of a blob of a Hugging Face cache exits as for any file: 0 for a
// valid one (its store said), 1 for an invalid one (the store still said), 2 for one that is not there;
// inspect --short of the cache exits 1 when its one model (listed once) is invalid.
func TestInspectStoreExit(t *testing.T) {
	fx := fixtures()
	dir := t.TempDir()
	repo := filepath.Join(dir, "models--org--name")
	good, bad := strings.Repeat("1", 64), strings.Repeat("2", 64)
	for _, d := range []string{"blobs", "refs", "snapshots/r1", "snapshots/r2"} {
		if err := os.MkdirAll(filepath.Join(repo, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range map[string][]byte{"blobs/" + good: fx["lora.safetensors"], "blobs/" + bad: fx["truncated.safetensors"], "refs/main": []byte("r2")} {
		if err := os.WriteFile(filepath.Join(repo, filepath.FromSlash(name)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, rev := range []string{"r1", "r2"} {
		if err := os.Symlink("../../blobs/"+bad, filepath.Join(repo, "snapshots", rev, "m.safetensors")); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		want int
		out  string
	}{
		{[]string{"inspect", filepath.Join(repo, "blobs", good)}, exitOK, "no snapshot links to it"},
		{[]string{"inspect", filepath.Join(repo, "blobs", bad)}, exitFound, "model org/name @ r2 (main): m.safetensors"},
		{[]string{"inspect", filepath.Join(repo, "blobs", strings.Repeat("3", 64))}, exitTrouble, ""},
		{[]string{"inspect", "--short", "--full", "--json", dir}, exitFound, "snapshots/r2/m.safetensors"},
	} {
		var out strings.Builder
		if code := run(tc.args, &out, io.Discard); code != tc.want || !strings.Contains(out.String(), tc.out) {
			t.Errorf("%q: exit %d, want %d; want %q in\n%s", tc.args, code, tc.want, tc.out, out.String())
		}
		if tc.args[1] == "--short" && (strings.Count(out.String(), `"path"`) != 1 || strings.Contains(out.String(), "snapshots/r1")) {
			t.Errorf("--short lists the model more than once, or not by refs/main's snapshot:\n%s", out.String())
		}
	}
}
