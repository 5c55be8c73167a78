package canon_test

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
)

// stBytes is a safetensors file whose header is n bytes: `{}` padded with spaces, as the reference
// pads, so that its first 8 bytes (n, little-endian) are chosen by the test.
func stBytes(n uint64) []byte {
	b := binary.LittleEndian.AppendUint64(nil, n)
	h := append([]byte("{}"), bytes.Repeat([]byte(" "), int(n)-2)...)
	return append(b, h...)
}

// zipBytes is a zip archive with one stored member.
func zipBytes() []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	f, _ := w.CreateHeader(&zip.FileHeader{Name: "archive/data.pkl", Method: zip.Store})
	f.Write([]byte("\x80\x02}q\x00."))
	w.Close()
	return b.Bytes()
}

// TestReadDispatch records which format Read chooses for inputs whose first bytes could be read as
// more than one: safetensors files whose header length begins as a pickle, a zip, NumPy or ONNX
// does, magics of each format, and names as pickles are named. It is the order the format registry
// keeps (by their bytes GGUF, DDUF, safetensors, PyTorch, ONNX; then PyTorch by its name; else
// safetensors), recorded before the registry replaced Read's chain of tests.
func TestReadDispatch(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		want canon.Format
	}{
		{"mark.safetensors", stBytes('('), canon.FormatSafetensors},     // length starts as MARK
		{"mark.pt", stBytes('('), canon.FormatSafetensors},              // picklish name, safetensors bytes
		{"proto.safetensors", stBytes(0x0280), canon.FormatSafetensors}, // length starts as PROTO 2
		{"proto.bin", stBytes(0x0280), canon.FormatSafetensors},
		{"stackglobal.pkl", stBytes(0x4e93), canon.FormatSafetensors},       // "\x93N": NumPy's first bytes
		{"onnxish.safetensors", stBytes(0x120508), canon.FormatSafetensors}, // 08 05 12: a ModelProto's start
		{"onnxish.onnx", stBytes(0x120508), canon.FormatSafetensors},
		{"model.gguf", []byte("GGUF\x03\x00\x00\x00" + strings.Repeat("\x00", 16)), canon.FormatGGUF},
		{"model.pt", []byte("GGUF\x03\x00\x00\x00" + strings.Repeat("\x00", 16)), canon.FormatGGUF},
		{"ggml.bin", []byte("lmgg" + strings.Repeat("\x00", 16)), canon.FormatGGUF},
		{"ggjt", []byte("tjgg\x01\x00\x00\x00" + strings.Repeat("\x00", 16)), canon.FormatGGUF},
		{"model.onnx", []byte("\x08\x07\x12\x04test"), canon.FormatONNX},
		{"model", []byte("\x08\x07\x12\x04test"), canon.FormatONNX},
		{"model.pt", []byte("\x08\x07\x12\x04test"), canon.FormatONNX},
		{"p2.pkl", []byte("\x80\x02}q\x00."), canon.FormatPyTorch},
		{"p2", []byte("\x80\x02}q\x00."), canon.FormatPyTorch},
		{"p0", []byte("(lp0\n."), canon.FormatPyTorch},
		{"zip.pt", zipBytes(), canon.FormatPyTorch},
		{"zip", zipBytes(), canon.FormatPyTorch},
		{"a.npy", []byte("\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" + strings.Repeat(" ", 50) + "\n" + strings.Repeat("\x00", 8)), canon.FormatNumPy},
		{"junk.pt", []byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09"), canon.FormatPyTorch},
		{"junk.ckpt", []byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09"), canon.FormatPyTorch},
		{"junk", []byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09"), canon.FormatSafetensors},
		{"junk.safetensors", []byte("(garbage that is no pickle"), canon.FormatSafetensors},
		{"empty", nil, canon.FormatSafetensors},
		{"empty.pt", nil, canon.FormatPyTorch},
		{"short.pt", []byte("PK"), canon.FormatPyTorch},
		{"short", []byte("GG"), canon.FormatSafetensors},
	} {
		m := canon.ReadBytes(c.name, c.data)
		if m.Format != c.want {
			t.Errorf("%s (% x…): read as %s, want %s", c.name, c.data[:min(len(c.data), 8)], m.Format, c.want)
		}
	}
}
