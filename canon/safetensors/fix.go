package safetensors

import "bytes"

// FixPadding repairs, in a copy, hb, the N header bytes of a file of fileSize bytes, that are padded
// with NUL bytes instead of spaces (CodeNulPadding): every NUL after the JSON object becomes a space,
// nothing else changes. hb[first:last+1] is the range that changes; after is the repaired header as
// Read would find it (its RawHeader the repaired bytes), which a caller checks is valid before it
// writes anything. after is nil when there is nothing to repair this way: hb holds no whole JSON
// object, or no NUL follows it.
func FixPadding(hb []byte, fileSize int64) (first, last int, after *Header) {
	end := ObjectEnd(hb)
	if end < 0 {
		return -1, -1, nil
	}
	patched := bytes.Clone(hb)
	first, last = -1, -1
	for i := end; i < len(patched); i++ {
		if patched[i] == 0 {
			patched[i] = ' '
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return -1, -1, nil
	}
	return first, last, Parse(patched, fileSize)
}
