package zipdir

import (
	"archive/zip"
	"bytes"
	"testing"

	"github.com/stdiff/stdiff/canon/finding"
)

// seedZip is a small archive of a stored and a deflated entry, written by archive/zip.
func seedZip(zip64 bool) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for i, name := range []string{"a/data.pkl", "a/data/0"} {
		fh := &zip.FileHeader{Name: name, Method: uint16(8 * i)}
		if zip64 {
			fh.UncompressedSize64 = 1 << 32 // archive/zip writes zip64 fields; the data is short
		}
		f, _ := w.CreateHeader(fh)
		f.Write([]byte("hello, hello, hello"))
	}
	w.SetComment("a comment PK\x05\x06")
	w.Close()
	return b.Bytes()
}

// FuzzEntries: any bytes give entries and findings, never a panic, a hang or an allocation the file
// does not back: no more entries than the directory can hold (46 bytes each), each readable entry's
// data within the file, every finding's offset within it.
func FuzzEntries(f *testing.F) {
	f.Add(seedZip(false))
	f.Add(seedZip(true))
	f.Add(append([]byte("PK\x05\x06"), make([]byte, 18)...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var fs []finding.Finding
		d := Reader{Size: int64(len(b)), Budget: &Budget{Left: 1 << 20}, Add: func(code string, sev finding.Severity, off int64, entry, format string, args ...any) *finding.Finding {
			fs = append(fs, finding.Finding{Code: code, Offset: off})
			return &fs[len(fs)-1]
		}}
		entries, _ := d.Entries(bytes.NewReader(b))
		if len(entries) > len(b)/46 {
			t.Fatalf("%d entries in %d bytes", len(entries), len(b))
		}
		for _, e := range entries {
			if e.DataOffset >= 0 && (e.DataOffset > int64(len(b)) || e.CSize > uint64(int64(len(b))-e.DataOffset)) {
				t.Fatalf("%s: %d bytes at %d past the %d-byte file", e.Name, e.CSize, e.DataOffset, len(b))
			}
		}
		for _, x := range fs {
			if x.Offset > int64(len(b)) {
				t.Fatalf("finding %s at %d past the %d-byte file", x.Code, x.Offset, len(b))
			}
		}
		if d.Rest < 0 {
			t.Fatalf("rest %d", d.Rest)
		}
	})
}
