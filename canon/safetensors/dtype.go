package safetensors

import "strings"

// dtypeBits maps every dtype the reference reader accepts to its size in bits.
var dtypeBits = map[string]uint64{
	"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8,
	"F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8,
	"I16": 16, "U16": 16, "F16": 16, "BF16": 16,
	"I32": 32, "U32": 32, "F32": 32,
	"C64": 64, "F64": 64, "I64": 64, "U64": 64,
}

// Bits returns the size of one element of dtype d in bits, and false for a dtype the reference does
// not know.
func Bits(d string) (uint64, bool) {
	switch d { // the common ones first, without a map look-up
	case "F32", "I32", "U32":
		return 32, true
	case "F16", "BF16", "I16", "U16":
		return 16, true
	}
	b, ok := dtypeBits[d]
	return b, ok
}

// Known reports whether the reference reader accepts dtype d.
func Known(d string) bool {
	_, ok := Bits(d)
	return ok
}

// Suggest returns the known dtype that d most likely meant (case or common aliases), or "".
func Suggest(d string) string {
	u := strings.ToUpper(d)
	if _, ok := dtypeBits[u]; ok {
		return u
	}
	aliases := map[string]string{
		"FLOAT32": "F32", "FLOAT16": "F16", "FP16": "F16", "FP32": "F32", "HALF": "F16",
		"BFLOAT16": "BF16", "FLOAT64": "F64", "DOUBLE": "F64", "FLOAT": "F32",
		"INT8": "I8", "UINT8": "U8", "INT16": "I16", "INT32": "I32", "INT64": "I64",
		"E8M0": "F8_E8M0", "FP4": "F4", "BOOLEAN": "BOOL",
	}
	return aliases[u]
}

// DTypes lists every dtype the reference reader accepts, in no particular order.
func DTypes() []string {
	out := make([]string, 0, len(dtypeBits))
	for d := range dtypeBits {
		out = append(out, d)
	}
	return out
}
