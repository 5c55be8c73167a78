package derived

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/tensor"
)

// layoutHeader writes a safetensors header of ts with the metadata object meta placed before the
// entry at metaAt, padded with spaces to a multiple of eight bytes.
func layoutHeader(ts []tensor.Tensor, meta string, metaAt int) []byte {
	var parts []string
	for i, t := range ts {
		if i == metaAt {
			parts = append(parts, `"__metadata__":`+meta)
		}
		var dims []string
		for _, d := range t.Shape {
			dims = append(dims, fmt.Sprint(d))
		}
		parts = append(parts, fmt.Sprintf(`%q:{"dtype":%q,"shape":[%s],"data_offsets":[%d,%d]}`, t.Name, t.DType, strings.Join(dims, ","), t.Begin, t.End))
	}
	if metaAt >= len(ts) {
		parts = append(parts, `"__metadata__":`+meta)
	}
	h := "{" + strings.Join(parts, ",") + "}"
	return []byte(h + strings.Repeat(" ", (8-len(h)%8)%8))
}

// TestLayoutsAgreeWithSkim: whenever layouts gives a header's tensors, they are the ones skimming
// that header gives; on headers of a few layouts, each with metadata of every length placed
// anywhere, and variants of the same lengths that differ in one thing (two offsets swapped, a dtype
// of the same width, a letter of a name, a shape transposed), in random order. (Without the metadata
// span, or comparing lengths alone, the variants take their base's tensors.)
func TestLayoutsAgreeWithSkim(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	base := func(n int) []tensor.Tensor {
		var ts []tensor.Tensor
		off := uint64(0)
		for i := range n {
			sh := []uint64{uint64(2 + i%3), 4}
			ts = append(ts, tensor.Tensor{Name: fmt.Sprintf("lora_unet_block_%d.lora_down.weight", i), DType: "F16", Shape: sh, Begin: off, End: off + 2*sh[0]*sh[1]})
			off += 2 * sh[0] * sh[1]
		}
		return ts
	}
	variants := func(ts []tensor.Tensor) [][]tensor.Tensor {
		out := [][]tensor.Tensor{ts}
		c := func() []tensor.Tensor {
			d := slices.Clone(ts)
			for i := range d {
				d[i].Shape = slices.Clone(d[i].Shape)
			}
			return d
		}
		v := c() // two tensors of one size trade places in the data
		v[0].Begin, v[0].End, v[3].Begin, v[3].End = v[3].Begin, v[3].End, v[0].Begin, v[0].End
		out = append(out, v)
		v = c()
		v[2].DType = "BF16"
		out = append(out, v)
		v = c()
		v[1].Name = strings.Replace(v[1].Name, "down", "dowm", 1)
		out = append(out, v)
		v = c()
		v[4].Shape[0], v[4].Shape[1] = v[4].Shape[1], v[4].Shape[0]
		return append(out, v)
	}
	type header struct {
		h       []byte
		dataLen int64
	}
	var hs []header
	for _, n := range []int{6, 9} {
		for _, ts := range variants(base(n)) {
			dataLen := int64(ts[len(ts)-1].End)
			for _, at := range []int{0, 2, n} {
				for k := range 5 {
					meta := fmt.Sprintf(`{"ss_output_name":"x%s","k":"%d"}`, strings.Repeat("y", rng.IntN(12)), k)
					if k == 0 {
						meta = "{}"
					}
					hs = append(hs, header{layoutHeader(ts, meta, at), dataLen})
				}
			}
		}
	}
	rng.Shuffle(len(hs), func(i, j int) { hs[i], hs[j] = hs[j], hs[i] })
	var ls layouts
	hits := 0
	for round := range 2 {
		for i, x := range hs {
			var s Sink
			var spans [][2]uint64
			c := &collector{}
			if _, ok := canon.Skim(canon.FormatSafetensors, x.h, x.dataLen, &spans, &s, true); !ok {
				t.Fatalf("header %d does not skim: %s", i, x.h)
			}
			want, sorted := skimMapped(x.h, x.dataLen, c, nil)
			if lay := ls.find(x.h, s.meta, x.dataLen); lay != nil {
				hits++
				if lay.sorted != sorted || !slices.EqualFunc(lay.ts, want, func(a, b tensor.Tensor) bool {
					return a.Name == b.Name && a.DType == b.DType && slices.Equal(a.Shape, b.Shape) && a.Begin == b.Begin && a.End == b.End
				}) {
					t.Fatalf("round %d: header %d takes another layout's tensors:\n%s", round, i, x.h)
				}
				continue
			}
			ls.missedHeader(x.h, s.meta, x.dataLen, want, sorted)
		}
	}
	if hits < len(hs) {
		t.Errorf("%d of %d headers found their layout: layouts are not kept", hits, 2*len(hs))
	}
}

// TestIsMetadata: isMetadata takes one metadata object as a skim reads `__metadata__`'s value, spaces
// before it (as a span begins after the colon), and nothing more or less.
func TestIsMetadata(t *testing.T) {
	for m, want := range map[string]bool{
		`{}`: true, ` {"a":"b"}`: true, `{ "a" : "b \"q\" \u00e9" , "c":"" }`: true, `{"a":"b","a":"c"}`: true,
		`{"a":"b"} `: false, `{}}`: false, `{},"w":{"dtype":"F16","shape":[0],"data_offsets":[0,0]}`: false,
		`{"a":1}`: false, `{"a":"b"`: false, ``: false, `"x"`: false, `{"a":"b\"}`: false, `{"a":"b"},"c":{}`: false,
	} {
		if got := isMetadata([]byte(m)); got != want {
			t.Errorf("isMetadata(%s) = %v, want %v", m, got, want)
		}
	}
}

// FuzzLayouts: a header given a kept layout, split at any span (a scan's, of the file as it was),
// is one a skim reads into that layout's tensors. The layout is kept from h1 as load keeps it (split
// where its skim found the metadata); h2 is looked up split at [m0, m1).
func FuzzLayouts(f *testing.F) {
	ts := []tensor.Tensor{{Name: "a", DType: "F16", Shape: []uint64{4}, Begin: 0, End: 8},
		{Name: "c", DType: "F32", Shape: []uint64{1}, Begin: 8, End: 12}}
	for at := range 3 {
		h1 := string(layoutHeader(ts, `{"k":"v"}`, at))
		m0 := strings.Index(h1, `"__metadata__":`) + len(`"__metadata__":`)
		for _, mid := range []string{`{"k":"w"}`, `{},"b":{"dtype":"F16","shape":[0],"data_offsets":[0,0]}`, ` {"x":"y","z":""}`, `{"k":"v"},"a"`} {
			h2 := h1[:m0] + mid + h1[m0+len(`{"k":"v"}`):]
			f.Add(h1, h2, uint16(m0), uint16(m0+len(mid)))
		}
	}
	f.Fuzz(func(t *testing.T, h1, h2 string, m0, m1 uint16) {
		const dataLen = 12
		c := &collector{}
		want, sorted := skimMapped([]byte(h1), dataLen, c, nil)
		if want == nil {
			return
		}
		var ls layouts
		ls.missedHeader([]byte(h1), c.meta, dataLen, want, sorted)
		ls.missedHeader([]byte(h1), c.meta, dataLen, want, sorted)
		meta := [2]int{int(m0), int(m1)}
		if meta[0] > meta[1] || meta[1] > len(h2) {
			return
		}
		lay := ls.find([]byte(h2), meta, dataLen)
		if lay == nil {
			return
		}
		got, gotSorted := skimMapped([]byte(h2), dataLen, &collector{}, nil)
		if got == nil || gotSorted != lay.sorted || !slices.EqualFunc(lay.ts, got, func(a, b tensor.Tensor) bool {
			return a.Name == b.Name && a.DType == b.DType && slices.Equal(a.Shape, b.Shape) && a.Begin == b.Begin && a.End == b.End
		}) {
			t.Fatalf("%q split at %v takes the layout of %q: %v; a skim reads %v", h2, meta, h1, lay.ts, got)
		}
	})
}
