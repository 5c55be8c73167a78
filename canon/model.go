package canon

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/onnx"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/torch"
)

// Format names the file format a Model was read from.
type Format string

// The formats Read tells apart by their first bytes.
const (
	// FormatSafetensors: an 8-byte little-endian header length, a JSON header, the data.
	FormatSafetensors Format = "safetensors"
	// FormatGGUF: llama.cpp's GGUF (magic "GGUF"), and the formats before it (GGML, GGMF, GGJT),
	// which are recognised and named but not read.
	FormatGGUF Format = "gguf"
)

// formats are the formats Read reads.
var formats = []Format{FormatSafetensors, FormatGGUF, FormatONNX, FormatPyTorch, FormatNumPy, FormatDDUF}

// Known reports whether f is a format Read reads (a snapshot names one).
func (f Format) Known() bool { return slices.Contains(formats, f) }

// MetaEntry is one metadata entry: a `__metadata__` key and its value, or a GGUF key-value pair.
type MetaEntry struct {
	Key string
	// Value is the value as text. Safetensors values are strings. GGUF values: numbers in decimal,
	// bools as true or false, strings as they are (their first gguf.MaxInline bytes when longer), and
	// arrays as a summary of their element type and length, followed by their elements when there are
	// at most 16 short ones ("[int32 × 3: 8, 8, 0]", "[string × 2: \"a\", \"b\"]") or else the first
	// 16 hex digits of the BLAKE3 of their bytes in the file ("[string × 32000, blake3 4f1c…]"), so
	// that two arrays with the same summary hold the same elements.
	Value string
	// Type is the GGUF value type as the GGUF specification names it ("uint32", "string", "array", …),
	// and "" for safetensors.
	Type string
	// Offset is the file offset of the key in the header.
	Offset int64
	// NotString is true when a safetensors file stored a non-string JSON value (which strict readers
	// reject); Value then holds its JSON text. It is false for GGUF, whose values are typed (see Type).
	NotString bool
	// Len is a string value's length in bytes in the file, for a format that keeps the first bytes of a
	// long one only (GGUF, past gguf.MaxInline): Value then holds fewer (Truncated) and Full reads it
	// whole. It is 0 for other values and for safetensors.
	Len uint64 `json:"-"`
	// Array is an array value's elements, for a format whose arrays are typed (GGUF); nil otherwise.
	Array MetaArray `json:"-"`

	// long reads a truncated string whole (nil when Value holds it all).
	long longString
}

// longString is a string value longer than what its format's header read keeps, read whole on demand.
type longString interface{ full() (string, error) }

// Truncated reports whether Value holds only the first bytes of a longer string (see Len).
func (e *MetaEntry) Truncated() bool { return e.long != nil }

// Full is a string value whole, read from the file (which must still be open) when Value holds only
// its first bytes (Truncated).
func (e *MetaEntry) Full() (string, error) {
	if e.long == nil {
		return e.Value, nil
	}
	return e.long.full()
}

// MetaArray is an array metadata value (a GGUF array): its elements' type and number, their bytes in
// the file and the BLAKE3 of those bytes, and the elements themselves, read from the file on demand.
type MetaArray interface {
	// Elem is the elements' type as the format names it ("string", "int32", …).
	Elem() string
	// Len is the number of elements.
	Len() uint64
	// Size is the number of bytes the elements take in the file.
	Size() int64
	// Digest is the BLAKE3 of the elements' bytes in the file.
	Digest() [32]byte
	// Each calls fn with every element in order as text (a string as it is, a number in decimal),
	// reading them from the file, which must still be open; it stops at fn's first error.
	Each(fn func(i uint64, text string) error) error
}

// Unreadable reports whether the bytes of tensor i (an index into Tensors) cannot be read although the
// header lists them: an ONNX initializer whose external data is refused or missing (a finding says
// why).
func (m *Model) Unreadable(i int) bool {
	f, ok := m.Detail.(*onnx.File)
	return ok && i < len(f.Tensors) && f.Tensors[i].Unreadable
}

// isBigTorch reports whether m is a big-endian PyTorch or NumPy file.
func isBigTorch(m *Model) bool {
	f, ok := m.Detail.(*torch.File)
	return ok && f.ByteOrder == "big"
}

// TypedMetadata reports whether m's metadata values are typed (MetaEntry.Type, Len and Array: GGUF),
// so that two models' values compare with their types.
func (m *Model) TypedMetadata() bool { return m.ggufFile() != nil }

// ggufFile is m's GGUF header, nil for another format.
func (m *Model) ggufFile() *gguf.File {
	f, _ := m.Detail.(*gguf.File)
	return f
}

// Model is what stdiff knows about one model file (of any format the registry reads: safetensors,
// GGUF, PyTorch, NumPy, ONNX, DDUF), or a shard set, from its header.
//
// Read fills it leniently: a file the reference rejects still yields every tensor and metadata entry
// that could be read, with the defects in Findings. RefErr is the reference reader's strict verdict.
type Model struct {
	// Name is the source's name (a path or URL).
	Name string
	// Format is the file's format, as its first bytes say (FormatSafetensors, FormatGGUF); a Model
	// built by hand with no Format is taken for safetensors.
	Format Format
	// FileSize is the total size in bytes.
	FileSize int64
	// HeaderLen is the size of the header: for safetensors N, the header length stored in the first 8
	// bytes; for GGUF every byte before the data section (magic, counts, key-value pairs, tensor infos
	// and the padding after them), or where reading stopped when the header could not be read.
	HeaderLen uint64
	// Tensors in header order. A name written twice appears once: safetensors keeps the last entry (as
	// the reference does), GGUF the first (llama.cpp rejects such a file).
	Tensors []tensor.Tensor
	// Metadata in header order; a key written twice appears once, with the last value for safetensors
	// and the first for GGUF (the pair llama.cpp's look-up finds; it rejects such a file).
	Metadata []MetaEntry
	// HasMetadata is true when `__metadata__` was present and not null, or a GGUF file has key-value
	// pairs.
	HasMetadata bool
	// Findings in the order of the checks that produced them: at most finding.MaxPerCode of each code.
	Findings []finding.Finding
	// Omitted counts, per code, the findings made past finding.MaxPerCode and not kept in Findings
	// (nil when none were left out). FindingCounts adds both up.
	Omitted map[string]int
	// RefErr is nil when the reference reader accepts the file, else its error.
	RefErr *RefError
	// HeaderParsed is true when the header's JSON could be read (possibly with defects lenient mode
	// names); for GGUF, when the header could be read to the end of its tensor infos.
	HeaderParsed bool
	// Shards describe the files of a sharded model (nil for one file). Tensor offsets are then in the
	// space of the set's source.SetSource, whose data starts at 0.
	Shards []ShardInfo
	// RawHeader is the N header bytes as read (shared with the names and values above: do not modify).
	// It is nil for GGUF, whose header is read through a bounded buffer and never held whole.
	RawHeader []byte
	// InSpace is true when the tensors' Begin and End are in the Space their format's reader gives
	// (FormatReader.Open, from 0: ONNX's inline and external data, a checkpoint's storages gathered),
	// not the file's bytes after its header.
	InSpace bool
	// External lists, for each tensor whose bytes are in a file beside the model file (ONNX external
	// data), that file's location as the model names it (relative to the model's folder, slash-separated;
	// "" when it names none), in tensor order; a location may repeat.
	External []string
	// Detail is the file as its format's package reads it, for code about that format (the format's
	// adapter in canon, canon/source, canon/loadcode, diff/ggufsrc, diff/onnxsrc): an *onnx.File for ONNX
	// (its tensors' Begin and End are in the space of its onnx.Data, from 0), a *torch.File for a
	// PyTorch, pickle or NumPy file (in the space of its torch.Data), a *dduf.File for a DDUF
	// file and the pipeline it holds, a *gguf.File for GGUF (typed key-value pairs, lazy arrays,
	// tensor infos in ggml's terms; a split set's is its first file's, which holds the metadata; its
	// arrays read their elements through the source the model was read from while that is open); nil
	// when its format keeps none (safetensors). Commands import no format package
	// (TestFormatImports): they read the Model's fields and methods instead.
	Detail any
	// Archive is, for a model read in place from an archive's members (a DDUF file and the pipeline it
	// holds, whose Shards are members of it, not files beside it), that archive; nil otherwise.
	Archive *Archive

	// kept counts Findings per code, for add.
	kept map[string]int
	// canonicalOrder memoizes CanonicalOrder (for the tensors as they were then).
	canonicalOrder []int
}

// Archive is a file whose members a Model is read from in place.
type Archive struct {
	// Size is the archive's size in bytes.
	Size int64
	// Members are its files, in its directory's order.
	Members []Member
}

// Member is a file in an Archive, readable in place: its data is Size bytes at Offset.
type Member struct {
	Name         string
	Offset, Size int64
}

// Valid reports whether the reference reader accepts the file.
func (m *Model) Valid() bool { return m.RefErr == nil }

// DataOffset is the file offset of the first data byte: 8+N for safetensors; for GGUF where the
// header says the data section starts (past the padding to the alignment), or the file size when the
// header could not be read; 0 for a shard set and a model whose tensor bytes are in a Space (InSpace:
// ONNX, PyTorch, NumPy).
func (m *Model) DataOffset() int64 {
	switch {
	case m.Shards != nil, m.InSpace:
		return 0
	case m.ggufFile() != nil:
		if m.ggufFile().DataOffset < 0 {
			return m.FileSize
		}
		return m.ggufFile().DataOffset
	}
	return 8 + int64(m.HeaderLen)
}

// BigEndian reports whether m is a big-endian GGUF file: its tensor elements are stored big-endian,
// and package values, which decodes little-endian elements, must not decode them.
func (m *Model) BigEndian() bool {
	return m.ggufFile() != nil && m.ggufFile().ByteOrder == binary.BigEndian || isBigTorch(m)
}

// DataLen is the number of bytes after the header (negative when the header claims more than the file has).
func (m *Model) DataLen() int64 { return m.FileSize - m.DataOffset() }

// InFile reports whether the bytes of t, one of m's tensors, lie within a file (or set) of size bytes
// that m was read from: its offsets are in order and end within the data section.
func (m *Model) InFile(t *tensor.Tensor, size int64) bool {
	off := m.DataOffset()
	return t.End >= t.Begin && off >= 0 && size >= off && t.End <= uint64(size-off)
}

// Meta returns the value of a metadata key.
func (m *Model) Meta(key string) (string, bool) {
	for i := range m.Metadata {
		if m.Metadata[i].Key == key {
			return m.Metadata[i].Value, true
		}
	}
	return "", false
}

// Tensor returns the tensor with the given name, or nil.
func (m *Model) Tensor(name string) *tensor.Tensor {
	for i := range m.Tensors {
		if m.Tensors[i].Name == name {
			return &m.Tensors[i]
		}
	}
	return nil
}

// HasErrors reports whether any finding has severity error.
func (m *Model) HasErrors() bool {
	for _, f := range m.Findings {
		if f.Severity == finding.SevError {
			return true
		}
	}
	return false
}

// ParamCount is the element count of a group of tensors; Overflow is set when it does not fit 64 bits.
type ParamCount struct {
	DType    tensor.DType
	Tensors  int
	Elements uint64
	Bytes    uint64
	Overflow bool
}

// Params counts elements and bytes per dtype, in order of first appearance, plus a total (DType "").
// Sub-byte dtypes are counted by element, so F4 weights count 2 per byte, and so are ggml's block
// types: a Q4_K tensor of 256 elements counts 256 parameters in its 144 bytes. Tensors known by name
// only (Tensor.NameOnly) are not counted, nor are tensors that are not the model's weights (Roles):
// a tied alias (its storage is counted once), optimizer and training state, graph constants;
// ParamsApart counts those.
func (m *Model) Params() (per []ParamCount, total ParamCount) {
	idx := map[tensor.DType]int{}
	roles, _ := m.Roles()
	for i := range m.Tensors {
		t := &m.Tensors[i]
		if t.NameOnly() || RoleAt(roles, i) != RoleWeight {
			continue
		}
		k, ok := idx[t.DType]
		if !ok {
			k = len(per)
			idx[t.DType] = k
			per = append(per, ParamCount{DType: t.DType})
		}
		pc := &per[k]
		pc.Tensors++
		total.Tensors++
		e, ok := t.Elements()
		if !ok {
			pc.Overflow, total.Overflow = true, true
		}
		var c1, c2 uint64
		pc.Elements, c1 = bits.Add64(pc.Elements, e, 0)
		total.Elements, c2 = bits.Add64(total.Elements, e, 0)
		pc.Overflow = pc.Overflow || c1 != 0
		total.Overflow = total.Overflow || c2 != 0
		pc.Bytes += t.Len()
		total.Bytes += t.Len()
	}
	return per, total
}
