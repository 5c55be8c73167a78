package diff

import (
	"io"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
)

// BenchmarkCompare50k compares two 50,000-tensor headers (5,000 dtype changes, 5,000 renames) and
// renders the text report; reading the headers is measured by canon's BenchmarkRead50k.
func BenchmarkCompare50k(b *testing.B) {
	f := stfile.ManyTensors(50000)
	a := canon.ReadBytes("a", f.Build())
	for i := range f.Tensors {
		switch t := &f.Tensors[i]; {
		case strings.HasSuffix(t.Name, "q_proj.weight"):
			t.DType = "F16"
		case strings.HasSuffix(t.Name, "k_proj.weight"):
			t.Name = strings.Replace(t.Name, "k_proj", "key_proj", 1)
		}
	}
	c := canon.ReadBytes("b", f.Build())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := Compare(Side{Model: a}, Side{Model: c}, Options{})
		if len(r.Tensors.Changed) != 5000 || len(r.Tensors.Renamed) != 5000 {
			b.Fatalf("%d changed, %d renamed", len(r.Tensors.Changed), len(r.Tensors.Renamed))
		}
		if err := WriteText(io.Discard, r, TextOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
