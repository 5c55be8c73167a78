package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/canon/values"
	"github.com/stdiff/stdiff/diff"
)

// TestDiffPrintsTheLibrarysReport: `stdiff diff --json` (and --format jsonl) prints byte for byte what
// diff.Models and diff.Write (its JSON, its JSONL) write, and exits with the report's outcome: the CLI holds
// no logic of its own.
func TestDiffPrintsTheLibrarysReport(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata")
	for _, c := range []struct {
		args []string
		a, b string
		opt  diff.Options
	}{
		{nil, "base.safetensors", "changed.safetensors", diff.Options{}},
		{[]string{"--content", "--ignore-volatile"}, "base.safetensors", "retrained.safetensors", diff.Options{Content: true, IgnoreVolatile: true}},
		{[]string{"--tensor", "layers.*", "--ignore-key", "ss_*"}, "changed.safetensors", "base.safetensors", diff.Options{Tensors: []string{"layers.*"}, IgnoreKeys: []string{"ss_*"}}},
		{[]string{"--metadata-only"}, "base.safetensors", "nul-padded.safetensors", diff.Options{MetadataOnly: true}},
		{nil, "base.safetensors", "reordered.safetensors", diff.Options{}},
		{[]string{"--header-only"}, "base.safetensors", "changed.safetensors", diff.Options{HeaderOnly: true}},
		{[]string{"--atol", "0.01", "--fail-on", "shape,dtype,nan"}, "weights.safetensors", "weights-finetuned.safetensors",
			diff.Options{Tolerance: values.Tolerance{Atol: 0.01}, FailOn: []diff.Category{diff.CategoryDType, diff.CategoryShape, diff.CategoryVerdict, diff.CategoryNaN}}},
		{[]string{"--rtol", "0.01", "--equal-nan", "--fail-on", "data", "--fail-on", "values"}, "weights.safetensors", "weights-bf16.safetensors",
			diff.Options{Tolerance: values.Tolerance{Rtol: 0.01, EqualNaN: true}, FailOn: []diff.Category{diff.CategoryData, diff.CategoryValues, diff.CategoryVerdict}}},
		{nil, "llama.gguf", "requant.gguf", diff.Options{}},
		{[]string{"--content"}, "requant.gguf", "llama.gguf", diff.Options{Content: true}},
	} {
		a, b := filepath.Join(dir, c.a), filepath.Join(dir, c.b)
		oa, err := source.Open(t.Context(), a, source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer oa.Close()
		ob, err := source.Open(t.Context(), b, source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ob.Close()
		r, err := diff.Models(t.Context(), oa, ob, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"json", "jsonl"} {
			var want, stdout, stderr bytes.Buffer
			// as the CLI writes it: its notes name its flags
			if err := diff.Write(&want, r, diff.WriteOptions{Format: textfmt.Format(format), Flags: cliFlags}); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string{"diff", "--format", format}, c.args...), a, b)
			if code := run(args, &stdout, &stderr); code != int(r.Outcome()) || !bytes.Equal(stdout.Bytes(), want.Bytes()) {
				t.Errorf("stdiff %s: exit %d (want %d), stderr %q, stdout\n%s\nwant\n%s", strings.Join(args, " "), code, r.Outcome(), stderr.String(), stdout.Bytes(), want.Bytes())
			}
		}
	}
}

// failing is a stdout whose every write fails.
type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestFailedWriteIsTrouble: a report that cannot be written is trouble (exit 2), said once, whatever
// the format and however long the report.
func TestFailedWriteIsTrouble(t *testing.T) {
	// A report longer than stdout's buffer: 2,000 tensors renamed.
	f, dir := stfile.ManyTensors(2000), t.TempDir()
	long := []string{filepath.Join(dir, "a.safetensors"), filepath.Join(dir, "b.safetensors")}
	for i, p := range long {
		for j := range f.Tensors {
			f.Tensors[j].Name += strconv.Itoa(i)
		}
		if err := os.WriteFile(p, f.Build(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	short := []string{filepath.Join("..", "..", "testdata", "base.safetensors"), filepath.Join("..", "..", "testdata", "changed.safetensors")}
	for _, models := range [][]string{short, long} {
		for _, format := range []string{"text", "json", "jsonl", "markdown"} {
			var stderr bytes.Buffer
			if code := run(append([]string{"--full", "--format", format}, models...), failing{}, &stderr); code != exitTrouble || stderr.String() != "stdiff: writing the output: no space left on device\n" {
				t.Errorf("%s %s: exit %d, stderr %q", format, models[0], code, stderr.String())
			}
		}
	}
}

// TestVersionString: the version names what the build recorded: the module version of `go install
// …@v1.2.0`, the VCS revision and whether the tree was modified, and yields to -ldflags -X main.version;
// a build without VCS stamping takes its revision from -X main.revision, or says it is unknown.
func TestVersionString(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "898e3668169c"}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		set  string
		rev  string
		bi   *debug.BuildInfo
		want string
	}{
		{"dev", "", nil, "stdiff dev (revision unknown: built without VCS stamping; -ldflags \"-X main.revision=…\" sets it)"},
		{"dev", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "stdiff dev (revision unknown: built without VCS stamping; -ldflags \"-X main.revision=…\" sets it)"},
		{"dev", "abc123", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "stdiff dev (revision abc123)"},
		{"dev", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "stdiff v1.2.0"},
		{"dev", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "stdiff dev (revision 898e3668169c, modified)"},
		{"dev", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.1-0.20250101-898e3668169c"}, Settings: rev[:2]}, "stdiff v1.2.1-0.20250101-898e3668169c (revision 898e3668169c)"},
		{"1.3.0", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Settings: rev[:2]}, "stdiff 1.3.0 (revision 898e3668169c)"},
	} {
		if got := versionString(c.set, c.rev, c.bi); got != c.want {
			t.Errorf("%q %q %+v: %q, want %q", c.set, c.rev, c.bi, got, c.want)
		}
	}
}

// TestVersionBuildsNoParser: `stdiff version` (and --version) is answered before the command line's
// model is built, most of what a start costs: a few allocations, not the thousands kong.New makes
// (version --json, which the parser reads, still makes them); the text is --version's.
func TestVersionBuildsNoParser(t *testing.T) {
	var plain, flag strings.Builder
	if run([]string{"version"}, &plain, io.Discard) != exitOK || run([]string{"--version"}, &flag, io.Discard) != exitOK ||
		!strings.HasPrefix(plain.String(), "stdiff ") || plain.String() != flag.String() {
		t.Fatalf("version %q, --version %q", plain.String(), flag.String())
	}
	if raceEnabled {
		t.Skip("allocations mean nothing under the race detector")
	}
	if n := testing.AllocsPerRun(10, func() { run([]string{"version"}, io.Discard, io.Discard) }); n > 200 {
		t.Errorf("stdiff version allocates %v times, want at most 200 (no parser)", n)
	}
}
