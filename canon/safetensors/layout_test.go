package safetensors

import (
	"encoding/binary"
	"fmt"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/tensor"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// TestNamesUnique: namesUnique says what a map of the names says, whatever their order and repeats.
func TestNamesUnique(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for range 2000 {
		ts := make([]tensor.Tensor, rng.Intn(300))
		seen, unique := map[string]bool{}, true
		for i := range ts {
			ts[i].Name = fmt.Sprintf("layers.%d.w", rng.Intn(2*len(ts)+1))
			unique = unique && !seen[ts[i].Name]
			seen[ts[i].Name] = true
		}
		if got := namesUnique(ts); got != unique {
			t.Fatalf("%d names: namesUnique %v, want %v", len(ts), got, unique)
		}
	}
}

// verdictOf says all a RefError says.
func verdictOf(e *RefError) string {
	if e == nil {
		return "valid"
	}
	return fmt.Sprintf("%s %q at %d", e.Kind, e.Message, e.Offset)
}

// TestLayoutWalkedOnce: a layout the lenient checks find clean is not walked again the reference's
// way; the verdict is the walk's, whatever the offsets, shapes and dtypes (gaps, overlaps, reversed
// offsets, sizes that overflow or end within a byte, data left over or missing).
func TestLayoutWalkedOnce(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	dtypes := []string{"F16", "F32", "U8", "F4", "F6_E2M3", "BOOL"}
	dims := []string{"0", "1", "2", "3", "5", "8", "4294967296", "18446744073709551615"}
	kinds := map[string]int{}
	defer func() { t.Log(kinds) }()
	for range 5000 {
		var h strings.Builder
		h.WriteByte('{')
		n, at := 1+rng.Intn(4), uint64(0)
		for k := range n {
			shape := make([]string, rng.Intn(3))
			for d := range shape {
				shape[d] = dims[rng.Intn(len(dims))]
			}
			size := uint64(rng.Intn(9))
			begin := at
			switch rng.Intn(6) {
			case 0:
				begin += uint64(rng.Intn(3))
			case 1:
				begin -= min(begin, uint64(rng.Intn(3)))
			}
			end := begin + size
			if rng.Intn(8) == 0 {
				end = begin - min(begin, 1)
			}
			at = end
			if k > 0 {
				h.WriteByte(',')
			}
			fmt.Fprintf(&h, `"t%d":{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}`, rng.Intn(8), dtypes[rng.Intn(len(dtypes))], strings.Join(shape, ","), begin, end)
		}
		h.WriteByte('}')
		data := make([]byte, max(0, int(at)+rng.Intn(3)-1))
		m := Parse([]byte(h.String()), int64(8+h.Len()+len(data)))
		walked := *m
		walked.RefErr = nil
		if m.RefErr == nil || m.RefErr.Kind != finding.InvalidHeaderDeserialization {
			walked.referenceWalk(walked.sortedByOffsets())
		} else {
			walked.RefErr = m.RefErr
		}
		got, want := verdictOf(m.RefErr), verdictOf(walked.RefErr)
		kinds[strings.Fields(got)[0]]++
		if got != want {
			t.Fatalf("header %s, %d data bytes: verdict %v, the reference's walk says %v", h.String(), len(data), m.RefErr, walked.RefErr)
		}
	}
}

// TestSpecial checks special, the one-step mask of a word's '"', '\\' and control bytes, against the
// three masks it stands for, on words of every byte at every place among others.
func TestSpecial(t *testing.T) {
	fill := []byte{'a', 0x00, 0x1f, 0x20, '"', '\\', 0x7f, 0x80, 0xff, '!', '#', '[', ']'}
	for _, f := range fill {
		for c := 0; c < 256; c++ {
			for at := 0; at < 8; at++ {
				var b [8]byte
				for k := range b {
					b[k] = f
				}
				b[at] = byte(c)
				w := binary.LittleEndian.Uint64(b[:])
				if got, want := special(w), hasByteLess(w, 0x20)|hasByte(w, '"')|hasByte(w, '\\'); got != want {
					t.Fatalf("special(%x) = %x, want %x", w, got, want)
				}
			}
		}
	}
}

// TestCompactUint: compactUint reads what strconv.ParseUint reads of a plain integer, at every length
// around the 19 digits it reads without overflow checks, and refuses what overflows.
func TestCompactUint(t *testing.T) {
	for _, s := range []string{"0", "7", "10", "01", "1566680", "9999999999999999999", "10000000000000000000",
		"18446744073709551615", "18446744073709551616", "18446744073709551620", "99999999999999999999", "184467440737095516150",
		"1234567890123456789", "12345678901234567890", "1e5", "1.5", "-1", ""} {
		want, err := strconv.ParseUint(s, 10, 64)
		wantOK := err == nil && (s == "0" || s[0] != '0')
		b := []byte(s + "]")
		v, next, ok := compactUint(b, 0)
		if ok != wantOK || ok && (v != want || next != len(s)) {
			t.Errorf("compactUint(%q) = %d, %d, %v; want %d, %d, %v", s, v, next, ok, want, len(s), wantOK)
		}
	}
}
