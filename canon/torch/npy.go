package torch

import (
	"io"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/zipdir"
)

// numpyDTypes maps NumPy's type characters and sizes to safetensors' names.
var numpyDTypes = map[string]string{
	"f2": "F16", "f4": "F32", "f8": "F64", "i1": "I8", "i2": "I16", "i4": "I32", "i8": "I64",
	"u1": "U8", "u2": "U16", "u4": "U32", "u8": "U64", "b1": "BOOL", "c8": "C64", "c16": "C128",
}

// npyHeader is what an .npy header says.
type npyHeader struct {
	descr   string
	fortran bool
	shape   []int64
}

// readNPY reads an .npy array at [off, end) of r as tensor name. compressed says the bytes come
// from a deflated .npz entry (offsets are then not the file's).
func (f *File) readNPY(r io.ReaderAt, off, end int64, entry, name string, compressed bool, z *zipdir.Entry) {
	fo := func(o int64) int64 {
		if compressed {
			return -1
		}
		return o
	}
	pre, ok := readAt(r, off, 10)
	if !ok || string(pre[:6]) != "\x93NUMPY" {
		f.add(finding.CodeNumpyHeader, finding.SevError, fo(off), entry, "not an .npy array: no \\x93NUMPY magic")
		return
	}
	major := pre[6]
	var hlen, start int64
	switch major {
	case 1:
		hlen, start = int64(le16(pre[8:])), off+10
	case 2, 3:
		b, ok := readAt(r, off, 12)
		if !ok {
			f.add(finding.CodeNumpyHeader, finding.SevError, fo(off), entry, "the .npy header is cut off")
			return
		}
		hlen, start = int64(le32(b[8:])), off+12
	default:
		f.add(finding.CodeNumpyHeader, finding.SevError, fo(off+6), entry, "unknown .npy version %d.%d", major, pre[7])
		return
	}
	if hlen > end-start {
		f.add(finding.CodeNumpyHeader, finding.SevError, fo(off+8), entry, "the .npy header claims %d bytes; %d remain", hlen, end-start)
		return
	}
	// numpy.load(allow_pickle=False) refuses a header longer than max_header_size (10000) characters
	// ("Header info length … is large and may not be safe to load securely"): bytes in versions 1 and
	// 2 (latin-1), characters in version 3 (UTF-8).
	if hlen > 4*maxNPYHeader {
		f.add(finding.CodeNumpyHeader, finding.SevError, fo(off+8), entry, "the .npy header is %d bytes; numpy.load refuses headers over %d characters", hlen, maxNPYHeader)
		return
	}
	hb, _ := readAt(r, start, int(hlen))
	if n := npyHeaderChars(hb, major); n > maxNPYHeader {
		f.add(finding.CodeNumpyHeader, finding.SevError, fo(off+8), entry, "the .npy header is %d characters; numpy.load refuses headers over %d", n, maxNPYHeader)
		return
	}
	h, err := parseNPYHeader(string(hb))
	if err != "" {
		f.add(finding.CodeNumpyHeader, finding.SevError, fo(start), entry, "the .npy header cannot be read: %s", err)
		return
	}
	data := start + hlen
	if h.descr == "|O" || h.descr == "O" || strings.HasSuffix(h.descr, "O") && len(h.descr) == 2 {
		f.add(finding.CodeNumpyObject, finding.SevError, fo(data), entry, "an object array: its elements are a pickle, which numpy.load(allow_pickle=False) refuses").Hint =
			"load it only if you trust the file"
		f.scanPickle(r, data, end, entry, compressed)
		return
	}
	order, code := byte('|'), h.descr
	if len(code) > 0 && strings.ContainsRune("<>|=", rune(code[0])) {
		order, code = code[0], code[1:]
	}
	dt, ok := numpyDTypes[code]
	if !ok {
		f.add(finding.CodeNumpyDType, finding.SevWarning, fo(start), entry, "%s has dtype %q, which stdiff does not list", orRoot(name), h.descr)
		return
	}
	if order == '>' {
		f.ByteOrder = "big"
		f.add(finding.CodeBigEndian, finding.SevInfo, fo(start), entry, "%s is stored big-endian", name)
	} else if f.ByteOrder == "" {
		f.ByteOrder = "little"
	}
	es, _ := strconv.ParseInt(code[1:], 10, 64)
	n := uint64(1)
	for _, d := range h.shape {
		hi, lo := bits.Mul64(n, uint64(d))
		if d < 0 || hi != 0 || lo > 1<<62 {
			f.add(finding.CodeNumpyHeader, finding.SevError, fo(start), entry, "the shape %v overflows", h.shape)
			return
		}
		n = lo
	}
	hi, size := bits.Mul64(n, uint64(es))
	if hi != 0 || size > 1<<62 {
		f.add(finding.CodeNumpyHeader, finding.SevError, fo(start), entry, "the shape %v overflows", h.shape)
		return
	}
	if !compressed && size > uint64(end-data) {
		f.add(finding.CodeTruncatedData, finding.SevError, data, entry, "%s needs %d bytes at %d; %d remain", orRoot(name), size, data, end-data)
		return
	}
	// A deflated entry is read only as far as its header: what it holds is what its size says
	// (numpy reads the array through zipfile, which stops there and checks the CRC).
	if compressed && z != nil && size > z.Size-min(uint64(data-off), z.Size) {
		f.add(finding.CodeTruncatedData, finding.SevError, -1, entry, "%s needs %d bytes after its header; the entry holds %d", orRoot(name), size, z.Size-min(uint64(data-off), z.Size))
		return
	}
	stride := make([]int64, len(h.shape))
	acc := int64(1)
	for i := range h.shape {
		j := len(h.shape) - 1 - i
		if h.fortran {
			j = i
		}
		stride[j], acc = acc, acc*max(h.shape[j], 1)
	}
	t := Tensor{Name: name, DType: dt, Shape: h.shape, Stride: stride, Contiguous: contiguous(h.shape, stride), Storage: name, Offset: fo(data), Size: int64(size), BigEndian: order == '>'}
	if !t.Contiguous {
		f.add(finding.CodeNonContiguous, finding.SevInfo, fo(start), entry, "%s is stored in Fortran (column-major) order", name)
	}
	f.Tensors = append(f.Tensors, t)
	s := Storage{Key: name, DType: dt, Numel: int64(n), Offset: fo(data), Size: int64(size), Entry: entry, Compressed: compressed, dataStart: -1}
	if compressed && z != nil {
		s.entryOffset, s.entrySize, s.dataStart = z.DataOffset, int64(z.CSize), data-off
	}
	f.Storages = append(f.Storages, s)
}

// maxNPYHeader is numpy's _MAX_HEADER_SIZE, the default max_header_size of numpy.load.
const maxNPYHeader = 10000

// npyHeaderChars is the length of a header as numpy measures it: once decoded, latin-1 (one
// character a byte) before version 3, UTF-8 from it.
func npyHeaderChars(b []byte, major byte) int {
	if major >= 3 {
		return utf8.RuneCount(b)
	}
	return len(b)
}

// parseNPYHeader reads the Python dict literal of an .npy header: 'descr', 'fortran_order' and
// 'shape'. It returns a reason when the header is not one NumPy writes.
func parseNPYHeader(s string) (npyHeader, string) {
	var h npyHeader
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return h, "not a dict"
	}
	s = s[1 : len(s)-1]
	seen := map[string]bool{}
	for {
		s = strings.TrimLeft(s, " ,")
		if s == "" {
			break
		}
		key, rest, ok := pyString(s)
		if !ok {
			return h, "a key that is not a string"
		}
		rest = strings.TrimLeft(rest, " ")
		if !strings.HasPrefix(rest, ":") {
			return h, "no ':' after " + strconv.Quote(key)
		}
		rest = strings.TrimLeft(rest[1:], " ")
		seen[key] = true
		switch key {
		case "descr":
			if strings.HasPrefix(rest, "[") {
				return h, "a structured dtype"
			}
			h.descr, rest, ok = pyString(rest)
			if !ok {
				return h, "descr is not a string"
			}
		case "fortran_order":
			switch {
			case strings.HasPrefix(rest, "True"):
				h.fortran, rest = true, rest[4:]
			case strings.HasPrefix(rest, "False"):
				rest = rest[5:]
			default:
				return h, "fortran_order is not a bool"
			}
		case "shape":
			i := strings.IndexByte(rest, ')')
			if !strings.HasPrefix(rest, "(") || i < 0 {
				return h, "shape is not a tuple"
			}
			h.shape = []int64{}
			for _, d := range strings.Split(rest[1:i], ",") {
				d = strings.TrimSuffix(strings.TrimSpace(d), "L")
				if d == "" {
					continue
				}
				v, err := strconv.ParseInt(d, 10, 64)
				if err != nil || v < 0 || len(h.shape) >= MaxDims {
					return h, "shape is not a tuple of sizes"
				}
				h.shape = append(h.shape, v)
			}
			rest = rest[i+1:]
		default:
			return h, "an unknown key " + strconv.Quote(key)
		}
		s = rest
	}
	if !seen["descr"] || !seen["fortran_order"] || !seen["shape"] {
		return h, "descr, fortran_order or shape is missing"
	}
	return h, ""
}

// pyString reads a quoted Python string without escapes.
func pyString(s string) (string, string, bool) {
	if len(s) < 2 || (s[0] != '\'' && s[0] != '"') {
		return "", s, false
	}
	i := strings.IndexByte(s[1:], s[0])
	if i < 0 {
		return "", s, false
	}
	return s[1 : 1+i], s[2+i:], true
}
