package canon

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/tensor"
)

// file builds a safetensors file: the 8-byte little-endian length, the header, the data.
func file(header string, data []byte) []byte {
	b := make([]byte, 8, 8+len(header)+len(data))
	binary.LittleEndian.PutUint64(b, uint64(len(header)))
	b = append(b, header...)
	return append(b, data...)
}

// rawFile builds a file with an explicit length field.
func rawFile(n uint64, rest string) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, n)
	return append(b, rest...)
}

type edgeCase struct {
	name string
	b    []byte
}

// one is a valid single-tensor header body (U8 [2], offsets [0,2]) to splice into cases.
const one = `"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}`

// edgeCases covers every rule of ../shared/docs/safetensors-reference.md and the corners around them.
// Their reference verdicts are in testdata/reference-verdicts.txt, produced by a serde-based oracle.
func edgeCases() []edgeCase {
	var cs []edgeCase
	add := func(name string, b []byte) { cs = append(cs, edgeCase{name, b}) }
	h := func(name, header string, data int) { add(name, file(header, make([]byte, data))) }

	// framing
	add("empty", nil)
	add("seven-bytes", []byte("1234567"))
	add("n-zero", rawFile(0, ""))
	add("n-limit-short", rawFile(finding.MaxHeaderLen, "{}"))
	add("n-over-limit", rawFile(finding.MaxHeaderLen+1, "{}"))
	add("n-max-u64", rawFile(^uint64(0), "{}"))
	add("n-beyond-file", rawFile(100, "{}"))
	add("lfs-pointer", []byte("version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 4823449600\n"))
	add("html", []byte("<!DOCTYPE html><html><head><title>Sign in</title></head></html>"))
	add("big-endian", append([]byte{0, 0, 0, 0, 0, 0, 0, 2}, "{}"...))
	// header bytes
	h("ok-one", "{"+one+"}", 2)
	h("ok-empty-object", "{}", 0)
	h("empty-object-trailing-data", "{}", 1)
	h("invalid-utf8", "{\"\xff\":1}", 0)
	h("invalid-utf8-padding", "{}  \xc3", 0)
	h("surrogate-utf8", "{\"\xed\xa0\x80\":1}", 0)
	h("overlong-utf8", "{\"\xc0\xaf\":1}", 0)
	h("leading-space", "  {"+one+"}", 2)
	h("leading-tab-crlf", "\t\r\n{"+one+"}", 2)
	h("leading-formfeed", "\f{"+one+"}", 2)
	h("leading-nbsp", "\u00a0{"+one+"}", 2)
	h("trailing-spaces", "{"+one+"}   ", 2)
	h("trailing-nul", "{"+one+"}\x00\x00\x00", 2)
	h("trailing-space-then-nul", "{"+one+"} \x00", 2)
	h("trailing-formfeed", "{"+one+"}\f", 2)
	h("trailing-vt", "{"+one+"}\v", 2)
	h("trailing-nbsp", "{"+one+"}\u00a0", 2)
	h("second-object", "{"+one+"}{}", 2)
	h("bom", "\xef\xbb\xbf{"+one+"}", 2)
	h("bom-after-space", " \xef\xbb\xbf{"+one+"}", 2)
	h("metadata-outside", `{},"__metadata__":{"a":"b"}}`, 0)
	// JSON strictness
	h("comment", "{/*x*/"+one+"}", 2)
	h("line-comment", "{"+one+"//x\n}", 2)
	h("trailing-comma-object", "{"+one+",}", 2)
	h("trailing-comma-array", `{"t":{"dtype":"U8","shape":[2,],"data_offsets":[0,2]}}`, 2)
	h("nan", `{"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"x":NaN}}`, 2)
	h("infinity", `{"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"x":Infinity}}`, 2)
	h("single-quotes", `{'t':{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("raw-newline-in-string", "{\"a\nb\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2)
	h("raw-tab-in-string", "{\"a\tb\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2)
	h("raw-del-in-string", "{\"a\x7fb\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2)
	h("leading-zero", `{"t":{"dtype":"U8","shape":[02],"data_offsets":[0,2]}}`, 2)
	h("plus-one", `{"t":{"dtype":"U8","shape":[+2],"data_offsets":[0,2]}}`, 2)
	h("lone-high-surrogate-key", `{"\ud800":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("lone-low-surrogate-key", `{"\udc00":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("high-then-letter", `{"\ud800a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("high-then-escape", `{"\ud800\n":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("high-high", `{"\ud800\ud800":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("surrogate-pair", `{"\ud83d\ude00":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("lone-surrogate-metadata", `{"__metadata__":{"a":"\ud800"},`+one+`}`, 2)
	h("lone-surrogate-ignored-field", `{"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"x":"\udc00"}}`, 2)
	h("escapes-all", `{"a\"\\\/\b\f\n\r\t\u0041\u00e9":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("escape-unknown", `{"a\x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("escape-short-u", `{"a\u12":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("escape-bad-hex", `{"a\uZZZZ":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("escape-nul", `{"a\u0000":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("unterminated-string", `{"t`, 0)
	h("unterminated-object", `{"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}`, 2)
	h("missing-colon", `{"t" {"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("missing-comma", `{"t":{"dtype":"U8" "shape":[2],"data_offsets":[0,2]}}`, 2)
	h("bare-key", `{t:{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	for _, lit := range []string{"true", "false", "null", "nul", "True", "nulll", "tru"} {
		h("literal-"+lit, `{"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"x":`+lit+`}}`, 2)
	}
	for i, num := range []string{"1.", ".5", "01", "-", "1e", "1e+", "-0", "-0.0", "1.5e3", "1E400", "-1e400", "1e-400", "18446744073709551616", "1" + strings.Repeat("0", 400), "0e999999999", "-9223372036854775809"} {
		h(fmt.Sprintf("ignored-number-%d-%s", i, num), `{"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"x":`+num+`}}`, 2)
	}
	// nesting depth in an ignored field: the top object and the entry already count 2
	for _, d := range []int{124, 125, 126, 127} {
		h(fmt.Sprintf("depth-%d", d+2), `{"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"x":`+strings.Repeat("[", d)+strings.Repeat("]", d)+`}}`, 2)
		h(fmt.Sprintf("depth-obj-%d", d+2), `{"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"x":`+strings.Repeat(`{"a":`, d-1)+"{}"+strings.Repeat("}", d-1)+`}}`, 2)
	}
	// top level
	h("top-array", `[]`, 0)
	h("top-string", `"x"`, 0)
	h("top-number", `1`, 0)
	h("top-null", `null`, 0)
	h("whitespace-only", `   `, 0)
	// __metadata__
	h("metadata-null", `{"__metadata__":null,`+one+`}`, 2)
	h("metadata-empty", `{"__metadata__":{},`+one+`}`, 2)
	h("metadata-strings", `{"__metadata__":{"format":"pt","a":""},`+one+`}`, 2)
	h("metadata-last", `{`+one+`,"__metadata__":{"format":"pt"}}`, 2)
	h("metadata-number", `{"__metadata__":{"a":1},`+one+`}`, 2)
	h("metadata-object-value", `{"__metadata__":{"ss_tag_frequency":{"a":1}},`+one+`}`, 2)
	h("metadata-null-value", `{"__metadata__":{"a":null},`+one+`}`, 2)
	h("metadata-array", `{"__metadata__":[],`+one+`}`, 2)
	h("metadata-string", `{"__metadata__":"x",`+one+`}`, 2)
	h("metadata-twice", `{"__metadata__":{},"__metadata__":{},`+one+`}`, 2)
	h("metadata-null-twice", `{"__metadata__":null,"__metadata__":null,`+one+`}`, 2)
	h("metadata-escaped-name", `{"\u005f_metadata__":{"a":1},`+one+`}`, 2)
	h("metadata-escaped-name-ok", `{"\u005f_metadata__":{"a":"b"},`+one+`}`, 2)
	h("metadata-dup-key", `{"__metadata__":{"a":"1","a":"2"},`+one+`}`, 2)
	h("metadata-key-not-string", `{"__metadata__":{1:"a"},`+one+`}`, 2)
	h("metadata-like-key", `{"__metadata":{"a":1},`+one+`}`, 2)
	// tensor entries
	h("dup-tensor-last-wins", `{"t":{"dtype":"U8","shape":[9],"data_offsets":[0,9]},`+one+`}`, 2)
	h("dup-tensor-first-invalid", `{"t":{"dtype":"XX","shape":[2],"data_offsets":[0,2]},`+one+`}`, 2)
	h("dup-tensor-breaks-walk", `{"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"u":{"dtype":"U8","shape":[2],"data_offsets":[2,4]},"t":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}}`, 6)
	h("extra-field", `{"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"extra":{"a":[1,2,{"b":null}]}}}`, 2)
	h("missing-dtype", `{"t":{"shape":[2],"data_offsets":[0,2]}}`, 2)
	h("missing-shape", `{"t":{"dtype":"U8","data_offsets":[0,2]}}`, 2)
	h("missing-offsets", `{"t":{"dtype":"U8","shape":[2]}}`, 2)
	h("dup-field", `{"t":{"dtype":"U8","dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("entry-string", `{"t":"U8"}`, 0)
	h("entry-null", `{"t":null}`, 0)
	h("entry-number", `{"t":1}`, 0)
	h("array-form", `{"t":["U8",[2],[0,2]]}`, 2)
	h("array-form-2", `{"t":["U8",[2]]}`, 2)
	h("array-form-4", `{"t":["U8",[2],[0,2],1]}`, 2)
	h("array-form-empty", `{"t":[]}`, 2)
	h("dtype-object", `{"t":{"dtype":{"U8":null},"shape":[2],"data_offsets":[0,2]}}`, 2)
	h("dtype-object-1", `{"t":{"dtype":{"U8":1},"shape":[2],"data_offsets":[0,2]}}`, 2)
	h("dtype-object-empty-obj", `{"t":{"dtype":{"U8":{}},"shape":[2],"data_offsets":[0,2]}}`, 2)
	h("dtype-object-empty-arr", `{"t":{"dtype":{"U8":[]},"shape":[2],"data_offsets":[0,2]}}`, 2)
	h("dtype-object-none", `{"t":{"dtype":{},"shape":[2],"data_offsets":[0,2]}}`, 2)
	h("dtype-object-two", `{"t":{"dtype":{"U8":null,"I8":null},"shape":[2],"data_offsets":[0,2]}}`, 2)
	h("dtype-object-unknown", `{"t":{"dtype":{"XX":null},"shape":[2],"data_offsets":[0,2]}}`, 2)
	h("dtype-number", `{"t":{"dtype":0,"shape":[2],"data_offsets":[0,2]}}`, 2)
	h("dtype-null", `{"t":{"dtype":null,"shape":[2],"data_offsets":[0,2]}}`, 2)
	h("dtype-escaped", `{"t":{"dtype":"\u0055\u0038","shape":[2],"data_offsets":[0,2]}}`, 2)
	for _, d := range []string{"f16", "E8M0", "FP4", "F8_E4M3FN", "bf16", "", "U8 "} {
		h("dtype-bad-"+d, `{"t":{"dtype":"`+d+`","shape":[2],"data_offsets":[0,2]}}`, 2)
	}
	for _, name := range tensor.DTypes() {
		bits, _ := name.Bits()
		n := 8
		h("dtype-"+string(name), fmt.Sprintf(`{"t":{"dtype":"%s","shape":[%d],"data_offsets":[0,%d]}}`, name, n, n*int(bits)/8), n*int(bits)/8)
	}
	// numbers in shapes and offsets
	for i, v := range []string{"1.0", "1e0", "-0", "-1", "2.5", `"2"`, "null", "true", "[]", "{}"} {
		h(fmt.Sprintf("shape-value-%d", i), `{"t":{"dtype":"U8","shape":[`+v+`],"data_offsets":[0,1]}}`, 1)
		h(fmt.Sprintf("offset-value-%d", i), `{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,`+v+`]}}`, 1)
	}
	h("shape-not-array", `{"t":{"dtype":"U8","shape":2,"data_offsets":[0,2]}}`, 2)
	h("shape-object", `{"t":{"dtype":"U8","shape":{},"data_offsets":[0,2]}}`, 2)
	h("offsets-one", `{"t":{"dtype":"U8","shape":[2],"data_offsets":[2]}}`, 2)
	h("offsets-three", `{"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2,2]}}`, 2)
	h("offsets-max-u64", `{"t":{"dtype":"U8","shape":[2],"data_offsets":[0,18446744073709551615]}}`, 2)
	h("offsets-2-64", `{"t":{"dtype":"U8","shape":[2],"data_offsets":[0,18446744073709551616]}}`, 2)
	h("shape-scalar", `{"t":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}`, 4)
	h("shape-zero", `{"t":{"dtype":"F32","shape":[3,0],"data_offsets":[0,0]}}`, 0)
	h("shape-zero-first-huge", `{"t":{"dtype":"F32","shape":[0,9223372036854775808,9223372036854775808],"data_offsets":[0,0]}}`, 0)
	h("shape-overflow-before-zero", `{"t":{"dtype":"F32","shape":[9223372036854775808,4,0],"data_offsets":[0,0]}}`, 0)
	h("shape-bits-overflow", `{"t":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]}}`, 0)
	h("shape-big-ok-claim", `{"t":{"dtype":"U8","shape":[1000000000000],"data_offsets":[0,1000000000000]}}`, 0)
	// offset walk
	h("walk-gap", `{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[3,5]}}`, 5)
	h("walk-overlap", `{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}`, 3)
	h("walk-not-zero", `{"a":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}`, 3)
	h("walk-reversed", `{"a":{"dtype":"U8","shape":[2],"data_offsets":[2,0]}}`, 2)
	h("walk-unsorted-ok", `{"b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 4)
	h("walk-zero-size-shared", `{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"c":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("walk-same-range-twice", `{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("f4-odd", `{"t":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}`, 1)
	h("f4-even", `{"t":{"dtype":"F4","shape":[4],"data_offsets":[0,2]}}`, 2)
	h("f6-three", `{"t":{"dtype":"F6_E2M3","shape":[3],"data_offsets":[0,2]}}`, 2)
	h("f6-four", `{"t":{"dtype":"F6_E3M2","shape":[4],"data_offsets":[0,3]}}`, 3)
	h("size-mismatch", `{"t":{"dtype":"F16","shape":[2],"data_offsets":[0,2]}}`, 2)
	h("trailing-data", "{"+one+"}", 3)
	h("truncated-data", "{"+one+"}", 1)
	h("misaligned-after-gap", `{"a":{"dtype":"U8","shape":[2],"data_offsets":[1,3]},"b":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}`, 3)
	h("pretty-printed", "{\n  \"__metadata__\": {\n    \"format\": \"pt\"\n  },\n  \"t\": {\n    \"dtype\": \"U8\",\n    \"shape\": [\n      2\n    ],\n    \"data_offsets\": [\n      0,\n      2\n    ]\n  }\n}\n", 2)
	return cs
}
