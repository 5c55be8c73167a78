package safetensors

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stdiff/stdiff/canon/stfile"
)

// plainAgrees checks the plain path against the full parser on the file b: when readPlain reads its
// header, the Header is the one readHeader makes (every exported field: tensors with their names,
// dtypes, shapes, offsets and header offsets; metadata with keys, values and offsets; no finding; the
// reference's verdict valid), and Read returns it; when it does not, it left the Header untouched. It
// reports whether the plain path read the header.
func plainAgrees(t *testing.T, b []byte) bool {
	t.Helper()
	if len(b) < 8 {
		return false
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) {
		return false
	}
	hb := b[8 : 8+n]
	full := Parse(hb, int64(len(b)))
	plain := &Header{FileSize: int64(len(b)), HeaderLen: n, RawHeader: hb}
	if !plain.readPlain(hb, 0) {
		if !reflect.DeepEqual(plain, &Header{FileSize: int64(len(b)), HeaderLen: n, RawHeader: hb}) {
			t.Fatalf("readPlain declined but changed the header: %+v", plain)
		}
		return false
	}
	if !full.Valid() || len(full.Findings) > 0 || full.Omitted != nil {
		t.Fatalf("readPlain read a header the full parser finds fault with (%v, %v): %.300q", full.RefErr, full.Findings, hb)
	}
	full.kept = nil
	if !reflect.DeepEqual(plain, full) {
		for i := range min(len(plain.Tensors), len(full.Tensors)) {
			if !reflect.DeepEqual(plain.Tensors[i], full.Tensors[i]) {
				t.Errorf("tensor %d: plain %+v, full %+v", i, plain.Tensors[i], full.Tensors[i])
				break
			}
		}
		for i := range min(len(plain.Metadata), len(full.Metadata)) {
			if plain.Metadata[i] != full.Metadata[i] {
				t.Errorf("metadata %d: plain %+v, full %+v", i, plain.Metadata[i], full.Metadata[i])
				break
			}
		}
		t.Fatalf("plain and full headers differ (%d and %d tensors, %d and %d metadata entries, metadata %v and %v): %.300q",
			len(plain.Tensors), len(full.Tensors), len(plain.Metadata), len(full.Metadata), plain.HasMetadata, full.HasMetadata, hb)
	}
	read, err := Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	read.kept = nil
	if !reflect.DeepEqual(read, full) {
		t.Fatalf("Read differs from Parse: %.300q", hb)
	}
	return true
}

// withHeader is a file of the header h and data bytes after it.
func withHeader(h string, data int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(append(b, h...), make([]byte, data)...)
}

// plainSeeds are skimSeeds, the stfile writers' files every way they write them, and headers the plain
// path must decline or read exactly: escapes of every kind in metadata keys and values, names and keys
// written twice, out of order, control characters, bytes that are not UTF-8, padding, no tensor.
func plainSeeds(t testing.TB) [][]byte {
	out := skimSeeds(t)
	for _, b := range stfile.Fixtures() {
		out = append(out, b)
	}
	for _, f := range []stfile.File{stfile.LoRA(), stfile.Weights(), stfile.KohyaSDXL(1), stfile.KohyaSDXL(7), stfile.ManyTensors(3000)} {
		out = append(out, f.Build())
		f.Indent = true
		out = append(out, f.Build())
		f.Indent, f.NoPad = false, true
		out = append(out, f.Build())
		f.NoPad, f.Metadata, f.NullMetadata = false, nil, true
		out = append(out, f.Build())
		f.NullMetadata = false
		out = append(out, f.Build())
	}
	w := `"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}`
	v := `"v":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}`
	for _, c := range []struct {
		h    string
		data int
	}{
		{`{` + w + `}`, 4},
		{`{` + w + `,` + v + `}`, 8},
		{`{` + v + `,` + w + `}`, 8},
		{`{"__metadata__":{},` + w + `}`, 4},
		{`{"__metadata__":null,` + w + `}`, 4},
		{`{"__metadata__":{"a":"1","b":"2"},` + w + `}`, 4},
		{`{"__metadata__":{"b":"1","a":"2"},` + w + `}`, 4},
		{`{"__metadata__":{"a":"1","a":"2"},` + w + `}`, 4},
		{`{"__metadata__":{"b":"1","a":"2","b":"3"},` + w + `}`, 4},
		{`{"__metadata__":{"k\"ey\\":"v\\\"\/\b\f\n\r\t\u0041\u00e9\u20ac\uFFFF\u0000"},` + w + `}`, 4},
		{`{"__metadata__":{"a":"\ud83d\ude00"},` + w + `}`, 4},
		{`{"__metadata__":{"a":"\ud83d"},` + w + `}`, 4},
		{`{"__metadata__":{"a":"\x"},` + w + `}`, 4},
		{`{"__metadata__":{"a":"\u00g0"},` + w + `}`, 4},
		{`{"__metadata__":{"a":"x\\"},` + w + `}`, 4},
		{`{"__metadata__":{"a":"x\\\"y"},` + w + `}`, 4},
		{`{"__metadata__":{"a":"tab	in"},` + w + `}`, 4},
		{`{"__metadata__":{"a":"nl` + "\n" + `"},` + w + `}`, 4},
		{`{"__metadata__":{"a":"é ü 日本"},` + w + `}`, 4},
		{`{"__metadata__":{"a":"` + "\xff" + `"},` + w + `}`, 4},
		{`{"__metadata__":{"a":"` + "\xc3" + `"},` + w + `}`, 4},
		{`{"__metadata__":{"a":{"b":"c"}},` + w + `}`, 4},
		{`{"__metadata__":{"a":"b"},"__metadata__":{"a":"b"},` + w + `}`, 4},
		{`{` + w + `,"__metadata__":{"z":"y"}}`, 4},
		{`{` + w + `,` + w + `}`, 4},
		{`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8},
		{`{"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, 12},
		{`{"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}`, 4},
		{`{"z":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]},` + w + `}`, 4},
		{`{"b":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]},"e":{"dtype":"F8_E5M2","shape":[1],"data_offsets":[3,4]}}`, 4},
		{`{"":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4},
		{`{"w\u0041":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4},
		{`{"é":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4},
		{` {` + w + `}`, 4},
		{`{` + w + `}    `, 4},
		{`{` + w + "}\x00\x00", 4},
		{`{` + w + "}\t", 4},
		{"{\n" + w + "\n}", 4},
		{`{` + w + `}`, 8},
		{`{` + w + `}`, 2},
		{`{}`, 0},
		{`{"__metadata__":{"a":"b"}}`, 0},
		{`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"dtype":"F32"}}`, 4},
		{`{"w":{"shape":[1],"dtype":"F32","data_offsets":[0,4]}}`, 4},
		{`{"w":{"dtype":"F32","shape":[18446744073709551615,2],"data_offsets":[0,4]}}`, 4},
		{`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},}`, 4},
		{`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}`, 4},
	} {
		out = append(out, withHeader(c.h, c.data))
	}
	return out
}

// TestPlainSameAsFull: on every seed, the plain path either declines or reads the header exactly as
// the full parser does (plainAgrees); and it reads the usual files, the real ones included.
func TestPlainSameAsFull(t *testing.T) {
	read, real := 0, 0
	seeds := plainSeeds(t)
	for _, b := range seeds {
		if plainAgrees(t, b) {
			read++
		}
	}
	paths, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "corpus", "real", "*.safetensors"))
	if len(paths) == 0 {
		t.Fatal("the real corpus (../shared/corpus/real beside the repository) is not there")
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.Size() < 8<<20 {
			b, _ := os.ReadFile(p)
			if plainAgrees(t, b) {
				real++
			}
		}
	}
	t.Logf("the plain path read %d of %d seeds, %d of %d real files", read, len(seeds), real, len(paths))
	if read < len(seeds)/3 || real < 5 {
		t.Errorf("the plain path read %d of %d seeds, %d of %d real files", read, len(seeds), real, len(paths))
	}
	// What it must decline (the full parser finds something to say).
	for _, h := range []string{
		`{"__metadata__":{"a":"1","a":"2"},"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`,
		`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`,
		` {"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`,
		`{"__metadata__":{"a":"b"}}`,
		`{"__metadata__":{"a":"tab	in"},"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`,
	} {
		b := withHeader(h, 8)
		if strings.Count(h, `"w"`) == 1 && !strings.HasPrefix(h, `{"__metadata__":{"a":"b"}}`) {
			b = withHeader(h, 4)
		}
		if h == `{"__metadata__":{"a":"b"}}` {
			b = withHeader(h, 0)
		}
		m := Header{FileSize: int64(len(b)), HeaderLen: uint64(len(h))}
		if m.readPlain([]byte(h), 0) {
			t.Errorf("the plain path read %q", h)
		}
	}
}

// FuzzPlain: on any header, the plain path declines or agrees with the full parser (plainAgrees);
// it never panics.
func FuzzPlain(f *testing.F) {
	for _, b := range plainSeeds(f) {
		if n := binary.LittleEndian.Uint64(b); n <= uint64(len(b)-8) && n < 1<<16 {
			f.Add(string(b[8:8+n]), uint16(len(b)-8-int(n)))
		}
	}
	f.Fuzz(func(t *testing.T, header string, data uint16) {
		if len(header) > 1<<16 || strings.Count(header, "[") > 1000 {
			return
		}
		plainAgrees(t, withHeader(header, int(data)))
	})
}

// TestStrTo: strTo reads every escape as parseString does, next to plain runs of every length, near
// the end of the input and far from it, and leaves its buffer as it was when it fails.
func TestStrTo(t *testing.T) {
	for _, esc := range []string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u0041`, `\u00e9`, `\u20AC`, `\uffff`, `\u0000`, "\x01"} {
		for _, run := range []int{0, 1, 7, 8, 9, 16, 17} {
			body := strings.Repeat("a", run) + esc + strings.Repeat("b", run) + esc + esc + strings.Repeat("c", run)
			for _, tail := range []string{"", strings.Repeat(" ", 20)} {
				p := &parser{b: []byte(`"` + strings.ReplaceAll(body, "\x01", "") + `"`)}
				p.s = string(p.b)
				want, ok := p.parseString()
				if !ok {
					t.Fatalf("%q: parseString failed", body)
				}
				if strings.Contains(body, "\x01") { // a control character: parseString refuses it, strTo copies it
					want = strings.Repeat("a", run) + "\x01" + strings.Repeat("b", run) + "\x01\x01" + strings.Repeat("c", run)
				}
				dst := []byte("xy")
				sk := skimmer{b: []byte(`"` + body + `"` + tail)}
				got, at, n, ok := sk.strTo(&dst)
				value := string(got)
				if at >= 0 {
					value = string(dst[at : at+n])
				}
				if !ok || value != want || string(got) != body || sk.i != len(body)+2 || string(dst[:2]) != "xy" {
					t.Errorf("%q: strTo %q (%v, at %d), want %q", body, value, ok, at, want)
				}
			}
		}
	}
	for _, bad := range []string{`"a\x"`, `"a\u12"`, `"a\ud800"`, `"a\uDC00 "`, `"a\u00g0"`, `"a\"`, `"abc`, `"a\"bc`, `"a\u0041`} {
		dst := []byte("xy")
		sk := skimmer{b: []byte(bad)}
		if _, _, _, ok := sk.strTo(&dst); ok || string(dst) != "xy" {
			t.Errorf("%q read (%v), or the buffer changed: %q", bad, ok, dst)
		}
	}
}

// TestPlainReusesBuffer: headers read one after another into one buffer (as a collection is read,
// the buffer grown when a header does not fit) are each the one the full parser reads, though each
// is given the memory of the last; and reading a kohya LoRA's header again into its buffer allocates
// next to nothing (its tensors, shapes, metadata and decoded strings are the last one's memory).
func TestPlainReusesBuffer(t *testing.T) {
	var buf []byte
	for round := 0; round < 2; round++ {
		for _, b := range plainSeeds(t) {
			if len(b) < 8 {
				continue
			}
			n := binary.LittleEndian.Uint64(b)
			if n > uint64(len(b)-8) {
				continue
			}
			got, err := ReadHeadInto(bytes.NewReader(b), int64(len(b)), b[:8], buf)
			if err != nil {
				t.Fatal(err)
			}
			want := Parse(bytes.Clone(b[8:8+n]), int64(len(b)))
			got.kept, want.kept = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("read into the buffer: %d tensors, %d metadata entries; fresh: %d, %d: %.200q", len(got.Tensors), len(got.Metadata), len(want.Tensors), len(want.Metadata), b[8:8+n])
			}
			if cap(got.RawHeader) > cap(buf) {
				buf = got.RawHeader[:0]
			}
		}
	}
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	b := stfile.KohyaSDXL(2).Build()
	buf = make([]byte, 0, len(b))
	read := func() {
		h, err := ReadHeadInto(bytes.NewReader(b), int64(len(b)), b[:8], buf)
		if err != nil || !h.Valid() || len(h.Tensors) == 0 {
			t.Fatal(err, h.RefErr)
		}
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // a collection lets the memory kept for the buffer go
	read()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		read()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 20; per > 4<<10 {
		t.Errorf("%d bytes allocated a header read again into its buffer", per)
	}
}

// TestTextOnly: TextOnly is utf8.Valid && !HasControlOrTab, wherever the byte that decides is and
// whatever its value (every byte, at every place of a few 32-byte steps and the tail).
func TestTextOnly(t *testing.T) {
	for n := 0; n < 100; n++ {
		for _, c := range []string{"", "\x00", "\x1f", "\t", "\n", " ", "~", "\x7f", "é", "\xff", "\xc3", "日"} {
			b := []byte(strings.Repeat("a", n) + c + strings.Repeat("b", 100-n))
			if got, want := TextOnly(b), utf8.Valid(b) && !HasControlOrTab(b); got != want {
				t.Errorf("%q: %v, want %v", b, got, want)
			}
		}
		for c := range 256 {
			b := []byte(strings.Repeat(" ", 100))
			b[n] = byte(c)
			if got, want := TextOnly(b), utf8.Valid(b) && !HasControlOrTab(b); got != want {
				t.Errorf("byte %#x at %d: %v, want %v", c, n, got, want)
			}
		}
	}
}

// TestPlainSameRest: headers of one layout read one after another into one buffer (a collection's
// LoRAs: the same tensor entries after different metadata, sameRest's quick way) are each the one
// the full parser reads: metadata longer or shorter than the last (the entries moved), written twice,
// more data after the tensors, a tensor entry changed, the metadata after the tensors.
func TestPlainSameRest(t *testing.T) {
	var files []stfile.File
	for i := range 4 {
		files = append(files, stfile.KohyaSDXL(i))
	}
	longer := stfile.KohyaSDXL(7)
	longer.Metadata = append(longer.Metadata, stfile.KV{Key: "zz_note", Value: strings.Repeat("é\"\\x", 50)})
	twice := stfile.KohyaSDXL(8)
	twice.Metadata = append(twice.Metadata, twice.Metadata[0])
	trailing := stfile.KohyaSDXL(9)
	trailing.Trailing = []byte{0, 0, 0, 0}
	changed := stfile.KohyaSDXL(10)
	changed.Tensors = slices.Clone(changed.Tensors)
	changed.Tensors[len(changed.Tensors)-1].Name += "x"
	files = append(files, longer, stfile.KohyaSDXL(11), twice, stfile.KohyaSDXL(12), trailing, stfile.KohyaSDXL(13), changed, stfile.KohyaSDXL(14))
	var seq [][]byte
	for _, f := range files {
		seq = append(seq, f.Build())
	}
	b := seq[0] // the metadata moved after the tensors: not the quick way
	n := binary.LittleEndian.Uint64(b)
	h := string(b[8 : 8+n])
	meta := h[len(metaFirst) : strings.Index(h, `},"`)+1]
	moved := "{" + h[strings.Index(h, `},"`)+3:strings.LastIndex(h, "}")] + `,"__metadata__":` + meta + "}"
	seq = append(seq, withHeader(moved, len(b)-8-int(n)), seq[1])
	buf := make([]byte, 0, 1<<20)
	for i, b := range seq {
		n := binary.LittleEndian.Uint64(b)
		got, err := ReadHeadInto(bytes.NewReader(b), int64(len(b)), b[:8], buf)
		if err != nil {
			t.Fatal(err)
		}
		want := Parse(bytes.Clone(b[8:8+n]), int64(len(b)))
		got.kept, want.kept = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("file %d: read after the others differs from a fresh read (valid %v, %v)", i, got.Valid(), want.Valid())
		}
	}
}

// FuzzPlainSameRest: a header read into a buffer after another (a LoRA's, `__metadata__` first) is
// the one the full parser reads, however it differs from the first (sameRest's quick way when only its
// metadata does); it never panics.
func FuzzPlainSameRest(f *testing.F) {
	first := stfile.LoRA().Build()
	n := binary.LittleEndian.Uint64(first)
	h := string(first[8 : 8+n])
	f.Add(h, uint16(len(first)-8-int(n)))
	if i := strings.Index(h, `},"`); strings.HasPrefix(h, metaFirst) && i > 0 {
		rest := h[i+1:]
		for _, meta := range []string{`{}`, `{"a":"b"}`, `{"a":"\u00e9\"\\"}`, `{"a":"b","a":"c"}`, `{"a":"	"}`, `{"a":1}`, `{"a":"\ud800"}`} {
			f.Add(metaFirst+meta+rest, uint16(len(first)-8-int(n)))
			f.Add(metaFirst+meta+rest+"   ", uint16(len(first)-8-int(n)))
			f.Add(metaFirst+meta+rest, uint16(len(first)-8-int(n)+1))
		}
	}
	f.Fuzz(func(t *testing.T, header string, data uint16) {
		if len(header) > 1<<16 || strings.Count(header, "[") > 1000 {
			return
		}
		buf := make([]byte, 0, 1<<17)
		for _, b := range [][]byte{first, withHeader(header, int(data))} {
			n := binary.LittleEndian.Uint64(b)
			got, err := ReadHeadInto(bytes.NewReader(b), int64(len(b)), b[:8], buf)
			if err != nil {
				t.Fatal(err)
			}
			want := Parse(bytes.Clone(b[8:8+n]), int64(len(b)))
			got.kept, want.kept = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("read after another differs from a fresh read (valid %v, %v): %.300q", got.Valid(), want.Valid(), b[8:8+n])
			}
		}
	})
}
