package diff

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/stfile"
)

// indexOnly is the model of an index whose shards are all missing: its weight map alone.
func indexOnly(t *testing.T, weightMap string) *canon.Model {
	t.Helper()
	idx, err := source.ParseIndex("m.safetensors.index.json", []byte(`{"weight_map": `+weightMap+`}`))
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := source.ReadSet("m.safetensors.index.json", idx, idx.Shards, func(string) (canon.Source, error) {
		return nil, source.ErrMissingShard
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestIndexesWithoutShards: two indexes whose shards are missing compare by name: tensors added and
// removed (never paired as renames: a name alone says nothing of one), tensors in another shard file
// (tensors.moved, a layout.shard-moves note), and a note saying dtypes, shapes and bytes were not
// compared.
func TestIndexesWithoutShards(t *testing.T) {
	a := indexOnly(t, `{"embed": "m-1.safetensors", "layers.0.w": "m-1.safetensors", "layers.1.w": "m-2.safetensors", "old.bias": "m-2.safetensors"}`)
	b := indexOnly(t, `{"embed": "m-1.safetensors", "layers.0.w": "m-2.safetensors", "layers.1.w": "m-2.safetensors", "new.bias": "m-2.safetensors"}`)
	r := Compare(Side{Model: a}, Side{Model: b}, Options{})
	if len(r.Tensors.Added) != 1 || r.Tensors.Added[0].Name != "new.bias" || len(r.Tensors.Removed) != 1 || r.Tensors.Removed[0].Name != "old.bias" ||
		len(r.Tensors.Renamed) != 0 || len(r.Tensors.Changed) != 0 || r.Tensors.Unchanged != 3 {
		t.Errorf("tensors %+v", r.Tensors)
	}
	if want := []Move{{Name: "layers.0.w", From: "m-1.safetensors", To: "m-2.safetensors"}}; !slices.Equal(r.Tensors.Moved, want) {
		t.Errorf("moved %+v, want %+v", r.Tensors.Moved, want)
	}
	var codes []NoteCode
	for _, n := range r.Notes {
		codes = append(codes, n.Code)
		if msg := worded(n, nil); n.Code == NoteShardMoves && msg != `1 tensor is in another shard file (the first, "layers.0.w": m-1.safetensors → m-2.safetensors)` {
			t.Errorf("message %q", msg)
		}
	}
	if !slices.Contains(codes, NoteShardMoves) || !slices.Contains(codes, NoteNameOnly) || r.Identical {
		t.Errorf("notes %v, identical %v", codes, r.Identical)
	}
	if same := Compare(Side{Model: a}, Side{Model: a}, Options{}); !same.Identical || len(same.Tensors.Moved) != 0 {
		t.Errorf("an index against itself: identical %v, moved %v", same.Identical, same.Tensors.Moved)
	}
}

// reads records the byte ranges read through a source.
type reads struct {
	canon.Source
	mu     sync.Mutex
	ranges [][2]int64
}

func (r *reads) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	r.ranges = append(r.ranges, [2]int64{off, off + int64(len(p))})
	r.mu.Unlock()
	return r.Source.ReadAt(p, off)
}

// TestNameOnlyNotRead: of two local shard sets compared by value, a tensor known by name only on one
// side (its shard is missing there) is neither compared by value nor read on the other side, nor
// read as a rename candidate; the tensors of the shards that are there are compared by value.
func TestNameOnlyNotRead(t *testing.T) {
	index := func(last string) string {
		return `{"weight_map": {"embed.weight": "model-00001-of-00002.safetensors", "norm.weight": "model-00001-of-00002.safetensors",
			"lm_head.weight": "model-00002-of-00002.safetensors", "` + last + `": "model-00002-of-00002.safetensors"}}`
	}
	shard1 := func(last float32) []byte {
		return stfile.File{Tensors: []stfile.Tensor{f32t("embed.weight", []uint64{2, 2}, 1, 2, 3, last), f32t("norm.weight", []uint64{2}, 1, 1)}}.Build()
	}
	dir := t.TempDir()
	files := map[string][]byte{
		"a/model.safetensors.index.json":     []byte(index("old.bias")),
		"a/model-00001-of-00002.safetensors": shard1(4), // its second shard is missing
		"b/model.safetensors.index.json":     []byte(index("new.bias")),
		"b/model-00001-of-00002.safetensors": shard1(6),
		"b/model-00002-of-00002.safetensors": stfile.File{Tensors: []stfile.Tensor{f32t("lm_head.weight", []uint64{2}, 5, 5), f32t("new.bias", []uint64{2}, 0, 0)}}.Build(),
	}
	for name, data := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var opened [2]*source.Opened
	for i, name := range []string{"a", "b"} {
		o, err := source.Open(t.Context(), filepath.Join(dir, name), source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { o.Close() })
		opened[i] = o
	}
	rb := &reads{Source: opened[1].Source}
	opened[1].Source = rb
	r, err := Models(t.Context(), opened[0], opened[1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := tensorChange(t, r, "embed.weight").Values; d == nil || d.MaxAbsDiff != 2 || len(r.Tensors.Changed) != 1 {
		t.Errorf("changed %+v", r.Tensors.Changed)
	}
	if len(r.Tensors.Renamed) != 0 || len(r.Tensors.Added) != 1 || len(r.Tensors.Removed) != 1 || r.Tensors.Unchanged != 2 {
		t.Errorf("tensors %+v", r.Tensors)
	}
	notes := map[NoteCode]int{}
	for _, n := range r.Notes {
		notes[n.Code] = n.Count
	}
	if notes[NoteNameOnly] != 1 {
		t.Errorf("notes %v", notes)
	}
	mb := opened[1].Model
	for _, name := range []string{"lm_head.weight", "new.bias"} {
		tb := mb.Tensor(name)
		lo, hi := mb.DataOffset()+int64(tb.Begin), mb.DataOffset()+int64(tb.End)
		for _, rg := range rb.ranges {
			if rg[0] < hi && lo < rg[1] {
				t.Errorf("%s [%d, %d) was read: [%d, %d)", name, lo, hi, rg[0], rg[1])
			}
		}
	}
}
