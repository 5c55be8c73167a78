package source

import (
	"io"
	"os"
	"time"

	"github.com/stdiff/stdiff/canon"
)

// FileSource is a local regular file opened for reading: a canon.Source.
type FileSource struct {
	f     *os.File
	name  string
	size  int64
	mtime time.Time
}

// OpenFile opens a local file as a Source. It refuses anything that is not a regular file (directories,
// FIFOs, devices, sockets) without blocking on it, and wraps every failure in a *ReadError that keeps
// the cause (see canon.OpenRegular).
func OpenFile(path string) (*FileSource, error) {
	f, st, err := canon.OpenRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	return &FileSource{f: f, name: path, size: st.Size(), mtime: st.ModTime()}, nil
}

// ReadAt reads len(p) bytes at off. A short read is reported as canon.ErrChanged: the file shrank.
func (s *FileSource) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.f.ReadAt(p, off)
	if err == io.EOF && off+int64(len(p)) <= s.size {
		return n, &canon.ReadError{Name: s.name, Op: "read", Err: canon.ErrChanged, Hint: "the file shrank while stdiff read it; run again once it is complete"}
	}
	if err != nil && err != io.EOF {
		return n, canon.PathError("read", s.name, err)
	}
	return n, err
}

// Size is the file's size when it was opened.
func (s *FileSource) Size() int64 { return s.size }

// Name is the path the file was opened with.
func (s *FileSource) Name() string { return s.name }

// File gives the underlying file.
func (s *FileSource) File() *os.File { return s.f }

// Unchanged reports an error wrapping canon.ErrChanged when the file's size or modification time differs from
// when it was opened. Byte work calls it at the end, so a file rewritten mid-read never yields a wrong answer.
func (s *FileSource) Unchanged() error {
	st, err := s.f.Stat()
	if err != nil {
		return canon.PathError("stat", s.name, err)
	}
	if st.Size() != s.size || !st.ModTime().Equal(s.mtime) {
		return &canon.ReadError{Name: s.name, Op: "read", Err: canon.ErrChanged, Hint: "the file was modified while stdiff read it; run again once it is complete"}
	}
	return nil
}

// Close closes the file.
func (s *FileSource) Close() error { return s.f.Close() }
