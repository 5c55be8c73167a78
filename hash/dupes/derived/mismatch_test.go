package derived

import (
	"encoding/binary"
	"testing"
)

// f16ToF8 is an F16 tensor of n elements and its exact F8_E4M3 rounding.
func f16ToF8(n int) (table []uint32, a, d []byte) {
	table = roundTable("F16", "F8_E4M3")
	a = make([]byte, 2*n)
	for i := range n {
		binary.LittleEndian.PutUint16(a[2*i:], uint16(i)&0x3bff) // finite values of both signs
	}
	d = make([]byte, n)
	for i := range n {
		d[i] = byte(table[binary.LittleEndian.Uint16(a[2*i:])])
	}
	return table, a, d
}

// TestMismatchIndex: the first element whose rounding differs is found wherever it lies (the loop
// compares eight at a time, then one by one).
func TestMismatchIndex(t *testing.T) {
	table, a, d := f16ToF8(100)
	if k := mismatch(table, a, d, 2, 1); k != -1 {
		t.Fatalf("exact rounding: mismatch at %d", k)
	}
	for _, at := range []int{0, 1, 7, 8, 9, 63, 64, 95, 96, 99} {
		for _, later := range []int{-1, at + 1, 99} {
			e := append([]byte(nil), d...)
			e[at] ^= 1
			if later > at && later < len(e) {
				e[later] ^= 1
			}
			if k := mismatch(table, a, e, 2, 1); k != int64(at) {
				t.Errorf("element %d changed (and %d): mismatch at %d", at, later, k)
			}
		}
	}
}

func BenchmarkMismatchF16F8(b *testing.B) {
	table, a, d := f16ToF8(1 << 16)
	b.SetBytes(int64(len(a) + len(d)))
	for b.Loop() {
		if mismatch(table, a, d, 2, 1) >= 0 {
			b.Fatal("mismatch")
		}
	}
}
