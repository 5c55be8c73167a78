package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"
)

// collection writes n LoRA files with real-looking metadata that differs per file into dir.
func collection(b *testing.B, dir string, n int) {
	b.Helper()
	for i := 0; i < n; i++ {
		f := stfile.LoRA()
		f.Seed = int64(i)
		f.Metadata[0].Value = fmt.Sprintf("char_%04d", i)
		f.Metadata = append(f.Metadata, stfile.KV{Key: "ss_session_id", Value: fmt.Sprint(1000000 + i)})
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("lora_%04d.safetensors", i)), f.Build(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInspectShort1000 is `stdiff inspect --short` over a folder of 1,000 LoRA files (about 40 KiB
// each, 23 KiB of it header), warm cache: headers and sidecars only.
func BenchmarkInspectShort1000(b *testing.B) {
	dir := b.TempDir()
	collection(b, dir, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code := run([]string{"inspect", "--short", dir}, io.Discard, io.Discard); code != exitOK {
			b.Fatalf("exit %d", code)
		}
	}
}
