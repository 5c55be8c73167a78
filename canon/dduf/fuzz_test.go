package dduf

import (
	"bytes"
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
