package dequant

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/gguf"
)

var update = flag.Bool("update", false, "re-record testdata/ggml-dequant.txt with the oracle named by STDIFF_GGML_DEQUANT")

// oracleEnv names the oracle: ggml's to_float of each type as a filter (testdata/dequant_oracle.c).
const oracleEnv = "STDIFF_GGML_DEQUANT"

const recorded = "testdata/ggml-dequant.txt"

// blocksPerType is how many random blocks of each type the tests dequantise.
const blocksPerType = 512

// splitmix64 is the generator the random blocks come from (the same stream wherever it runs).
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// input is blocksPerType random blocks of type t: every byte random, so scales take every value (NaN
// and Inf halves among them) and so do quants.
func input(t gguf.GGMLType) []byte {
	info, _ := t.Info()
	b := make([]byte, blocksPerType*int(info.TypeSize))
	s := splitmix64(uint64(t) * 7919)
	for i := range b {
		b[i] = byte(s.next())
	}
	return b
}

// digest is the SHA-256 of the values' bits, every NaN written as 0x7fc00000 (payloads may differ).
func digest(v []float32) string {
	h := sha256.New()
	var w [4]byte
	for _, x := range v {
		bits := math.Float32bits(x)
		if x != x {
			bits = 0x7fc00000
		}
		binary.LittleEndian.PutUint32(w[:], bits)
		h.Write(w[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// oracleTypes are the types ggml has a to_float for, that Row dequantises.
func oracleTypes() []gguf.GGMLType {
	var out []gguf.GGMLType
	for t := gguf.GGMLType(0); t < gguf.TypeCount; t++ {
		switch t {
		case gguf.TypeF32, gguf.TypeI8, gguf.TypeI16, gguf.TypeI32, gguf.TypeI64, gguf.TypeF64:
			continue // ggml has no to_float for them (F32's is the identity)
		}
		if Supported(t) {
			out = append(out, t)
		}
	}
	return out
}

func dequantise(t *testing.T, typ gguf.GGMLType, b []byte) []float32 {
	t.Helper()
	info, _ := typ.Info()
	out := make([]float32, len(b)/int(info.TypeSize)*int(info.BlockSize))
	if err := Row(typ, b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRecordedOracle: every supported type's dequantised random blocks are, bit for bit (NaN as NaN),
// what ggml's reference dequantisers gave for them (testdata/ggml-dequant.txt, recorded from ggml by
// TestOracle), and every type recorded is dequantised.
func TestRecordedOracle(t *testing.T) {
	f, err := os.Open(recorded)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, "#") && line != "" {
			name, d, _ := strings.Cut(line, "\t")
			want[name] = d
		}
	}
	types := oracleTypes()
	for name := range want {
		if !slices.ContainsFunc(types, func(typ gguf.GGMLType) bool { return typ.String() == name }) {
			t.Errorf("%s: recorded from ggml, not dequantised here", name)
		}
	}
	for _, typ := range types {
		got := digest(dequantise(t, typ, input(typ)))
		if w, ok := want[typ.String()]; !ok {
			t.Errorf("%s: no recorded digest (re-record with %s=… -run TestOracle -update)", typ, oracleEnv)
		} else if got != w {
			t.Errorf("%s: digest %s, ggml's %s", typ, got, w)
		}
	}
}

// TestOracle runs ggml's own dequantisers (the binary STDIFF_GGML_DEQUANT names) on the same blocks and
// compares value by value; with -update it re-records testdata/ggml-dequant.txt.
func TestOracle(t *testing.T) {
	oracle := os.Getenv(oracleEnv)
	if oracle == "" {
		t.Skipf("%s is not set (build testdata/dequant_oracle.c against ggml)", oracleEnv)
	}
	types := oracleTypes()
	var in bytes.Buffer
	counts := make([]int, len(types))
	for i, typ := range types {
		info, _ := typ.Info()
		counts[i] = blocksPerType * int(info.BlockSize)
		binary.Write(&in, binary.LittleEndian, [2]uint32{uint32(typ), uint32(counts[i])})
		in.Write(input(typ))
	}
	cmd := exec.Command(oracle)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v: %s", err, stderr.Bytes())
	}
	var lines []string
	for i, typ := range types {
		want := make([]float32, counts[i])
		if len(out) < 4*len(want) {
			t.Fatalf("oracle: short output")
		}
		for j := range want {
			want[j] = math.Float32frombits(binary.LittleEndian.Uint32(out[4*j:]))
		}
		out = out[4*len(want):]
		got := dequantise(t, typ, input(typ))
		for j := range want {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) && !(got[j] != got[j] && want[j] != want[j]) {
				t.Errorf("%s: element %d is %g (%08x), ggml's %g (%08x)", typ, j, got[j], math.Float32bits(got[j]), want[j], math.Float32bits(want[j]))
				break
			}
		}
		lines = append(lines, fmt.Sprintf("%s\t%s", typ, digest(want)))
	}
	if *update {
		head := "# ggml's dequantisers (to_float) on canon/gguf/dequant's random blocks, " + fmt.Sprint(blocksPerType) +
			" per type: the SHA-256 of the float32 bits, NaN as 0x7fc00000.\n# ggml d99724f2b141fed9e1a9f402213506c081433465; re-record: " +
			oracleEnv + "=… go test ./canon/gguf/dequant -run TestOracle -update\n"
		if err := os.WriteFile(recorded, []byte(head+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRowErrors: a type without a dequantiser, or blocks and elements that do not match, are errors.
func TestRowErrors(t *testing.T) {
	for _, c := range []struct {
		t    gguf.GGMLType
		n, k int
	}{
		{gguf.TypeQ8_K, 292, 256}, {gguf.TypeQ8_1, 36, 32}, {gguf.TypeIQ2_XXS, 65, 256}, {gguf.TypeQ4_0, 17, 32}, {gguf.TypeQ4_0, 18, 31}, {gguf.GGMLType(999), 4, 1},
	} {
		if err := Row(c.t, make([]byte, c.n), make([]float32, c.k)); err == nil {
			t.Errorf("%s, %d bytes, %d elements: no error", c.t, c.n, c.k)
		}
	}
	if Supported(gguf.TypeQ8_K) || !Supported(gguf.TypeQ4_K) || !Supported(gguf.TypeIQ1_M) {
		t.Error("Supported")
	}
}
