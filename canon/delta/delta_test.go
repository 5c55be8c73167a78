package delta

import (
	"slices"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
)

// TestMetadataAndLayout: keys added, removed, changed, reformatted JSON as no change, skipped keys
// left out; and how the same tensors are laid out: order, offsets, key order, sharding.
func TestMetadataAndLayout(t *testing.T) {
	w := func(name string) stfile.Tensor {
		return stfile.Tensor{Name: name, DType: "F32", Shape: []uint64{1}, Data: []byte{1, 2, 3, 4}}
	}
	a := canon.ReadBytes("a", stfile.File{Metadata: []stfile.KV{{Key: "format", Value: "pt"}, {Key: "j", Value: `{"x": 1, "y": 2}`}, {Key: "gone", Value: "1"}, {Key: "v", Value: "1"}},
		Tensors: []stfile.Tensor{w("p"), w("q")}}.Build())
	b := canon.ReadBytes("b", stfile.File{Metadata: []stfile.KV{{Key: "v", Value: "2"}, {Key: "j", Value: `{"y":2,"x":1}`}, {Key: "new", Value: "x"}, {Key: "format", Value: "np"}},
		Tensors: []stfile.Tensor{w("q"), w("p")}}.Build())
	skip := func(k string) bool { return k == "format" }
	ks := Metadata(a, b, skip)
	added, removed, changed := Keys(ks)
	if !slices.Equal(added, []string{"new"}) || !slices.Equal(removed, []string{"gone"}) || !slices.Equal(changed, []string{"v"}) {
		t.Errorf("added %v removed %v changed %v", added, removed, changed)
	}
	for _, k := range ks {
		if k.Key == "j" && k.Status != Reformatted || k.Key == "format" {
			t.Errorf("%s: %v", k.Key, k.Status)
		}
	}
	var codes []Code
	for _, l := range LayoutOf(a, b, [][2]int{{0, 1}, {1, 0}}, skip) {
		codes = append(codes, l.Code)
	}
	if !slices.Equal(codes, []Code{Order, Offsets, KeyOrder}) {
		t.Errorf("layout %v", codes)
	}
	if l := LayoutOf(a, &canon.Model{Shards: []canon.ShardInfo{{}, {}}}, nil, nil); len(l) != 1 || l[0] != (Layout{Sharding, "1 file", "2 shards"}) {
		t.Errorf("sharding: %v", l)
	}
	if l := LayoutOf(a, a, [][2]int{{0, 0}, {1, 1}}, nil); len(l) != 0 {
		t.Errorf("a model against itself: %v", l)
	}
}
