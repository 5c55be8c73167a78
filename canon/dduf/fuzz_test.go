package dduf

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/stdiff/stdiff/canon/dduf/ddufw"
)

// FuzzRead: any bytes read as a DDUF file give findings, never a panic, a hang or an allocation the
// file does not back; members lie within the file.
func FuzzRead(f *testing.F) {
	for _, c := range cases {
		f.Add(c.file())
	}
	f.Add(ddufw.Write(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		d := Read(r, int64(len(b)))
		for _, m := range d.Members {
			if m.Offset < 0 || m.Size < 0 || m.Offset+m.Size > int64(len(b)) {
				t.Fatalf("member %s at %d+%d is outside the %d-byte file", m.Name, m.Offset, m.Size, len(b))
			}
		}
		if d.Valid() && len(d.Members) == 0 {
			t.Fatal("a valid file without members")
		}
		Sniff(r, int64(len(b)), "x.dduf")
	})
}

// TestMutations runs FuzzRead's checks on 2,000 seeded random mutations of the test files (a few
// bytes each overwritten), so that they run everywhere, without -fuzz.
func TestMutations(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		b := cases[i%len(cases)].file()
		for k := 0; k < 1+rng.Intn(8); k++ {
			b[rng.Intn(len(b))] = byte(rng.Intn(256))
		}
		d := Read(bytes.NewReader(b), int64(len(b)))
		for _, m := range d.Members {
			if m.Offset < 0 || m.Size < 0 || m.Offset+m.Size > int64(len(b)) {
				t.Fatalf("mutation %d: member %s at %d+%d is outside the %d-byte file", i, m.Name, m.Offset, m.Size, len(b))
			}
		}
		Sniff(bytes.NewReader(b), int64(len(b)), "x")
	}
}
