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
// FIFOs, devices, sockets) without blocking on it, and wraps every failure in a *ReadError.
func OpenFile(path string) (*FileSource, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	if err := checkRegular(path, st); err != nil {
		return nil, err
	}
	// O_NONBLOCK: should the path be swapped for a FIFO after the Stat, opening it must not hang.
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, fileError(path, err)
	}
	st, err = f.Stat()
	if err == nil {
		err = checkRegular(path, st)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &FileSource{f: f, name: path, size: st.Size(), mtime: st.ModTime()}, nil
}

func checkRegular(path string, st fs.FileInfo) error {
	m := st.Mode()
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return &ReadError{Name: path, Err: errors.New("is a directory, not a file"),
			Hint: "name the .safetensors files inside it, or use `stdiff dupes` for folders"}
	case m&fs.ModeNamedPipe != 0:
		return &ReadError{Name: path, Err: errors.New("is a named pipe (FIFO), not a regular file"),
			Hint: "stdiff needs random access: save the stream to a file first"}
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return &ReadError{Name: path, Err: errors.New("is a device, not a regular file")}
	case m&fs.ModeSocket != 0:
		return &ReadError{Name: path, Err: errors.New("is a socket, not a regular file")}
	default:
		return &ReadError{Name: path, Err: fmt.Errorf("is not a regular file (%s)", m.Type())}
	}
}

func fileError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	re := &ReadError{Name: path, Err: err}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		re.Err = errors.New("no such file")
	case errors.Is(err, fs.ErrPermission):
		re.Err = errors.New("permission denied")
	}
	return re
}

// ReadAt reads len(p) bytes at off. A short read is reported as ErrChanged: the file shrank.
func (s *FileSource) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.f.ReadAt(p, off)
	if err == io.EOF && off+int64(len(p)) <= s.size {
		return n, &ReadError{Name: s.name, Err: ErrChanged, Hint: "the file shrank while stdiff read it; run again once it is complete"}
	}
	if err != nil && err != io.EOF {
		return n, &ReadError{Name: s.name, Err: err}
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
		return &ReadError{Name: s.name, Err: err}
	}
	if st.Size() != s.size || !st.ModTime().Equal(s.mtime) {
		return &ReadError{Name: s.name, Err: ErrChanged, Hint: "the file was modified while stdiff read it; run again once it is complete"}
	}
	return nil
}

// Close closes the file.
func (s *FileSource) Close() error { return s.f.Close() }

// BytesSource is an in-memory Source, for tests and for data already in memory.
type BytesSource struct {
	B       []byte
	SrcName string
}

// ReadAt implements io.ReaderAt.
func (s *BytesSource) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(s.B)) {
		return 0, io.EOF
	}
	n := copy(p, s.B[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Size is len(B).
func (s *BytesSource) Size() int64 { return int64(len(s.B)) }

// Name is SrcName.
func (s *BytesSource) Name() string { return s.SrcName }
