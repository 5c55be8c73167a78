package textfmt

import (
	"bufio"
	"io"
	"sync"
)

// SyncWriter buffers what is written to an io.Writer and is safe for concurrent use: a report written
// line by line costs one system call per 64 KiB, not one per line. Flush writes what is buffered.
type SyncWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

// NewSyncWriter buffers w.
func NewSyncWriter(w io.Writer) *SyncWriter { return &SyncWriter{w: bufio.NewWriterSize(w, 64<<10)} }

// Write buffers p.
func (s *SyncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Flush writes what is buffered, and reports the first error any write met.
func (s *SyncWriter) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Flush()
}
