package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/tensor"
)

// The toy format is registered in this test binary only (testscript runs stdiff in it too: nothing
// there starts with its magic). It is what a new format needs and no more: a package's Sniff, Read and
// Open, and one call to canon.Register. Its tensor bytes are stored back to front, so a command that
// read them from the file rather than through the format's Space would see other values.
//
// Layout: "TOY1", a uint32 tensor count, per tensor a uint16 name length, the name, a uint8 dtype
// length, the dtype, a uint8 rank and the dims as uint64; then the data, reversed as a whole.
//
// A second toy format, "TOYX", is the same but does not say that its files hold only their tensors
// (FormatReader.TensorsOnly), as a format with a graph or code would not: dupes must never take a
// file of its tensors for its copy.
func init() {
	canon.Register(canon.FormatReader{Format: formatToy, Sniff: sniffMagic("TOY1"), Read: readToy(formatToy), Open: openToy,
		TensorsOnly: func(*canon.Model, io.ReaderAt) bool { return true }})
	canon.Register(canon.FormatReader{Format: formatToyX, Sniff: sniffMagic("TOYX"), Read: readToy(formatToyX), Open: openToy})
}

const (
	formatToy  canon.Format = "toy"
	formatToyX canon.Format = "toyx"
)

func sniffMagic(magic string) func(in *canon.Input) canon.Match {
	return func(in *canon.Input) canon.Match {
		if bytes.HasPrefix(in.Head, []byte(magic)) {
			return canon.ByBytes
		}
		return canon.NoMatch
	}
}

func readToy(f canon.Format) func(in *canon.Input) (*canon.Model, error) {
	return func(in *canon.Input) (*canon.Model, error) { return readToyAs(f, in) }
}

func readToyAs(f canon.Format, in *canon.Input) (*canon.Model, error) {
	m := &canon.Model{Name: in.Name, Format: f, FileSize: in.Size, InSpace: true}
	hdr := make([]byte, min(in.Size, 1<<16))
	if _, err := in.R.ReadAt(hdr, 0); err != nil && err != io.EOF {
		return nil, err
	}
	fail := func(off int, msg string) (*canon.Model, error) {
		m.RefErr = &canon.RefError{Kind: "toy-malformed", Message: msg, Offset: int64(off)}
		m.AddFinding(finding.Finding{Code: "toy-malformed", Severity: finding.SevError, Offset: int64(off), Message: msg})
		return m, nil
	}
	p := 8
	if len(hdr) < p {
		return fail(0, "shorter than its 8-byte start")
	}
	var off uint64
	for n := binary.LittleEndian.Uint32(hdr[4:]); n > 0; n-- {
		if p+2 > len(hdr) {
			return fail(p, "the header ends inside a tensor entry")
		}
		nl := int(binary.LittleEndian.Uint16(hdr[p:]))
		if p+2+nl+1 > len(hdr) {
			return fail(p, "the header ends inside a tensor entry")
		}
		t := tensor.Tensor{Name: string(hdr[p+2 : p+2+nl]), HeaderOffset: int64(p)}
		p += 2 + nl
		dl := int(hdr[p])
		if p+1+dl+1 > len(hdr) {
			return fail(p, "the header ends inside a tensor entry")
		}
		t.DType = tensor.DType(hdr[p+1 : p+1+dl])
		p += 1 + dl
		rank := int(hdr[p])
		p++
		if p+8*rank > len(hdr) {
			return fail(p, "the header ends inside a tensor entry")
		}
		for range rank {
			t.Shape = append(t.Shape, binary.LittleEndian.Uint64(hdr[p:]))
			p += 8
		}
		n, ok := t.ExpectedLen()
		if !ok {
			return fail(int(t.HeaderOffset), "a tensor of unknown size")
		}
		t.Begin, t.End = off, off+n
		off += n
		m.Tensors = append(m.Tensors, t)
	}
	m.HeaderLen, m.HeaderParsed = uint64(p), true
	if int64(p)+int64(off) != in.Size {
		return fail(p, "the data is not as long as the tensors")
	}
	return m, nil
}

// toySpace reads a toy file's data back to front.
type toySpace struct {
	r          io.ReaderAt
	start, len int64
}

func openToy(m *canon.Model, r io.ReaderAt, _ canon.Where) canon.Space {
	return &toySpace{r: r, start: int64(m.HeaderLen), len: m.FileSize - int64(m.HeaderLen)}
}

func (s *toySpace) Size() int64  { return s.len }
func (s *toySpace) Close() error { return nil }

func (s *toySpace) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= s.len {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), s.len-off))
	// Bytes [off, off+n) of the space are the file's bytes [len-off-n, len-off) of the data, reversed.
	b := make([]byte, n)
	if _, err := s.r.ReadAt(b, s.start+s.len-off-int64(n)); err != nil && err != io.EOF {
		return 0, err
	}
	for i := range n {
		p[i] = b[n-1-i]
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// toyBytes writes ts as a toy file.
func toyBytes(ts []stfile.Tensor) []byte { return toyBytesMagic("TOY1", ts) }

// toyBytesMagic writes ts as a toy file with the given magic.
func toyBytesMagic(magic string, ts []stfile.Tensor) []byte {
	b := []byte(magic)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ts)))
	var data []byte
	for _, t := range ts {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(t.Name)))
		b = append(b, t.Name...)
		b = append(append(b, byte(len(t.DType))), t.DType...)
		b = append(b, byte(len(t.Shape)))
		for _, d := range t.Shape {
			b = binary.LittleEndian.AppendUint64(b, d)
		}
		data = append(data, t.Data...)
	}
	for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
		data[i], data[j] = data[j], data[i]
	}
	return append(b, data...)
}

// TestRegisteredFormat shows what the format contract promises (#34): a format registered with
// canon.Register, in a package of its own, is read by every command, with no command changed. A toy
// file and a safetensors file holding the same tensors are the same model to diff, hash and dupes;
// a changed value is found through the toy format's Space; a malformed toy file is invalid to check.
func TestRegisteredFormat(t *testing.T) {
	ts := []stfile.Tensor{
		{Name: "layer.weight", DType: "F32", Shape: []uint64{2, 3}, Data: f32s(binary.LittleEndian, 1, 2, 3, 4, 5, 6)},
		{Name: "layer.bias", DType: "F16", Shape: []uint64{2}, Data: []byte{0x00, 0x3c, 0x00, 0x40}},
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	toy := write("model.toy", toyBytes(ts))
	st := write("model.safetensors", stfile.File{Tensors: ts}.Build())
	changed := append([]stfile.Tensor(nil), ts...)
	changed[0].Data = f32s(binary.LittleEndian, 1, 2, 3, 4, 5, 7)
	toyChanged := write("changed.toy", toyBytes(changed))
	bad := write("bad.toy", toyBytes(ts)[:20])
	if m, err := canon.Read(bytes.NewReader(toyBytes(ts)), int64(len(toyBytes(ts))), "x"); err != nil || m.Format != formatToy {
		t.Fatalf("Read: %v, %v", m, err)
	}

	cmd := func(want int, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != want {
			t.Fatalf("stdiff %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out.String(), errb.String())
		}
		return out.String()
	}
	cmd(0, "check", toy)
	if out := cmd(1, "check", bad); !strings.Contains(out, "toy-malformed") {
		t.Errorf("check of a malformed toy file does not name its finding:\n%s", out)
	}
	var card struct {
		Format  string `json:"format"`
		Tensors int    `json:"tensor_count"`
	}
	if err := json.Unmarshal([]byte(cmd(0, "inspect", "--json", toy)), &card); err != nil || card.Tensors != 2 {
		t.Errorf("inspect: %+v, %v", card, err)
	}
	cmd(0, "diff", toy, st)
	if out := cmd(1, "diff", toyChanged, st); !strings.Contains(out, "layer.weight") || strings.Contains(out, "layer.bias") {
		t.Errorf("diff of a changed toy file names the wrong tensors:\n%s", out)
	}
	ids := func(p string) string {
		var r struct {
			Files []struct {
				Content string `json:"content_id"`
			} `json:"files"`
		}
		if err := json.Unmarshal([]byte(cmd(0, "hash", "--content", "--json", p)), &r); err != nil || len(r.Files) != 1 {
			t.Fatalf("hash %s: %v", p, err)
		}
		return r.Files[0].Content
	}
	if a, b, c := ids(toy), ids(st), ids(toyChanged); a == "" || a != b || a == c {
		t.Errorf("content IDs: toy %s, safetensors %s, changed toy %s", a, b, c)
	}
	if out := cmd(1, "dupes", "--json", toy, st, toyChanged); !strings.Contains(out, "model.toy") || strings.Contains(out, "changed.toy") {
		t.Errorf("dupes does not group the toy file with its safetensors copy alone:\n%s", out)
	}
	cmd(0, "dupes", "--delete", "--yes", toy, st, toyChanged) // a safe safetensors file is kept over another format's
	if _, err := os.Stat(toy); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dupes --delete kept the toy copy: %v", err)
	}
	for _, p := range []string{st, toyChanged} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("dupes --delete: %v", err)
		}
	}
	toyX := write("model.toyx", toyBytesMagic("TOYX", ts))
	cmd(0, "diff", toyX, st)
	if out := cmd(0, "dupes", "--json", toyX, st); !strings.Contains(out, `"groups": []`) {
		t.Errorf("dupes takes a file of a format that may hold more than its tensors for a copy:\n%s", out)
	}
}
