package canon

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// Source is where a model's bytes come from: a local file, and later shard sets and HTTP ranges.
// ReadAt must be safe for concurrent use; reads past Size fail.
type Source interface {
	io.ReaderAt
	// Size is the total length in bytes.
	Size() int64
	// Name is how the source is shown to the user (a path or URL).
	Name() string
}

// FileSource is a local regular file opened for reading.
type FileSource struct {
	f     *os.File
	name  string
	size  int64
	mtime time.Time
}

// OpenFile opens a local file as a Source. It refuses anything that is not a regular file (directories,
// FIFOs, devices, sockets) without blocking on it, and wraps every failure in a *ReadError that keeps
// the cause (see OpenRegular).
func OpenFile(path string) (*FileSource, error) {
	f, st, err := OpenRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	return &FileSource{f: f, name: path, size: st.Size(), mtime: st.ModTime()}, nil
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

// ReadAt reads len(p) bytes at off. A short read is reported as ErrChanged: the file shrank.
func (s *FileSource) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.f.ReadAt(p, off)
	if err == io.EOF && off+int64(len(p)) <= s.size {
		return n, &ReadError{Name: s.name, Op: "read", Err: ErrChanged, Hint: "the file shrank while stdiff read it; run again once it is complete"}
	}
	if err != nil && err != io.EOF {
		return n, PathError("read", s.name, err)
	}
	return n, err
}

// Size is the file's size when it was opened.
func (s *FileSource) Size() int64 { return s.size }

// Name is the path the file was opened with.
func (s *FileSource) Name() string { return s.name }

// File gives the underlying file.
func (s *FileSource) File() *os.File { return s.f }

// Unchanged reports an error wrapping ErrChanged when the file's size or modification time differs from
// when it was opened. Byte work calls it at the end, so a file rewritten mid-read never yields a wrong answer.
func (s *FileSource) Unchanged() error {
	st, err := s.f.Stat()
	if err != nil {
		return PathError("stat", s.name, err)
	}
	if st.Size() != s.size || !st.ModTime().Equal(s.mtime) {
		return &ReadError{Name: s.name, Op: "read", Err: ErrChanged, Hint: "the file was modified while stdiff read it; run again once it is complete"}
	}
	return nil
}

// Close closes the file.
func (s *FileSource) Close() error { return s.f.Close() }

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
