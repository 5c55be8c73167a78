package safetensors

import (
	"strings"
	"testing"
)

// TestSameRestHostileMetadata: a header whose tensor entries are the bytes of the last header read
// into the buffer (`__metadata__` first: the quick way, reuse.sameRest) is still Parse's Header
// whatever its metadata holds or whatever follows the entries: escaped and duplicate keys, a key
// named like a tensor, values that are not strings, null or nested metadata, control characters,
// invalid UTF-8, a lone surrogate, a cut or an extra entry, NUL or tab padding, another data length.
func TestSameRestHostileMetadata(t *testing.T) {
	rest := reviewW + `,"v":{"dtype":"F16","shape":[2,3],"data_offsets":[4,16]}}`
	prev := withHeader(`{"__metadata__":{"format":"pt","k":"v"},`+rest, 16)
	metas := []string{
		`{"format":"pt","k":"other value"}`,
		`{}`,
		`{"a":"1","\u0061":"2"}`,
		`{"a":"1","a":"2"}`,
		`{"w":"a tensor's name"}`,
		`{"__metadata__":"x"}`,
		`{"n":1}`,
		`{"n":null}`,
		`{"o":{"p":"q"}}`,
		`null`,
		`"text"`,
		`{"t":"a	tab"}`,
		"{\"c\":\"\x01\"}",
		"{\"u\":\"\xff\xfe\"}",
		`{"s":"\ud800"}`,
		`{"e":"\x"}`,
		`{"k":"v",}`,
		`{"k" "v"}`,
		`{"k":"v"`,
		`{"k":"v"}}`,
		`{"k":"` + strings.Repeat(`\"`, 300) + `"}`,
	}
	var buf []byte
	for _, m := range metas {
		for _, tail := range []string{rest, rest + "   ", rest + "\x00\x00", rest + "\t", rest[:len(rest)-1] + `,"x":{"dtype":"F32","shape":[0],"data_offsets":[16,16]}}`} {
			for _, data := range []int{16, 17, 12} {
				buf = intoAgrees(t, buf, prev, withHeader(`{"__metadata__":`+m+`,`+tail, data))
			}
		}
	}
}
