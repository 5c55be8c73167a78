package canon

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/stdiff/stdiff/canon/finding"
)

// RefError is the reference reader's verdict on an invalid file: its error kind, a message in the
// spirit of the reference's own, and the byte offset in the file the error points at (-1 if none). For
// GGUF it is llama.cpp's verdict as package gguf gives it (gguf.Error).
type RefError struct {
	Kind    finding.RefKind
	Message string
	Offset  int64
}

// Error is the kind and the message: "InvalidOffset: invalid offset for tensor \"w\"".
func (e *RefError) Error() string { return string(e.Kind) + ": " + e.Message }

// ErrUnreadable is wrapped by every error that means a source could not be read at all
// (missing, not a regular file, I/O failure, changed while reading), as opposed to read and found invalid.
var ErrUnreadable = errors.New("unreadable")

// ErrChanged is wrapped (with ErrUnreadable) when a file changed size or content while stdiff read it.
var ErrChanged = errors.New("file changed while reading")

// ReadError is an error reading (or, for FixNulPadding, writing) a source: which source, the operation
// that failed, the cause, and a hint when one helps. Like fs.PathError it keeps the cause:
// errors.Is(err, fs.ErrNotExist) holds for a missing file, errors.Is(err, fs.ErrPermission) for one
// stdiff may not open.
type ReadError struct {
	// Name is the source: a path or a URL.
	Name string
	// Op is the operation that failed: "open", "stat", "read", "write" or "lock"; "" when the source
	// was read and is not what it should be (an index that is no index, a folder without one).
	Op string
	// Err is the cause.
	Err error
	// Hint says what to do about it, when there is something to do ("" otherwise).
	Hint string
}

// Error is the name and the reason: "model.safetensors: no such file".
func (e *ReadError) Error() string { return e.Name + ": " + e.Reason() }

// Reason is what went wrong, without the name: the cause's message, except that the system's errors
// for a missing file and a refused one read "no such file" and "permission denied".
func (e *ReadError) Reason() string {
	if errno, ok := e.Err.(syscall.Errno); ok {
		switch {
		case errors.Is(errno, fs.ErrNotExist):
			return "no such file"
		case errors.Is(errno, fs.ErrPermission):
			return "permission denied"
		}
	}
	return fmt.Sprint(e.Err)
}

// Unwrap lets errors.Is see the cause and, unless the failure was writing or locking (the source was
// read), ErrUnreadable.
func (e *ReadError) Unwrap() []error {
	if e.Op == "write" || e.Op == "lock" {
		return []error{e.Err}
	}
	return []error{e.Err, ErrUnreadable}
}

// PathError turns an error of the file system about path (an *fs.PathError, as os.Open and os.Stat
// return, or its cause) into a *ReadError for op that keeps the cause. The *fs.PathError's own Op, when
// there is one, wins over op.
func PathError(op, path string, err error) *ReadError {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
		if pe.Op != "" {
			op = pe.Op
		}
	}
	return &ReadError{Name: path, Op: op, Err: err}
}
