package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/stdiff/stdiff/canon/finding"
)

// MaxTyped is the most bytes a tensor written in a typed field (float_data, int32_data…) may decode
// to: writers use raw_data or external data for large tensors.
const MaxTyped = 256 << 20

// Check checks what Read cannot from the model alone: that every external tensor's file is in dir (the
// model's folder; links that leave it are refused, as onnx refuses them), is a regular file, and holds
// the tensor's bytes; and that every typed field holds as many elements as the tensor has. r is the
// model file. Findings are added to f.
func (f *File) Check(r io.ReaderAt, dir string) {
	rd := newReader(r, f.Size)
	for i := range f.Tensors {
		n := len(f.Findings)
		f.check(rd, &f.Tensors[i], dir)
		f.Tensors[i].Unreadable = len(f.Findings) > n
	}
}

// check checks one tensor for Check.
func (f *File) check(rd *reader, t *Tensor, dir string) {
	want, ok := t.Len()
	if !ok {
		return
	}
	switch t.Where {
	case InTyped:
		if _, err := t.typed(rd, want); err != nil {
			f.add(CodeDataIncomplete, finding.SevError, t.Offset, fmt.Sprintf("tensor %q: %s", t.Name, errText(err)), "")
		}
	case InExternal:
		fh, err := OpenExternal(dir, t.External)
		if errors.Is(err, ErrOutside) {
			f.add(CodeExternalRefused, finding.SevError, t.Offset, fmt.Sprintf("tensor %q: %v", t.Name, err), "keep external data files in the model's folder")
			return
		}
		var st os.FileInfo
		if err == nil {
			st, err = fh.Stat()
			fh.Close()
		}
		if err != nil {
			why := "cannot be opened"
			switch {
			case errors.Is(err, ErrNotRegular):
				why = "is not a regular file"
			case errors.Is(err, fs.ErrNotExist):
				why = "is missing"
			}
			f.add(CodeExternalMissing, finding.SevError, t.Offset, fmt.Sprintf("tensor %q: its external data file %s %s", t.Name, t.External.Location, why), "copy the model's external data files along with it")
			return
		}
		off, n := max(t.External.Offset, 0), t.External.Length
		switch {
		case n < 0 && st.Size()-off != int64(want):
			f.add(CodeDataIncomplete, finding.SevError, t.Offset, fmt.Sprintf("tensor %q: %s holds %d bytes from byte %d, the tensor needs %d", t.Name, t.External.Location, st.Size()-off, off, want), "")
		case n >= 0 && n != int64(want):
			f.add(CodeDataIncomplete, finding.SevError, t.Offset, fmt.Sprintf("tensor %q: its external data is %d bytes long, its type and dims need %d", t.Name, n, want), "")
		case n >= 0 && (off > st.Size() || st.Size()-off < n):
			f.add(CodeExternalMissing, finding.SevError, t.Offset, fmt.Sprintf("tensor %q: %s has %d bytes, fewer than its range (%d bytes from byte %d)", t.Name, t.External.Location, st.Size(), n, off), "the external data file is cut short: copy it again")
		}
	}
}

// ErrOutside is wrapped by the error of OpenExternal for external data outside the model's folder: a
// location that leaves it (an absolute path, a .. part) or a link that points out of it.
var ErrOutside = errors.New("external data outside the model's folder")

// ErrNotRegular is wrapped by the error of OpenExternal for external data that is not a regular file
// (a FIFO, a device, a folder): it is never read.
var ErrNotRegular = errors.New("external data is not a regular file")

// OpenExternal opens the file of a tensor's external data, for a model in dir, as onnx ≥ 1.21 allows
// it: a relative location inside dir (no .. part, no absolute path), no link that leaves dir (links
// inside it are followed), a regular file. It is the one way stdiff opens external data (check,
// diff, hash, inspect alike). The file is opened without waiting (a FIFO is not waited on) and
// judged by what was opened (fstat), inside dir (os.Root: a folder swapped for a link meanwhile is
// not followed out). Errors wrap ErrOutside, ErrNotRegular or fs.ErrNotExist where they say so.
func OpenExternal(dir string, e *External) (*os.File, error) {
	p, err := ExternalPath(dir, e)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOutside, err)
	}
	rel := strings.TrimPrefix(p, dir+"/")
	if err := within(dir, p); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fh, err := root.OpenFile(rel, os.O_RDONLY|openNonblock, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, err
	case err != nil: // a link out of root that appeared after within looked
		return nil, fmt.Errorf("%w: %s: %v", ErrOutside, e.Location, err)
	}
	st, err := fh.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is a %s", ErrNotRegular, e.Location, kindOf(st.Mode()))
	}
	if err != nil {
		fh.Close()
		return nil, err
	}
	return fh, nil
}

// kindOf names a file's type, for messages.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m.IsDir():
		return "folder"
	}
	return "special file"
}

// within reports (as an error wrapping ErrOutside) whether path, once its links are followed, lies in
// dir (its links followed too). A path that does not resolve (a missing file) is not refused here.
func within(dir, path string) error {
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil // the open that follows says why
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil // a missing file is reported as missing
	}
	rel, err := filepath.Rel(realDir, real)
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("%w: %s is a link that leaves the model's folder", ErrOutside, filepath.Base(path))
	}
	return nil
}

// typed decodes a tensor written in a typed field to its bytes in row-major little-endian order (want
// of them).
func (t *Tensor) typed(rd *reader, want uint64) ([]byte, error) {
	if want > MaxTyped {
		return nil, fmt.Errorf("%d bytes in a typed field, more than the %d stdiff decodes", want, MaxTyped)
	}
	bits, _ := t.DataType.Bits()
	var out []byte // allocated once the field is known to hold want bytes' worth of elements
	count := 0
	put := func(v uint64) error {
		count++
		var b [8]byte
		switch {
		case bits >= 8:
			binary.LittleEndian.PutUint64(b[:], v)
			if uint64(len(out))+bits/8 > want {
				return errors.New("more elements in its typed field than its dims say")
			}
			out = append(out, b[:bits/8]...)
		default: // 4- and 2-bit types: each value is one byte of packed elements
			if uint64(len(out)) >= want {
				return errors.New("more elements in its typed field than its dims say")
			}
			out = append(out, byte(v))
		}
		return nil
	}
	var fixed int // bytes per element of a fixed-size field, 0 for varints
	switch t.Field {
	case tensorFloatData:
		fixed = 4
		if t.DataType != Float && t.DataType != Complex64 {
			return nil, fmt.Errorf("float_data holds %s values", t.DataType.Name())
		}
		bits = 32
	case tensorDoubleData:
		fixed = 8
		if t.DataType != Double && t.DataType != Complex128 {
			return nil, fmt.Errorf("double_data holds %s values", t.DataType.Name())
		}
		bits = 64
	case tensorInt64Data:
		if t.DataType != Int64 {
			return nil, fmt.Errorf("int64_data holds %s values", t.DataType.Name())
		}
	case tensorUint64Data:
		if t.DataType != Uint64 && t.DataType != Uint32 {
			return nil, fmt.Errorf("uint64_data holds %s values", t.DataType.Name())
		}
	case tensorInt32Data:
		switch t.DataType {
		case Float, Double, Int64, Uint64, Uint32, Complex64, Complex128, String:
			return nil, fmt.Errorf("int32_data holds %s values", t.DataType.Name())
		}
	}
	// The dims claim want bytes; the field's own length bounds how many elements it holds (a varint
	// takes at least a byte). A claim the field cannot meet is refused before anything is allocated.
	per := max(bits/8, 1)
	most := uint64(t.End - t.Start)
	switch {
	case t.pieces != nil:
		most = uint64(len(t.pieces))
	case fixed > 0:
		most /= uint64(fixed)
	}
	if most < want/per {
		return nil, fmt.Errorf("its typed field holds at most %d elements (%d bytes), its type and dims need %d bytes", most, t.End-t.Start, want)
	}
	out = make([]byte, 0, want)
	if t.pieces != nil {
		for _, at := range t.pieces {
			fd, _, err := rd.next(at, t.msgEnd)
			if err != nil {
				return nil, err
			}
			if err := put(fd.Value); err != nil { // a varint, or a fixed value's bits as written
				return nil, err
			}
		}
	} else {
		for off := t.Start; off < t.End; {
			var v uint64
			if fixed > 0 {
				if t.End-off < int64(fixed) {
					return nil, &wireError{off, errTruncated}
				}
				b, err := rd.at(off, fixed)
				if err != nil {
					return nil, err
				}
				if fixed == 4 {
					v = uint64(binary.LittleEndian.Uint32(b))
				} else {
					v = binary.LittleEndian.Uint64(b)
				}
				off += int64(fixed)
			} else {
				var err error
				if v, off, err = rd.varint(off, t.End); err != nil {
					return nil, err
				}
			}
			if err := put(v); err != nil {
				return nil, err
			}
		}
	}
	if uint64(len(out)) != want {
		return nil, fmt.Errorf("%d elements in its typed field (%d bytes), its type and dims need %d bytes", count, len(out), want)
	}
	return out, nil
}

// Opener opens an external data file (a path made by ExternalPath) for Data to read.
type Opener func(path string) (io.ReaderAt, func() error, error)

// Data is the model's tensors' bytes one after another, in Tensors' order, each in row-major
// little-endian order: tensor i's bytes are from Offsets[i] to Offsets[i+1]. Strings and tensors
// without a size take no bytes. It reads raw_data from the model, decodes typed fields, and reads
// external data from the files beside the model; it reads only what is asked for.
type Data struct {
	f       *File
	rd      *reader
	r       io.ReaderAt
	dir     string
	open    Opener
	Offsets []uint64
	files   map[string]io.ReaderAt
	closers []func() error
	// decoded is the last tensor decoded from a typed field (index decodedAt), for reads in chunks.
	decoded   []byte
	decodedAt int
	// mu guards rd, files, closers and decoded: raw and external bytes are read without it.
	mu sync.Mutex
}

// Data returns the model's tensor bytes as one sequence (see Data); r is the model file, dir its
// folder, open what opens external data files (nil: OpenExternal, onnx's rules).
func (f *File) Data(r io.ReaderAt, dir string, open Opener) *Data {
	d := &Data{f: f, rd: newReader(r, f.Size), r: r, dir: dir, open: open, files: map[string]io.ReaderAt{}, decodedAt: -1}
	d.Offsets = make([]uint64, len(f.Tensors)+1)
	for i := range f.Tensors {
		n, ok := f.Tensors[i].Len()
		if !ok || f.Tensors[i].DataType == String {
			n = 0
		}
		d.Offsets[i+1] = d.Offsets[i] + n
	}
	return d
}

// Size is the number of bytes of all tensors.
func (d *Data) Size() int64 { return int64(d.Offsets[len(d.Offsets)-1]) }

// Close closes the external data files opened.
func (d *Data) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var first error
	for _, c := range d.closers {
		if err := c(); err != nil && first == nil {
			first = err
		}
	}
	d.closers, d.files = nil, map[string]io.ReaderAt{}
	return first
}

// ReadAt reads the tensors' bytes at off (see Data). A tensor whose bytes cannot be had (a missing
// external file, a typed field of the wrong length) is an error naming it. ReadAt may be called from
// several goroutines at once.
func (d *Data) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	n := 0
	for n < len(p) {
		pos := uint64(off) + uint64(n)
		if pos >= uint64(d.Size()) {
			return n, io.EOF
		}
		i := d.index(pos)
		t := &d.f.Tensors[i]
		in := pos - d.Offsets[i]
		k := min(uint64(len(p)-n), d.Offsets[i+1]-pos)
		if err := d.read(i, p[n:n+int(k)], in, d.Offsets[i+1]-d.Offsets[i]); err != nil {
			return n, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		n += int(k)
	}
	return n, nil
}

// openExternal opens the external data file at path (e's, made by ExternalPath) and keeps it for
// later reads; d.mu is held.
func (d *Data) openExternal(path string, e *External) (io.ReaderAt, error) {
	var ra io.ReaderAt
	var closer func() error
	if d.open == nil {
		fh, err := OpenExternal(d.dir, e)
		if err != nil {
			return nil, err
		}
		ra, closer = fh, fh.Close
	} else {
		var err error
		if ra, closer, err = d.open(path); err != nil {
			return nil, err
		}
	}
	d.files[path], d.closers = ra, append(d.closers, closer)
	return ra, nil
}

// index is the tensor whose bytes hold pos.
func (d *Data) index(pos uint64) int {
	lo, hi := 0, len(d.Offsets)-1
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if d.Offsets[mid] <= pos {
			lo = mid
		} else {
			hi = mid
		}
	}
	for lo+1 < len(d.Offsets) && d.Offsets[lo+1] <= pos { // empty tensors before it
		lo++
	}
	return lo
}

// read fills p with tensor i's bytes from in (its length is n).
func (d *Data) read(i int, p []byte, in, n uint64) error {
	t := &d.f.Tensors[i]
	switch t.Where {
	case InRaw:
		if uint64(t.End-t.Start) != n {
			return fmt.Errorf("raw_data holds %d bytes, not %d", t.End-t.Start, n)
		}
		_, err := d.r.ReadAt(p, t.Start+int64(in))
		return err
	case InTyped:
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.decodedAt != i {
			b, err := t.typed(d.rd, n)
			if err != nil {
				return err
			}
			d.decoded, d.decodedAt = b, i
		}
		copy(p, d.decoded[in:])
		return nil
	case InExternal:
		path, err := ExternalPath(d.dir, t.External)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrOutside, err)
		}
		d.mu.Lock()
		ra := d.files[path]
		if ra == nil {
			if ra, err = d.openExternal(path, t.External); err != nil {
				d.mu.Unlock()
				return err
			}
		}
		d.mu.Unlock()
		if t.External.Length >= 0 && uint64(t.External.Length) != n {
			return fmt.Errorf("its external data is %d bytes long, not %d", t.External.Length, n)
		}
		got, err := ra.ReadAt(p, max(t.External.Offset, 0)+int64(in))
		if got == len(p) {
			return nil
		}
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return errors.New("it has no data")
}
