package main

import (
	"bytes"
	"os"
	"testing"
)

// TestParse: tables of unsigned types are read, comments dropped, a size given by a #define resolved, the
// GGML_TABLE_BEGIN macro's own definition and signed tables skipped; a count that is not the size is an error.
func TestParse(t *testing.T) {
	src := `#define GGML_TABLE_BEGIN(type, name, size) static const type name[size] = {
#define NGRID 3
GGML_TABLE_BEGIN(uint8_t, small, 2)
    1, 0x80, // comment, 7
GGML_TABLE_END()
GGML_TABLE_BEGIN(int8_t, signed_one, 1)
    -1,
GGML_TABLE_END()
GGML_TABLE_BEGIN(uint64_t, grid, NGRID)
    0xffffffffffffffff, 0x0101010101010101,
    0x0000000000000000,
GGML_TABLE_END()
`
	got, err := parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s := got["small"].values; len(s) != 2 || s[0] != 1 || s[1] != 0x80 {
		t.Errorf("small: %v", s)
	}
	if g := got["grid"]; g.ctype != "uint64_t" || len(g.values) != 3 || g.values[0] != ^uint64(0) {
		t.Errorf("grid: %+v", g)
	}
	if _, ok := got["signed_one"]; ok || len(got) != 2 {
		t.Errorf("tables %v", got)
	}
	if _, err := parse(bytes.Replace([]byte(src), []byte("NGRID)"), []byte("4)"), 1)); err == nil {
		t.Error("3 values, size 4: no error")
	}
}

// TestRegenerate: with STDIFF_GGML_SRC naming a ggml checkout at the commit codebooks.txt names,
// the generator writes codebooks.txt byte for byte.
func TestRegenerate(t *testing.T) {
	dir := os.Getenv("STDIFF_GGML_SRC")
	if dir == "" {
		t.Skip("STDIFF_GGML_SRC is not set (a ggml checkout)")
	}
	want, err := os.ReadFile("../codebooks.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, commit, _ := bytes.Cut(bytes.SplitN(want, []byte("\n"), 3)[1], []byte("# "))
	var got bytes.Buffer
	if err := run(&got, dir, string(commit)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Error("codebooks.txt is not what the generator writes from " + dir)
	}
}
