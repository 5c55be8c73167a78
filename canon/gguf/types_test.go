package gguf_test

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/gguf"
)

// TestTypesMatchGGML checks the type table against ggml's own answers (testdata/ggml-types.txt).
func TestTypesMatchGGML(t *testing.T) {
	fh, err := os.Open("testdata/ggml-types.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	n := 0
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		id, _ := strconv.Atoi(f[0])
		blck, _ := strconv.ParseUint(f[2], 10, 64)
		size, _ := strconv.ParseUint(f[3], 10, 64)
		info, ok := gguf.GGMLType(id).Info()
		if !ok {
			t.Errorf("type %d (%s) missing", id, f[1])
			continue
		}
		if info.GGMLName != f[1] || info.BlockSize != blck || info.TypeSize != size || info.Removed != (blck == 0) {
			t.Errorf("type %d: %+v, ggml says %s block %d size %d", id, info, f[1], blck, size)
		}
		if !info.Removed && !strings.EqualFold(info.Name, info.GGMLName) {
			t.Errorf("type %d: name %s vs ggml's %s", id, info.Name, info.GGMLName)
		}
		n++
	}
	if n != int(gguf.TypeCount) {
		t.Errorf("ggml lists %d types, the table has %d", n, gguf.TypeCount)
	}
	if ty, ok := gguf.TypeByName("q4_K"); !ok || ty != gguf.TypeQ4_K {
		t.Errorf("TypeByName(q4_K) = %v, %v", ty, ok)
	}
	if ty, ok := gguf.TypeByName("Q4_0_4_4"); !ok || ty != 31 {
		t.Errorf("TypeByName(Q4_0_4_4) = %v, %v", ty, ok)
	}
}

func TestByteLen(t *testing.T) {
	for _, c := range []struct {
		t    gguf.GGMLType
		dims []uint64
		n    uint64
		ok   bool
	}{
		{gguf.TypeF32, []uint64{4, 2}, 32, true},
		{gguf.TypeF32, nil, 4, true},
		{gguf.TypeQ4_K, []uint64{512, 3}, 2 * 3 * 144, true},
		{gguf.TypeQ4_K, []uint64{100}, 0, false},
		{gguf.TypeQ4_0, []uint64{0, math.MaxUint64}, 0, true},
		{gguf.TypeF32, []uint64{1 << 62}, 0, false},
		{gguf.TypeI8, []uint64{1 << 32, 1 << 32}, 0, false},
		{31, []uint64{64}, 36, true}, // a removed type, laid out as it was
		{4, []uint64{32}, 0, false},  // removed before GGUF
		{99, []uint64{32}, 0, false},
	} {
		n, ok := c.t.ByteLen(c.dims)
		if n != c.n || ok != c.ok {
			t.Errorf("%v %v: %d %v, want %d %v", c.t, c.dims, n, ok, c.n, c.ok)
		}
	}
}
