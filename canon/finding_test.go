package canon

import (
	"fmt"
	"github.com/stdiff/stdiff/canon/finding"
	"strings"
	"testing"
)

// TestFindingsFolded: a header with hundreds of defects of one kind keeps finding.MaxPerCode findings
// of each code, in file order, and counts the rest; every kept finding still says which entry it is
// about and why, and entries that say enough are still listed.
func TestFindingsFolded(t *testing.T) {
	const n = finding.MaxPerCode + 150
	var h strings.Builder
	h.WriteString("{")
	for i := range n {
		fmt.Fprintf(&h, `"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},`)          // duplicate-tensor-name
		fmt.Fprintf(&h, `"bad%d":{"dtype":"U8","shape":[0],"data_offsets":[%d]},`, i, i) // invalid-tensor-entry
		fmt.Fprintf(&h, `"odd%d":{"dtype":"U9","shape":[0],"data_offsets":[0,0]},`, i)   // unknown-dtype
	}
	h.WriteString(`"z":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}`)
	m := ReadBytes("many", file(h.String(), nil))

	counts := m.FindingCounts()
	for code, want := range map[string]int{finding.CodeDuplicateTensor: n - 1, finding.CodeInvalidTensorEntry: n, finding.CodeUnknownDType: n} {
		if counts[code] != want {
			t.Errorf("%s: counted %d, want %d", code, counts[code], want)
		}
		if got := m.Omitted[code]; got != want-finding.MaxPerCode {
			t.Errorf("%s: %d omitted, want %d", code, got, want-finding.MaxPerCode)
		}
	}
	kept := map[string][]finding.Finding{}
	for _, f := range m.Findings {
		kept[f.Code] = append(kept[f.Code], f)
	}
	for code, fs := range kept {
		if len(fs) > finding.MaxPerCode {
			t.Errorf("%s: %d findings kept", code, len(fs))
		}
	}
	// The last kept invalid entry is not the header's first, whose reason the strict verdict has: its
	// reason is read again from the header.
	bad := kept[finding.CodeInvalidTensorEntry]
	last := finding.MaxPerCode - 1
	if want := fmt.Sprintf(`tensor "bad%d": invalid length 1, expected a tuple of size 2`, last); len(bad) != finding.MaxPerCode || bad[last].Message != want {
		t.Fatalf("last kept invalid entry: %+v, want message %q", bad[len(bad)-1], want)
	}
	if off := strings.Index(h.String(), fmt.Sprintf(`"bad%d"`, last)); bad[last].Offset != int64(8+off) {
		t.Errorf("offset %d, want %d", bad[last].Offset, 8+off)
	}
	// Entries with an unknown dtype are listed (all of them, kept finding or not), invalid ones are not.
	odd := 0
	for _, tn := range m.Tensors {
		if strings.HasPrefix(tn.Name, "bad") {
			t.Fatalf("invalid entry %s listed", tn.Name)
		}
		if strings.HasPrefix(tn.Name, "odd") {
			odd++
		}
	}
	if odd != n || m.Tensor("a") == nil || m.Tensor("z") == nil {
		t.Errorf("%d entries with an unknown dtype listed, want %d; a and z listed: %v %v", odd, n, m.Tensor("a") != nil, m.Tensor("z") != nil)
	}
	if m.Valid() || m.RefErr.Kind != finding.InvalidHeaderDeserialization || !strings.Contains(m.RefErr.Message, "invalid length 1") {
		t.Errorf("strict verdict: %v", m.RefErr)
	}
}

// TestOutcome: outcomes order from best to worst (the CLI's exit statuses 0, 1, 2), so several
// reports come to their max.
func TestOutcome(t *testing.T) {
	if Clean != 0 || Found != 1 || Trouble != 2 || max(Clean, Trouble, Found) != Trouble || max(Clean, Found) != Found {
		t.Error("outcomes are not ordered 0, 1, 2")
	}
	if Clean.String() != "clean" || Found.String() != "found" || Trouble.String() != "trouble" || Outcome(7).String() != "Outcome(7)" {
		t.Error("String")
	}
}
