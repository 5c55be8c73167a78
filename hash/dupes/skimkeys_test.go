package dupes

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/safetensors"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/tensor"
)

// TestSkimKeys: the keys skim works out from what safetensors.Skim reads are those of the model
// canon.Read makes of the same file, and the tensors it collects are canon.Read's; on the project's
// fixtures, headers written other ways (spaced, fields reordered, out of order) and a LoRA.
func TestSkimKeys(t *testing.T) {
	var files [][]byte
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "*.safetensors"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && len(b) < 8<<20 {
			files = append(files, b)
		}
	}
	for _, header := range []string{
		`{"__metadata__":{"a":"b \"q\" \u00e9"},"w":{"dtype":"F16","shape":[2,3],"data_offsets":[0,12]}}`,
		`{ "w" : { "shape" : [ 3 ] , "data_offsets" : [ 0 , 12 ] , "dtype" : "F32" } }   `,
		`{"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`,
	} {
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
		files = append(files, append(append(b, header...), make([]byte, 12)...)[:8+len(header)+12])
	}
	files = append(files, loraFile(3, "x").Build(), stfile.KohyaSDXL(2).Build())
	read := 0
	for _, b := range files {
		n := binary.LittleEndian.Uint64(b)
		if n > uint64(len(b)-8) {
			continue
		}
		h, dataLen := b[8:8+n], int64(len(b))-8-int64(n)
		var spans [][2]uint64
		var ts []tensor.Tensor
		k, ok := skim(h, dataLen, &spans, nil, nil)
		if _, collected := skim(h, dataLen, &spans, &ts, nil); collected != ok {
			t.Fatalf("skim reads the header (%v) but not its tensors (%v)", ok, collected)
		}
		if !ok || !utf8.Valid(h) || safetensors.HasControlOrTab(h) {
			continue
		}
		read++
		m := canon.ReadBytes("x", b)
		if len(m.Tensors) != len(ts) || len(m.Metadata) != k.metaKeys {
			continue // a name or a key written twice, which only reading everything tells
		}
		if !m.Valid() {
			t.Fatalf("skim read a header canon.Read reads otherwise (%v): %.300q", m.RefErr, h)
		}
		want := keysOf(m)
		if want.structure != k.structure || want.shapes != k.shapes || want.layout != k.layout || want.tensors != k.tensors ||
			want.dataLen != k.dataLen || want.sample != k.sample {
			t.Fatalf("skim's keys %+v, canon.Read's %+v", k, want)
		}
		for i, tn := range ts {
			w := m.Tensors[i]
			if tn.Name != w.Name || tn.DType != w.DType || !equalShape(tn.Shape, w.Shape) || tn.Begin != w.Begin || tn.End != w.End {
				t.Fatalf("tensor %d: skim %+v, canon %+v", i, tn, w)
			}
		}
	}
	if read < 5 {
		t.Errorf("skim read only %d files", read)
	}
}
