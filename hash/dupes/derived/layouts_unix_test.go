//go:build unix

package derived

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/tensor"
)

// TestLayoutsFindCutShort: a mapped header whose file is cut short while layouts compares it with a
// kept layout finds none, and the program goes on (the comparison faults, and the fault is caught).
func TestLayoutsFindCutShort(t *testing.T) {
	ts := []tensor.Tensor{{Name: "a.weight", DType: "F16", Shape: []uint64{2, 4}, Begin: 0, End: 16},
		{Name: "b.weight", DType: "F16", Shape: []uint64{4}, Begin: 16, End: 24}}
	h := layoutHeader(ts, `{"k":"v"}`, 0)
	file := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	file = append(append(file, h...), make([]byte, 24+8192)...) // data, and more: the header's page and the next
	var s Sink
	var spans [][2]uint64
	if _, ok := canon.Skim(canon.FormatSafetensors, h, 24, &spans, &s, true); !ok {
		t.Fatal("the header does not skim")
	}
	var ls layouts
	c := &collector{}
	got, sorted := skimMapped(h, 24, c, nil)
	ls.missedHeader(h, s.meta, 24, got, sorted)
	ls.missedHeader(h, s.meta, 24, got, sorted)
	if ls.find(h, s.meta, 24) == nil {
		t.Fatal("the layout is not kept")
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, unmap := mapFile(f)
	if data == nil {
		t.Skip("cannot map")
	}
	defer unmap()
	mapped := data[8 : 8+len(h)]
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if ls.find(mapped, s.meta, 24) != nil {
		t.Error("a header cut short found a layout")
	}
}
