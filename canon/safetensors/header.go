// Package safetensors reads the safetensors format: the 8-byte header length and the N header bytes
// (a JSON parser that accepts exactly what the reference reader, huggingface/safetensors, accepts, and
// keeps every entry in file order with its byte position), the reference's strict verdict beside
// lenient findings (package finding's, with this format's codes and the reference's error kinds, which
// package finding declares so that commands name them without naming a format), and a skimmer for
// callers that only need names, dtypes and shapes fast. Read returns a Header, this package's view of a
// file; package canon adapts it into its Model, as it does the other formats' headers.
//
// It imports nothing of canon, hash or diff. It never prints, never reads the environment and opens no
// file: the caller passes an io.ReaderAt. A header is never allocated before its length is checked
// against finding.MaxHeaderLen and the file's size.
package safetensors

import (
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/tensor"
)

// Meta is one `__metadata__` entry.
type Meta struct {
	Key, Value string
	// Offset is the file offset of the key in the header.
	Offset int64
	// NotString is true when the value is not a JSON string (strict readers reject the file); Value
	// then holds its JSON text.
	NotString bool
}

// RefError is the reference reader's verdict on an invalid file: its error kind, a message in the
// spirit of the reference's own, and the byte offset in the file it points at.
type RefError struct {
	Kind    finding.RefKind
	Message string
	Offset  int64
}

// Header is what Read finds in a safetensors file: read leniently, so that a file the reference
// rejects still yields every tensor and metadata entry that could be read, with the defects in
// Findings; RefErr is the reference's strict verdict.
type Header struct {
	// FileSize is the size of the file in bytes.
	FileSize int64
	// HeaderLen is N, the header length stored in the first 8 bytes.
	HeaderLen uint64
	// RawHeader is the N header bytes as read (shared with the names and values below: do not modify).
	RawHeader []byte
	// HeaderParsed is true when the header's JSON could be read (possibly with defects).
	HeaderParsed bool
	// Tensors in header order; a name written twice appears once, with the last entry (as the reference
	// keeps it).
	Tensors []tensor.Tensor
	// Metadata in header order; a key written twice appears once, with the last value.
	Metadata []Meta
	// HasMetadata is true when `__metadata__` was present and not null.
	HasMetadata bool
	// Findings in the order of the checks that produced them: at most finding.MaxPerCode of each code.
	Findings []finding.Finding
	// Omitted counts, per code, the findings made past finding.MaxPerCode and not kept (nil when none).
	Omitted map[string]int
	// RefErr is nil when the reference reader accepts the file, else its error.
	RefErr *RefError

	kept map[string]int // Findings per code, for add
}

// Valid reports whether the reference reader accepts the file.
func (m *Header) Valid() bool { return m.RefErr == nil }

// DataOffset is the file offset of the first data byte: 8+N.
func (m *Header) DataOffset() int64 { return 8 + int64(m.HeaderLen) }

// DataLen is the length of the data section (negative when the file is shorter than its header says).
func (m *Header) DataLen() int64 { return m.FileSize - m.DataOffset() }

// add records a finding, or only counts it when finding.MaxPerCode of its code are kept already.
func (m *Header) add(f finding.Finding) {
	if m.room(f.Code) {
		m.Findings = append(m.Findings, f)
		m.kept[f.Code]++
	}
}

// room reports whether a finding of code would be kept. When it would not, it counts the finding as
// omitted: a caller that checks room first need not build the finding's message at all.
func (m *Header) room(code string) bool {
	if m.kept == nil {
		m.kept = map[string]int{}
	}
	if m.kept[code] < finding.MaxPerCode {
		return true
	}
	if m.Omitted == nil {
		m.Omitted = map[string]int{}
	}
	m.Omitted[code]++
	return false
}

// hasCode reports whether a finding of code was kept.
func (m *Header) hasCode(code string) bool { return m.kept[code] > 0 }

// setRef records the reference's verdict unless an earlier check already failed.
func (m *Header) setRef(kind finding.RefKind, msg string, off int64) {
	if m.RefErr == nil {
		m.RefErr = &RefError{Kind: kind, Message: msg, Offset: off}
	}
}
