package torch

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/zipdir"
)

// open returns a reader for an entry's bytes and the offset they start at in it: the file itself
// for a stored entry, or the entry inflated (at most limit bytes) for a deflated one. The CRC is
// checked when check is set (it reads the whole entry).
func (f *File) open(r io.ReaderAt, z *zipdir.Entry, limit int64, check bool) (io.ReaderAt, int64, int64, bool) {
	if z.DataOffset < 0 {
		return nil, 0, 0, false
	}
	sec := io.NewSectionReader(r, z.DataOffset, int64(z.CSize))
	if z.Method == 0 {
		if check && z.Size <= MaxInflate { // PyTorch checks no CRC: a huge entry is not read twice
			h := crc32.NewIEEE()
			if _, err := io.Copy(h, sec); err != nil || h.Sum32() != z.CRC {
				f.badCRC(z, h.Sum32())
			}
		}
		return r, z.DataOffset, z.DataOffset + int64(z.Size), true
	}
	if z.Size > uint64(limit) {
		limit = min(limit, 1<<16) // read only what a header needs
	} else {
		limit = int64(z.Size)
	}
	if limit > f.budget.Left {
		f.add(finding.CodeOverBudget, finding.SevError, z.Header, z.Name, "%s inflates to %d bytes, more than stdiff reads within its budget for this file (%d)", z.Name, limit, max(f.budget.Left, 0))
		return nil, 0, 0, false
	}
	fr := flate.NewReader(sec)
	defer fr.Close()
	var buf bytes.Buffer
	buf.Grow(int(limit) + bytes.MinRead) // within the budget: one allocation, not a doubling series
	n, err := io.Copy(&buf, io.LimitReader(fr, limit))
	f.budget.Spend(int64(buf.Cap()))
	if err != nil && n < limit {
		f.add(zipdir.CodeMalformed, finding.SevError, z.DataOffset, z.Name, "%s cannot be inflated: %v", z.Name, err)
		return nil, 0, 0, false
	}
	if check && uint64(n) == z.Size {
		if c := crc32.ChecksumIEEE(buf.Bytes()); c != z.CRC {
			f.badCRC(z, c)
		}
	}
	return bytes.NewReader(buf.Bytes()), 0, n, true
}

func (f *File) badCRC(z *zipdir.Entry, got uint32) {
	f.add(finding.CodeZipBadCRC, finding.SevWarning, z.Header, z.Name, "%s fails its CRC (0x%08x, the directory says 0x%08x); PyTorch does not check CRCs, other zip readers refuse it", z.Name, got, z.CRC).Hint =
		"the file may be damaged (an interrupted download?); fetch it again"
}

// readZip reads a zip archive: a torch.save checkpoint, TorchScript, an .npz or another archive.
func (f *File) readZip(r io.ReaderAt) {
	f.Format = FormatZip
	entries, ok := f.centralDirectory(r)
	if !ok {
		if len(entries) == 0 && len(f.Findings) == 0 {
			// An archive of no entry (its end record alone): torch.load refuses it (no local header
			// first, then no pickle); numpy.load reads it as an .npz of no arrays.
			f.Format = FormatNPZ
		}
		return
	}
	names := make([]string, len(entries))
	npy := 0
	for i := range entries {
		names[i] = entries[i].Name
		if strings.HasSuffix(entries[i].Name, ".npy") {
			npy++
		}
	}
	dir := newZipDir(names)
	if npy == len(entries) {
		f.Format = FormatNPZ
		last := map[string]int{}
		for i := range entries {
			last[entries[i].Name] = i
		}
		for i := range entries {
			z := &entries[i]
			if last[z.Name] != i {
				continue // numpy.load reads a name through zipfile, where the last entry of a name wins
			}
			// a deflated entry is inflated as far as its header (an object array's pickle: a little more)
			rr, off, end, ok := f.open(r, z, npzHeaderInflate, false)
			if ok {
				f.readNPY(rr, off, end, z.Name, strings.TrimSuffix(z.Name, ".npy"), z.Method != 0, z)
			}
		}
		return
	}
	f.collisions(entries, dir) // numpy's rule for an .npz (the last of a name) is its own
	// PyTorchFileReader's folder is the first entry's (central directory order) up to its first
	// "/"; records are found in it as miniz finds them (zipnames.go).
	prefix, _, slash := strings.Cut(entries[0].Name, "/")
	f.Prefix = prefix
	if !slash {
		f.add(finding.CodeZipPrefix, finding.SevError, entries[0].Central, entries[0].Name, "the first entry %q is in no folder; PyTorch refuses such an archive", entries[0].Name)
	}
	locate := func(record string) *zipdir.Entry {
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
		f.add(finding.CodeTorchScript, finding.SevError, -1, "", "this is a TorchScript archive (torch.jit.save); torch.load(weights_only=True) refuses it").Hint =
			"load it with torch.jit.load if you trust it"
	case data == nil:
		f.Format = FormatArchive
		f.add(finding.CodeOtherArchive, finding.SevError, -1, "", "a zip archive without %s/data.pkl: not a torch.save checkpoint", prefix)
	}
	for i := range entries {
		if !strings.HasPrefix(entries[i].Name, prefix+"/") {
			f.add(finding.CodeZipPrefix, finding.SevError, entries[i].Central, entries[i].Name, "%s is outside the archive's folder %s/", entries[i].Name, prefix)
			break
		}
	}
	if bo := locate("byteorder"); bo != nil {
		if rr, off, end, ok := f.open(r, bo, 16, true); ok {
			b, _ := readAt(rr, off, int(min(end-off, 16)))
			f.ByteOrder = strings.TrimSpace(string(b))
			if f.ByteOrder == "big" {
				f.add(finding.CodeBigEndian, finding.SevInfo, bo.DataOffset, bo.Name, "the tensors are stored big-endian")
			}
		}
	}
	// Every pickle is scanned, whatever the case of its name (another loader may find it where
	// torch does not); data.pkl first, as it is the one torch.load reads.
	var root *zipdir.Entry
	pickles := []*zipdir.Entry{}
	if data != nil {
		root = data
		pickles = append(pickles, data)
	}
	for i := range entries {
		if z := &entries[i]; z != data && strings.EqualFold(path.Ext(z.Name), ".pkl") {
			pickles = append(pickles, z)
		}
	}
	for _, z := range pickles {
		rr, off, end, ok := f.open(r, z, MaxInflate, true)
		if !ok {
			continue
		}
		p, err := f.scanPickle(rr, off, end, z.Name, z.Method != 0)
		if err != nil || z != root || f.Format != FormatZip {
			continue
		}
		w := newWalker(f, z.Name)
		w.root(p.Root)
		for _, k := range w.refOrder {
			ref := w.refs[k]
			s := Storage{Key: k, DType: ref.dtype.name, Numel: ref.numel, Offset: -1, Entry: prefix + "/data/" + k}
			se := locate("data/" + k)
			if se == nil || se.DataOffset < 0 {
				f.add(finding.CodeStorageMissing, finding.SevError, -1, s.Entry, "storage %s is not in the archive", s.Entry)
				continue
			}
			s.Size, s.Entry = int64(se.Size), se.Name // the record torch reads (miniz's lookup)
			if se.Method == 0 {
				s.Offset = se.DataOffset
			} else {
				s.Compressed = true
				s.entryOffset, s.entrySize = se.DataOffset, int64(se.CSize)
			}
			f.checkRecordSize(se, k, ref)
			s.Numel = s.Size / max(ref.dtype.size, 1)
			f.Storages = append(f.Storages, s)
		}
		f.place(z.Name)
	}
}

// npzHeaderInflate is how much of a deflated .npz entry is inflated to read its header: numpy's
// largest header and more; the array is inflated as it is read (see Data).
const npzHeaderInflate = 64 << 10

// torchScript reports whether torch.load takes the archive for TorchScript, which it refuses under
// weights_only since 2.6 (CVE-2025-32434): _is_torchscript_zip, "constants.pkl" in
// get_all_records() (torch/serialization.py 2.10.0a0 lines 1502 and 2145), the records' names
// under the archive's folder, compared exactly.
func torchScript(entries []zipdir.Entry, prefix string) bool {
	for _, e := range entries {
		if e.Name == prefix+"/constants.pkl" {
			return true
		}
	}
	return false
}

// checkRecordSize refuses a storage whose record holds another number of bytes than the pickle
// declares, larger or smaller, as torch ≥ 2.10 does (CVE-2026-24747: get_storage_from_record
// checks the record's size against numel × element size, "record size … does not match"; pytorch
// PRs #165553 and #170085). A record shorter than its view is also tensor-out-of-storage.
func (f *File) checkRecordSize(se *zipdir.Entry, key string, ref storageRef) {
	if ref.nbytes >= 0 && uint64(ref.nbytes) == se.Size {
		return
	}
	declared := "a size that is no integer"
	if ref.nbytes >= 0 {
		declared = strconv.FormatInt(ref.nbytes, 10) + " bytes"
	}
	f.add(finding.CodeStorageSize, finding.SevError, se.Header, se.Name, "storage %s is %d bytes; the pickle declares %s, and torch.load (2.10 and later) refuses the difference", key, se.Size, declared).Hint =
		"the file was altered or damaged; do not load it"
}

// checkVersion refuses an archive without the version record PyTorchFileReader requires before it
// unpickles anything (.data/version, else version, found as miniz finds them; TORCH_CHECK in
// caffe2/serialize/inline_container.cc's init), or whose version std::stoull cannot read.
func (f *File) checkVersion(r io.ReaderAt, locate func(string) *zipdir.Entry) {
	v := locate(".data/version")
	if v == nil {
		v = locate("version")
	}
	if v == nil {
		f.add(finding.CodeZipVersion, finding.SevError, -1, "", "the archive has no %s/version record; PyTorch refuses it", f.Prefix)
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
		f.add(finding.CodeZipVersion, finding.SevError, v.DataOffset, v.Name, "the version record %q is no number; PyTorch refuses the archive", b)
	}
}

// readAt reads n bytes at off and reports whether all of them were there.
func readAt(r io.ReaderAt, off int64, n int) ([]byte, bool) { return zipdir.ReadAt(r, off, n) }

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// centralDirectory reads the archive's entries through package zipdir, its findings this file's.
func (f *File) centralDirectory(r io.ReaderAt) ([]zipdir.Entry, bool) {
	d := zipdir.Reader{Size: f.Size, Budget: f.budget, Add: f.add, Reads: "PyTorch reads stored and deflated entries"}
	return d.Entries(r)
}
