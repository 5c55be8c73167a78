package canon

import "math/bits"

// Tensor is one tensor entry of a header.
type Tensor struct {
	Name  string
	DType DType
	Shape []uint64
	// Begin and End are the data_offsets: byte offsets relative to the start of the data section.
	Begin, End uint64
	// HeaderOffset is the file offset of the entry's name in the header.
	HeaderOffset int64
}

// Len is the number of data bytes the entry claims (End-Begin, or 0 when reversed).
func (t *Tensor) Len() uint64 {
	if t.End < t.Begin {
		return 0
	}
	return t.End - t.Begin
}

// Elements is the product of the shape (1 for a scalar); ok is false when it overflows 64 bits.
func (t *Tensor) Elements() (n uint64, ok bool) {
	n = 1
	for _, d := range t.Shape {
		hi, lo := bits.Mul64(n, d)
		if hi != 0 {
			return 0, false
		}
		n = lo
	}
	return n, true
}

// ExpectedLen is the byte length the dtype and shape call for. ok is false when the dtype is unknown,
// the size overflows, or the bit count is not a whole number of bytes.
func (t *Tensor) ExpectedLen() (n uint64, ok bool) {
	b, known := t.DType.Bits()
	if !known {
		return 0, false
	}
	e, ok := t.Elements()
	if !ok {
		return 0, false
	}
	hi, lo := bits.Mul64(e, b)
	if hi != 0 || lo%8 != 0 {
		return 0, false
	}
	return lo / 8, true
}

// MetaEntry is one `__metadata__` key and its value.
type MetaEntry struct {
	Key   string
	Value string
	// Offset is the file offset of the key in the header.
	Offset int64
	// NotString is true when the file stored a non-string JSON value (which strict readers reject);
	// Value then holds its JSON text.
	NotString bool
}

// Model is what stdiff knows about one safetensors file (or, later, a shard set) from its header.
//
// Read fills it leniently: a file the reference rejects still yields every tensor and metadata entry
// that could be read, with the defects in Findings. RefErr is the reference reader's strict verdict.
type Model struct {
	// Name is the source's name (a path or URL).
	Name string
	// FileSize is the total size in bytes.
	FileSize int64
	// HeaderLen is N, the header length stored in the first 8 bytes.
	HeaderLen uint64
	// Tensors in header order. A name written twice appears once, with the last entry (as in the reference).
	Tensors []Tensor
	// Metadata in header order; a key written twice appears once, with the last value.
	Metadata []MetaEntry
	// HasMetadata is true when `__metadata__` was present and not null.
	HasMetadata bool
	// Findings in the order of the checks that produced them: at most MaxFindingsPerCode of each code.
	Findings []Finding
	// Omitted counts, per code, the findings made past MaxFindingsPerCode and not kept in Findings
	// (nil when none were left out). FindingCounts adds both up.
	Omitted map[string]int
	// RefErr is nil when the reference reader accepts the file, else its error.
	RefErr *RefError
	// HeaderParsed is true when the header's JSON could be read (possibly with defects lenient mode names).
	HeaderParsed bool
	// Shards describe the files of a sharded model (nil for one file). Tensor offsets are then in the
	// space of the set's SetSource, whose data starts at 0.
	Shards []ShardInfo
	// RawHeader is the N header bytes as read (shared with the names and values above: do not modify).
	RawHeader []byte

	// kept counts Findings per code, for add.
	kept map[string]int
	// canonicalOrder memoizes CanonicalOrder (for the tensors as they were then).
	canonicalOrder []int
}

// Valid reports whether the reference reader accepts the file.
func (m *Model) Valid() bool { return m.RefErr == nil }

// DataOffset is the file offset of the first data byte: 8+N, or 0 for a shard set.
func (m *Model) DataOffset() int64 {
	if m.Shards != nil {
		return 0
	}
	return 8 + int64(m.HeaderLen)
}

// DataLen is the number of bytes after the header (negative when the header claims more than the file has).
func (m *Model) DataLen() int64 { return m.FileSize - m.DataOffset() }

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
func (m *Model) Tensor(name string) *Tensor {
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
		if f.Severity == SevError {
			return true
		}
	}
	return false
}

// ParamCount is the element count of a group of tensors; Overflow is set when it does not fit 64 bits.
type ParamCount struct {
	DType    DType
	Tensors  int
	Elements uint64
	Bytes    uint64
	Overflow bool
}

// Params counts elements and bytes per dtype, in order of first appearance, plus a total (DType "").
// Sub-byte dtypes are counted by element, so F4 weights count 2 per byte.
func (m *Model) Params() (per []ParamCount, total ParamCount) {
	idx := map[DType]int{}
	for i := range m.Tensors {
		t := &m.Tensors[i]
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
