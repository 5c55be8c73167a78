package derived

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/values"
)

// mappedModel is a local safetensors file as Find reads it: opened as an *os.File (so that load maps
// it and skims its header from the mapping).
func mappedModel(t *testing.T, path string) Model {
	return Model{Path: path, Safetensors: true,
		Header: func(ctx context.Context) (*canon.Model, error) {
			t.Error("the header is skimmed from the mapping")
			return nil, canon.ErrUnreadable
		},
		Open: func(ctx context.Context) (io.ReaderAt, int64, func(), error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, 0, nil, err
			}
			var n [8]byte
			if _, err := f.ReadAt(n[:], 0); err != nil {
				f.Close()
				return nil, 0, nil, err
			}
			return f, 8 + int64(binary.LittleEndian.Uint64(n[:])), func() { f.Close() }, nil
		}}
}

// TestMappedHeadersOutlived: what Find keeps of a mapped header outlives the mapping (the dtypes
// roundTable caches; the rounded_to and left_out it returns): rounds over other files, in headers
// laid out otherwise, each find the BF16 original and its F8_E5M2 copy, with the relation right.
// (Dtypes that were parts of an unmapped header made later rounds read freed memory: groups went
// missing, or the program faulted.)
func TestMappedHeadersOutlived(t *testing.T) {
	for round := range 4 {
		dir := t.TempDir()
		var paths []string
		for _, dt := range []string{"BF16", "F8_E5M2"} {
			f := stfile.File{Metadata: []stfile.KV{{Key: "pad", Value: fmt.Sprintf("%*d", 1+round*977, round)}}}
			for _, name := range []string{"a.weight", "b.weight"} {
				var data []byte
				for i := range 256 {
					v := math.Sin(float64(i + round*1000 + len(name)))
					bv, _ := values.Round("BF16", v)
					c, _ := values.Encode(canon.DType(dt), bv)
					if dt == "BF16" {
						data = binary.LittleEndian.AppendUint16(data, uint16(c))
					} else {
						data = append(data, byte(c))
					}
				}
				f.Tensors = append(f.Tensors, stfile.Tensor{Name: name, DType: dt, Shape: []uint64{16, 16}, Data: data})
			}
			p := filepath.Join(dir, dt+".safetensors")
			if err := os.WriteFile(p, f.Build(), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		gs, err := Find(t.Context(), []Model{mappedModel(t, paths[0]), mappedModel(t, paths[1])}, 2)
		if err != nil || len(gs) != 1 || len(gs[0].Members) != 2 || gs[0].Members[0].Index != 0 ||
			gs[0].Members[1].Relation != Rounded || gs[0].Members[1].RoundedTo != "F8_E5M2" {
			t.Fatalf("round %d: %v, %+v", round, err, gs)
		}
	}
}
