package torch_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/torch"
)

// realDir holds files torch 2.11 wrote (beside the project, never copied into it; see its README).
var realDir = filepath.Join("..", "..", "..", "shared", "corpus", "real", "writers-2026-11", "torch-2.11")

// TestRealFiles: files torch.save 2.11 wrote, which torch.load(weights_only=True) accepts, are valid,
// with the tensors they hold, in both formats; the strided column is gathered in row-major order.
func TestRealFiles(t *testing.T) {
	if _, err := os.Stat(realDir); err != nil {
		t.Skipf("no real files: %v", err)
	}
	for name, want := range map[string]int{"zip-format.pt": 7, "legacy-format.pt": 7, "a1111-embedding.pt": 1} {
		b, err := os.ReadFile(filepath.Join(realDir, name))
		if err != nil {
			t.Fatal(err)
		}
		f := torch.Read(bytes.NewReader(b), int64(len(b)), name)
		if !f.Valid() || len(f.Tensors) != want {
			t.Errorf("%s: valid %v, %d tensors: %+v", name, f.Valid(), len(f.Tensors), f.Findings)
			continue
		}
		if name == "a1111-embedding.pt" {
			continue
		}
		dtypes := map[string]string{}
		for _, tn := range f.Tensors {
			dtypes[tn.Name] = tn.DType
		}
		if dtypes["w"] != "F32" || dtypes["b"] != "F16" || dtypes["i"] != "I64" || dtypes["h"] != "BF16" {
			t.Errorf("%s: %v", name, dtypes)
		}
		// t is a strided column (stride 4): Data gathers its elements from its storage in order
		d := f.Data(bytes.NewReader(b))
		for i, tn := range f.Tensors {
			if tn.Name != "t" {
				continue
			}
			s, e := d.DataRange(i)
			got := make([]byte, e-s)
			if _, err := d.ReadAt(got, s); err != nil {
				t.Fatal(err)
			}
			var want []byte
			for k := int64(0); k < tn.Shape[0]; k++ {
				at := tn.Offset + 4*k*tn.Stride[0]
				want = append(want, b[at:at+4]...)
			}
			if tn.Contiguous || !bytes.Equal(got, want) {
				t.Errorf("%s: t %+v: %x, want %x", name, tn, got, want)
			}
		}
	}
}
