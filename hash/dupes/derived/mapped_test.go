package derived

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/safetensors"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/tensor"
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
					c, _ := values.Encode(tensor.DType(dt), bv)
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

// TestSampledOnce: a model that is a candidate original for a subset's job and a candidate of its own
// structure's job is sampled once (the superset's job samples at the subset's picks): five models,
// an F32 original, its copy with a tensor left out and three unrelated models of the original's
// structure, are opened seven times in all, five samples and the two of the one verification (each
// sampled twice, eleven).
func TestSampledOnce(t *testing.T) {
	write := f32Writer(t, t.TempDir())
	all := []string{"a.weight", "bb.weight", "ccc.weight", "dddd.weight"}
	paths := []string{write("orig.safetensors", 3, all...), write("pruned.safetensors", 3, all[:3]...),
		write("x.safetensors", 5, all...), write("y.safetensors", 7, all...), write("z.safetensors", 11, all...)}
	var opens atomic.Int64
	models := make([]Model, len(paths))
	for i, p := range paths {
		m := mappedModel(t, p)
		open := m.Open
		m.Open = func(ctx context.Context) (io.ReaderAt, int64, func(), error) { opens.Add(1); return open(ctx) }
		models[i] = m
	}
	gs, err := Find(t.Context(), models, 2)
	if err != nil || len(gs) != 1 || len(gs[0].Members) != 2 || gs[0].Members[0].Index != 0 || gs[0].Members[1].Relation != Subset {
		t.Fatalf("%v, %+v", err, gs)
	}
	if n := opens.Load(); n != 7 {
		t.Errorf("%d opens, want 7 (5 samples, 2 for the verification)", n)
	}
}

// TestPresampled: models whose Sink was given their sample while their bytes were open (Sink.Sample,
// as package dupes does when it samples its own candidates) are not opened again to be sampled,
// whichever job's picks they are sampled at: TestSampledOnce's five models are opened twice in
// all, for the one verification (they were seven), with the same group; a Sink whose sample was
// not read leaves its model to be opened as before.
func TestPresampled(t *testing.T) {
	write := f32Writer(t, t.TempDir())
	all := []string{"a.weight", "bb.weight", "ccc.weight", "dddd.weight", "e.weight", "ff.weight"}
	paths := []string{write("orig.safetensors", 3, all...), write("pruned.safetensors", 3, all[:5]...),
		write("x.safetensors", 5, all...), write("y.safetensors", 7, all...), write("z.safetensors", 11, all...)}
	for _, presample := range []bool{true, false} {
		var opens atomic.Int64
		models := make([]Model, len(paths))
		for i, p := range paths {
			m := mappedModel(t, p)
			open := m.Open
			m.Summary = skimmed(t, p)
			if presample {
				r, off, closer, err := open(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				m.Summary.Sample(r, off, nil, nil)
				closer()
			}
			m.Open = func(ctx context.Context) (io.ReaderAt, int64, func(), error) { opens.Add(1); return open(ctx) }
			models[i] = m
		}
		gs, err := Find(t.Context(), models, 2)
		if err != nil || len(gs) != 1 || len(gs[0].Members) != 2 || gs[0].Members[0].Index != 0 ||
			gs[0].Members[1].Index != 1 || gs[0].Members[1].Relation != Subset {
			t.Fatalf("presampled %v: %v, %+v", presample, err, gs)
		}
		want := int64(7)
		if presample {
			want = 2
		}
		if n := opens.Load(); n != want {
			t.Errorf("presampled %v: %d opens, want %d", presample, n, want)
		}
	}
}

// skimmed is a Sink given the entries of the safetensors file at path.
func skimmed(t *testing.T, path string) *Sink {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(b)
	var s Sink
	var spans [][2]uint64
	if _, ok := safetensors.Skim(b[8:8+n], int64(len(b))-8-int64(n), &spans, &s); !ok {
		t.Fatalf("%s: not skimmed", path)
	}
	return &s
}

// f32Writer writes, into dir, safetensors files of F32 8×8 tensors of the given names whose values
// follow from seed (the same seed and name, the same values), returning each file's path.
func f32Writer(t *testing.T, dir string) func(name string, seed int, names ...string) string {
	return func(name string, seed int, names ...string) string {
		var f stfile.File
		for _, n := range names {
			var data []byte
			for i := range 64 {
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(math.Sin(float64(i*seed+len(n))))))
			}
			f.Tensors = append(f.Tensors, stfile.Tensor{Name: n, DType: "F32", Shape: []uint64{8, 8}, Data: data})
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, f.Build(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
}
