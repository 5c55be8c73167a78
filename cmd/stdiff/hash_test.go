package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/hash"
)

// TestHashIsTheLibrary: what `stdiff hash` prints, in each format, is byte for byte what hash.Run and
// the format's writer give, and `stdiff hash --check` likewise hash.VerifyManifest and its writers;
// the exit status is the report's outcome.
func TestHashIsTheLibrary(t *testing.T) {
	td := func(name string) string { return filepath.Join("..", "..", "testdata", name) }
	files := []string{td("base.safetensors"), td("lfs-pointer.safetensors"), td("truncated.safetensors"), td("lora.safetensors"), td("gone.safetensors")}
	var manifest bytes.Buffer
	if code := run(append([]string{"hash", "--content", "--all"}, files[:3]...), &manifest, new(bytes.Buffer)); code != exitFound {
		t.Fatalf("manifest: exit %d", code)
	}
	manifestPath := filepath.Join(t.TempDir(), "MANIFEST")
	if err := os.WriteFile(manifestPath, append(manifest.Bytes(), "st1:00  "+files[3]+"\nst1:00  "+files[4]+"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := hash.Options{Content: true, All: true}
	rep := hash.Run(t.Context(), files, opt)
	check, err := hash.VerifyManifest(t.Context(), manifestPath, hash.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		format string
		write  func(*bytes.Buffer) error
	}{
		{"json", func(b *bytes.Buffer) error { return hash.Write(b, rep, hash.WriteOptions{Format: textfmt.JSON}) }},
		{"jsonl", func(b *bytes.Buffer) error { return hash.Write(b, rep, hash.WriteOptions{Format: textfmt.JSONL}) }},
		{"markdown", func(b *bytes.Buffer) error { return hash.Write(b, rep, hash.WriteOptions{Format: textfmt.Markdown}) }},
		{"text", func(b *bytes.Buffer) error { return hash.Write(b, rep, hash.WriteOptions{}) }},
		{"json --check", func(b *bytes.Buffer) error {
			return hash.WriteVerify(b, check, hash.WriteOptions{Format: textfmt.JSON})
		}},
		{"jsonl --check", func(b *bytes.Buffer) error {
			return hash.WriteVerify(b, check, hash.WriteOptions{Format: textfmt.JSONL})
		}},
		{"markdown --check", func(b *bytes.Buffer) error {
			return hash.WriteVerify(b, check, hash.WriteOptions{Format: textfmt.Markdown})
		}},
		{"text --check", func(b *bytes.Buffer) error { return hash.WriteVerify(b, check, hash.WriteOptions{}) }},
	} {
		t.Run(c.format, func(t *testing.T) {
			var want bytes.Buffer
			if err := c.write(&want); err != nil {
				t.Fatal(err)
			}
			cmd := &hashCmd{Content: true, All: true, Files: files}
			outcome := rep.Outcome()
			if format, ok := strings.CutSuffix(c.format, " --check"); ok {
				c.format, cmd, outcome = format, &hashCmd{Check: true, Files: []string{manifestPath}}, check.Outcome()
			}
			var stdout, stderr bytes.Buffer
			o := &out{ctx: t.Context(), w: textfmt.NewSyncWriter(&stdout), errw: &stderr, format: textfmt.Format(c.format)}
			if code := cmd.run(o); code != int(outcome) {
				t.Errorf("exit %d, want %d", code, outcome)
			}
			o.w.Flush()
			if !bytes.Equal(stdout.Bytes(), want.Bytes()) {
				t.Errorf("the CLI printed\n%s\nthe library writes\n%s", stdout.Bytes(), want.Bytes())
			}
		})
	}
	// --json, as main parses it, is the JSON writer's output.
	for _, args := range [][]string{append([]string{"hash", "--json", "--content", "--all"}, files...), {"hash", "--json", "--check", manifestPath}} {
		var stdout, want bytes.Buffer
		run(args, &stdout, new(bytes.Buffer))
		if args[2] == "--check" {
			err = hash.WriteVerify(&want, check, hash.WriteOptions{Format: textfmt.JSON})
		} else {
			err = hash.Write(&want, rep, hash.WriteOptions{Format: textfmt.JSON})
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(stdout.Bytes(), want.Bytes()) {
			t.Errorf("stdiff %s printed\n%s\nthe library writes\n%s", strings.Join(args[:3], " "), stdout.Bytes(), want.Bytes())
		}
	}
	// --kind blake3: a b3sum manifest, as hash.VerifyManifest with BareKind reads it.
	b3 := filepath.Join(t.TempDir(), "B3SUMS")
	if err := os.WriteFile(b3, []byte(rep.Files[0].Ecosystem.BLAKE3+"  "+files[0]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check, err = hash.VerifyManifest(t.Context(), b3, hash.Options{BareKind: hash.BareBLAKE3})
	if err != nil || check.Outcome() != 0 {
		t.Fatalf("b3sum manifest: %v", err)
	}
	var stdout, want bytes.Buffer
	if code := run([]string{"hash", "--json", "--kind", "blake3", "--check", b3}, &stdout, new(bytes.Buffer)); code != 0 {
		t.Errorf("--kind blake3: exit %d", code)
	}
	if err := hash.WriteVerify(&want, check, hash.WriteOptions{Format: textfmt.JSON}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stdout.Bytes(), want.Bytes()) {
		t.Errorf("stdiff hash --kind blake3 --check printed\n%s\nthe library writes\n%s", stdout.Bytes(), want.Bytes())
	}
}

// TestHashManyFilesCollects: hashing many files turns garbage collection back on (main turns it off),
// as each file's read buffers are garbage once it is hashed: 2,000 small files with --content peaked at
// 500 MB without, 130 MB with.
func TestHashManyFilesCollects(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, c := range []struct {
		cmd  *hashCmd
		want int
	}{
		{&hashCmd{Files: []string{"a"}}, -1},
		{&hashCmd{Files: []string{"a", "b"}}, 400},
		{&hashCmd{Check: true, Files: []string{"MANIFEST"}}, 400},
	} {
		debug.SetGCPercent(-1)
		memoryPolicy(c.cmd)
		if got := debug.SetGCPercent(-1); got != c.want {
			t.Errorf("%+v: GC percent %d, want %d", c.cmd, got, c.want)
		}
	}
}
