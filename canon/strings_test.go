package canon

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stdiff/stdiff/canon/stfile"
)

// FuzzStringValues checks the string decoder (its eight-bytes-at-a-time runs, the runs between
// escapes) against encoding/json: a metadata value and a tensor name the reader accepts are what
// encoding/json decodes them to, and what encoding/json rejects the reader rejects too.
func FuzzStringValues(f *testing.F) {
	for _, s := range []string{"", "plain", `a\"b`, `\\`, `\/\b\f\n\r\t`, `\u00e9\ud83d\ude00`, `\ud800`, `\u12`, `x\`,
		`1234567\"`, `12345678\"`, `123456789\"`, `\"\"\"\"\"\"\"\"\"`, "tab\there", "caf\u00e9 \u0448\u043a\u043e\u043b\u0430",
		strings.Repeat(`{\"10_a b\": {\"smile\": 12, \"1girl\": 40}}`, 20)} {
		f.Add(s)
	}
	for _, kv := range stfile.KohyaSDXL(5).Metadata {
		f.Add(strings.Trim(mustJSON(kv.Value), `"`))
	}
	f.Fuzz(func(t *testing.T, body string) {
		if len(body) > 1<<14 || !utf8.ValidString(body) {
			return
		}
		tensor := `{"dtype":"U8","shape":[1],"data_offsets":[0,1]}`
		for _, header := range []string{`{"__metadata__":{"k":"` + body + `"}}`, `{"` + body + `":` + tensor + `}`} {
			m := ReadBytes("fuzz", file(header, []byte{0}))
			var want map[string]json.RawMessage
			jerr := json.Unmarshal([]byte(header), &want)
			var wantValue string
			if jerr == nil {
				for k, v := range want {
					if k == "__metadata__" {
						var meta map[string]string
						jerr = json.Unmarshal(v, &meta)
						wantValue = meta["k"]
					} else {
						wantValue = k
					}
				}
			}
			if !m.Valid() {
				continue // the reference refuses more than encoding/json (lone surrogates)
			}
			if jerr != nil {
				t.Fatalf("header %q: valid, but encoding/json says %v", header, jerr)
			}
			got := ""
			if len(m.Metadata) == 1 {
				got = m.Metadata[0].Value
			} else if len(m.Tensors) == 1 {
				got = m.Tensors[0].Name
			}
			if got != wantValue {
				t.Fatalf("header %q: read %q, encoding/json %q", header, got, wantValue)
			}
		}
	})
}

func mustJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}
