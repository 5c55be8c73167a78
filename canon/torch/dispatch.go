package torch

import (
	"bytes"
	"io"
	"strings"

	"github.com/stdiff/stdiff/canon/finding"
)

// torch.load's dispatch, as torch ≥ 2.10 does it (torch/serialization.py, load and _legacy_load;
// line numbers of 2.10.0a0):
//
//  1. a file whose first four bytes are a zip local header, "PK\x03\x04" (_is_zipfile, line 428;
//     nothing else makes a zip for torch) is read by PyTorchFileReader (miniz): TorchScript
//     archives are refused under weights_only (line 1502), else data.pkl is unpickled;
//  2. else, for a file read from its start, tarfile.open(fileobj=f, mode="r:") (line 1667): when
//     Python's tarfile accepts the first 512-byte block, the file is torch.save's tar format, which
//     torch refuses under weights_only ("Cannot use weights_only=True with files saved in the
//     legacy .tar format", line 1670) and unpickles ("storages", "tensors", "pickle") without it;
//  3. else the legacy format: pickles read one after another from byte 0, the first of which must
//     be the magic number (line 1815), each read by the weights-only unpickler.
//
// Read follows the same order, with NumPy's magic recognised before 3 (torch refuses those files;
// numpy reads them).

// tarBlock is the size of a tar header.
const tarBlock = 512

// isTar reports whether Python's tarfile (3.8–3.13, TarInfo.frombuf and TarFile.next) opens a file
// whose first 512 bytes are b: a block of NULs (an archive with no member: tarfile opens it), or a
// header whose checksum matches (signed or unsigned) and whose numeric fields parse as tarfile's
// nti does. A member type that makes tarfile read further (GNU long names, PAX headers, sparse
// files) counts as a tar whatever follows: torch refuses a tar under weights_only, so reading too
// many files as tar refuses a file torch might load, never the reverse.
func isTar(b []byte) bool {
	if len(b) < tarBlock {
		return false
	}
	b = b[:tarBlock]
	if bytes.Count(b, []byte{0}) == tarBlock {
		return true
	}
	sum, ok := tarNumber(b[148:156])
	if !ok {
		return false
	}
	unsigned, signed := int64(256), int64(256)
	for i, c := range b {
		if i >= 148 && i < 156 {
			continue
		}
		unsigned += int64(c)
		signed += int64(int8(c))
	}
	if sum != unsigned && sum != signed {
		return false
	}
	for _, f := range [][2]int{{100, 108}, {108, 116}, {116, 124}, {124, 136}, {136, 148}, {329, 337}, {337, 345}} {
		if _, ok := tarNumber(b[f[0]:f[1]]); !ok {
			return false
		}
	}
	if b[156] == 'S' { // GNU sparse: the original size must parse too
		if _, ok := tarNumber(b[483:495]); !ok {
			return false
		}
	}
	return true
}

// tarNumber parses a tar numeric field as Python's tarfile.nti does: base-256 when the first byte
// is 0o200 or 0o377, else ASCII up to the first NUL, stripped of whitespace, read by int(s, 8)
// (an optional sign, an optional 0o prefix, digits with single underscores between them).
func tarNumber(s []byte) (int64, bool) {
	if s[0] == 0o200 || s[0] == 0o377 {
		var n int64
		for _, c := range s[1:] {
			n = n<<8 | int64(c)
		}
		if s[0] == 0o377 {
			n = -n // the sign is all that matters here (the checksum is never negative)
		}
		return n, true
	}
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	for _, c := range s {
		if c > 0x7f {
			return 0, false
		}
	}
	t := strings.Trim(string(s), " \t\n\v\f\r\x1c\x1d\x1e\x1f")
	if t == "" {
		return 0, true
	}
	neg := false
	if t[0] == '+' || t[0] == '-' {
		neg, t = t[0] == '-', t[1:]
	}
	if len(t) >= 2 && t[0] == '0' && (t[1] == 'o' || t[1] == 'O') {
		t = strings.TrimPrefix(t[2:], "_")
	}
	if t == "" || t[0] == '_' || t[len(t)-1] == '_' || strings.Contains(t, "__") {
		return 0, false
	}
	var n int64
	for _, c := range []byte(t) {
		switch {
		case c == '_':
		case c >= '0' && c <= '7':
			if n > 1<<58 {
				return 0, true // large, but valid; only the checksum's value is compared
			}
			n = n*8 + int64(c-'0')
		default:
			return 0, false
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// tarPickles are the members of torch.save's tar format that torch.load unpickles (without
// weights_only: it refuses the format with it).
var tarPickles = map[string]bool{"sys_info": true, "pickle": true, "tensors": true, "storages": true}

// readTar names torch.save's tar format, which torch.load(weights_only=True) refuses, and scans the
// pickles of its members (as torch.load without weights_only would unpickle them), so what they
// name is a finding too.
func (f *File) readTar(r io.ReaderAt) {
	f.Format = FormatTar
	f.add(finding.CodeTarFormat, finding.SevError, 0, "", "this is torch.save's tar format (before PyTorch 0.4), which torch.load(weights_only=True) refuses").Hint =
		"load it only if you trust it, with torch.load(weights_only=False) in a sandbox, and save it again"
	off := int64(0)
	for i := 0; i < 4096 && off+tarBlock <= f.Size; i++ {
		h, ok := readAt(r, off, tarBlock)
		if !ok || bytes.Count(h, []byte{0}) == tarBlock {
			return
		}
		name := string(h[:100])
		if j := strings.IndexByte(name, 0); j >= 0 {
			name = name[:j]
		}
		size, ok := tarNumber(h[124:136])
		if !ok || size < 0 || size > f.Size-off-tarBlock {
			return
		}
		data := off + tarBlock
		if (tarPickles[name] || strings.HasSuffix(strings.ToLower(name), ".pkl")) && (h[156] == '0' || h[156] == 0) {
			f.scanPickle(r, data, data+size, name, false)
		}
		off = data + (size+tarBlock-1)/tarBlock*tarBlock
	}
}

// ioErrs is a ReaderAt that remembers the first error of its reader other than io.EOF, so that a
// file that could not be read is an error (exit 2), never a file found invalid.
type ioErrs struct {
	r   io.ReaderAt
	err error
}

func (e *ioErrs) ReadAt(p []byte, off int64) (int, error) {
	n, err := e.r.ReadAt(p, off)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// dispatch reads the file whose first bytes are head (up to 512) as torch.load would pick its
// format (see above), through r wrapped so that a read error is kept in f.ReadErr.
func (f *File) dispatch(r io.ReaderAt, head []byte) {
	er := &ioErrs{r: r}
	defer func() { f.ReadErr = er.err }()
	r = er
	if int64(len(head)) < min(f.Size, 512) { // the first read fell short: again, to keep its error
		head = make([]byte, min(f.Size, 512))
		n, _ := r.ReadAt(head, 0)
		head = head[:n]
	}
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		f.readZip(r)
	case isTar(head):
		f.readTar(r)
	case bytes.HasPrefix(head, []byte("\x93NUMPY")):
		f.Format = FormatNPY
		f.readNPY(r, 0, f.Size, "", "array", false, nil)
	default:
		f.readPickles(r)
	}
}

// pickleStart are the opcodes a pickle of protocol 0 or 1 (which has no PROTO) may start with:
// every opcode that pushes a value or a mark without taking one.
const pickleStart = "()]}NIJKMLFGSTUVXBCcP\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x95\x96"
