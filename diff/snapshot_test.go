package diff

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stdiff/stdiff/canon/snapshot"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/values"
	"github.com/stdiff/stdiff/hash"
)

// snapshotOf writes the snapshot of the model file at path and opens it as a model.
func snapshotOf(t *testing.T, path string) *source.Opened {
	t.Helper()
	out := path + ".snap"
	s, _, err := hash.Snapshot(t.Context(), path, out, hash.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := snapshot.WriteFile(t.Context(), out, s); err != nil {
		t.Fatal(err)
	}
	return openSpec(t, out)
}

func openSpec(t *testing.T, spec string) *source.Opened {
	t.Helper()
	o, err := source.Open(t.Context(), spec, source.Options{Snapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// TestSnapshotSide: a snapshot stands for its model: against the model itself it is identical (a
// model saved in another tensor order too: layout is not compared); a tensor whose bytes changed is
// named, by digest, with how its summary moved; NaN appearing counts as nan; a tolerance is refused.
func TestSnapshotSide(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, f stfile.File) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, f.Build(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := []byte{0, 0, 0x80, 0x3f} // 1.0
	nan := []byte{0, 0, 0xc0, 0x7f}
	old := stfile.File{Metadata: []stfile.KV{{Key: "k", Value: "v"}}, Tensors: []stfile.Tensor{
		{Name: "a", DType: "F32", Shape: []uint64{2}, Data: append(slices.Clone(one), one...)},
		{Name: "b", DType: "F32", Shape: []uint64{4}}}}
	reordered := old
	reordered.Tensors = []stfile.Tensor{old.Tensors[1], old.Tensors[0]}
	changed := old
	changed.Tensors = []stfile.Tensor{{Name: "a", DType: "F32", Shape: []uint64{2}, Data: append(slices.Clone(one), nan...)}, old.Tensors[1]}
	snap := snapshotOf(t, write("old.safetensors", old))

	for _, other := range []string{write("reordered.safetensors", reordered), snap.Model.Name} {
		r, err := Models(t.Context(), snap, openSpec(t, other), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Identical || !r.ContentCompared || r.ValuesCompared || len(r.LayoutCodes()) != 0 || !hasNote(r, NoteSnapshot) {
			t.Errorf("against %s: %+v", other, r)
		}
	}

	r, err := Models(t.Context(), snap, openSpec(t, write("changed.safetensors", changed)), Options{FailOn: []Category{CategoryNaN}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tensors.Changed) != 1 || r.Tensors.Unchanged != 1 {
		t.Fatalf("changed %+v", r.Tensors)
	}
	c := r.Tensors.Changed[0]
	if c.Name != "a" || !slices.Equal(c.Fields, []string{"data"}) || c.Summary == nil || c.Old.Digest == c.New.Digest {
		t.Fatalf("change %+v", c)
	}
	if s := c.Summary; s.From.NaN != 0 || s.To.NaN != 1 || s.From.L2 != math.Sqrt2 || s.To.L2 != 1 || s.From.Mean != 1 {
		t.Errorf("summary %+v", s)
	}
	// Values were not compared element-wise: bytes that differ count as moved values (--fail-on values
	// must not pass).
	if !slices.Equal(r.Categories, []Category{CategoryData, CategoryValues, CategoryNaN}) || r.Outcome() != 1 {
		t.Errorf("categories %v, outcome %v", r.Categories, r.Outcome())
	}

	_, err = Models(t.Context(), snap, openSpec(t, filepath.Join(dir, "changed.safetensors")), Options{Tolerance: values.Tolerance{Atol: 0.1}})
	if !errors.Is(err, ErrSnapshotTolerance) {
		t.Errorf("a tolerance with a snapshot: %v", err)
	}
	r, err = Models(t.Context(), snap, openSpec(t, filepath.Join(dir, "changed.safetensors")), Options{HeaderOnly: true})
	if err != nil || !r.Identical || r.ContentCompared || hasNote(r, NoteSnapshot) {
		t.Errorf("--header-only: %v %+v", err, r)
	}
}

func hasNote(r *Report, code NoteCode) bool {
	return slices.ContainsFunc(r.Notes, func(n Note) bool { return n.Code == code })
}
