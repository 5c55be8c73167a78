//go:build unix

package derived

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestLayoutsStaleSpan: load gives a header the tensors a skim of it gives, even where the metadata
// span it has (info.meta, the scan's) is not that header's: its file was rewritten since, at the same
// size (dupes checks size and time, inspect's fileModel nothing). Two ways: a header whose bytes at
// the old span are no metadata object (`{},"b":…`: an entry more) finds a kept layout by the bytes
// around them; a header kept as a layout split at an old span (its own metadata and an entry in
// the middle) is found by a header with metadata there. (Both took the other header's tensors: a
// tensor too many or too few.)
func TestLayoutsStaleSpan(t *testing.T) {
	const ea = `"a":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}`
	const eb = `"b":{"dtype":"F16","shape":[0],"data_offsets":[0,0]}`
	const pre = `{"__metadata__":`
	meta := func(n int) string { return `{"k":"` + strings.Repeat("v", n-len(`{"k":""}`)) + `"}` }
	dir := t.TempDir()
	write := func(name, h string) string {
		h += strings.Repeat(" ", (8-len(h)%8)%8)
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
		b = append(append(b, h...), make([]byte, 8)...)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	names := func(ts []tensor.Tensor) (out []string) {
		for _, x := range ts {
			out = append(out, strings.Clone(x.Name)) // a part of the mapping, unmapped when closed
		}
		return out
	}
	// skimmed is the info of the file at path as a scan of it has it: its span, or stale when given.
	skimmed := func(path string, stale [2]int) info {
		in, ok := skimFile(path)
		if !ok {
			t.Fatalf("%s does not skim", path)
		}
		if stale != [2]int{} {
			in.meta = stale
		}
		return in
	}
	loads := func(ls *layouts, path string, in info) []string {
		m := mappedModel(t, path)
		m.Header = func(context.Context) (*canon.Model, error) { return nil, canon.ErrUnreadable }
		l, err := load(t.Context(), m, &in, ls)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer l.close()
		return names(l.ts)
	}

	x := `{},` + eb // no metadata object: one and an entry
	var ls layouts
	for i, p := range []string{write("a1", pre+meta(len(x))+`,`+ea+`}`), write("a2", pre+strings.Replace(meta(len(x)), "v", "w", -1)+`,`+ea+`}`)} {
		if got := loads(&ls, p, skimmed(p, [2]int{})); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("a%d holds %v", i+1, got)
		}
	}
	p := write("b", pre+x+`,`+ea+`}`)
	if got := loads(&ls, p, skimmed(p, [2]int{len(pre), len(pre) + len(x)})); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("a header rewritten (%s) takes a kept layout's tensors: %v, want [b a]", pre+x, got)
	}

	ls = layouts{}
	mid := `{"k":"v"},` + eb // the old span: the metadata and an entry
	p = write("l", pre+mid+`,`+ea+`}`)
	for range 2 {
		if got := loads(&ls, p, skimmed(p, [2]int{len(pre), len(pre) + len(mid)})); !slices.Equal(got, []string{"b", "a"}) {
			t.Fatalf("l holds %v", got)
		}
	}
	p = write("c", pre+meta(len(mid))+`,`+ea+`}`)
	if got := loads(&ls, p, skimmed(p, [2]int{})); !slices.Equal(got, []string{"a"}) {
		t.Errorf("a header takes the tensors of a layout kept split at an old span: %v, want [a]", got)
	}
}
