package hash

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/onnx/onnxw"
	"github.com/stdiff/stdiff/canon/stfile"
)

// TestONNXSharesIDs: an ONNX model and a safetensors file of the same tensors have the same structure
// and content IDs, whether the ONNX model keeps its bytes in raw_data, in typed fields or in an
// external data file; a changed byte changes the content ID.
func TestONNXSharesIDs(t *testing.T) {
	w := make([]byte, 16)
	for i := range 4 {
		binary.LittleEndian.PutUint32(w[4*i:], math.Float32bits(float32(i)-1.5))
	}
	ids := []byte{5, 0, 0, 0, 0, 0, 0, 0, 0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff} // int64 5, -5
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	st := write("m.safetensors", stfile.File{Tensors: []stfile.Tensor{
		{Name: "w", DType: "F32", Shape: []uint64{2, 2}, Data: w}, {Name: "ids", DType: "I64", Shape: []uint64{2}, Data: ids}}}.Build())
	raw := write("raw.onnx", onnxw.Model(onnxw.Tensor("w", 1, []int64{2, 2}, onnxw.Raw(w)), onnxw.Tensor("ids", 7, []int64{2}, onnxw.Raw(ids))))
	typedW := onnxw.LenField(4, w) // float_data, packed: the same little-endian bits
	typedIDs := onnxw.LenField(7, onnxw.Cat(onnxw.Uvarint(5), onnxw.Uvarint(uint64(math.MaxUint64-4))))
	typed := write("typed.onnx", onnxw.Model(onnxw.Tensor("ids", 7, []int64{2}, typedIDs), onnxw.Tensor("w", 1, []int64{2, 2}, typedW)))
	write("w.bin", append(make([]byte, 4096), w...))
	external := write("external.onnx", onnxw.Model(onnxw.Tensor("w", 1, []int64{2, 2}, onnxw.External("w.bin", 4096, 16)), onnxw.Tensor("ids", 7, []int64{2}, onnxw.Raw(ids))))
	changed := make([]byte, 16)
	copy(changed, w)
	changed[15] ^= 1
	other := write("other.onnx", onnxw.Model(onnxw.Tensor("w", 1, []int64{2, 2}, onnxw.Raw(changed)), onnxw.Tensor("ids", 7, []int64{2}, onnxw.Raw(ids))))

	rep := Run(t.Context(), []string{st, raw, typed, external, other}, Options{Content: true})
	want := rep.Files[0]
	if want.Err != nil || want.StructureID == "" || want.ContentID == nil {
		t.Fatalf("safetensors: %+v", want)
	}
	for _, f := range rep.Files[1:4] {
		if f.Err != nil || f.StructureID != want.StructureID || f.ContentID == nil || *f.ContentID != *want.ContentID {
			t.Errorf("%s: %v %s %v; want the safetensors file's %s %s", filepath.Base(f.Path), f.Err, f.StructureID, f.ContentID, want.StructureID, *want.ContentID)
		}
	}
	if f := rep.Files[4]; f.StructureID != want.StructureID || *f.ContentID == *want.ContentID {
		t.Errorf("a changed byte: %s %s", f.StructureID, *f.ContentID)
	}
}
