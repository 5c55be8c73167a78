package canon

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Source is where a model's bytes come from: a local file, a shard set (source.SetSource), an HTTP range
// reader (package canon/source opens them by name). ReadAt must be safe for concurrent use; reads past
// Size fail.
type Source interface {
	io.ReaderAt
	// Size is the total length in bytes.
	Size() int64
	// Name is how the source is shown to the user (a path or URL).
	Name() string
}

// OpenRegular opens the local file at path with flag (os.O_RDONLY or os.O_RDWR) and returns it with its
// state. It refuses anything that is not a regular file (directories, FIFOs, devices, sockets), and never
// blocks on a FIFO, even one swapped in for the file while it opens. Every failure is a *ReadError that
// keeps the cause (errors.Is(err, fs.ErrNotExist) for a missing file), with a hint where one helps.
func OpenRegular(path string, flag int) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, PathError("stat", path, err)
	}
	if err := checkRegular(path, st); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, flag|openNonblock, 0)
	if err != nil {
		return nil, nil, PathError("open", path, err)
	}
	if st, err = regularStat(f, path); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// regularStat is the state of the open file f, which must still be a regular file.
func regularStat(f *os.File, path string) (fs.FileInfo, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, PathError("stat", path, err)
	}
	return st, checkRegular(path, st)
}

func checkRegular(path string, st fs.FileInfo) error {
	m := st.Mode()
	notFile := func(err error, hint string) error { return &ReadError{Name: path, Op: "open", Err: err, Hint: hint} }
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return notFile(errors.New("is a directory, not a file"),
			"name the .safetensors files inside it, or use `stdiff dupes` for folders")
	case m&fs.ModeNamedPipe != 0:
		return notFile(errors.New("is a named pipe (FIFO), not a regular file"),
			"stdiff needs random access: save the stream to a file first")
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return notFile(errors.New("is a device, not a regular file"), "")
	case m&fs.ModeSocket != 0:
		return notFile(errors.New("is a socket, not a regular file"), "")
	default:
		return notFile(fmt.Errorf("is not a regular file (%s)", m.Type()), "")
	}
}

// SourceOf makes a Source of r, a file of size bytes shown as name: a bytes.Reader, an
// io.SectionReader, anything that reads at offsets. Its ReadAt is r's.
func SourceOf(r io.ReaderAt, size int64, name string) Source {
	return &readerSource{ReaderAt: r, size: size, name: name}
}

type readerSource struct {
	io.ReaderAt
	size int64
	name string
}

func (s *readerSource) Size() int64  { return s.size }
func (s *readerSource) Name() string { return s.name }
