package diff

import (
	"slices"
	"testing"

	"github.com/stdiff/stdiff/canon"
)

// indexOnly is the model of an index whose shards are all missing: its weight map alone.
func indexOnly(t *testing.T, weightMap string) *canon.Model {
	t.Helper()
	idx, err := canon.ParseIndex("m.safetensors.index.json", []byte(`{"weight_map": `+weightMap+`}`))
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := canon.ReadSet("m.safetensors.index.json", idx, idx.Shards, func(string) (canon.Source, error) {
		return nil, canon.ErrMissingShard
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
		if n.Code == NoteShardMoves && n.Message != `1 tensor is in another shard file (the first, "layers.0.w": m-1.safetensors → m-2.safetensors)` {
			t.Errorf("message %q", n.Message)
		}
	}
	if !slices.Contains(codes, NoteShardMoves) || !slices.Contains(codes, NoteNameOnly) || r.Identical {
		t.Errorf("notes %v, identical %v", codes, r.Identical)
	}
	if same := Compare(Side{Model: a}, Side{Model: a}, Options{}); !same.Identical || len(same.Tensors.Moved) != 0 {
		t.Errorf("an index against itself: identical %v, moved %v", same.Identical, same.Tensors.Moved)
	}
}
