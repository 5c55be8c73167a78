package canon_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/torch"
)

// TestPicklesNotReadAsSafetensors: pickles of protocol 0 or 1, legacy checkpoints whose first
// opcode is N or I, and a first pickle over 64 KiB are read as pickles, their globals named; a
// .pt/.pth/.bin/.ckpt/.pkl that is no zip, tar, NumPy, ONNX or safetensors file is read as a pickle
// too (never as safetensors with a header "too large").
func TestPicklesNotReadAsSafetensors(t *testing.T) {
	evil := "\x80\x02cos\nsystem\nX\x0b\x00\x00\x00touch pwned\x85R."
	long := "(lp0\n" + strings.Repeat("V"+strings.Repeat("a", 1000)+"\na", 70) + "cos\nsystem\n(Vtouch pwned\ntRa."
	for _, c := range []struct{ name, data string }{
		{"p0.pt", "cos\nsystem\n(S'touch pwned'\ntR."},
		{"p0", "cos\nsystem\n(S'touch pwned'\ntR."},
		{"v.pkl", "Vos\nVsystem\n\x93(Vtouch pwned\ntR."},
		{"v", "Vos\nVsystem\n\x93(Vtouch pwned\ntR."},
		{"n.pth", "N." + evil},
		{"n", "N." + evil},
		{"i7.ckpt", "I7\n." + evil},
		{"long.bin", long},
		{"long", long},
		{"broken.pt", "cos\nsystem\n(S'touch pwned'\nt"}, // no STOP: still named
	} {
		m := canon.ReadBytes(c.name, []byte(c.data))
		if m.Format != canon.FormatPyTorch || m.Valid() {
			t.Errorf("%s: format %s valid %v %+v", c.name, m.Format, m.Valid(), m.Findings)
			continue
		}
		named := false
		for _, f := range m.Findings {
			named = named || (f.Code == finding.CodeUnsafeGlobal && f.Global == "os.system")
		}
		if !named {
			t.Errorf("%s: os.system not named: %+v", c.name, m.Findings)
		}
	}
	// torch.save's tar format, whose first member (sys_info) starts with no pickle opcode
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	tw.WriteHeader(&tar.Header{Name: "sys_info", Size: int64(len(evil)), Mode: 0o644, Typeflag: tar.TypeReg})
	tw.Write([]byte(evil))
	tw.Close()
	for _, name := range []string{"checkpoint.pth.tar", "model.pt"} {
		if m := canon.ReadBytes(name, tb.Bytes()); m.Format != canon.FormatPyTorch || m.Detail.(*torch.File).Format != torch.FormatTar || m.Valid() {
			t.Errorf("%s: %s %+v", name, m.Format, m.Findings)
		}
	}
	// not a pickle at all, named as one: not PyTorch, not a safetensors header
	m := canon.ReadBytes("junk.pt", []byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09"))
	if m.Format != canon.FormatPyTorch || m.Valid() || m.RefErr == nil || m.RefErr.Kind != finding.RefKind(finding.CodeNotPyTorch) {
		t.Errorf("junk.pt: %s %+v", m.Format, m.RefErr)
	}
}

type brokenDisk struct{ b []byte }

func (d brokenDisk) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > 100 {
		return 0, errors.New("input/output error")
	}
	return copy(p, d.b[off:]), nil
}

// TestTorchReadErrorIsUnreadable: an I/O error inside a PyTorch file makes Read fail with an error
// wrapping ErrUnreadable (exit 2), not a Model found invalid (exit 1).
func TestTorchReadErrorIsUnreadable(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("\x80\x02}q\x00(")
	for i := 0; i < 200; i++ {
		b.WriteString("X\x01\x00\x00\x00aK\x01")
	}
	b.WriteString("u.")
	_, err := canon.Read(brokenDisk{b.Bytes()}, int64(b.Len()), "x.pt")
	if !errors.Is(err, canon.ErrUnreadable) {
		t.Fatalf("err %v", err)
	}
}
