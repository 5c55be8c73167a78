package canon

import (
	"errors"
	"fmt"
	"path/filepath"
)

// RefKind names an error of the reference reader (huggingface/safetensors, SafeTensorError).
type RefKind string

// The reference reader's error kinds, in the order its checks run.
const (
	HeaderTooSmall               RefKind = "HeaderTooSmall"
	HeaderTooLarge               RefKind = "HeaderTooLarge"
	InvalidHeaderLength          RefKind = "InvalidHeaderLength"
	InvalidHeader                RefKind = "InvalidHeader"
	InvalidHeaderDeserialization RefKind = "InvalidHeaderDeserialization"
	InvalidOffset                RefKind = "InvalidOffset"
	ValidationOverflow           RefKind = "ValidationOverflow"
	MisalignedSlice              RefKind = "MisalignedSlice"
	TensorInvalidInfo            RefKind = "TensorInvalidInfo"
	MetadataIncompleteBuffer     RefKind = "MetadataIncompleteBuffer"
)

// MaxHeaderLen is the largest header length the reference reader accepts.
const MaxHeaderLen = 100_000_000

// RefError is the reference reader's verdict on an invalid file: its error kind, a message in the
// spirit of the reference's own, and the byte offset in the file the error points at (-1 if none).
type RefError struct {
	Kind    RefKind
	Message string
	Offset  int64
}

func (e *RefError) Error() string { return string(e.Kind) + ": " + e.Message }

// ErrUnreadable is wrapped by every error that means a source could not be read at all
// (missing, not a regular file, I/O failure, changed while reading), as opposed to read and found invalid.
var ErrUnreadable = errors.New("unreadable")

// ErrChanged is wrapped (with ErrUnreadable) when a file changed size or content while stdiff read it.
var ErrChanged = errors.New("file changed while reading")

// ReadError is an error reading a source: which source, what went wrong, and a hint when one helps.
type ReadError struct {
	Name string
	Err  error
	Hint string
}

func (e *ReadError) Error() string { return fmt.Sprintf("%s: %v", e.Name, e.Err) }

// Unwrap lets errors.Is see both the cause and ErrUnreadable.
func (e *ReadError) Unwrap() []error { return []error{e.Err, ErrUnreadable} }

// missingName says which file a missing-shard error is about: "m-00002-of-00002.safetensors is missing".
func missingName(err error) string {
	var re *ReadError
	if errors.As(err, &re) {
		return filepath.Base(re.Name) + " is missing"
	}
	return err.Error()
}
