package hash

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"

	"github.com/zeebo/blake3"
)

// The hashes of "x" (in a file named a\b by the cases below), as sha256sum and b3sum print them.
const (
	sha256OfX = "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
	blake3OfX = "3ae7d805f6789a6402acb70ad4096a85a56bf6804eaf25c0493ac697548d30b5"
)

// TestParseManifestForms: the lines sha256sum, sha256sum -b, sha256sum --tag (BSD) and b3sum write
// are read, escaped names included (recorded from coreutils 9.1 and b3sum 1.2), as stdiff's own are.
func TestParseManifestForms(t *testing.T) {
	for _, c := range []struct {
		name, line, bare string
		want             ManifestEntry
	}{
		{"stdiff", "st1:ABC  m.safetensors", "", ManifestEntry{Kind: "st1", Value: "abc", Path: "m.safetensors"}},
		{"coreutils text", sha256OfX + "  sp ace", "", ManifestEntry{Kind: "sha256", Value: sha256OfX, Path: "sp ace"}},
		{"coreutils binary", sha256OfX + " *sp ace", "", ManifestEntry{Kind: "sha256", Value: sha256OfX, Path: "sp ace"}},
		{"a name starting with a space", sha256OfX + "   lead", "", ManifestEntry{Kind: "sha256", Value: sha256OfX, Path: " lead"}},
		{"upper-case hex", strings.ToUpper(sha256OfX) + "  a", "", ManifestEntry{Kind: "sha256", Value: sha256OfX, Path: "a"}},
		{"coreutils escaped backslash", `\` + sha256OfX + `  a\\b`, "", ManifestEntry{Kind: "sha256", Value: sha256OfX, Path: `a\b`}},
		{"coreutils escaped newline", `\` + sha256OfX + `  new\nline`, "", ManifestEntry{Kind: "sha256", Value: sha256OfX, Path: "new\nline"}},
		{"coreutils escaped carriage return", `\` + sha256OfX + `  cr\rx`, "", ManifestEntry{Kind: "sha256", Value: sha256OfX, Path: "cr\rx"}},
		{"b3sum", `\` + blake3OfX + `  a\\b`, BareBLAKE3, ManifestEntry{Kind: "blake3", Value: blake3OfX, Path: `a\b`}},
		{"BSD", "SHA256 (sp ace) = " + sha256OfX, "", ManifestEntry{Kind: "sha256", Value: sha256OfX, Path: "sp ace"}},
		{"BSD, a name with ) = in it", "SHA256 ((paren) = x) = " + sha256OfX, "", ManifestEntry{Kind: "sha256", Value: sha256OfX, Path: "(paren) = x"}},
		{"BSD escaped", `\SHA256 (new\nline) = ` + sha256OfX, "", ManifestEntry{Kind: "sha256", Value: sha256OfX, Path: "new\nline"}},
		{"BSD BLAKE3, whatever the bare kind", "BLAKE3 (a) = " + blake3OfX, BareSHA256, ManifestEntry{Kind: "blake3", Value: blake3OfX, Path: "a"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseManifestKind(strings.NewReader("# a comment\n\n"+c.line+"\r\n"), c.bare)
			if err != nil {
				t.Fatal(err)
			}
			c.want.Line = 3
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestParseManifestRefuses: a line of a hash stdiff does not compute says which, naming the line; so
// does a line of no known form, and a bare kind that is not one.
func TestParseManifestRefuses(t *testing.T) {
	for line, want := range map[string]string{
		"d41d8cd98f00b204e9800998ecf8427e  a":        "line 1: a hash of 32 hex digits",
		"MD5 (a) = d41d8cd98f00b204e9800998ecf8427e": "line 1: a MD5 hash: stdiff checks SHA256 and BLAKE3 lines",
		"SHA256 (a) = 00":                            "line 1: expected `SHA256 (<path>) = <64 hex digits>`",
		"SHA256 (a) " + sha256OfX:                    "line 1: expected `<kind>:<hash>  <path>`",
		sha256OfX + " a":                             "line 1: expected `<kind>:<hash>  <path>`",
		sha256OfX + "  ":                             "line 1: expected",
		"md5:00  a":                                  "line 1: expected",
		`\` + sha256OfX + `  a\tb`:                   "line 1: bad escape",
	} {
		_, err := ParseManifest(strings.NewReader(line + "\n"))
		var me *ManifestError
		if !errors.As(err, &me) || !strings.HasPrefix(err.Error(), want) || me.Hint == "" {
			t.Errorf("%q: %v, want %q… with a hint", line, err, want)
		}
	}
	if _, err := ParseManifestKind(strings.NewReader(sha256OfX+"  a\n"), "md5"); err == nil {
		t.Error("bare kind md5: no error")
	}
}

// TestVerifyOtherTools: manifests written by sha256sum, sha256sum --tag and b3sum verify, names with
// backslashes and newlines included; an edited file fails with what changed; a shard named in such a
// manifest is checked as the one file it is (its set is not read), and so is an index.
func TestVerifyOtherTools(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	f := sample()
	files := map[string][]byte{"a\\b.safetensors": f.Build(), "new\nline.safetensors": f.Build(),
		"model-00001-of-00002.safetensors": f.Build(), "model-00002-of-00002.safetensors": edited(f).Build(),
		"model.safetensors.index.json": []byte(`{"weight_map":{"x":"model-00002-of-00002.safetensors"}}`)}
	var sums, tags, b3 strings.Builder
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		s, b3s := sha256.Sum256(b), blake3.Sum256(b)
		prefix, escaped := "", name
		if strings.ContainsAny(name, "\\\n") {
			prefix, escaped = `\`, strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(name)
		}
		sums.WriteString(prefix + hex.EncodeToString(s[:]) + "  " + escaped + "\n")
		tags.WriteString(prefix + "SHA256 (" + escaped + ") = " + hex.EncodeToString(s[:]) + "\n")
		b3.WriteString(prefix + hex.EncodeToString(b3s[:]) + " *" + escaped + "\n")
	}
	for _, c := range []struct{ name, manifest, bare string }{
		{"sha256sum", sums.String(), ""}, {"sha256sum --tag", tags.String(), ""}, {"b3sum", b3.String(), BareBLAKE3},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Verify(t.Context(), strings.NewReader(c.manifest), Options{BareKind: c.bare})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range r.Files {
				if !v.OK || v.Err != nil {
					t.Errorf("%q: ok %v, err %v, reason %q", v.Path, v.OK, v.Err, v.Reason)
				}
			}
			if len(r.Files) != len(files) || r.Summary() != "" {
				t.Errorf("%d files checked, summary %q", len(r.Files), r.Summary())
			}
		})
	}
	if r, err := Verify(t.Context(), strings.NewReader(b3.String()), Options{}); err != nil || r.Failed() != len(files) {
		t.Errorf("b3sum's lines taken for SHA-256 should all fail: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a\\b.safetensors"), edited(f).Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "model.safetensors.index.json")); err != nil {
		t.Fatal(err)
	}
	r, err := Verify(t.Context(), strings.NewReader(sums.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range r.Files {
		switch v.Path {
		case "a\\b.safetensors":
			if v.OK || v.Code != ChangeFile || v.Reason != "file bytes changed (sha256 differ)" {
				t.Errorf("edited file: %+v", v)
			}
		case "model.safetensors.index.json":
			if v.Err == nil {
				t.Errorf("removed index: %+v", v)
			}
		}
	}
	if got, want := r.Summary(), "1 of 5 files did not match, 1 could not be read"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

// edited is f with other metadata.
func edited(f stfile.File) stfile.File {
	f.Metadata = []stfile.KV{{Key: "edited", Value: "yes"}}
	return f
}

// TestVerifyWithTheTools: where sha256sum and b3sum are installed, their own output verifies.
func TestVerifyWithTheTools(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, name := range []string{"plain.safetensors", "back\\slash.safetensors", "new\nline.safetensors"} {
		if err := os.WriteFile(name, sample().Build(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"plain.safetensors", "back\\slash.safetensors", "new\nline.safetensors"}
	for _, tool := range []struct {
		bin  string
		args []string
		bare string
	}{{"sha256sum", nil, ""}, {"sha256sum", []string{"-b"}, ""}, {"sha256sum", []string{"--tag"}, ""}, {"b3sum", nil, BareBLAKE3}} {
		if _, err := exec.LookPath(tool.bin); err != nil {
			t.Logf("%s is not installed: skipped", tool.bin)
			continue
		}
		out, err := exec.Command(tool.bin, append(tool.args, names...)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		r, err := Verify(t.Context(), strings.NewReader(string(out)), Options{BareKind: tool.bare})
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", tool.bin, tool.args, err, out)
		}
		for _, v := range r.Files {
			if !v.OK {
				t.Errorf("%s %v: %q: %+v", tool.bin, tool.args, v.Path, v)
			}
		}
	}
}

// BenchmarkParseManifest: a sha256sum manifest of 100,000 files (a large collection's), bare lines
// with every tenth name escaped.
func BenchmarkParseManifest(b *testing.B) {
	var m strings.Builder
	for i := range 100_000 {
		if i%10 == 0 {
			m.WriteString(`\` + sha256OfX + `  dir\\model-` + strings.Repeat("x", i%7) + ".safetensors\n")
		} else {
			m.WriteString(sha256OfX + "  dir/model-" + strings.Repeat("x", i%7) + ".safetensors\n")
		}
	}
	text := m.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := ParseManifest(strings.NewReader(text)); err != nil {
			b.Fatal(err)
		}
	}
}
