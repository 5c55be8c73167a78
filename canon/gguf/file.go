// Package gguf reads the header of a GGUF model file (llama.cpp's format): the key-value pairs and
// the tensor infos, never the tensor data, and gives llama.cpp's strict verdict on it.
//
// The strict verdict is ggml's: a file is valid when ggml's gguf.cpp (gguf_init_from_file) reads
// its header and llama.cpp's model loader then finds every tensor's bytes within the file. Each
// check gguf.cpp makes is a Rule; an invalid file's Verdict names the first rule it breaks, in
// gguf.cpp's order, with the byte offset. The verdicts of the edge cases in testdata were recorded
// from ggml itself (testdata/oracle-verdicts.txt names the commit).
//
// Where gguf.cpp accepts a file only because its 64-bit arithmetic wraps around (element counts of
// 2^63 or more whose product wraps to zero or below, byte sizes or padded sizes past 2^64), this
// package rejects it instead and marks the Verdict with Overflow. No real file comes near these sizes.
//
// Reading is progressive through a bounded buffer: every count and length read from the file is
// checked against the bytes that remain before anything is allocated for it, so a claimed 2^60-element
// array costs nothing. Large arrays (a tokenizer's vocabulary) are kept as their offset, length, first
// HeadLen elements and a BLAKE3 digest; their elements are read on demand through the io.ReaderAt.
//
// Most callers do not use this package directly: canon.Read calls Read for any file that starts with a
// GGUF magic (or one of the formats before GGUF) and makes a canon.Model of the File (canon.Model.Detail
// keeps it for format-specific work); package canon also checks split models, the one rule (RuleSplit)
// that spans files.
package gguf

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/stdiff/stdiff/canon/finding"
)

// Rule is one check gguf.cpp (or llama.cpp's loader) makes while reading a file. Rules are stable
// names, safe to match in scripts.
type Rule string

// The rules, in the order gguf.cpp applies them.
const (
	// RuleMagic: the file starts with the 4 bytes "GGUF".
	RuleMagic Rule = "magic"
	// RuleVersion: the version is 2 or 3 (1 is no longer read; a big-endian file fails here too).
	RuleVersion Rule = "version"
	// RuleHeaderRead: the version and both counts can be read.
	RuleHeaderRead Rule = "header-read"
	// RuleTensorCount: the tensor count is in [0, MaxTensorCount].
	RuleTensorCount Rule = "tensor-count"
	// RuleKVCount: the key-value count is in [0, MaxKVCount].
	RuleKVCount Rule = "kv-count"
	// RuleStringLength: no string (key, value, tensor name) is longer than MaxStringLength.
	RuleStringLength Rule = "string-length"
	// RuleKVRead: every key-value pair can be read: nothing runs past the end of the file and no array
	// has more than MaxArrayLength elements.
	RuleKVRead Rule = "kv-read"
	// RuleEmptyKey: no key is empty.
	RuleEmptyKey Rule = "empty-key"
	// RuleDuplicateKey: no key appears twice.
	RuleDuplicateKey Rule = "duplicate-key"
	// RuleKVType: every value type is one GGUF defines; arrays of arrays are not read.
	RuleKVType Rule = "kv-type"
	// RuleAlignmentType: general.alignment, when present, is a single uint32.
	RuleAlignmentType Rule = "alignment-type"
	// RuleAlignment: the alignment is a power of two.
	RuleAlignment Rule = "alignment"
	// RuleTensorNameLength: every tensor name is shorter than 64 bytes.
	RuleTensorNameLength Rule = "tensor-name-length"
	// RuleDuplicateTensor: no two tensors have the same name (compared up to a NUL byte, as C strings).
	RuleDuplicateTensor Rule = "duplicate-tensor"
	// RuleTensorDims: no tensor has more than 4 dimensions.
	RuleTensorDims Rule = "tensor-dims"
	// RuleNegativeDim: no dimension is negative.
	RuleNegativeDim Rule = "tensor-negative-dim"
	// RuleTensorElements: a tensor's element count is below 2^63-1.
	RuleTensorElements Rule = "tensor-elements"
	// RuleTensorType: every tensor type is one ggml knows (below TypeCount).
	RuleTensorType Rule = "tensor-type"
	// RuleBlockSize: every row is a whole number of blocks of the tensor's type, and the type has not
	// been removed from ggml.
	RuleBlockSize Rule = "tensor-block-size"
	// RuleTensorBytes: a tensor's byte size fits 64 bits.
	RuleTensorBytes Rule = "tensor-bytes"
	// RuleTensorInfoRead: every tensor info can be read without running past the end of the file.
	RuleTensorInfoRead Rule = "tensor-info-read"
	// RuleDataStart: the data section (after padding to the alignment) starts within the file.
	RuleDataStart Rule = "data-start"
	// RuleTensorOffset: every tensor's data starts exactly where the previous tensor's padded data ends
	// (the first at 0), in the order of the tensor infos.
	RuleTensorOffset Rule = "tensor-offset"
	// RuleDataSize: the padded sizes of all tensors add up within 64 bits.
	RuleDataSize Rule = "data-size"
	// RuleTensorBounds: every tensor's bytes lie within the file (llama.cpp's model loader).
	RuleTensorBounds Rule = "tensor-bounds"
	// RuleSplit: the files of a split model agree (llama.cpp's model loader): the first says how many
	// files there are (SplitCountKey) and how many tensors they hold (SplitTensorsKey), each says which
	// file it is (SplitNoKey), with the types llama.cpp requires. Read checks single files only; canon
	// checks this rule on a set of files.
	RuleSplit Rule = "split"
)

// The keys of a split model (llama.cpp's gguf-split writes them into every file of the set).
const (
	// SplitNoKey is the file's number in the set, from 0 (uint16).
	SplitNoKey = "split.no"
	// SplitCountKey is the number of files in the set (uint16).
	SplitCountKey = "split.count"
	// SplitTensorsKey is the number of tensors in the whole set (int32).
	SplitTensorsKey = "split.tensors.count"
)

// Limits gguf.cpp applies (on a 64-bit host).
const (
	// MaxStringLength is the longest string gguf.cpp reads (1 GiB).
	MaxStringLength = 1 << 30
	// MaxArrayLength is the most elements an array may have (2^30).
	MaxArrayLength = 1 << 30
	// MaxTensorCount is the largest tensor count gguf.cpp accepts (SIZE_MAX / sizeof(gguf_tensor_info)).
	MaxTensorCount = 53624256028225440
	// MaxKVCount is the largest key-value count gguf.cpp accepts (SIZE_MAX / sizeof(gguf_kv)).
	MaxKVCount = 209622091746699450
	// MaxNameLength is the longest tensor name gguf.cpp accepts (GGML_MAX_NAME - 1).
	MaxNameLength = 63
	// MaxDims is the most dimensions a tensor may have (GGML_MAX_DIMS).
	MaxDims = 4
	// DefaultAlignment is the data alignment when general.alignment is absent.
	DefaultAlignment = 32
)

// AlignmentKey is the key that sets the data alignment.
const AlignmentKey = "general.alignment"

// Error is the strict verdict on an invalid file: the rule it breaks first, a message, and the
// byte offset in the file the error points at.
type Error struct {
	Rule    Rule
	Message string
	Offset  int64
	// Overflow is true when gguf.cpp's own arithmetic wraps around on this file (sizes of 2^63 bytes
	// or elements and more) and so may accept it or fail on another rule: stdiff rejects it here.
	Overflow bool
}

// Error renders the verdict as "rule: message".
func (e *Error) Error() string { return string(e.Rule) + ": " + e.Message }

// Finding codes. They are part of stdiff's contract with scripts: add, never rename.
const (
	CodeEmptyFile          = "empty-file"
	CodeFileTooSmall       = "file-too-small"
	CodeNotGGUF            = "not-gguf"
	CodeLegacyGGML         = "legacy-ggml"
	CodeLFSPointer         = "lfs-pointer"
	CodeHTMLPage           = "html-page"
	CodeUnsupportedVersion = "unsupported-version"
	CodeBigEndian          = "big-endian"
	CodeTruncatedHeader    = "truncated-header"
	CodeCountOverLimit     = "count-over-limit"
	CodeStringTooLong      = "string-too-long"
	CodeArrayTooLong       = "array-too-long"
	CodeEmptyKey           = "empty-key"
	CodeDuplicateKey       = "duplicate-metadata-key"
	CodeInvalidValueType   = "invalid-value-type"
	CodeNestedArray        = "nested-array"
	CodeAlignmentType      = "alignment-type"
	CodeBadAlignment       = "alignment-not-power-of-two"
	CodeNameTooLong        = "tensor-name-too-long"
	CodeDuplicateTensor    = "duplicate-tensor-name"
	CodeTooManyDims        = "too-many-dimensions"
	CodeNegativeDim        = "negative-dimension"
	CodeShapeOverflow      = "shape-overflow"
	CodeUnknownType        = "unknown-tensor-type"
	CodeRemovedType        = "removed-tensor-type"
	CodePartialBlock       = "partial-block"
	CodeDataStartBeyond    = "data-start-beyond-file"
	CodeTensorOffset       = "tensor-offset"
	CodeMisaligned         = "misaligned-tensor"
	CodeOffsetOverlap      = "offset-overlap"
	CodeOffsetGap          = "offset-gap"
	CodeTruncatedData      = "truncated-data"
	CodeTrailingBytes      = "trailing-bytes"
	CodeInvalidUTF8        = "invalid-utf8"
	CodeOddBool            = "bool-not-0-or-1"
	CodeNulInName          = "nul-in-name"
)

// File is what a GGUF header says: version, key-value pairs and tensor infos in file order, the data
// layout, the strict verdict and the findings.
//
// Read fills it leniently: a file llama.cpp rejects still yields every pair and tensor info that could
// be read (a pair or info cut off by the end of the file is left out), with the defects in Findings.
type File struct {
	// Name is the name given to Read (a path or URL).
	Name string
	// Size is the file's size in bytes.
	Size int64
	// Format names the file's format as Sniff does ("GGUF v3", "GGJT v3", …), or "" when unknown.
	Format string
	// Version is the GGUF version (0 when the file is not GGUF).
	Version uint32
	// ByteOrder is the byte order the header was read in: little-endian, or big-endian for the
	// big-endian GGUF files some s390x builds write (llama.cpp on other machines rejects those).
	ByteOrder binary.ByteOrder
	// TensorCount and KVCount are the counts the header declares.
	TensorCount, KVCount int64
	// KVs are the key-value pairs in file order, duplicates included.
	KVs []KV
	// Tensors are the tensor infos in file order, duplicates included.
	Tensors []TensorInfo
	// Alignment is the data alignment in effect: general.alignment when valid, else DefaultAlignment.
	Alignment uint64
	// HeaderEnd is the file offset just past the last tensor info (where reading stopped, for a header
	// that could not be read to its end).
	HeaderEnd int64
	// DataOffset is the file offset of the data section (HeaderEnd padded to the alignment when
	// there are tensors, as gguf.cpp computes it), or -1 when the header could not be read.
	DataOffset int64
	// DataSize is the size of the data section as gguf.cpp computes it: the sum of the tensors' sizes,
	// each padded to the alignment (0 when it cannot be computed).
	DataSize uint64
	// Verdict is nil when llama.cpp reads the file, else the first rule it breaks.
	Verdict *Error
	// Findings in the order of the checks that produced them.
	Findings []finding.Finding

	r io.ReaderAt
}

// Valid reports whether llama.cpp reads the file (gguf.cpp's header checks and the loader's bounds check).
func (f *File) Valid() bool { return f.Verdict == nil }

// HasErrors reports whether any finding has severity error.
func (f *File) HasErrors() bool {
	for i := range f.Findings {
		if f.Findings[i].Severity == finding.SevError {
			return true
		}
	}
	return false
}

// KV returns the pair gguf.cpp's gguf_find_key would find for key: the first whose key, read as a C
// string (up to a NUL byte), equals key; nil when there is none.
func (f *File) KV(key string) *KV {
	for i := range f.KVs {
		if cString(f.KVs[i].Key) == key {
			return &f.KVs[i]
		}
	}
	return nil
}

// Tensor returns the first tensor info named name, or nil.
func (f *File) Tensor(name string) *TensorInfo {
	for i := range f.Tensors {
		if f.Tensors[i].Name == name {
			return &f.Tensors[i]
		}
	}
	return nil
}

// TensorInfo is one tensor as its header entry describes it.
type TensorInfo struct {
	Name string
	Type GGMLType
	// Dims are the dimensions in ggml's ne order: Dims[0] is the length of a row (the fastest-varying
	// dimension), the reverse of the row-major shape safetensors and PyTorch give. len(Dims) is the
	// dimension count stored in the file. A negative dimension (which gguf.cpp rejects) is recorded as 0.
	Dims []uint64
	// Offset is the data offset relative to the start of the data section.
	Offset uint64
	// Size is the tensor's byte length from its type and dims (ggml_nbytes); SizeOK is false when
	// it cannot be computed (unknown or removed type, partial block, overflow, negative dimension).
	Size   uint64
	SizeOK bool
	// HeaderOffset is the file offset of the tensor info (its name's length).
	HeaderOffset int64
}

// Elements is the number of elements (the product of Dims); ok is false when it overflows 64 bits.
func (t *TensorInfo) Elements() (n uint64, ok bool) { return elements(t.Dims) }

// Shape is Dims in row-major order (outermost first), as safetensors and PyTorch list a shape.
func (t *TensorInfo) Shape() []uint64 {
	s := make([]uint64, len(t.Dims))
	for i, d := range t.Dims {
		s[len(s)-1-i] = d
	}
	return s
}

// Read reads the header of a GGUF file of size bytes from r: the magic, version, counts, key-value
// pairs and tensor infos, nothing of the tensor data. name is how the file is shown in messages.
//
// It returns an error only when r cannot be read (or returns fewer bytes than size promises). A file
// that is not GGUF or that llama.cpp rejects yields a File whose Verdict names the rule it breaks and
// whose Findings name every defect found. The File keeps r for lazy access to array elements
// (Array.At, Array.Each, Array.Strings): they work as long as r does.
func Read(r io.ReaderAt, size int64, name string) (*File, error) {
	f := &File{Name: name, Size: size, ByteOrder: binary.LittleEndian, Alignment: DefaultAlignment,
		DataOffset: -1, r: r}
	p := newParser(f)
	p.run()
	if p.b.err != nil {
		return nil, fmt.Errorf("%s: %w", name, p.b.err)
	}
	return f, nil
}

func (f *File) add(fd finding.Finding) { f.Findings = append(f.Findings, fd) }

// fail records an error finding, and the verdict unless an earlier rule already failed.
func (f *File) fail(rule Rule, code string, off int64, hint, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if f.Verdict == nil {
		f.Verdict = &Error{Rule: rule, Message: msg, Offset: off}
	}
	f.add(finding.Finding{Code: code, Severity: finding.SevError, Offset: off, Message: msg, Hint: hint, RefKind: finding.RefKind(rule)})
}

// overflow records an error that gguf.cpp does not report because its arithmetic wraps.
func (f *File) overflow(rule Rule, off int64, format string, args ...any) {
	first := f.Verdict == nil
	f.fail(rule, CodeShapeOverflow, off, "", format, args...)
	if first {
		f.Verdict.Overflow = true
	}
}

func (f *File) warn(code string, off int64, hint, format string, args ...any) {
	f.add(finding.Finding{Code: code, Severity: finding.SevWarning, Offset: off, Message: fmt.Sprintf(format, args...), Hint: hint})
}

// cString is s up to its first NUL byte, as C code reads it.
func cString(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return s[:i]
		}
	}
	return s
}
