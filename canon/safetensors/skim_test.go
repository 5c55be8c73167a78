package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/tensor"
)

// collector keeps what Skim reads, and where it says the metadata is.
type collector struct {
	ts    []tensor.Tensor
	span  [2]int
	spans int
}

func (c *collector) MetadataSpan(begin, end int) { c.span, c.spans = [2]int{begin, end}, c.spans+1 }

func (c *collector) Entry(name, dtype []byte, shape []uint64, begin, end uint64) {
	c.ts = append(c.ts, tensor.Tensor{Name: string(name), DType: tensor.DType(dtype), Shape: slices.Clone(shape), Begin: begin, End: end})
}

func (c *collector) Reset() { c.ts, c.spans = c.ts[:0], 0 }

// skimAgrees checks Skim against Read on one file: whenever Skim reads the header (and it is UTF-8
// without control characters, as its callers check), Read finds it valid, with the same tensors and
// metadata keys, unless it names a tensor or a metadata key twice (which only reading everything tells).
func skimAgrees(t *testing.T, b []byte) {
	t.Helper()
	if len(b) < 8 {
		return
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) {
		return
	}
	var spans [][2]uint64
	var c collector
	h := b[8 : 8+n]
	metaKeys, ok := Skim(h, int64(len(b))-8-int64(n), &spans, &c)
	if !ok || !utf8.Valid(h) || HasControlOrTab(h) {
		return
	}
	m, err := Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tensors) != len(c.ts) || len(m.Metadata) != metaKeys {
		return // a name or a key written twice
	}
	if !m.Valid() {
		t.Fatalf("Skim read a header Read rejects (%v): %.300q", m.RefErr, h)
	}
	if c.spans != 0 != m.HasMetadata || c.spans > 1 {
		t.Fatalf("metadata told %d times; Read finds metadata: %v: %.300q", c.spans, m.HasMetadata, h)
	}
	if c.spans == 1 { // the span holds the metadata object, and the rest of the header none of it
		var meta map[string]string
		if err := json.Unmarshal(h[c.span[0]:c.span[1]], &meta); err != nil || len(meta) != len(m.Metadata) {
			t.Fatalf("metadata span %v is not the metadata (%v): %.300q", c.span, err, h)
		}
		for _, e := range m.Metadata {
			if v, ok := meta[e.Key]; !ok || v != e.Value {
				t.Fatalf("metadata span %v: %q is %q, Read %q", c.span, e.Key, v, e.Value)
			}
		}
		rest := string(h[:c.span[0]]) + "0" + string(h[c.span[1]:])
		var top map[string]json.RawMessage
		if err := json.Unmarshal([]byte(rest), &top); err != nil || string(top["__metadata__"]) != "0" {
			t.Fatalf("metadata span %v: without it the header is not the rest (%v): %.300q", c.span, err, h)
		}
	}
	for i, tn := range c.ts {
		w := m.Tensors[i]
		if tn.Name != w.Name || tn.DType != w.DType || !slices.Equal(tn.Shape, w.Shape) || tn.Begin != w.Begin || tn.End != w.End {
			t.Fatalf("tensor %d: Skim %+v, Read %+v", i, tn, w)
		}
	}
}

// skimSeeds are the project's fixtures, the real files beside it, and headers written every way the
// skim reads (compact, spaced, fields in other orders, escapes in metadata, padding).
func skimSeeds(t testing.TB) [][]byte {
	var out [][]byte
	for _, dir := range []string{filepath.Join("..", "..", "testdata"), filepath.Join("..", "..", "..", "shared", "corpus", "real")} {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
		for _, p := range paths {
			if st, err := os.Stat(p); err == nil && st.Size() < 8<<20 {
				b, _ := os.ReadFile(p)
				out = append(out, b)
			}
		}
	}
	for _, header := range []string{
		`{"__metadata__":{"a":"b \"q\" \u00e9"},"w":{"dtype":"F16","shape":[2,3],"data_offsets":[0,12]}}`,
		`{ "w" : { "shape" : [ 3 ] , "data_offsets" : [ 0 , 12 ] , "dtype" : "F32" } }   `,
		`{"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`,
		`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`,
		`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"v":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`,
		`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}}`,
		`{"w":{"dtype":"F32","shape":[01],"data_offsets":[0,4]}}`,
		`{"w":{"dtype":"F4","shape":[8],"data_offsets":[0,4]}}`,
		`{"__metadata__":{"a":1},"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`,
		`{ "w" : { "dtype" : "F32" , "shape" : [ 1 ] , "data_offsets" : [ 0 , 4 ] } , "__metadata__" : { "a" : "b" , "c" : "" } }`,
		`{"w":{"shape":[1],"dtype":"F32","data_offsets":[0,4]},"__metadata__":{}}`,
		`{"w\u0041":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`,
		`{}`,
	} {
		b := make([]byte, 8, 8+len(header)+16)
		binary.LittleEndian.PutUint64(b, uint64(len(header)))
		b = append(append(b, header...), make([]byte, 16)...)
		out = append(out, b[:8+len(header)+4], b[:8+len(header)+8], b[:8+len(header)+12])
	}
	f := stfile.KohyaSDXL(3)
	f.Metadata = append(f.Metadata, stfile.KV{Key: "ss_tag_frequency", Value: `{"10_x": {"é": 3}}`})
	return append(out, f.Build())
}

// TestSkimAgreesWithRead: on every seed, Skim and Read agree (skimAgrees), and Skim reads the usual
// files (it is not always declining).
func TestSkimAgreesWithRead(t *testing.T) {
	read := 0
	for _, b := range skimSeeds(t) {
		skimAgrees(t, b)
		var spans [][2]uint64
		if n := binary.LittleEndian.Uint64(b); n <= uint64(len(b)-8) {
			if _, ok := Skim(b[8:8+n], int64(len(b))-8-int64(n), &spans, &collector{}); ok {
				read++
			}
		}
	}
	if read < 10 {
		t.Errorf("Skim read only %d seeds", read)
	}
	// A header Read would read leniently but the reference rejects: Skim declines.
	for _, h := range []string{`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}`, `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`,
		`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}} x`, `{"w":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}}`} {
		if _, ok := Skim([]byte(h), 4, new([][2]uint64), &collector{}); ok {
			t.Errorf("Skim read %q", h)
		}
	}
}

// FuzzSkim: on any header, Skim and Read agree (skimAgrees); Skim never panics.
func FuzzSkim(f *testing.F) {
	for _, b := range skimSeeds(f) {
		if n := binary.LittleEndian.Uint64(b); n <= uint64(len(b)-8) && n < 1<<16 {
			f.Add(string(b[8:8+n]), uint8(len(b)-8-int(n)))
		}
	}
	f.Fuzz(func(t *testing.T, header string, data uint8) {
		if len(header) > 1<<16 || strings.Count(header, "[") > 1000 {
			return
		}
		b := make([]byte, 8, 8+len(header)+int(data))
		binary.LittleEndian.PutUint64(b, uint64(len(header)))
		b = append(append(b, header...), make([]byte, data)...)
		skimAgrees(t, b)
	})
}

// TestDigits: digits reads every length of number the same as a loop does, near the end of the
// input and far from it, and refuses what JSON refuses.
func TestDigits(t *testing.T) {
	for _, s := range []string{"0", "7", "10", "2560", "12345678", "123456789", "9999999999999999999", "1234567890123", "4294967296"} {
		for _, tail := range []string{"]", ",", "]}" + strings.Repeat(" ", 20)} {
			want, _ := strconv.ParseUint(s, 10, 64)
			n, end, ok := digits([]byte("["+s+tail), 1)
			if !ok || n != want || end != 1+len(s) {
				t.Errorf("%q: %d, %d, %v", s+tail, n, end, ok)
			}
		}
	}
	for _, s := range []string{"01]", "]", "1.5]", "2e3]", "12345678901234567890]", "-1]"} {
		if _, _, ok := digits([]byte("["+s+"        "), 1); ok {
			t.Errorf("%q read", s)
		}
	}
}

// nopSink takes the entries Skim reads and keeps nothing.
type nopSink struct{ n int }

func (s *nopSink) Entry(name, dtype []byte, shape []uint64, begin, end uint64) { s.n++ }
func (s *nopSink) Reset()                                                      { s.n = 0 }

// TestSkimAllocatesPerHeader: skimming allocates a few times per header, not per tensor entry (an
// entry's shape buffer handed to the sink as it is moved to the heap: 2,000 allocations a header).
func TestSkimAllocatesPerHeader(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	f := stfile.ManyTensors(2000)
	b := f.Build()
	n := binary.LittleEndian.Uint64(b)
	h, dataLen := b[8:8+n], int64(len(b))-8-int64(n)
	var scratch [][2]uint64
	sink := &nopSink{}
	if _, ok := Skim(h, dataLen, &scratch, sink); !ok || sink.n != 2000 {
		t.Fatalf("skim: %v, %d entries", ok, sink.n)
	}
	if a := testing.AllocsPerRun(20, func() { Skim(h, dataLen, &scratch, sink) }); a > 10 {
		t.Errorf("%.0f allocations to skim a header of 2,000 tensors", a)
	}
}
