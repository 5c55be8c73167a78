package canon

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"
)

// TestFixNulPadding: only NUL bytes after the JSON object change (to spaces); the length, the JSON,
// any spaces among the padding, and every tensor byte stay; the result is what the reference accepts.
func TestFixNulPadding(t *testing.T) {
	f := stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "F16", Shape: []uint64{3, 5}}}, Metadata: []stfile.KV{{Key: "a", Value: "b"}}}
	clean := f.Build()
	n := binary.LittleEndian.Uint64(clean)
	json := bytes.TrimRight(clean[8:8+n], " ")
	for name, pad := range map[string][]byte{
		"nul":            {0, 0, 0, 0, 0},
		"nul and spaces": {0, ' ', 0, '\n', 0},
		"one nul":        {0},
	} {
		t.Run(name, func(t *testing.T) {
			header := append(append([]byte(nil), json...), pad...)
			b := make([]byte, 8)
			binary.LittleEndian.PutUint64(b, uint64(len(header)))
			b = append(append(b, header...), clean[8+n:]...)
			path := filepath.Join(t.TempDir(), "m.safetensors")
			os.WriteFile(path, b, 0o644)
			if m := ReadBytes(path, b); m.Valid() || !m.hasCode(CodeNulPadding) {
				t.Fatalf("not seen as NUL padding: %v", m.RefErr)
			}
			res, err := FixNulPadding(path)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if len(got) != len(b) || res.Changed != bytes.Count(pad, []byte{0}) {
				t.Fatalf("changed %d bytes, length %d → %d", res.Changed, len(b), len(got))
			}
			for i := range b {
				want := b[i]
				if i >= 8+len(json) && i < 8+len(header) && want == 0 {
					want = ' '
				}
				if got[i] != want {
					t.Fatalf("byte %d: %q, want %q", i, got[i], want)
				}
			}
			if m := ReadBytes(path, got); !m.Valid() {
				t.Fatalf("still invalid: %v", m.RefErr)
			}
		})
	}

	// NUL padding plus another defect: refused, file untouched.
	bad := append([]byte(nil), clean...)
	header := append(append([]byte(nil), json...), 0, 0)
	binary.LittleEndian.PutUint64(bad, uint64(len(header)))
	bad = append(append(bad[:8], header...), clean[8+n:len(clean)-3]...) // and truncated data
	path := filepath.Join(t.TempDir(), "bad.safetensors")
	os.WriteFile(path, bad, 0o644)
	if _, err := FixNulPadding(path); !errors.Is(err, ErrNotFixable) {
		t.Fatalf("NUL padding plus truncation: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, bad) {
		t.Fatal("a refused fix changed the file")
	}
}
