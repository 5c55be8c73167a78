package torch

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/finding"
)

// zipEntry is one entry of a zip archive's central directory.
type zipEntry struct {
	name       string
	flags      uint16
	method     uint16
	crc        uint32
	csize      uint64
	size       uint64
	central    int64 // offset of the central directory entry
	header     int64 // offset of the local header
	dataOffset int64 // offset of the data, -1 when the local header cannot be read
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

func readAt(r io.ReaderAt, off int64, n int) ([]byte, bool) {
	b := make([]byte, n)
	m, _ := r.ReadAt(b, off)
	return b, m == n
}

// centralDirectory reads the entries of a zip archive as PyTorch's reader (miniz) does: from the
// end of central directory record (zip64 where it says so). Defects are findings; ok is false when
// no entry can be listed.
func (f *File) centralDirectory(r io.ReaderAt) ([]zipEntry, bool) {
	size := f.Size
	tail := min(size, 22+65535)
	buf, ok := readAt(r, size-tail, int(tail))
	if !ok {
		f.add(CodeZipMalformed, finding.SevError, 0, "", "the end of the file cannot be read")
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
		f.add(CodeZipMalformed, finding.SevError, size, "", "no end of central directory record: the archive is truncated")
		return nil, false
	}
	eocdOff := size - tail + int64(eocd)
	e := buf[eocd:]
	count, cdSize, cdOff := uint64(le16(e[10:])), uint64(le32(e[12:])), uint64(le32(e[16:]))
	if count == 0xFFFF || cdSize == 0xFFFFFFFF || cdOff == 0xFFFFFFFF {
		loc, ok := readAt(r, eocdOff-20, 20)
		if !ok || string(loc[:4]) != "PK\x06\x07" {
			f.add(CodeZipMalformed, finding.SevError, eocdOff, "", "the zip64 end of central directory locator is missing")
			return nil, false
		}
		off := int64(le64(loc[8:]))
		rec, ok := readAt(r, off, 56)
		if off < 0 || !ok || string(rec[:4]) != "PK\x06\x06" {
			f.add(CodeZipMalformed, finding.SevError, eocdOff-20, "", "the zip64 end of central directory record is missing")
			return nil, false
		}
		count, cdSize, cdOff = le64(rec[32:]), le64(rec[40:]), le64(rec[48:])
	}
	if cdOff > uint64(size) || cdSize > uint64(size)-cdOff || count > cdSize/46 || count > MaxEntries {
		f.add(CodeZipMalformed, finding.SevError, eocdOff, "", "the central directory (%d entries, %d bytes at %d) does not fit the file", count, cdSize, cdOff)
		return nil, false
	}
	// The directory is read in chunks as its entries are parsed, never allocated at the size the
	// end record claims (a sparse file may claim gigabytes of zeros): an entry that is not where the
	// directory says ends it.
	cd := bufio.NewReaderSize(io.NewSectionReader(r, int64(cdOff), int64(cdSize)), 64<<10)
	entries := make([]zipEntry, 0, min(count, 1024))
	p := 0
	for i := uint64(0); i < count; i++ {
		at := int64(cdOff) + int64(p)
		var fixed [46]byte
		if _, err := io.ReadFull(cd, fixed[:]); err != nil || string(fixed[:4]) != "PK\x01\x02" {
			f.add(CodeZipMalformed, finding.SevError, at, "", "central directory entry %d is not where the directory says", i)
			break
		}
		nl, xl, cl := int(le16(fixed[28:])), int(le16(fixed[30:])), int(le16(fixed[32:]))
		if !f.budget.Spend(int64(256 + nl + xl)) {
			f.add(CodeOverBudget, finding.SevError, at, "", "the central directory lists more entries (%d) than stdiff reads within its budget", count)
			break
		}
		h := make([]byte, 46+nl+xl+cl)
		copy(h, fixed[:])
		if _, err := io.ReadFull(cd, h[46:]); err != nil {
			f.add(CodeZipMalformed, finding.SevError, at, "", "central directory entry %d runs past the directory", i)
			break
		}
		z := zipEntry{name: string(h[46 : 46+nl]), flags: le16(h[8:]), method: le16(h[10:]), crc: le32(h[16:]),
			csize: uint64(le32(h[20:])), size: uint64(le32(h[24:])), header: int64(le32(h[42:])), dataOffset: -1, central: at}
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
				take(&z.size)
				take(&z.csize)
				h := uint64(z.header)
				take(&h)
				z.header = int64(h)
			}
			extra = extra[4+n:]
		}
		p += 46 + nl + xl + cl
		f.localHeader(r, &z)
		entries = append(entries, z)
	}
	return entries, len(entries) > 0
}

// localHeader finds where an entry's data starts and checks the local header against the central one.
func (f *File) localHeader(r io.ReaderAt, z *zipEntry) {
	lh, ok := readAt(r, z.header, 30)
	if z.header < 0 || !ok || string(lh[:4]) != "PK\x03\x04" {
		f.add(CodeZipMalformed, finding.SevError, z.central, z.name, "the local header of %s is not at byte %d, where the central directory says", z.name, z.header)
		return
	}
	nl, xl := int64(le16(lh[26:])), int64(le16(lh[28:]))
	name, _ := readAt(r, z.header+30, int(nl))
	if string(name) != z.name {
		f.add(CodeZipLocalHeader, finding.SevWarning, z.header, z.name, "the local header names %q, the central directory %q", name, z.name)
	}
	z.dataOffset = z.header + 30 + nl + xl
	if z.method == 0 && (z.csize != z.size) {
		f.add(CodeZipMalformed, finding.SevError, z.header, z.name, "stored entry %s has a compressed size %d unlike its size %d", z.name, z.csize, z.size)
		z.dataOffset = -1
		return
	}
	if uint64(z.dataOffset) > uint64(f.Size) || z.csize > uint64(f.Size-z.dataOffset) {
		at := z.dataOffset
		if uint64(at) > uint64(f.Size) {
			at = z.central
		}
		f.add(CodeTruncatedData, finding.SevError, at, z.name, "%s needs %d bytes at %d; the file has %d", z.name, z.csize, z.dataOffset, f.Size)
		z.dataOffset = -1
		return
	}
	if z.flags&1 != 0 {
		f.add(CodeZipEncrypted, finding.SevError, z.header, z.name, "%s is encrypted", z.name)
		z.dataOffset = -1
		return
	}
	if z.method != 0 && z.method != 8 {
		f.add(CodeZipMethod, finding.SevError, z.header, z.name, "%s uses compression method %d; PyTorch reads stored and deflated entries", z.name, z.method)
		z.dataOffset = -1
		return
	}
	if odd := z.flags &^ (1<<3 | 1<<11 | 1<<1 | 1<<2); odd != 0 {
		f.add(CodeZipFlags, finding.SevWarning, z.header, z.name, "%s has unusual flag bits 0x%04x", z.name, odd)
	}
}

// open returns a reader for an entry's bytes and the offset they start at in it: the file itself
// for a stored entry, or the entry inflated (at most limit bytes) for a deflated one. The CRC is
// checked when check is set (it reads the whole entry).
func (f *File) open(r io.ReaderAt, z *zipEntry, limit int64, check bool) (io.ReaderAt, int64, int64, bool) {
	if z.dataOffset < 0 {
		return nil, 0, 0, false
	}
	sec := io.NewSectionReader(r, z.dataOffset, int64(z.csize))
	if z.method == 0 {
		if check && z.size <= MaxInflate { // PyTorch checks no CRC: a huge entry is not read twice
			h := crc32.NewIEEE()
			if _, err := io.Copy(h, sec); err != nil || h.Sum32() != z.crc {
				f.badCRC(z, h.Sum32())
			}
		}
		return r, z.dataOffset, z.dataOffset + int64(z.size), true
	}
	if z.size > uint64(limit) {
		limit = min(limit, 1<<16) // read only what a header needs
	} else {
		limit = int64(z.size)
	}
	if limit > f.budget.Left {
		f.add(CodeOverBudget, finding.SevError, z.header, z.name, "%s inflates to %d bytes, more than stdiff reads within its budget for this file (%d)", z.name, limit, max(f.budget.Left, 0))
		return nil, 0, 0, false
	}
	fr := flate.NewReader(sec)
	defer fr.Close()
	var buf bytes.Buffer
	buf.Grow(int(limit) + bytes.MinRead) // within the budget: one allocation, not a doubling series
	n, err := io.Copy(&buf, io.LimitReader(fr, limit))
	f.budget.Spend(int64(buf.Cap()))
	if err != nil && n < limit {
		f.add(CodeZipMalformed, finding.SevError, z.dataOffset, z.name, "%s cannot be inflated: %v", z.name, err)
		return nil, 0, 0, false
	}
	if check && uint64(n) == z.size {
		if c := crc32.ChecksumIEEE(buf.Bytes()); c != z.crc {
			f.badCRC(z, c)
		}
	}
	return bytes.NewReader(buf.Bytes()), 0, n, true
}

func (f *File) badCRC(z *zipEntry, got uint32) {
	f.add(CodeZipBadCRC, finding.SevWarning, z.header, z.name, "%s fails its CRC (0x%08x, the directory says 0x%08x); PyTorch does not check CRCs, other zip readers refuse it", z.name, got, z.crc).Hint =
		"the file may be damaged (an interrupted download?); fetch it again"
}

// readZip reads a zip archive: a torch.save checkpoint, TorchScript, an .npz or another archive.
func (f *File) readZip(r io.ReaderAt) {
	f.Format = FormatZip
	entries, ok := f.centralDirectory(r)
	if !ok {
		return
	}
	names := make([]string, len(entries))
	npy := 0
	for i := range entries {
		names[i] = entries[i].name
		if strings.HasSuffix(entries[i].name, ".npy") {
			npy++
		}
	}
	dir := newZipDir(names)
	if npy == len(entries) {
		f.Format = FormatNPZ
		last := map[string]int{}
		for i := range entries {
			last[entries[i].name] = i
		}
		for i := range entries {
			z := &entries[i]
			if last[z.name] != i {
				continue // numpy.load reads a name through zipfile, where the last entry of a name wins
			}
			// a deflated entry is inflated as far as its header (an object array's pickle: a little more)
			rr, off, end, ok := f.open(r, z, npzHeaderInflate, false)
			if ok {
				f.readNPY(rr, off, end, z.name, strings.TrimSuffix(z.name, ".npy"), z.method != 0, z)
			}
		}
		return
	}
	f.collisions(entries, dir) // numpy's rule for an .npz (the last of a name) is its own
	// PyTorchFileReader's folder is the first entry's (central directory order) up to its first
	// "/"; records are found in it as miniz finds them (zipnames.go).
	prefix, _, slash := strings.Cut(entries[0].name, "/")
	f.Prefix = prefix
	if !slash {
		f.add(CodeZipPrefix, finding.SevError, entries[0].central, entries[0].name, "the first entry %q is in no folder; PyTorch refuses such an archive", entries[0].name)
	}
	locate := func(record string) *zipEntry {
		if i := dir.locate(prefix + "/" + record); i >= 0 {
			return &entries[i]
		}
		return nil
	}
	data := locate("data.pkl")
	if data != nil {
		f.checkVersion(r, locate)
	}
	switch {
	case torchScript(entries, prefix):
		f.Format = FormatTorchScript
		f.add(CodeTorchScript, finding.SevError, -1, "", "this is a TorchScript archive (torch.jit.save); torch.load(weights_only=True) refuses it").Hint =
			"load it with torch.jit.load if you trust it"
	case data == nil:
		f.Format = FormatArchive
		f.add(CodeOtherArchive, finding.SevError, -1, "", "a zip archive without %s/data.pkl: not a torch.save checkpoint", prefix)
	}
	for i := range entries {
		if !strings.HasPrefix(entries[i].name, prefix+"/") {
			f.add(CodeZipPrefix, finding.SevError, entries[i].central, entries[i].name, "%s is outside the archive's folder %s/", entries[i].name, prefix)
			break
		}
	}
	if bo := locate("byteorder"); bo != nil {
		if rr, off, end, ok := f.open(r, bo, 16, true); ok {
			b, _ := readAt(rr, off, int(min(end-off, 16)))
			f.ByteOrder = strings.TrimSpace(string(b))
			if f.ByteOrder == "big" {
				f.add(CodeBigEndian, finding.SevInfo, bo.dataOffset, bo.name, "the tensors are stored big-endian")
			}
		}
	}
	// Every pickle is scanned, whatever the case of its name (another loader may find it where
	// torch does not); data.pkl first, as it is the one torch.load reads.
	var root *zipEntry
	pickles := []*zipEntry{}
	if data != nil {
		root = data
		pickles = append(pickles, data)
	}
	for i := range entries {
		if z := &entries[i]; z != data && strings.EqualFold(path.Ext(z.name), ".pkl") {
			pickles = append(pickles, z)
		}
	}
	for _, z := range pickles {
		rr, off, end, ok := f.open(r, z, MaxInflate, true)
		if !ok {
			continue
		}
		p, err := f.scanPickle(rr, off, end, z.name, z.method != 0)
		if err != nil || z != root || f.Format != FormatZip {
			continue
		}
		w := newWalker(f, z.name)
		w.root(p.Root)
		for _, k := range w.refOrder {
			ref := w.refs[k]
			s := Storage{Key: k, DType: ref.dtype.name, Numel: ref.numel, Offset: -1, Entry: prefix + "/data/" + k}
			se := locate("data/" + k)
			if se == nil || se.dataOffset < 0 {
				f.add(CodeStorageMissing, finding.SevError, -1, s.Entry, "storage %s is not in the archive", s.Entry)
				continue
			}
			s.Size, s.Entry = int64(se.size), se.name // the record torch reads (miniz's lookup)
			if se.method == 0 {
				s.Offset = se.dataOffset
			} else {
				s.Compressed = true
				s.entryOffset, s.entrySize = se.dataOffset, int64(se.csize)
			}
			f.checkRecordSize(se, k, ref)
			s.Numel = s.Size / max(ref.dtype.size, 1)
			f.Storages = append(f.Storages, s)
		}
		f.place(z.name)
	}
}

// npzHeaderInflate is how much of a deflated .npz entry is inflated to read its header: numpy's
// largest header and more; the array is inflated as it is read (see Data).
const npzHeaderInflate = 64 << 10

// torchScript reports whether torch.load takes the archive for TorchScript, which it refuses under
// weights_only since 2.6 (CVE-2025-32434): _is_torchscript_zip, "constants.pkl" in
// get_all_records() (torch/serialization.py 2.10.0a0 lines 1502 and 2145), the records' names
// under the archive's folder, compared exactly.
func torchScript(entries []zipEntry, prefix string) bool {
	for _, e := range entries {
		if e.name == prefix+"/constants.pkl" {
			return true
		}
	}
	return false
}

// checkRecordSize refuses a storage whose record holds another number of bytes than the pickle
// declares, larger or smaller, as torch ≥ 2.10 does (CVE-2026-24747: get_storage_from_record
// checks the record's size against numel × element size, "record size … does not match"; pytorch
// PRs #165553 and #170085). A record shorter than its view is also tensor-out-of-storage.
func (f *File) checkRecordSize(se *zipEntry, key string, ref storageRef) {
	if ref.nbytes >= 0 && uint64(ref.nbytes) == se.size {
		return
	}
	declared := "a size that is no integer"
	if ref.nbytes >= 0 {
		declared = strconv.FormatInt(ref.nbytes, 10) + " bytes"
	}
	f.add(CodeStorageSize, finding.SevError, se.header, se.name, "storage %s is %d bytes; the pickle declares %s, and torch.load (2.10 and later) refuses the difference", key, se.size, declared).Hint =
		"the file was altered or damaged; do not load it"
}

// checkVersion refuses an archive without the version record PyTorchFileReader requires before it
// unpickles anything (.data/version, else version, found as miniz finds them; TORCH_CHECK in
// caffe2/serialize/inline_container.cc's init), or whose version std::stoull cannot read.
func (f *File) checkVersion(r io.ReaderAt, locate func(string) *zipEntry) {
	v := locate(".data/version")
	if v == nil {
		v = locate("version")
	}
	if v == nil {
		f.add(CodeZipVersion, finding.SevError, -1, "", "the archive has no %s/version record; PyTorch refuses it", f.Prefix)
		return
	}
	rr, off, end, ok := f.open(r, v, 64, false)
	if !ok {
		return
	}
	b, _ := readAt(rr, off, int(min(end-off, 64)))
	t := strings.TrimLeft(string(b), " \t\n\v\f\r")
	t = strings.TrimPrefix(strings.TrimPrefix(t, "+"), "-")
	if t == "" || t[0] < '0' || t[0] > '9' {
		f.add(CodeZipVersion, finding.SevError, v.dataOffset, v.name, "the version record %q is no number; PyTorch refuses the archive", b)
	}
}
