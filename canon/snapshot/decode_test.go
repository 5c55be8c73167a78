package snapshot

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestJSONNumber(t *testing.T) {
	for n, want := range map[string]bool{"0": true, "-1.5e-07": true, "12.25": true, "1E+3": true, "01": false, "+1": false, ".5": false,
		"1.": false, "1e": false, "Inf": false, "0x1p-2": false, "1_000": false, "-": false, "": false, "NaN": false} {
		if jsonNumber([]byte(n)) != want || want != json.Valid([]byte(n)) {
			t.Errorf("jsonNumber(%q) != %v", n, want)
		}
	}
}

// FuzzDecodeAsWritten: what the hand-written decoder accepts, encoding/json decodes the same.
func FuzzDecodeAsWritten(f *testing.F) {
	f.Add([]byte("{\"schema\":\"stdiff.snapshot/v1\",\"model\":\"m\",\"format\":\"safetensors\",\"size\":1,\"structure_id\":\"\",\"content_id\":\"\",\"digest\":\"\",\"verdict\":{\"valid\":true},\"findings\":[{\"code\":\"c\",\"severity\":\"info\",\"offset\":null,\"message\":\"m\"}],\"metadata\":[\n{\"key\":\"a\",\"value\":\"b\"}\n],\"tensors\":[\n{\"name\":\"t\",\"dtype\":\"F32\",\"shape\":[2],\"bytes\":8,\"blake3\":\"00\",\"values\":{\"count\":2,\"min\":null,\"max\":1e-07,\"mean\":0.5,\"std\":0,\"nan\":0,\"inf\":0,\"zeros\":1,\"l2\":1}},\n{\"name\":\"u\",\"dtype\":\"F32\",\"shape\":[],\"bytes\":0,\"blake3\":\"00\"}\n]}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := decodeAsWritten(b)
		if !ok {
			return
		}
		var w wire
		if err := decodeStrict(b, &w); err != nil {
			t.Fatalf("decoded by hand, refused by encoding/json: %v", err)
		}
		if a, b := fast.encode(nil), w.snapshot().encode(nil); !bytes.Equal(a, b) {
			t.Fatalf("decoded otherwise:\n%s\n%s", a, b)
		}
	})
}
