package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputFile: every command that writes a report takes -o FILE (before: only inspect and
// snapshot; kong refused -o, exit 2): the report goes to FILE whole, nothing to standard output, the
// exit status is the command's; a FILE that cannot be written exits 2 and leaves nothing behind, not
// even a temporary file.
func TestOutputFile(t *testing.T) {
	dir := t.TempDir()
	for name, b := range fixtures() {
		if name == "base.safetensors" || name == "retrained.safetensors" || name == "reordered.safetensors" {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	base, retrained := filepath.Join(dir, "base.safetensors"), filepath.Join(dir, "retrained.safetensors")
	out := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string // in the file
	}{
		{[]string{"diff", base, retrained}, exitFound, "~ "},
		{[]string{"diff", "--format", "html", base, retrained}, exitFound, "<!DOCTYPE html>"},
		{[]string{"check", "--json", base}, exitOK, `"valid": true`},
		{[]string{"hash", base}, exitOK, "st1:"},
		{[]string{"dupes", dir}, exitFound, "content"},
	} {
		file := filepath.Join(out, tc.args[0]+".out")
		var stdout, stderr bytes.Buffer
		code := run(append(append([]string{}, tc.args...), "-o", file), &stdout, &stderr)
		b, err := os.ReadFile(file)
		if code != tc.code || err != nil || !strings.Contains(string(b), tc.want) || stdout.Len() > 0 {
			t.Errorf("%v -o: exit %d (want %d), file %q (%v), stdout %q, stderr %q", tc.args, code, tc.code, b, err, stdout.String(), stderr.String())
		}
		var stderr2 bytes.Buffer
		bad := filepath.Join(out, "missing", "r.out")
		if code := run(append(append([]string{}, tc.args...), "-o", bad), &stdout, &stderr2); code != exitTrouble || !strings.Contains(stderr2.String(), "does not exist") {
			t.Errorf("%v -o %s: exit %d, stderr %q; want 2 and why", tc.args, bad, code, stderr2.String())
		}
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("a temporary file is left behind: %s", e.Name())
		}
	}
}
