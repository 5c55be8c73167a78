package canon

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/card"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
)

// TestTypedMetadataFacts: a GGUF model's metadata says what diff compares without package gguf (#34
// item 1): strings longer than the header read keeps are Truncated, their Len the file's and Full the
// whole string while the file is open; arrays are MetaArrays whose elements are read on demand as
// text. A safetensors model's metadata is not typed.
func TestTypedMetadataFacts(t *testing.T) {
	long := strings.Repeat("x", gguf.MaxInline+10)
	tokens := make([]string, 40) // more than gguf.HeadLen: the rest read from the file
	for i := range tokens {
		tokens[i] = "t" + strconv.Itoa(i)
	}
	b := ggufw.File{KVs: []ggufw.KV{
		{Key: "general.architecture", Val: ggufw.Str("llama")},
		{Key: "tokenizer.chat_template", Val: ggufw.Str(long)},
		{Key: "tokenizer.ggml.tokens", Val: ggufw.Strs(tokens...)},
		{Key: "llama.ids", Val: ggufw.I32s(-1, 2, 3)},
	}}.Build()
	m, err := Read(bytes.NewReader(b), int64(len(b)), "m.gguf")
	if err != nil || !m.TypedMetadata() {
		t.Fatalf("%v, typed %v", err, m.TypedMetadata())
	}
	idx := map[string]*MetaEntry{}
	for i := range m.Metadata {
		idx[m.Metadata[i].Key] = &m.Metadata[i]
	}
	if e := idx["general.architecture"]; e.Truncated() || e.Len != 5 || e.Array != nil {
		t.Errorf("architecture: truncated %v, len %d, array %v", e.Truncated(), e.Len, e.Array)
	}
	e := idx["tokenizer.chat_template"]
	full, err := e.Full()
	if !e.Truncated() || e.Len != uint64(len(long)) || len(e.Value) != gguf.MaxInline || err != nil || full != long {
		t.Errorf("long string: truncated %v, len %d, value %d bytes, full %d bytes, %v", e.Truncated(), e.Len, len(e.Value), len(full), err)
	}
	a := idx["tokenizer.ggml.tokens"].Array
	var got []string
	if a == nil || a.Elem() != "string" || a.Len() != 40 || a.Size() <= 0 || a.Each(func(i uint64, s string) error { got = append(got, s); return nil }) != nil {
		t.Fatalf("tokens: %v", a)
	}
	if strings.Join(got, ",") != strings.Join(tokens, ",") {
		t.Errorf("tokens read %v", got)
	}
	got = nil
	if a := idx["llama.ids"].Array; a.Elem() != "int32" || a.Each(func(i uint64, s string) error { got = append(got, s); return nil }) != nil || strings.Join(got, ",") != "-1,2,3" {
		t.Errorf("ids: %s %v", a.Elem(), got)
	}
	st := ReadBytes("m.safetensors", []byte("\x1c\x00\x00\x00\x00\x00\x00\x00"+`{"__metadata__":{"a":"b"}}  `))
	if st.TypedMetadata() || st.Metadata[0].Truncated() || st.Metadata[0].Array != nil || st.Card() != nil {
		t.Errorf("safetensors: typed %v, %+v, card %v", st.TypedMetadata(), st.Metadata, st.Card())
	}
	if g, ok := m.Card().(*card.GGUF); !ok || g.Architecture != "llama" || g.ChatTemplate == nil || g.ChatTemplate.BLAKE3 != "" {
		t.Errorf("card %#v", m.Card())
	}
}

// TestSkimRegistry: the skim is the registry's fact of the format that has one (safetensors); a
// format without one says no, and whole refuses a header with a control character that the skim
// alone accepts.
func TestSkimRegistry(t *testing.T) {
	h := []byte(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`)
	var scratch [][2]uint64
	var s countSink
	if _, ok := Skim(FormatSafetensors, h, 4, &scratch, &s, true); !ok || s.n != 1 {
		t.Errorf("safetensors: ok %v, %d entries", ok, s.n)
	}
	if _, ok := Skim(FormatGGUF, h, 4, &scratch, &s, false); ok {
		t.Error("GGUF has no skim")
	}
	ctl := []byte(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"__metadata__":{"a":"b` + "\x01" + `"}}`)
	if _, ok := Skim(FormatSafetensors, ctl, 4, &scratch, &s, true); ok {
		t.Error("whole: a control character in a string is Read's to judge")
	}
}

// countSink counts the entries a skim reads.
type countSink struct{ n int }

func (c *countSink) Entry(_, _ []byte, _ []uint64, _, _ uint64) { c.n++ }
func (c *countSink) Reset()                                     { c.n = 0 }
