package canon

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"github.com/stdiff/stdiff/canon/finding"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "regenerate golden files (reference verdicts need STDIFF_ORACLE)")

const verdictsFile = "testdata/reference-verdicts.txt"

// verdict renders a model's strict verdict the way the oracle prints it: "OK n" or the error kind.
func verdict(m *Model) string {
	if m.RefErr == nil {
		return fmt.Sprintf("OK %d", len(m.Tensors))
	}
	return string(m.RefErr.Kind)
}

// runOracle asks the serde-based oracle (testdata/oracle) for the reference's verdict on each input.
func runOracle(t testing.TB, oracle string, inputs [][]byte) []string {
	t.Helper()
	var in bytes.Buffer
	for _, b := range inputs {
		var l [4]byte
		binary.LittleEndian.PutUint32(l[:], uint32(len(b)))
		in.Write(l[:])
		in.Write(b)
	}
	cmd := exec.Command(oracle, "-")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("oracle answered %d lines for %d inputs", len(lines), len(inputs))
	}
	for i, l := range lines {
		lines[i], _, _ = strings.Cut(l, "\t") // kind only; messages differ in wording
	}
	return lines
}

// TestReferenceVerdicts checks the strict verdict on every edge case against the reference's verdicts,
// which were produced by the oracle (serde_json with the reference's types) and reviewed.
func TestReferenceVerdicts(t *testing.T) {
	cases := edgeCases()
	if *update {
		oracle := os.Getenv("STDIFF_ORACLE")
		if oracle == "" {
			t.Fatal("-update needs STDIFF_ORACLE=path to the oracle (canon/testdata/oracle/build.sh)")
		}
		inputs := make([][]byte, len(cases))
		for i, c := range cases {
			inputs[i] = c.b
		}
		got := runOracle(t, oracle, inputs)
		var buf bytes.Buffer
		buf.WriteString("# reference verdicts of canon edge cases; regenerate: STDIFF_ORACLE=... go test ./canon -run TestReferenceVerdicts -update\n")
		for i, c := range cases {
			fmt.Fprintf(&buf, "%s\t%s\n", c.name, got[i])
		}
		if err := os.WriteFile(verdictsFile, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{}
	f, err := os.Open(verdictsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		name, v, _ := strings.Cut(sc.Text(), "\t")
		want[name] = v
	}
	for _, c := range cases {
		w, ok := want[c.name]
		if !ok {
			t.Errorf("%s: no reference verdict recorded (run with -update and STDIFF_ORACLE)", c.name)
			continue
		}
		m := ReadBytes(c.name, c.b)
		if got := verdict(m); got != w {
			t.Errorf("%s: verdict %s, reference says %s (%v)", c.name, got, w, m.RefErr)
		}
		if w != "OK" && !strings.HasPrefix(w, "OK") && !hasFindingFor(m, m.RefErr.Kind) {
			t.Errorf("%s: rejected (%s) but no error finding carries that kind: %+v", c.name, m.RefErr.Kind, m.Findings)
		}
	}
}

func hasFindingFor(m *Model, k finding.RefKind) bool {
	for _, f := range m.Findings {
		if f.Severity == finding.SevError && f.RefKind == k {
			return true
		}
	}
	return false
}

// TestRealCorpus checks every real file against the verdict its README records.
func TestRealCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "corpus", "real")
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Skipf("real corpus not found at %s (it lives beside the project in shared/): %v", dir, err)
	}
	n := 0
	for _, line := range strings.Split(string(readme), "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 10 || !strings.HasSuffix(strings.TrimSpace(cols[1]), ".safetensors") {
			continue
		}
		name, want := strings.TrimSpace(cols[1]), strings.TrimSpace(cols[8])
		src, st, err := OpenRegular(filepath.Join(dir, name), os.O_RDONLY)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Read(src, st.Size(), src.Name())
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := verdict(m)
		if strings.HasPrefix(want, "ERR ") {
			want, _, _ = strings.Cut(strings.TrimPrefix(want, "ERR "), ":")
		}
		if got != want {
			t.Errorf("%s: %s, the reference says %s", name, got, want)
		}
		n++
	}
	if n < 30 {
		t.Fatalf("only %d corpus files found in the README table", n)
	}
}
