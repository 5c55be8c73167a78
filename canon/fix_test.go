package canon

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/finding"
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
			if m := ReadBytes(path, b); m.Valid() || m.FindingCounts()[finding.CodeNulPadding] == 0 {
				t.Fatalf("not seen as NUL padding: %v", m.RefErr)
			}
			res, err := FixNulPadding(t.Context(), path)
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
	if _, err := FixNulPadding(t.Context(), path); !errors.Is(err, ErrNotFixable) {
		t.Fatalf("NUL padding plus truncation: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, bad) {
		t.Fatal("a refused fix changed the file")
	}
}

// nulPadded writes a small NUL-padded file and returns its path and bytes, and where the padding is.
func nulPadded(t *testing.T) (path string, b []byte, padStart, padEnd int) {
	t.Helper()
	f := stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "F16", Shape: []uint64{3, 5}}}, Metadata: []stfile.KV{{Key: "a", Value: "b"}}}
	clean := f.Build()
	n := binary.LittleEndian.Uint64(clean)
	json := bytes.TrimRight(clean[8:8+n], " ")
	header := append(append([]byte(nil), json...), 0, 0, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(append(b, header...), clean[8+n:]...)
	path = filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, b, 8 + len(json), 8 + len(header)
}

// hook runs fn at stage of the next FixNulPadding.
func hook(t *testing.T, stage string, fn func()) {
	fixHook = func(s string) {
		if s == stage {
			fn()
		}
	}
	t.Cleanup(func() { fixHook = nil })
}

// TestFixRacesWriter: another program writes to the file between stdiff's checks and its write.
// stdiff must not write then: the file is what the other program left, not a byte of stdiff's.
func TestFixRacesWriter(t *testing.T) {
	for name, write := range map[string]func(b []byte, pad int) []byte{
		"padding rewritten": func(b []byte, pad int) []byte { // the other program pads with newlines
			b = bytes.Clone(b)
			for i := pad; b[i] == 0; i++ {
				b[i] = '\n'
			}
			return b
		},
		"one padding byte": func(b []byte, pad int) []byte {
			b = bytes.Clone(b)
			b[pad+2] = '\t'
			return b
		},
		"grown": func(b []byte, pad int) []byte { return append(bytes.Clone(b), "more"...) },
	} {
		t.Run(name, func(t *testing.T) {
			path, b, pad, _ := nulPadded(t)
			theirs := write(b, pad)
			hook(t, "write", func() {
				if err := os.WriteFile(path, theirs, 0o644); err != nil {
					t.Fatal(err)
				}
			})
			res, err := FixNulPadding(t.Context(), path)
			if !errors.Is(err, ErrChanged) || res.Changed != 0 {
				t.Fatalf("fix with a writer in the way: %+v, %v", res, err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, theirs) {
				t.Fatalf("the file is not what the other writer left:\n%q\nwant\n%q", got, theirs)
			}
		})
	}
}

// TestFixUndone: another program writes to the file after stdiff's write, so that the file is not
// valid at the final check. stdiff puts its bytes back (NUL where its spaces still are) and keeps the
// other program's.
func TestFixUndone(t *testing.T) {
	path, b, pad, end := nulPadded(t)
	want := append(bytes.Clone(b), "junk"...) // the other program appends to the file…
	want[pad+1] = '\t'                        // …and writes one byte of the padding
	hook(t, "verify", func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte("junk"), int64(len(b))); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{'\t'}, int64(pad+1)); err != nil {
			t.Fatal(err)
		}
	})
	res, err := FixNulPadding(t.Context(), path)
	if !errors.Is(err, ErrChanged) || res.Changed != 0 {
		t.Fatalf("fix with a writer after it: %+v, %v", res, err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, want) {
		t.Fatalf("after the undo:\n%q\nwant\n%q", got[pad:end], want[pad:end])
	}
}

// TestFixRefusesGGUF: --fix has nothing to repair in a GGUF file, valid or not, and leaves it as it is.
func TestFixRefusesGGUF(t *testing.T) {
	valid := ggufFixture().Build()
	for name, b := range map[string][]byte{"valid": valid, "truncated": valid[:len(valid)-10]} {
		path := filepath.Join(t.TempDir(), "m.gguf")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := FixNulPadding(t.Context(), path)
		if !errors.Is(err, ErrNotFixable) || !strings.Contains(err.Error(), "GGUF files have no padding to repair") || res.Changed != 0 {
			t.Errorf("%s: %v, %+v", name, err, res)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, b) {
			t.Errorf("%s: the file changed", name)
		}
	}
}
