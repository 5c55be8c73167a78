package gguf_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/gguf"
)

var update = flag.Bool("update", false, "re-record testdata/oracle-verdicts.txt with the oracle named by STDIFF_GGUF_ORACLE")

const verdictsFile = "testdata/oracle-verdicts.txt"

// oracleEnv names the oracle binary: ggml's gguf_init_from_file plus llama.cpp's loader bounds check,
// one verdict line per framed input on stdin (see cmd/stdiff/docs/gguf.md on the GGUF oracle).
const oracleEnv = "STDIFF_GGUF_ORACLE"

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

func read(name string, b []byte) *gguf.File {
	f, err := gguf.Read(bytes.NewReader(b), int64(len(b)), name)
	if err != nil {
		panic(err) // a bytes.Reader never fails within its size
	}
	return f
}

// verdict renders a file's strict verdict as the oracle prints it.
func verdict(f *gguf.File) string {
	if f.Verdict == nil {
		return fmt.Sprintf("OK kv=%d tensors=%d data=%d align=%d", len(f.KVs), len(f.Tensors), f.DataOffset, f.Alignment)
	}
	return "ERR " + string(f.Verdict.Rule)
}

// runOracle returns the oracle's verdict line for each input (verdict, then a tab and gguf.cpp's message).
func runOracle(t testing.TB, oracle string, inputs [][]byte) []string {
	t.Helper()
	var in bytes.Buffer
	for _, b := range inputs {
		in.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(b))))
		in.Write(b)
	}
	cmd := exec.Command(oracle, "-")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v: %s", err, stderr.Bytes())
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("oracle answered %d lines for %d inputs", len(lines), len(inputs))
	}
	return lines
}

// TestOracleVerdicts checks the strict verdict on every edge case against ggml's, recorded in
// testdata/oracle-verdicts.txt. A case that diverges (overflow) must be rejected with an Overflow verdict.
func TestOracleVerdicts(t *testing.T) {
	cases := edgeCases()
	if *update {
		oracle := os.Getenv(oracleEnv)
		if oracle == "" {
			t.Fatalf("-update needs %s=path to the oracle", oracleEnv)
		}
		recordVerdicts(t, oracle, cases)
	}
	want := readVerdicts(t)
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Errorf("two edge cases named %s", c.name)
		}
		seen[c.name] = true
		w, ok := want[c.name]
		if !ok {
			t.Errorf("%s: no oracle verdict recorded (run with -update and %s)", c.name, oracleEnv)
			continue
		}
		f := read(c.name, c.b)
		got := verdict(f)
		switch {
		case c.diverges != "":
			if f.Verdict == nil || !f.Verdict.Overflow {
				t.Errorf("%s: expected an overflow verdict (%s), got %s", c.name, c.diverges, got)
			}
			if got == w {
				t.Errorf("%s: marked as diverging, but stdiff and gguf.cpp agree (%s)", c.name, got)
			}
		case got != w && !uninitType(f, int64(len(c.b)), w):
			t.Errorf("%s: stdiff %s (%v), gguf.cpp %s", c.name, got, f.Verdict, w)
		}
		checkInvariants(t, c.name, f, int64(len(c.b)))
		if !strings.HasPrefix(c.name, "cut-") && strings.HasPrefix(c.name, "ok-") != f.Valid() {
			t.Errorf("%s: the name says whether it is valid, the verdict is %s", c.name, got)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("%s: recorded but no longer an edge case (re-record with -update)", name)
		}
	}
}

func recordVerdicts(t *testing.T, oracle string, cases []edgeCase) {
	inputs := make([][]byte, len(cases))
	for i, c := range cases {
		inputs[i] = c.b
	}
	got := runOracle(t, oracle, inputs)
	ggml := os.Getenv("STDIFF_GGUF_ORACLE_COMMIT")
	if ggml == "" {
		t.Fatal("-update needs STDIFF_GGUF_ORACLE_COMMIT=the ggml commit the oracle was built from")
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# gguf.cpp's verdicts on canon/gguf's edge cases: ggml %s, gguf_init_from_file with no_alloc and a\n", ggml)
	buf.WriteString("# ggml context (as llama.cpp loads), then llama.cpp's loader check that every tensor lies within the file.\n")
	buf.WriteString("# name<TAB>verdict<TAB>ggml's first error message; re-record: STDIFF_GGUF_ORACLE=… go test ./canon/gguf -run TestOracleVerdicts -update\n")
	for i, c := range cases {
		fmt.Fprintf(&buf, "%s\t%s\n", c.name, got[i])
	}
	if err := os.WriteFile(verdictsFile, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readVerdicts(t *testing.T) map[string]string {
	fh, err := os.Open(verdictsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") || sc.Text() == "" {
			continue
		}
		name, rest, _ := strings.Cut(sc.Text(), "\t")
		v, _, _ := strings.Cut(rest, "\t")
		want[name] = v
	}
	return want
}

// uninitType reports whether gguf.cpp names another rule than stdiff because the file ends inside a
// tensor's type field: gguf.cpp then checks the type it failed to read, an uninitialised value
// (undefined behaviour), and names tensor-type or tensor-block-size; stdiff names tensor-info-read.
// Both reject the file.
func uninitType(f *gguf.File, size int64, oracle string) bool {
	return f.Verdict != nil && f.Verdict.Rule == gguf.RuleTensorInfoRead && size-f.Verdict.Offset < 4 &&
		(oracle == "ERR "+string(gguf.RuleTensorType) || oracle == "ERR "+string(gguf.RuleBlockSize))
}

// checkInvariants holds for every file: the verdict and the findings agree, and a valid file is
// laid out as llama.cpp needs.
func checkInvariants(t testing.TB, name string, f *gguf.File, size int64) {
	t.Helper()
	if f.Verdict == nil {
		if f.HasErrors() {
			t.Fatalf("%s: valid, but has an error finding: %+v", name, f.Findings)
		}
		if int64(len(f.Tensors)) != f.TensorCount || int64(len(f.KVs)) != f.KVCount {
			t.Fatalf("%s: valid with %d/%d tensors and %d/%d pairs", name, len(f.Tensors), f.TensorCount, len(f.KVs), f.KVCount)
		}
		if f.DataOffset < f.HeaderEnd || f.DataOffset > size || f.DataOffset%int64(f.Alignment) != 0 && len(f.Tensors) > 0 {
			t.Fatalf("%s: valid with data at %d (header ends at %d, size %d)", name, f.DataOffset, f.HeaderEnd, size)
		}
		next := uint64(0)
		for _, ti := range f.Tensors {
			if !ti.SizeOK || ti.Offset != next || uint64(f.DataOffset)+ti.Offset+ti.Size > uint64(size) {
				t.Fatalf("%s: valid with tensor %q misplaced: %+v", name, ti.Name, ti)
			}
			if n, ok := ti.Type.ByteLen(ti.Dims); !ok || n != ti.Size {
				t.Fatalf("%s: tensor %q size %d, type says %d", name, ti.Name, ti.Size, n)
			}
			next += (ti.Size + f.Alignment - 1) / f.Alignment * f.Alignment
		}
		return
	}
	for _, fd := range f.Findings {
		if fd.Severity == finding.SevError && fd.RefKind == finding.RefKind(f.Verdict.Rule) {
			return
		}
	}
	t.Fatalf("%s: verdict %v has no error finding of its rule: %+v", name, f.Verdict, f.Findings)
}

// mutate returns a random variant of b: bytes replaced, removed, inserted, numbers set to edge values,
// the file cut or extended.
func mutate(rng *rand.Rand, b []byte) []byte {
	b = bytes.Clone(b)
	edges := []uint64{0, 1, 2, 3, 4, 7, 8, 9, 12, 13, 31, 32, 33, 63, 64, 255, 256, 1 << 30, 1<<30 + 1, 1 << 31,
		1 << 32, 1 << 61, 1 << 62, 1 << 63, 1<<63 - 1, 1<<64 - 1}
	for k := rng.Intn(3) + 1; k > 0; k-- {
		if len(b) == 0 {
			b = append(b, 'G')
			continue
		}
		pos := rng.Intn(len(b))
		switch rng.Intn(7) {
		case 0:
			b[pos] = byte(rng.Intn(256))
		case 1:
			b[pos] ^= 1 << rng.Intn(8)
		case 2:
			b = append(b[:pos], b[pos+1:]...)
		case 3:
			b = append(b[:pos], append([]byte{byte(rng.Intn(256))}, b[pos:]...)...)
		case 4: // an edge value as a u32 or u64
			v := edges[rng.Intn(len(edges))]
			w := 4 << rng.Intn(2)
			if pos+w <= len(b) {
				for i := 0; i < w; i++ {
					b[pos+i] = byte(v >> (8 * i))
				}
			}
		case 5:
			b = b[:pos]
		case 6:
			b = append(b, make([]byte, rng.Intn(64))...)
		}
	}
	return b
}

// TestAgainstOracle compares the strict verdict with the live oracle on thousands of random mutations
// of the edge cases. It runs only where STDIFF_GGUF_ORACLE names the oracle; CI relies on the recorded
// verdicts.
func TestAgainstOracle(t *testing.T) {
	oracle := os.Getenv(oracleEnv)
	if oracle == "" {
		t.Skipf("%s not set: the differential test needs the ggml oracle", oracleEnv)
	}
	rng := rand.New(rand.NewSource(1))
	seeds := edgeCases()
	n := 100000
	if testing.Short() {
		n = 5000
	}
	inputs := make([][]byte, n)
	for i := range inputs {
		inputs[i] = mutate(rng, seeds[rng.Intn(len(seeds))].b)
	}
	want := runOracle(t, oracle, inputs)
	bad, overflow, valid := 0, 0, 0
	overflowAs := map[string]int{} // what gguf.cpp says where stdiff gives an overflow verdict
	for i, b := range inputs {
		f := read("mut", b)
		checkInvariants(t, "mut", f, int64(len(b)))
		w, _, _ := strings.Cut(want[i], "\t")
		got := verdict(f)
		if f.Verdict != nil && f.Verdict.Overflow {
			overflow++
			overflowAs[string(f.Verdict.Rule)+" → "+w]++
			continue
		}
		if f.Valid() {
			valid++
		}
		if got != w && !uninitType(f, int64(len(b)), w) {
			bad++
			if bad <= 10 {
				t.Errorf("input %q: stdiff %s (%v), gguf.cpp %s", b, got, f.Verdict, want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d mutated inputs disagree", bad, n)
	}
	t.Logf("%d mutated inputs (%d valid): verdicts agree; %d overflow verdicts not compared: %v", n, valid, overflow, overflowAs)
}

// FuzzAgainstOracle is coverage-guided differential testing against the live oracle (STDIFF_GGUF_ORACLE).
func FuzzAgainstOracle(f *testing.F) {
	oracle := os.Getenv(oracleEnv)
	for _, c := range edgeCases() {
		f.Add(c.b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if oracle == "" {
			t.Skipf("%s not set", oracleEnv)
		}
		g := read("fuzz", b)
		if g.Verdict != nil && g.Verdict.Overflow {
			return
		}
		want, _, _ := strings.Cut(runOracle(t, oracle, [][]byte{b})[0], "\t")
		if got := verdict(g); got != want && !uninitType(g, int64(len(b)), want) {
			t.Fatalf("stdiff %s (%v), gguf.cpp %s", got, g.Verdict, want)
		}
	})
}
