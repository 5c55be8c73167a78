package inspect

import (
	"context"
	"os"
	"testing"
)

// BenchmarkShort is `inspect --short` of the collection in STDIFF_BENCH_KOHYA (written by canon/stfile's
// TestWriteKohyaCollection), in process: for profiles.
func BenchmarkShort(b *testing.B) {
	dir := os.Getenv("STDIFF_BENCH_KOHYA")
	if dir == "" {
		b.Skip("STDIFF_BENCH_KOHYA names no collection (canon/stfile TestWriteKohyaCollection writes one)")
	}
	for i := 0; i < b.N; i++ {
		r := Short(context.Background(), []string{dir}, Options{})
		if len(r.Errors) > 0 {
			b.Fatal(r.Errors)
		}
	}
}
