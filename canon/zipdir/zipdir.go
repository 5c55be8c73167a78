// Package zipdir reads a zip archive's central directory the hardened way every zip-based format of
// stdiff shares (PyTorch checkpoints, .npz, DDUF): from the end of central directory record (zip64
// where it says so), in chunks as its entries are parsed, never allocating a size the file claims
// before checking it against the file, each entry's local header read and checked against the
// central one. Defects are findings with stable codes; nothing is inflated or decrypted here.
//
// The package is a leaf beside canon/finding: format packages import it, it imports none of them.
package zipdir

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/stdiff/stdiff/canon/finding"
)

// Finding codes. They are part of stdiff's contract with scripts: add, never rename.
const (
	CodeMalformed   = "zip-malformed"          // error: the central directory cannot be read
	CodeEncrypted   = "zip-encrypted"          // error: an entry has the encrypted flag
	CodeMethod      = "zip-unsupported-method" // error: neither stored nor deflated
	CodeFlags       = "zip-unusual-flags"      // warning
	CodeLocalHeader = "zip-local-header"       // warning: local and central headers disagree
	CodeTruncated   = "truncated-data"         // error: an entry's data runs past the file
	CodeOverBudget  = "read-over-budget"       // error: more entries than stdiff reads within its budget
)

// MaxEntries is the most entries an archive may have.
const MaxEntries = 1 << 20

// Entry is one entry of a zip archive's central directory.
type Entry struct {
	Name   string
	Flags  uint16
	Method uint16 // 0 stored, 8 deflated
	CRC    uint32
	CSize  uint64 // compressed size
	Size   uint64
	// Central is the offset of the central directory entry, Header that of the local header.
	Central, Header int64
	// DataOffset is where the entry's data starts, -1 when it cannot be read (a local header that
	// is not where the directory says, data past the end, encryption, an unsupported method).
	DataOffset int64
	// UnicodeName is the name an Info-ZIP Unicode Path extra field (0x7075, version 1) of its central
	// header gives it, where the field's CRC-32 is that of Name: CPython's zipfile (3.12 on) names
	// the entry by it, others by Name. "" when there is none.
	UnicodeName string
}

// Spender is a memory budget (pickle.Budget is one): Spend takes n bytes and reports whether any
// were left for them.
type Spender interface{ Spend(n int64) bool }

// Reader reads the central directory of an archive of Size bytes.
type Reader struct {
	Size int64
	// Budget, when not nil, bounds the memory the listed names take.
	Budget Spender
	// Add records a finding (offset in the archive, entry "" for the whole archive) and returns it,
	// so that a hint can be set.
	Add func(code string, sev finding.Severity, off int64, entry, format string, args ...any) *finding.Finding
	// Reads says which compression methods the format's reader accepts, in the message of a
	// CodeMethod finding: "PyTorch reads stored and deflated entries".
	Reads string
	// NamesOnly lists the entries without reading their local headers (a sniffer's look at the
	// names): DataOffset stays -1.
	NamesOnly bool
	// Rest is set by Entries, when it read every entry the end record counts: the bytes of the
	// central directory after them, which Python's zipfile (reading the directory by its size)
	// reads as more entries and miniz (by the count) leaves out. 0 in a well-formed archive.
	Rest int64
	// Python is set by Entries, once it found the end record, when Python's zipfile reads another
	// central directory than it did (likePython): why, in words. "" in a well-formed archive.
	Python string
}

// Budget is a Spender of Left bytes.
type Budget struct{ Left int64 }

// Spend takes n bytes and reports whether any were left for them.
func (b *Budget) Spend(n int64) bool {
	b.Left -= n
	return b.Left >= 0
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// ReadAt reads n bytes at off and reports whether all of them were there.
func ReadAt(r io.ReaderAt, off int64, n int) ([]byte, bool) {
	if off < 0 || n < 0 {
		return nil, false
	}
	b := make([]byte, n)
	m, _ := r.ReadAt(b, off)
	return b, m == n
}

// Entries reads the entries of the archive r as miniz (PyTorch's reader) and Go's archive/zip do:
// from the end of central directory record (zip64 where it says so). Defects are findings; ok is
// false when no entry can be listed.
func (d *Reader) Entries(r io.ReaderAt) ([]Entry, bool) {
	size := d.Size
	tail := min(size, 22+65535)
	buf, ok := ReadAt(r, size-tail, int(tail))
	if !ok {
		d.Add(CodeMalformed, finding.SevError, 0, "", "the end of the file cannot be read")
		return nil, false
	}
	eocd := -1
	for i := len(buf) - 22; i >= 0; i-- {
		if string(buf[i:i+4]) == "PK\x05\x06" {
			eocd = i
			break
		}
	}
	if eocd < 0 {
		d.Add(CodeMalformed, finding.SevError, size, "", "no end of central directory record: the archive is truncated")
		return nil, false
	}
	eocdOff := size - tail + int64(eocd)
	e := buf[eocd:]
	count, cdSize, cdOff := uint64(le16(e[10:])), uint64(le32(e[12:])), uint64(le32(e[16:]))
	defer d.likePython(r, buf, eocd, eocdOff, &count, &cdSize, &cdOff)
	// The zip64 records where the end record's fields say so and the locator is there; without
	// it, the fields are what they say, as Python's zipfile, miniz and archive/zip read them
	// (Python writes exactly 65,535 entries so, without zip64 records).
	if loc, ok := ReadAt(r, eocdOff-20, 20); (count == 0xFFFF || cdSize == 0xFFFFFFFF || cdOff == 0xFFFFFFFF) && ok && string(loc[:4]) == "PK\x06\x07" {
		off := int64(le64(loc[8:]))
		rec, ok := ReadAt(r, off, 56)
		if off < 0 || !ok || string(rec[:4]) != "PK\x06\x06" {
			d.Add(CodeMalformed, finding.SevError, eocdOff-20, "", "the zip64 end of central directory record is missing")
			return nil, false
		}
		count, cdSize, cdOff = le64(rec[32:]), le64(rec[40:]), le64(rec[48:])
	}
	if cdOff > uint64(size) || cdSize > uint64(size)-cdOff || count > cdSize/46 || count > MaxEntries {
		d.Add(CodeMalformed, finding.SevError, eocdOff, "", "the central directory (%d entries, %d bytes at %d) does not fit the file", count, cdSize, cdOff)
		return nil, false
	}
	// The directory is read in chunks as its entries are parsed, never allocated at the size the
	// end record claims (a sparse file may claim gigabytes of zeros): an entry that is not where the
	// directory says ends it.
	cd := bufio.NewReaderSize(io.NewSectionReader(r, int64(cdOff), int64(cdSize)), 64<<10)
	entries := make([]Entry, 0, min(count, 1024))
	p := 0
	for i := uint64(0); i < count; i++ {
		at := int64(cdOff) + int64(p)
		var fixed [46]byte
		if _, err := io.ReadFull(cd, fixed[:]); err != nil || string(fixed[:4]) != "PK\x01\x02" {
			d.Add(CodeMalformed, finding.SevError, at, "", "central directory entry %d is not where the directory says", i)
			break
		}
		nl, xl, cl := int(le16(fixed[28:])), int(le16(fixed[30:])), int(le16(fixed[32:]))
		if d.Budget != nil && !d.Budget.Spend(int64(256+nl+xl)) {
			d.Add(CodeOverBudget, finding.SevError, at, "", "the central directory lists more entries (%d) than stdiff reads within its budget", count)
			break
		}
		h := make([]byte, 46+nl+xl+cl)
		copy(h, fixed[:])
		if _, err := io.ReadFull(cd, h[46:]); err != nil {
			d.Add(CodeMalformed, finding.SevError, at, "", "central directory entry %d runs past the directory", i)
			break
		}
		z := Entry{Name: string(h[46 : 46+nl]), Flags: le16(h[8:]), Method: le16(h[10:]), CRC: le32(h[16:]),
			CSize: uint64(le32(h[20:])), Size: uint64(le32(h[24:])), Header: int64(le32(h[42:])), DataOffset: -1, Central: at}
		extra := h[46+nl : 46+nl+xl]
		for len(extra) >= 4 {
			id, n := le16(extra), int(le16(extra[2:]))
			if len(extra) < 4+n {
				break
			}
			if id == 1 { // zip64: the 32-bit fields that are all ones, in order
				x := extra[4 : 4+n]
				take := func(v *uint64) {
					if *v == 0xFFFFFFFF && len(x) >= 8 {
						*v, x = le64(x), x[8:]
					}
				}
				take(&z.Size)
				take(&z.CSize)
				h := uint64(z.Header)
				take(&h)
				z.Header = int64(h)
			}
			if x := extra[4 : 4+n]; id == 0x7075 && len(x) > 5 && x[0] == 1 && le32(x[1:]) == crc32.ChecksumIEEE(h[46:46+nl]) {
				z.UnicodeName = string(x[5:])
			}
			extra = extra[4+n:]
		}
		p += 46 + nl + xl + cl
		if !d.NamesOnly {
			d.localHeader(r, &z)
		}
		entries = append(entries, z)
	}
	if uint64(len(entries)) == count {
		d.Rest = int64(cdSize) - int64(p)
	}
	return entries, len(entries) > 0
}

// likePython sets d.Python when Python's zipfile (3.8–3.13, _EndRecData, _EndRecData64 and
// _RealGetContents) reads another central directory than Entries did from the end record at eocdOff
// (buf[eocd:], the end of the file): huggingface_hub lists a DDUF file's members with it. Python takes
// the zip64 records wherever a locator sits just before the end record, from the 56 bytes before the
// locator (not where the locator says), and shifts the directory and every local header by the bytes
// between the directory's end and the end records ("concat": data before the archive); it refuses a
// signature in the last 21 bytes. count, cdSize and cdOff are the directory Entries read.
func (d *Reader) likePython(r io.ReaderAt, buf []byte, eocd int, eocdOff int64, count, cdSize, cdOff *uint64) {
	if i := bytes.LastIndex(buf, []byte("PK\x05\x06")); i > eocd {
		d.Python = "Python's zipfile finds an end record in the last 21 bytes and refuses the archive"
		return
	}
	e := buf[eocd:]
	pc, ps, po := uint64(le16(e[10:])), uint64(le32(e[12:])), uint64(le32(e[16:]))
	end := eocdOff
	if loc, ok := ReadAt(r, eocdOff-20, 20); ok && string(loc[:4]) == "PK\x06\x07" {
		if rec, ok := ReadAt(r, eocdOff-76, 56); ok && string(rec[:4]) == "PK\x06\x06" {
			pc, ps, po, end = le64(rec[32:]), le64(rec[40:]), le64(rec[48:]), eocdOff-76
		}
	}
	switch {
	case pc != *count || ps != *cdSize || po != *cdOff:
		d.Python = fmt.Sprintf("Python's zipfile reads another directory (%d entries, %d bytes at %d) from the zip64 records before the end record", pc, ps, po)
	case uint64(end) != po+ps:
		d.Python = fmt.Sprintf("the central directory (%d bytes at %d) does not end where the end records start (%d): Python's zipfile reads it, and every entry, %d bytes further on", ps, po, end, int64(uint64(end)-po-ps))
	}
}

// localHeader finds where an entry's data starts and checks the local header against the central one.
func (d *Reader) localHeader(r io.ReaderAt, z *Entry) {
	// One read for the fixed part and the name the central directory gives (one range request
	// over HTTP), another only when the local header's name is another length.
	lh, ok := ReadAt(r, z.Header, 30+len(z.Name))
	if !ok {
		lh, ok = ReadAt(r, z.Header, 30)
	}
	if z.Header < 0 || !ok || string(lh[:4]) != "PK\x03\x04" {
		d.Add(CodeMalformed, finding.SevError, z.Central, z.Name, "the local header of %s is not at byte %d, where the central directory says", z.Name, z.Header)
		return
	}
	nl, xl := int64(le16(lh[26:])), int64(le16(lh[28:]))
	var name []byte
	if int(nl) == len(lh)-30 {
		name = lh[30:]
	} else {
		name, _ = ReadAt(r, z.Header+30, int(nl))
	}
	if string(name) != z.Name {
		d.Add(CodeLocalHeader, finding.SevWarning, z.Header, z.Name, "the local header names %q, the central directory %q", name, z.Name)
	}
	z.DataOffset = z.Header + 30 + nl + xl
	if z.Method == 0 && (z.CSize != z.Size) {
		d.Add(CodeMalformed, finding.SevError, z.Header, z.Name, "stored entry %s has a compressed size %d unlike its size %d", z.Name, z.CSize, z.Size)
		z.DataOffset = -1
		return
	}
	if uint64(z.DataOffset) > uint64(d.Size) || z.CSize > uint64(d.Size-z.DataOffset) {
		at := z.DataOffset
		if uint64(at) > uint64(d.Size) {
			at = z.Central
		}
		d.Add(CodeTruncated, finding.SevError, at, z.Name, "%s needs %d bytes at %d; the file has %d", z.Name, z.CSize, z.DataOffset, d.Size)
		z.DataOffset = -1
		return
	}
	if z.Flags&1 != 0 {
		d.Add(CodeEncrypted, finding.SevError, z.Header, z.Name, "%s is encrypted", z.Name)
		z.DataOffset = -1
		return
	}
	if z.Method != 0 && z.Method != 8 {
		d.Add(CodeMethod, finding.SevError, z.Header, z.Name, "%s uses compression method %d; %s", z.Name, z.Method, d.Reads)
		z.DataOffset = -1
		return
	}
	if odd := z.Flags &^ (1<<3 | 1<<11 | 1<<1 | 1<<2); odd != 0 {
		d.Add(CodeFlags, finding.SevWarning, z.Header, z.Name, "%s has unusual flag bits 0x%04x", z.Name, odd)
	}
}
