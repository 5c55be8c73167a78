// Package finding is the one shape of what stdiff notices about a file: a Finding with a stable code, a
// severity, the byte it points at, and a one-line message. Every format reader (canon/safetensors,
// canon/gguf, canon/torch, canon/onnx), check and hash's reports use it, and JSON shows it one way.
// It also holds the safetensors format's finding codes, its reference reader's error kinds and header
// limit, which the commands name and the format package makes.
//
// The package is a leaf: it imports nothing of stdiff, so every format package can use it.
package finding

import (
	"bytes"
	"encoding/json"
)

// Severity says how bad a finding is.
type Severity string

// Severities, from worst to mildest.
const (
	// SevError: strict readers (the format's reference reader and everything built on it) reject the file.
	SevError Severity = "error"
	// SevWarning: strict readers accept the file, but something in it is suspicious or breaks other readers.
	SevWarning Severity = "warning"
	// SevInfo: worth knowing, nothing wrong.
	SevInfo Severity = "info"
)

// RefKind names an error of a format's reference reader: for safetensors one of huggingface/safetensors'
// SafeTensorError variants, for GGUF the rule of gguf.cpp it breaks, for PyTorch and ONNX the code of
// the finding that is the verdict.
type RefKind string

// MaxPerCode is how many findings of one code a reader keeps: past it, findings of that code are only
// counted, so a header with a million defects of one kind costs a million counts, not a million
// messages.
const MaxPerCode = 100

// Finding is one thing stdiff noticed about a file. Code is stable (kebab-case) and safe to match in
// scripts; the other fields say where and what, for people.
//
// In JSON a finding about the whole file has the offset null (see MarshalJSON); the optional fields are
// left out when empty.
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	// Offset is the byte offset in the file the finding points at, or -1 when it is about the whole file
	// (or about bytes inside a compressed archive member).
	Offset  int64  `json:"offset"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	// RefKind is the reference reader's error kind when this finding is the reason it rejects the file.
	RefKind RefKind `json:"reference_kind,omitempty"`
	// Fixable is true when the file can be repaired in place (canon.FixNulPadding for nul-padding).
	Fixable bool `json:"fixable,omitempty"`
	// Global is module.name for the pickle-unsafe-global and pickle-unknown-global codes.
	Global string `json:"global,omitempty"`
	// Entry is the archive member (a file inside a zip) the finding is about, "" for the file itself.
	Entry string `json:"entry,omitempty"`
}

// record is a Finding as JSON shows it: the offset null for the whole file.
type record struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Offset   *int64   `json:"offset"`
	Message  string   `json:"message"`
	Hint     string   `json:"hint,omitempty"`
	RefKind  RefKind  `json:"reference_kind,omitempty"`
	Fixable  bool     `json:"fixable,omitempty"`
	Global   string   `json:"global,omitempty"`
	Entry    string   `json:"entry,omitempty"`
}

// MarshalJSON writes f as a JSON object with the fields' tags; an offset below 0 (the whole file) is null.
func (f Finding) MarshalJSON() ([]byte, error) {
	r := record{Code: f.Code, Severity: f.Severity, Message: f.Message, Hint: f.Hint, RefKind: f.RefKind, Fixable: f.Fixable, Global: f.Global, Entry: f.Entry}
	if f.Offset >= 0 {
		r.Offset = &f.Offset
	}
	return json.Marshal(r)
}

// UnmarshalJSON reads what MarshalJSON writes: a null or missing offset is -1. A negative offset is kept
// as it is (older files wrote -1 for the whole file); callers that accept only -1 check it. A field
// that is none of Finding's is refused, as a snapshot (the finding's JSON read back) refuses one.
func (f *Finding) UnmarshalJSON(b []byte) error {
	var r record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return err
	}
	*f = Finding{Code: r.Code, Severity: r.Severity, Offset: -1, Message: r.Message, Hint: r.Hint, RefKind: r.RefKind, Fixable: r.Fixable, Global: r.Global, Entry: r.Entry}
	if r.Offset != nil {
		f.Offset = *r.Offset
	}
	return nil
}
