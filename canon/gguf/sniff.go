package gguf

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
)

// Sniff names the format of a file from its first bytes (8 are enough): "GGUF v3", "GGUF v3
// (big-endian)", "GGUF v1", or one of the formats before GGUF: "GGML (unversioned)", "GGMF v1",
// "GGJT v1" … "GGJT v3". ok is false when the bytes start with none of their magics; Read handles
// every file Sniff recognises (it parses GGUF v2 and v3, and names the others).
func Sniff(head []byte) (format string, ok bool) {
	if len(head) < 4 {
		return "", false
	}
	magic := string(head[:4])
	var v uint32
	hasV := len(head) >= 8
	if hasV {
		v = binary.LittleEndian.Uint32(head[4:8])
	}
	switch magic {
	case "GGUF":
		if !hasV {
			return "GGUF", true
		}
		if v&0xFFFF == 0 && v != 0 {
			return fmt.Sprintf("GGUF v%d (big-endian)", bits.ReverseBytes32(v)), true
		}
		return "GGUF v" + strconv.FormatUint(uint64(v), 10), true
	case "lmgg": // 'ggml' as a little-endian uint32: the unversioned format
		return "GGML (unversioned)", true
	case "fmgg", "tjgg": // 'ggmf', 'ggjt'
		name := map[string]string{"fmgg": "GGMF", "tjgg": "GGJT"}[magic]
		if !hasV {
			return name, true
		}
		return name + " v" + strconv.FormatUint(uint64(v), 10), true
	}
	return "", false
}
