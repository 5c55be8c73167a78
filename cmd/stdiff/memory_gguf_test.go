package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
)

// TestGGUFHeaderOnlyMemory: reading a GGUF header allocates at most a small multiple of the header's
// bytes, as for safetensors (TestHeaderOnlyMemory), on two shapes: the benchmark's (50,000 tensors
// and a tokenizer of 150,000 tokens; 7.2 MB of header) and a real model's (300 tensors, the same
// tokenizer; the header is mostly tokens). The tokenizer's arrays are never held: a card counts the
// tokens, and diff reads them only when they differ.
//
// The multiples measured: 2.4 for check and inspect of the first shape (a tensor record per tensor
// info, a name table), 3.0 for inspect --json and hash, 3.7 for inspect --full (every tensor listed),
// 2.4 for a diff --header-only of a file with itself and 3.4 with a revision whose vocabulary differs
// (one side's tokens are held while the other's are read), 3.7 and 4.6 for the same diffs by value
// (the default: every tensor's bytes are compared, a few hundred bytes per pair and the read buffers);
// 0.65 for check and inspect of the second shape (reading the tokens into memory makes it 1.2). The
// limits leave some room.
func TestGGUFHeaderOnlyMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads headers of 50,000 tensors and 150,000 tokens")
	}
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates: run without -race to measure")
	}
	dir := t.TempDir()
	headers := map[string]float64{} // the header bytes of each file
	write := func(name string, f ggufw.File) string {
		b := f.Build()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		g, err := gguf.Read(bytes.NewReader(b), int64(len(b)), path)
		if err != nil || !g.Valid() {
			t.Fatal(err, g.Verdict)
		}
		headers[path] = float64(g.DataOffset)
		return path
	}
	big := write("big.gguf", ggufw.Synthetic(50_000, 150_000))
	rev := ggufw.Synthetic(50_000, 150_000) // one more token: diff reads both vocabularies to say which
	for i := range rev.KVs {
		if rev.KVs[i].Key == "tokenizer.ggml.tokens" {
			tokens := make([]string, 150_001)
			for k := range tokens {
				tokens[k] = fmt.Sprintf("tok%d▁", k)
			}
			rev.KVs[i].Val = ggufw.Strs(tokens...)
		}
	}
	revised := write("revised.gguf", rev)
	vocab := write("vocab.gguf", ggufw.Synthetic(300, 150_000))

	cases := []struct {
		args  string
		limit float64
	}{
		{"check " + big, 3.5},
		{"inspect " + big, 3.5},
		{"inspect --json " + big, 4.5},
		{"inspect --full " + big, 5},
		{"hash " + big, 4.5},
		{"diff --header-only " + big + " " + big, 3.5},
		{"diff --header-only " + big + " " + revised, 4.5},
		{"diff " + big + " " + big, 4},
		{"diff " + big + " " + revised, 5},
		{"check " + vocab, 1},
		{"inspect " + vocab, 1},
		{"inspect --json " + vocab, 1},
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // as the command runs: allocated is held
	for _, c := range cases {
		header := 0.0
		for _, arg := range strings.Fields(c.args) {
			header += headers[arg]
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if code := run(strings.Fields(c.args), io.Discard, io.Discard); code == exitTrouble {
			t.Fatalf("%s: exit %d", c.args, code)
		}
		runtime.ReadMemStats(&after)
		per := float64(after.TotalAlloc-before.TotalAlloc) / header
		name := strings.ReplaceAll(c.args, dir+string(filepath.Separator), "")
		t.Logf("%-28s %5.2f bytes allocated per header byte", name, per)
		if per > c.limit {
			t.Errorf("%s: %.2f bytes allocated per header byte, over %g", name, per, c.limit)
		}
	}
}
