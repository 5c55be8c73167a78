package dupes

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stdiff/stdiff/hash/dupes/dupecache"
)

// TestInvalidNeverGrouped: a file the reference rejects (a raw tab inside a metadata string: the
// key skim takes it, serde_json does not) is skipped and in no group, at every level, with a cold
// cache and with the warm one. It was taken as valid whenever no comparison happened to read its
// header again: as the original of a valid subset at level derived (and, once a run had cached it,
// in every later run).
func TestInvalidNeverGrouped(t *testing.T) {
	dir := t.TempDir()
	const w0 = `"w0":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}`
	const w1 = `"w1":{"dtype":"F32","shape":[0],"data_offsets":[8,8]}`
	write := func(name, header string, data []byte) string {
		for len(header)%8 != 0 {
			header += " "
		}
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
		b = append(append(b, header...), data...)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	data := []byte{0, 0, 128, 63, 0, 0, 0, 64} // 1.0, 2.0
	write("subset.safetensors", `{"__metadata__":{"k":"v"},`+w0+`}`, data)
	tab := write("tab-original.safetensors", `{"__metadata__":{"k":"a	b"},`+w0+`,`+w1+`}`, data)
	tabCopy := write("tab-copy.safetensors", `{"__metadata__":{"k":"x	y"},`+w0+`}`, data)
	cachePath := filepath.Join(t.TempDir(), "cache.json")
	for _, level := range []Level{LevelRenamed, LevelDerived} {
		for _, run := range []string{"cold", "warm"} {
			if run == "cold" {
				os.Remove(cachePath)
			}
			c, err := dupecache.OpenCache(cachePath)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Find(t.Context(), []string{dir}, Options{Level: level, Cache: c})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Save(t.Context()); err != nil {
				t.Fatal(err)
			}
			var skipped []string
			for _, s := range rep.Skipped {
				skipped = append(skipped, s.Path)
			}
			slices.Sort(skipped)
			if want := []string{tabCopy, tab}; !slices.Equal(skipped, want) {
				t.Errorf("%s, %s cache: skipped %q, want %q", level, run, skipped, want)
			}
			for _, g := range rep.Groups {
				if slices.Contains(g.Files, tab) || slices.Contains(g.Files, tabCopy) {
					t.Errorf("%s, %s cache: a file the reference rejects is in a %s group: %q", level, run, g.Level, g.Files)
				}
			}
		}
	}
}
