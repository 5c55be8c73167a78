package textfmt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/diff"
)

type point struct{ X, Y int }

func (p point) MarshalJSON() ([]byte, error) { return json.Marshal([2]int{p.X, p.Y}) }

type onPointer struct{ N int }

func (p *onPointer) MarshalJSON() ([]byte, error) { return []byte(`"pointer"`), nil }

type embedded struct{ Inner string }

// odd has what encoding/json has rules for.
type odd struct {
	Plain      string
	Renamed    int            `json:"renamed"`
	Omitted    string         `json:"omitted,omitempty"`
	Kept       string         `json:"kept,omitempty"`
	Zero       float64        `json:",omitempty"`
	NilSlice   []string       `json:"nil_slice"`
	EmptySlice []string       `json:"empty_slice"`
	NilOmitted []int          `json:"nil_omitted,omitempty"`
	Map        map[string]int `json:"map"`
	NilMap     map[string]int `json:"nil_map"`
	Ptr        *int           `json:"ptr"`
	NilPtr     *int           `json:"nil_ptr"`
	Any        any            `json:"any"`
	Bytes      []byte         `json:"bytes"`
	Nested     [][]string     `json:"nested"`
	Structs    []point        `json:"structs"`
	Pointers   []*onPointer   `json:"pointers"`
	Value      onPointer      `json:"value"`
	HTML       string         `json:"html"`
	Hidden     string         `json:"-"`
	//lint:ignore SA5008 the tag "-," names the field "-": the writer must read it as encoding/json does
	Dash       string            `json:"-,"`
	Inner      []embeddedHolder  `json:"inner"`
	Deep       map[string][]bool `json:"deep"`
	unexported int
}

type embeddedHolder struct {
	embedded
	Own []int `json:"own"`
}

// TestWriteJSONMatchesEncoder: what WriteJSON streams is byte for byte what encoding/json writes, for
// every kind of report the commands print and for the rules of encoding/json.
func TestWriteJSONMatchesEncoder(t *testing.T) {
	seven := 7
	values := map[string]any{
		"odd": &odd{Plain: "p", Renamed: 2, Kept: "k", EmptySlice: []string{}, Map: map[string]int{"b": 2, "a": 1},
			Ptr: &seven, Any: []any{1, "x", nil, map[string]any{"k": []int{}}}, Bytes: []byte("bytes"),
			Nested: [][]string{{"a", "b"}, {}, nil}, Structs: []point{{1, 2}}, Pointers: []*onPointer{{1}, nil},
			HTML: "<a href=\"x&y\">\u2028</a>", Hidden: "h", Dash: "d",
			Inner: []embeddedHolder{{embedded{"i"}, []int{1}}}, Deep: map[string][]bool{"x": {true}}, unexported: 1},
		"string option": []struct {
			N int `json:"n,string"`
			M odd
		}{{5, odd{}}},
		"empty struct":  struct{}{},
		"nil":           nil,
		"nil pointer":   (*odd)(nil),
		"scalar":        "a<b",
		"empty list":    []int{},
		"list of lists": [][]int{{1, 2}, {}},
	}
	// Reports, from the fixtures.
	read := func(name string) *canon.Model {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return canon.ReadBytes(name, b)
	}
	for _, pair := range [][2]string{{"base.safetensors", "changed.safetensors"}, {"base.safetensors", "reordered.safetensors"},
		{"lora.safetensors", "hostile.safetensors"}, {"base.safetensors", "retitled.safetensors"}} {
		values["diff "+pair[1]] = diff.Compare(diff.Side{Model: read(pair[0])}, diff.Side{Model: read(pair[1])}, diff.Options{})
	}
	for _, name := range []string{"base.safetensors", "nul-padded.safetensors", "repeated.safetensors", "truncated.safetensors", "hostile.safetensors"} {
		values["findings "+name] = read(name).Findings
	}
	checkEncodedAlike(t, values)

	// What encoding/json refuses, WriteJSON refuses too.
	var unsupported *json.UnsupportedValueError
	if err := textfmt.WriteJSON(&bytes.Buffer{}, []float64{1, math.NaN()}); !errors.As(err, &unsupported) {
		t.Errorf("NaN: %v", err)
	}
}

// checkEncodedAlike fails t for each value WriteJSON writes otherwise than encoding/json would.
func checkEncodedAlike(t *testing.T, values map[string]any) {
	t.Helper()
	for name, v := range values {
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := textfmt.WriteJSON(&got, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: streamed\n%s\nencoding/json\n%s", name, got.Bytes(), want.Bytes())
		}
	}
}

// TestWriteJSONL: one compact record per line, each as encoding/json writes it, HTML unescaped.
func TestWriteJSONL(t *testing.T) {
	var b bytes.Buffer
	if err := textfmt.WriteJSONL(&b, map[string]any{"schema": "x/v1", "a": "<&>"}, []int{1, 2}, nil); err != nil {
		t.Fatal(err)
	}
	want := `{"a":"<&>","schema":"x/v1"}` + "\n[1,2]\nnull\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	if err := textfmt.WriteJSONL(&b, math.Inf(1)); err == nil || strings.Contains(b.String()[len(want):], "Inf") {
		t.Errorf("+Inf: %v, wrote %q", err, b.String()[len(want):])
	}
}

// TestWriteRecords: each record on its line with "schema" first, as a struct with the schema and the
// record embedded writes it (what each report's JSONL did on its own before); a record that is not a
// JSON object is refused.
func TestWriteRecords(t *testing.T) {
	type rec struct {
		Path  string   `json:"path"`
		Size  *int64   `json:"size"`
		Words []string `json:"words,omitempty"`
	}
	type wrapped struct {
		Schema string `json:"schema"`
		*rec
	}
	n := int64(7)
	recs := []*rec{{Path: "a<&>\u2028.safetensors", Size: &n, Words: []string{"x"}}, {Path: ""}}
	var got, want bytes.Buffer
	if err := textfmt.WriteRecords(&got, "x/v1 <&>", recs[0], recs[1], struct{}{}); err != nil {
		t.Fatal(err)
	}
	if err := textfmt.WriteJSONL(&want, wrapped{"x/v1 <&>", recs[0]}, wrapped{"x/v1 <&>", recs[1]}, map[string]string{"schema": "x/v1 <&>"}); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want.String())
	}
	for _, bad := range []any{[]int{1}, "s", (*rec)(nil)} {
		if err := textfmt.WriteRecords(io.Discard, "x/v1", bad); err == nil {
			t.Errorf("%#v: no error", bad)
		}
	}
}
