package finding_test

import (
	"encoding/json"
	"testing"

	"github.com/stdiff/stdiff/canon/finding"
)

// TestOffsetNull: a finding about the whole file has offset null in JSON, one about a byte its offset
// (0 included); reading the JSON back gives the same findings, a null or missing offset being -1.
func TestOffsetNull(t *testing.T) {
	fs := []finding.Finding{
		{Code: "a", Severity: finding.SevInfo, Offset: -1},
		{Code: "b", Severity: finding.SevError, Offset: 0, RefKind: "InvalidHeader", Fixable: true},
		{Code: "c", Severity: finding.SevWarning, Offset: 7, Message: "m", Hint: "h", Global: "os.system", Entry: "archive/data.pkl"},
	}
	b, err := json.Marshal(fs)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"code":"a","severity":"info","offset":null,"message":""},` +
		`{"code":"b","severity":"error","offset":0,"message":"","reference_kind":"InvalidHeader","fixable":true},` +
		`{"code":"c","severity":"warning","offset":7,"message":"m","hint":"h","global":"os.system","entry":"archive/data.pkl"}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	var back []finding.Finding
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for i := range fs {
		if back[i] != fs[i] {
			t.Errorf("read back %+v, wrote %+v", back[i], fs[i])
		}
	}
	var missing finding.Finding
	if err := json.Unmarshal([]byte(`{"code":"x"}`), &missing); err != nil || missing.Offset != -1 {
		t.Errorf("a missing offset reads as %d (%v), want -1", missing.Offset, err)
	}
}

// TestUnknownFieldRefused: JSON with a field that is none of Finding's is not a finding.
func TestUnknownFieldRefused(t *testing.T) {
	var f finding.Finding
	if err := json.Unmarshal([]byte(`{"code":"x","severity":"info","offset":null,"message":"","extra":1}`), &f); err == nil {
		t.Errorf("read as %+v", f)
	}
}
