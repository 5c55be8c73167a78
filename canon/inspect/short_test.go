package inspect_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/stfile"
)

// TestShortHoldsNoHeader: the rows of `inspect --short` hold their words, not the headers they were
// read from, so that a collection's report is small and its headers are collected as it is read.
func TestShortHoldsNoHeader(t *testing.T) {
	dir := t.TempDir()
	const files, pad = 40, 200 << 10
	for i := range files {
		f := stfile.KohyaSDXL(i)
		f.Metadata = append(f.Metadata, stfile.KV{Key: "ss_training_comment", Value: strings.Repeat("x", pad)})
		f.Tensors = f.Tensors[:3]
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%02d.safetensors", i)), f.Build(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := inspect.Short(t.Context(), []string{dir}, inspect.Options{})
	runtime.GC()
	runtime.ReadMemStats(&after)
	if len(r.Files) != files || r.Files[0].Name != "char0000" || len(r.Files[0].GuessedTriggers) == 0 {
		t.Fatalf("%d rows, first %+v", len(r.Files), r.Files[0])
	}
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > files*pad/8 {
		t.Errorf("the report holds %d bytes for %d rows (headers of %d bytes each)", held, files, pad)
	}
	runtime.KeepAlive(r)
}
