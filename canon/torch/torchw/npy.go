package torchw

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// npyDescr are NumPy's dtype strings (little-endian) of the dtypes NPY writes.
var npyDescr = map[string]string{
	"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "|i1",
	"U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "|u1", "BOOL": "|b1",
}

// NPY is t (contiguous: Offset and Stride unset) as numpy.save writes it: format version 1.0, the
// header dict ('descr', 'fortran_order': False, 'shape') padded so that the data starts at a
// multiple of 64 bytes, then the bytes. t's dtype must be one NumPy has (not BF16).
func NPY(t Tensor) []byte {
	dims := make([]string, len(t.Shape))
	for i, d := range t.Shape {
		dims[i] = fmt.Sprint(d)
	}
	shape := "(" + strings.Join(dims, ", ") + ")"
	if len(dims) == 1 {
		shape = "(" + dims[0] + ",)"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", npyDescr[t.DType], shape)
	pad := 64 - (10+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	header := dict + strings.Repeat(" ", pad) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	b.WriteString(header)
	b.Write(t.Data)
	return b.Bytes()
}

// NPZ is ts as numpy.savez writes them (each tensor an entry NAME.npy, stored), or with compressed
// as numpy.savez_compressed does (deflated).
func NPZ(ts []Tensor, compressed bool) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	method := zip.Store
	if compressed {
		method = zip.Deflate
	}
	for _, t := range ts {
		fw, _ := w.CreateHeader(&zip.FileHeader{Name: t.Name + ".npy", Method: method})
		fw.Write(NPY(t))
	}
	w.Close()
	return buf.Bytes()
}
