package canon

import (
	"github.com/stdiff/stdiff/canon/finding"
	"math/rand"
	"os"
	"testing"
)

// FuzzRead feeds arbitrary files to the reader: it must never panic or hang, must allocate no more than
// the verified header, and its findings must agree with its verdict. GGUF-looking input is fuzzed too.
func FuzzRead(f *testing.F) {
	for _, c := range edgeCases() {
		f.Add(c.b)
	}
	for _, b := range ggufSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m := ReadBytes("fuzz", b)
		checkInvariants(t, m)
	})
}

// FuzzHeader fuzzes the JSON header alone, framed as a file whose data fits a typical tensor.
func FuzzHeader(f *testing.F) {
	for _, c := range edgeCases() {
		if len(c.b) >= 8 {
			f.Add(string(c.b[8:]))
		}
	}
	f.Fuzz(func(t *testing.T, header string) {
		if len(header) > 1<<16 {
			return
		}
		m := ReadBytes("fuzz", file(header, nil))
		checkInvariants(t, m)
	})
}

// ggufSeeds are GGUF files for FuzzRead: valid ones, a big-endian one, the formats before GGUF.
func ggufSeeds() [][]byte {
	rng := rand.New(rand.NewSource(1))
	seeds := [][]byte{ggufFixture().Build(), []byte("GGUF"), []byte("tjgg\x03\x00\x00\x00"), []byte("GGUF\x01\x00\x00\x00\x00")}
	be := ggufFixture()
	be.BigEndian = true
	seeds = append(seeds, be.Build())
	for range 4 {
		seeds = append(seeds, randomGGUF(rng).Build())
	}
	return seeds
}

func checkInvariants(t *testing.T, m *Model) {
	t.Helper()
	Canonical(m) // never panics, whatever the model
	if m.Format == FormatGGUF && m.RefErr == nil {
		for _, tn := range m.Tensors {
			if m.DataOffset()+int64(tn.End) > m.FileSize || tn.End < tn.Begin {
				t.Fatalf("valid GGUF file with tensor %q past its end", tn.Name)
			}
		}
	}
	if m.RefErr == nil {
		for _, f := range m.Findings {
			if f.Severity == finding.SevError {
				t.Fatalf("valid file has an error finding: %+v", f)
			}
		}
		seen := map[string]bool{}
		for _, tn := range m.Tensors {
			if seen[tn.Name] {
				t.Fatalf("tensor %q listed twice", tn.Name)
			}
			seen[tn.Name] = true
			if n, ok := tn.ExpectedLen(); !ok || n != tn.End-tn.Begin {
				t.Fatalf("valid file with tensor %q of wrong size", tn.Name)
			}
		}
		return
	}
	if !hasFindingFor(m, m.RefErr.Kind) {
		t.Fatalf("verdict %v has no error finding of that kind: %+v", m.RefErr, m.Findings)
	}
}

// TestAgainstOracle mutates valid and edge-case files at random and compares the strict verdict with the
// serde-based oracle on every one. It runs only where STDIFF_ORACLE names the oracle binary
// (canon/testdata/oracle/build.sh); CI relies on the recorded verdicts instead.
func TestAgainstOracle(t *testing.T) {
	oracle := os.Getenv("STDIFF_ORACLE")
	if oracle == "" {
		t.Skip("STDIFF_ORACLE not set: build the oracle with canon/testdata/oracle/build.sh to run the differential test")
	}
	rng := rand.New(rand.NewSource(1))
	seeds := edgeCases()
	alphabet := []byte("{}[]\",:0123456789-+.eE \t\n\r\x00\\u/abcdfnrtxUIFB_\xff\xc3\xa9")
	n := 20000
	if testing.Short() {
		n = 2000
	}
	inputs := make([][]byte, 0, n)
	for len(inputs) < n {
		s := seeds[rng.Intn(len(seeds))].b
		b := append([]byte(nil), s...)
		if len(b) < 9 {
			continue
		}
		for k := rng.Intn(3) + 1; k > 0 && len(b) > 9; k-- {
			pos := 8 + rng.Intn(len(b)-8)
			switch rng.Intn(4) {
			case 0: // replace
				b[pos] = alphabet[rng.Intn(len(alphabet))]
			case 1: // delete, keeping N in step with the header
				b = append(b[:pos], b[pos+1:]...)
				b[0]--
			case 2: // insert
				b = append(b[:pos], append([]byte{alphabet[rng.Intn(len(alphabet))]}, b[pos:]...)...)
				b[0]++
			case 3: // flip the data length
				if rng.Intn(2) == 0 {
					b = append(b, 0)
				} else if len(b) > 9 {
					b = b[:len(b)-1]
				}
			}
		}
		inputs = append(inputs, b)
	}
	want := runOracle(t, oracle, inputs)
	bad := 0
	for i, b := range inputs {
		m := ReadBytes("mut", b)
		if got := verdict(m); got != want[i] {
			bad++
			if bad <= 10 {
				t.Errorf("input %q: stdiff %s (%v), reference %s", b, got, m.RefErr, want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d mutated inputs disagree", bad, len(inputs))
	}
	t.Logf("%d mutated inputs, all verdicts agree", len(inputs))
}

// FuzzAgainstOracle is coverage-guided differential testing: every input's strict verdict is compared
// with the serde-based oracle's. It runs only where STDIFF_ORACLE names the oracle binary.
func FuzzAgainstOracle(f *testing.F) {
	oracle := os.Getenv("STDIFF_ORACLE")
	for _, c := range edgeCases() {
		if len(c.b) >= 8 {
			f.Add(string(c.b[8:]))
		}
	}
	f.Fuzz(func(t *testing.T, header string) {
		if oracle == "" {
			t.Skip("STDIFF_ORACLE not set")
		}
		b := file(header, make([]byte, 16))
		want := runOracle(t, oracle, [][]byte{b})[0]
		if got := verdict(ReadBytes("fuzz", b)); got != want {
			t.Fatalf("header %q: stdiff %s, reference %s", header, got, want)
		}
	})
}
