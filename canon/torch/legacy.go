package torch

import (
	"io"
	"math/bits"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/pickle"
)

// legacyMagicNumber is 0x1950a86a20f9469cfc6c in decimal, as the machine renders a big integer.
const legacyMagicNumber = "119547037146038801333356"

// readPickles reads a file that starts with a pickle: torch.save's legacy format when the first
// pickle is its magic number, else a bare pickle.
func (f *File) readPickles(r io.ReaderAt) {
	probe := *f.budget // scanPickle reads the first pickle again, spending the file's budget
	first, err := pickle.ReadBudget(r, 0, f.Size, &probe)
	if err != nil && len(f.Findings) == 0 && (first == nil || len(first.Globals) == 0) {
		if h := f.head(r); len(h) == 0 || strings.IndexByte(pickleStart, h[0]) < 0 {
			f.add(finding.CodeNotPyTorch, finding.SevError, 0, "", "not a PyTorch, NumPy or pickle file")
			return
		}
	}
	if err == nil && first.Root.Kind == pickle.Int && first.Root.BigInt == legacyMagicNumber {
		f.readLegacy(r)
		return
	}
	f.Format = FormatPickle
	p, err := f.scanPickle(r, 0, f.Size, "", false)
	if err != nil {
		return
	}
	f.add(finding.CodeBarePickle, finding.SevInfo, -1, "", "a bare pickle, not a torch.save file; the verdict is the weights-only unpickler's")
	w := newWalker(f, "")
	w.root(p.Root)
	f.scanFollowing(r, p.End)
}

// maxFollowing is how many pickles after a bare pickle's first are scanned.
const maxFollowing = 64

// scanFollowing scans the pickles that follow a bare pickle's first, from byte off, while they
// read as pickles: torch.load's legacy reader and other loaders (pickle.load in a loop, joblib)
// read several from one file, and a legacy checkpoint whose magic number was replaced is one.
func (f *File) scanFollowing(r io.ReaderAt, off int64) {
	for i := 0; i < maxFollowing && off < f.Size; i++ {
		p, err := pickle.Read(r, off, f.Size)
		if err != nil || p.End <= off {
			return
		}
		if _, err := f.scanPickle(r, off, f.Size, "pickle "+strconv.Itoa(i+2), false); err != nil {
			return
		}
		off = p.End
	}
}

func (f *File) head(r io.ReaderAt) []byte {
	b := make([]byte, min(f.Size, 512))
	n, _ := r.ReadAt(b, 0)
	return b[:n]
}

// readLegacy reads torch.save's legacy format: the magic number, the protocol version (1001), the
// system info, the object, the list of storage keys, then each storage as an 8-byte element count
// and its bytes, in the order of the list.
func (f *File) readLegacy(r io.ReaderAt) {
	f.Format = FormatLegacy
	off := int64(0)
	var ps [5]*pickle.Pickle
	for i, name := range []string{"magic number", "protocol version", "system info", "object", "storage keys"} {
		p, err := f.scanPickle(r, off, f.Size, name, false)
		if err != nil {
			return
		}
		ps[i], off = p, p.End
	}
	if v := ps[1].Root; v.Kind != pickle.Int || v.Int != 1001 {
		f.add(finding.CodeLegacyProtocol, finding.SevError, ps[1].Offset, "protocol version", "the protocol version is %s, not 1001", repr(v, 0))
		return
	}
	if si := ps[2].Root; dictLike(si) {
		for i, k := range si.Keys {
			if s, _ := k.Text(); s == "little_endian" && si.Vals[i].Kind == pickle.Bool && si.Vals[i].Int == 0 {
				f.ByteOrder = "big"
				f.add(finding.CodeBigEndian, finding.SevInfo, si.Vals[i].Offset, "system info", "the tensors are stored big-endian")
			}
		}
	}
	w := newWalker(f, "object")
	w.root(ps[3].Root)
	keys := ps[4].Root
	if keys.Kind != pickle.List {
		f.add(finding.CodeMalformedPickle, finding.SevError, ps[4].Offset, "storage keys", "the storage keys are a %s, not a list", repr(keys, 0))
		return
	}
	for _, k := range keys.Items {
		key, ok := k.Text()
		if !ok && k.Kind == pickle.Int {
			key, ok = strconv.FormatInt(k.Int, 10), true
		}
		if !ok {
			f.add(finding.CodeMalformedPickle, finding.SevError, k.Offset, "storage keys", "a storage key is a %s, not a string", repr(k, 0))
			return
		}
		ref, known := w.refs[key]
		es := int64(1)
		dt := "U8"
		if known {
			es, dt = ref.dtype.size, ref.dtype.name
		}
		b, ok := readAt(r, off, 8)
		if !ok {
			f.add(finding.CodeTruncatedData, finding.SevError, off, "", "storage %s is cut off by the end of the file", key)
			break
		}
		n := int64(le64(b))
		hi, size := bits.Mul64(uint64(n), uint64(es))
		if n < 0 || hi != 0 || size > uint64(f.Size-off-8) {
			f.add(finding.CodeTruncatedData, finding.SevError, off, "", "storage %s claims %d elements of %d bytes; the file has %d bytes after it", key, n, es, f.Size-off-8)
			break
		}
		f.Storages = append(f.Storages, Storage{Key: key, DType: dt, Numel: n, Offset: off + 8, Size: int64(size)})
		if known && !ref.untyped && ref.numel != n {
			// torch's _set_from_file checks the count against the storage the pickle made
			f.add(finding.CodeStorageSize, finding.SevError, off, "", "storage %s holds %d elements; the pickle says %d, and torch.load refuses the difference", key, n, ref.numel)
		}
		off += 8 + int64(size)
	}
	have := map[string]bool{}
	for _, s := range f.Storages {
		have[s.Key] = true
	}
	for _, k := range w.refOrder {
		if !have[k] {
			f.add(finding.CodeStorageMissing, finding.SevError, -1, "", "storage %s is not in the file", k)
		}
	}
	f.place("")
}
