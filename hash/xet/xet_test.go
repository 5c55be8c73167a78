package xet

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
)

// splitmix is xet-core's test data: SplitMix64 from seed, each word's little-endian bytes, cut to n.
func splitmix(seed uint64, n int) []byte {
	out := make([]byte, 0, n+8)
	for len(out) < n {
		seed += 0x9E3779B97F4A7C15
		z := seed
		z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
		z = (z ^ z>>27) * 0x94D049BB133111EB
		z ^= z >> 31
		for i := 0; i < 8; i++ {
			out = append(out, byte(z>>(8*i)))
		}
	}
	return out[:n]
}

func ints(t *testing.T, fields []string) []int {
	t.Helper()
	var out []int
	for _, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestChunkingVectors: xet-core's own chunking tests (testdata/chunking.txt, their source named there):
// the cuts of 1,000,000 SplitMix64 bytes, of constant bytes, and of the 128 paddings of the pattern that
// triggers a cut, serially (Cuts) and in pieces (Sum).
func TestChunkingVectors(t *testing.T) {
	f, err := os.Open("testdata/chunking.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var base []byte
	cases := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		head, tail, _ := strings.Cut(line, ": ")
		h := strings.Fields(head)
		var data []byte
		switch h[0] {
		case "pattern-base":
			for _, v := range ints(t, strings.Fields(tail)) {
				base = append(base, byte(v))
			}
			continue
		case "splitmix-bytes":
			data = splitmix(uint64(ints(t, h[1:2])[0]), ints(t, h[2:3])[0])
			for _, kv := range strings.Fields(tail) {
				k, v, _ := strings.Cut(kv, "=")
				if got := ints(t, []string{k, v}); int(data[got[0]]) != got[1] {
					t.Fatalf("splitmix data[%d] = %d, want %d", got[0], data[got[0]], got[1])
				}
			}
			continue
		case "splitmix":
			data = splitmix(uint64(ints(t, h[1:2])[0]), ints(t, h[2:3])[0])
		case "const":
			data = bytes.Repeat([]byte{byte(ints(t, h[1:2])[0])}, ints(t, h[2:3])[0])
		case "pattern":
			p := ints(t, h[1:])
			data = append(append([]byte(nil), base...), make([]byte, p[0])...)
			for len(data) < p[1] {
				data = append(data, data[:min(p[1]-len(data), len(data))]...)
			}
			if int(data[11111]) != p[2] {
				t.Fatalf("%s: data[11111] = %d, want %d", head, data[11111], p[2])
			}
		default:
			t.Fatalf("unknown line %q", line)
		}
		want := ints(t, strings.Fields(tail))
		if got := Cuts(data); !equalInts(got, want) {
			t.Errorf("%s: cuts\n%v, want\n%v", head, got, want)
		}
		cases++
	}
	if cases != 130 {
		t.Errorf("%d cases, want 130", cases)
	}
}

// TestAggregatedVectors: test_correctness of xet-core's aggregated_hashes.rs (testdata/aggregated.txt):
// the tree's root (a xorb's hash) and the file hash under three salts, the zero salt among them.
func TestAggregatedVectors(t *testing.T) {
	b, err := os.ReadFile("testdata/aggregated.txt")
	if err != nil {
		t.Fatal(err)
	}
	parse := func(s string) Hash {
		h, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	var nodes []Chunk
	cases := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == "#" {
			continue
		}
		switch f[0] {
		case "node":
			n, _ := strconv.ParseInt(f[2], 10, 64)
			nodes = append(nodes, Chunk{Hash: parse(f[1]), Len: n})
		case "xorb":
			if got := Root(nodes).String(); got != f[1] {
				t.Errorf("case %d (%d nodes): root %s, want %s", cases, len(nodes), got, f[1])
			}
		case "file":
			salt := parse(f[1])
			if got := fileHashSalted(nodes, &salt).String(); got != f[2] {
				t.Errorf("case %d (%d nodes), salt %s: file hash %s, want %s", cases, len(nodes), f[1], got, f[2])
			}
			if salt == (Hash{}) && FileHash(nodes).String() != f[2] {
				t.Errorf("case %d: FileHash differs from the zero salt's", cases)
			}
		case "end":
			nodes, cases = nil, cases+1
		}
	}
	if cases != 18 {
		t.Errorf("%d cases, want 18", cases)
	}
}

// TestHelloWorld: the chunk hash of "Hello World!" (the Xet protocol's test vector: hub-docs
// docs/xet/hashing.md, xet-core spec appendix), its raw bytes and its string; and the string form of
// the bytes 0…31 (hub-docs docs/xet/api.md).
func TestHelloWorld(t *testing.T) {
	h := ChunkHash([]byte("Hello World!"))
	if got := hex.EncodeToString(h[:]); got != "a29cfb08e608d4d8726dd8659a90b9134b3240d5d8e42d5fcb28e2a6e763a3e8" {
		t.Errorf("raw %s", got)
	}
	if got := h.String(); got != "d8d408e608fb9ca213b9909a65d86d725f2de4d8d540324be8a363e7a6e228cb" {
		t.Errorf("string %s", got)
	}
	var seq Hash
	for i := range seq {
		seq[i] = byte(i)
	}
	const s = "07060504030201000f0e0d0c0b0a090817161514131211101f1e1d1c1b1a1918"
	if seq.String() != s {
		t.Errorf("string form %s, want %s", seq.String(), s)
	}
	if p, err := Parse(s); err != nil || p != seq {
		t.Errorf("Parse(%s) = %v, %v", s, p, err)
	}
	if _, err := Parse("xyz"); err == nil {
		t.Error("Parse accepted xyz")
	}
	// The internal-node vector of the Xet specification (appendix C): two children, 100 and 200 bytes.
	c1, _ := Parse("c28f58387a60d4aa200c311cda7c7f77f686614864f5869eadebf765d0a14a69")
	c2, _ := Parse("6e4e3263e073ce2c0e78cc770c361e2778db3b054b98ab65e277fc084fa70f22")
	if got := mergeNodes([]Chunk{{c1, 100}, {c2, 200}}).Hash.String(); got != "be64c7003ccd3cf4357364750e04c9592b3c36705dee76a71590c011766b6c14" {
		t.Errorf("internal node %s", got)
	}
	if FileHash(nil) != (Hash{}) || FileHash(Chunks(nil)) != (Hash{}) {
		t.Error("the empty file's hash is not zero")
	}
}

// TestGoldenFiles: file hashes recorded in testdata/golden.txt from other implementations.
func TestGoldenFiles(t *testing.T) {
	b, err := os.ReadFile("testdata/golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, rest, _ := strings.Cut(line, "  ")
		content, err := strconv.Unquote(q)
		if err != nil {
			t.Fatal(err)
		}
		want, _, _ := strings.Cut(rest, "  ")
		if got := FileHash(Chunks([]byte(content))).String(); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d golden files, want 2", n)
	}
}
