package safetensors

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// Read reads a safetensors file's header from r, a file of size bytes: the 8-byte length and the N
// header bytes, nothing else. It returns an error only when r cannot be read (r's own error). A file
// that was read but is not valid yields a Header whose RefErr is the reference reader's verdict and
// whose Findings name every defect found; everything that could still be read is in the Header. The
// header is allocated only after N is checked against finding.MaxHeaderLen and size.
func Read(r io.ReaderAt, size int64) (*Header, error) {
	head := make([]byte, max(min(size, 8), 0))
	if err := readFull(r, head, 0); err != nil {
		return nil, err
	}
	return ReadHead(r, size, head)
}

// ReadHead is Read for a caller that has read the file's first min(size, 8) bytes already: head.
func ReadHead(r io.ReaderAt, size int64, head []byte) (*Header, error) {
	return ReadHeadInto(r, size, head, nil)
}

// ReadHeadInto is ReadHead with buf as room for the header: a header that fits in buf's capacity is
// read into buf, and the Header's RawHeader, names and values then share buf's memory. A caller that
// reads many files one after another can so reuse one buffer for their headers, once it no longer uses
// the last Header, nor any string taken from it without a copy: a header read into the buffer again
// may then be given the last one's memory besides (its Tensors, their shapes, its Metadata), so that
// such a caller allocates next to nothing per plain header.
func ReadHeadInto(r io.ReaderAt, size int64, head, buf []byte) (*Header, error) {
	m := &Header{FileSize: size}
	if size < 8 {
		m.RefErr = &RefError{Kind: finding.HeaderTooSmall, Message: "header too small", Offset: 0}
		if size == 0 {
			m.add(finding.Finding{Code: finding.CodeEmptyFile, Severity: finding.SevError, Offset: 0, RefKind: finding.HeaderTooSmall,
				Message: "the file is empty", Hint: "the download or copy did not finish; fetch the file again"})
		} else {
			m.add(finding.Finding{Code: finding.CodeFileTooSmall, Severity: finding.SevError, Offset: 0, RefKind: finding.HeaderTooSmall,
				Message: fmt.Sprintf("the file has %d bytes, fewer than the 8-byte header length", size)})
		}
		return m, nil
	}
	n := binary.LittleEndian.Uint64(head)
	m.HeaderLen = n
	if n > finding.MaxHeaderLen {
		m.RefErr = &RefError{Kind: finding.HeaderTooLarge, Message: "header too large", Offset: 0}
		sniff := make([]byte, min(size, 1024))
		if err := readFull(r, sniff, 0); err != nil {
			return nil, err
		}
		m.add(diagnoseNotSafetensors(sniff, n, size))
		return m, nil
	}
	if 8+int64(n) > size {
		m.RefErr = &RefError{Kind: finding.InvalidHeaderLength, Message: "invalid header length", Offset: 0}
		m.add(finding.Finding{Code: finding.CodeHeaderBeyondFile, Severity: finding.SevError, Offset: 0, RefKind: finding.InvalidHeaderLength,
			Message: fmt.Sprintf("the header length says %d bytes but only %d follow the 8-byte length", n, size-8),
			Hint:    "the file is truncated (an interrupted download?) or not a safetensors file; fetch it again"})
		return m, nil
	}
	var hb []byte
	var key uintptr // the buffer's address, when the header is read into it (see reuse)
	if uint64(cap(buf)) >= n {
		hb = buf[:n]
		if cap(buf) > 0 {
			key = uintptr(unsafe.Pointer(unsafe.SliceData(buf[:1])))
		}
	} else {
		hb = make([]byte, n)
	}
	if err := readFull(r, hb, 8); err != nil {
		return nil, err
	}
	m.RawHeader = hb
	// A header read into the caller's buffer is read the plain way when it can be (plain.go): what
	// pays is the memory reused from the last header, which a one-off read has none of.
	if key == 0 || !m.readPlain(hb, key) {
		m.readHeader(hb)
	}
	return m, nil
}

// Parse validates hb as the N header bytes of a file of fileSize bytes, as Read does after reading them
// (a repair checks the header it is about to write this way). hb is kept: do not modify it.
func Parse(hb []byte, fileSize int64) *Header {
	m := &Header{FileSize: fileSize, HeaderLen: uint64(len(hb)), RawHeader: hb}
	m.readHeader(hb)
	return m
}

// ObjectEnd is the index in hb, N header bytes, just past the JSON object, or -1 when hb does not hold
// a whole JSON object.
func ObjectEnd(hb []byte) int { return parseHeader(hb).end }

// readFull reads len(p) bytes at off. As io.ReaderAt allows, r may say io.EOF along with all of them
// (at the end of its input, or for no bytes at all): that is no error.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	switch {
	case n == len(p):
		return nil
	case err == nil:
		return io.ErrUnexpectedEOF
	}
	return err
}

// readHeader parses and validates the N header bytes hb.
func (m *Header) readHeader(hb []byte) {
	const base = 8 // file offset of hb[0]
	if !utf8.Valid(hb) {
		bad := firstInvalidUTF8(hb)
		msg := fmt.Sprintf("invalid utf-8 sequence of 1 bytes from index %d", bad)
		m.setRef(finding.InvalidHeader, msg, base+int64(bad))
		m.add(finding.Finding{Code: finding.CodeInvalidUTF8, Severity: finding.SevError, Offset: base + int64(bad), RefKind: finding.InvalidHeader,
			Message: fmt.Sprintf("the header is not valid UTF-8 (byte 0x%02x at header index %d)", hb[bad], bad)})
	}
	h := parseHeader(hb)
	if e := h.strictError(); e != nil {
		line, col := lineCol(hb, e.pos)
		pos := e.pos
		if e == h.entryErr {
			// serde reports tensor entry errors at the end of the object; the finding below points at the entry.
			line, col = lineCol(hb, h.end-1)
		}
		m.setRef(finding.InvalidHeaderDeserialization, fmt.Sprintf("%s at line %d column %d", e.msg, line, col), base+int64(pos))
	}

	// A byte order mark: strict readers stop at once; read on past it.
	if h.end < 0 && bytes.HasPrefix(hb[h.start:], []byte("\xEF\xBB\xBF")) {
		m.add(finding.Finding{Code: finding.CodeBOM, Severity: finding.SevError, Offset: base + int64(h.start), RefKind: finding.InvalidHeaderDeserialization,
			Message: "the header starts with a UTF-8 byte order mark (an editor or Windows tool saved it)",
			Hint:    "re-save the file with a safetensors writer"})
		patched := bytes.Clone(hb)
		copy(patched[h.start:], "   ")
		h = parseHeader(patched)
	}
	if h.end < 0 {
		if h.syntax != nil && !m.hasCode(finding.CodeBOM) {
			code, msg := finding.CodeInvalidJSON, "the header is not valid JSON: "+h.syntax.msg
			if h.tensors == nil && h.meta == nil && h.start < len(hb) && hb[h.start] != '{' {
				code, msg = finding.CodeNotObject, "the header is not a JSON object: "+h.syntax.msg
			}
			m.add(finding.Finding{Code: code, Severity: finding.SevError, Offset: base + int64(h.syntax.pos), RefKind: finding.InvalidHeaderDeserialization, Message: msg})
		}
		m.collect(h, hb)
		return
	}
	m.HeaderParsed = true
	if h.start > 0 && !m.hasCode(finding.CodeBOM) {
		m.add(finding.Finding{Code: finding.CodeLeadingSpace, Severity: finding.SevInfo, Offset: base,
			Message: fmt.Sprintf("the header starts with %d whitespace bytes before the JSON object (accepted)", h.start)})
	}
	if h.trailing != nil {
		m.trailingFindings(h, hb)
	}
	m.collect(h, hb)
	m.checkLayout()
}

// trailingFindings explains what follows the JSON object inside the header.
func (m *Header) trailingFindings(h *rawHeader, hb []byte) {
	const base = 8
	rest := hb[h.end:]
	off := base + int64(h.trailing.pos)
	onlyPad, nuls := true, 0
	for _, c := range rest {
		if c == 0 {
			nuls++
		} else if !isWS(c) {
			onlyPad = false
			break
		}
	}
	switch {
	case onlyPad && nuls > 0:
		m.add(finding.Finding{Code: finding.CodeNulPadding, Severity: finding.SevError, Offset: off, RefKind: finding.InvalidHeaderDeserialization, Fixable: true,
			Message: fmt.Sprintf("the header is padded with %d NUL bytes instead of spaces (a writer that zero-fills its buffer)", nuls),
			Hint:    "turn the padding into spaces; no tensor byte changes"})
	case metadataAfterObject(rest):
		m.add(finding.Finding{Code: finding.CodeMetadataOutside, Severity: finding.SevError, Offset: off, RefKind: finding.InvalidHeaderDeserialization,
			Message: "`__metadata__` follows the closed JSON object (`{},\"__metadata__\":…`: the safetensors 0.4.2 metadata-only bug)",
			Hint:    "re-save the file with a current safetensors writer"})
		// Read the stray metadata as if it were inside the object.
		comma := bytes.IndexByte(rest, ',')
		stray := parseHeader(append([]byte("{"), rest[comma+1:]...))
		if stray.end >= 0 && h.meta == nil {
			for _, e := range stray.meta {
				e.pos += h.end + comma
				h.meta = append(h.meta, e)
			}
			h.metaSeen, h.metaNull = stray.metaSeen, stray.metaNull
		}
	default:
		m.add(finding.Finding{Code: finding.CodeTrailingChars, Severity: finding.SevError, Offset: off, RefKind: finding.InvalidHeaderDeserialization,
			Message: fmt.Sprintf("%d bytes after the JSON object inside the header are not whitespace (first: %s)", len(rest), quoteByte(hb[h.trailing.pos]))})
	}
}

func metadataAfterObject(rest []byte) bool {
	t := bytes.TrimLeft(rest, " \t\r\n")
	if len(t) == 0 || t[0] != ',' {
		return false
	}
	t = bytes.TrimLeft(t[1:], " \t\r\n")
	return bytes.HasPrefix(t, []byte(`"__metadata__"`))
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("0x%02x", c)
}

// collect turns the parsed entries into the Model's tensors and metadata, with findings for bad entries.
func (m *Header) collect(h *rawHeader, hb []byte) {
	const base = 8
	for _, pos := range h.metaDup {
		m.add(finding.Finding{Code: finding.CodeDuplicateMetadata, Severity: finding.SevError, Offset: base + int64(pos), RefKind: finding.InvalidHeaderDeserialization,
			Message: "`__metadata__` appears more than once"})
	}
	if h.metaBad != nil {
		m.add(finding.Finding{Code: finding.CodeMetadataNotObject, Severity: finding.SevError, Offset: base + int64(h.metaBad.pos), RefKind: finding.InvalidHeaderDeserialization,
			Message: "`__metadata__` must be an object of strings or null: " + h.metaBad.msg})
	}
	// Metadata: last value wins, kept at the position of its last occurrence.
	last := make(map[string]int, len(h.meta))
	for i, e := range h.meta {
		if j, dup := last[e.key]; dup && m.room(finding.CodeDuplicateMetaKey) {
			m.add(finding.Finding{Code: finding.CodeDuplicateMetaKey, Severity: finding.SevWarning, Offset: base + int64(e.pos),
				Message: fmt.Sprintf("metadata key %s appears more than once (first at offset %d); readers keep the last value", strconv.Quote(e.key), base+h.meta[j].pos)})
		}
		last[e.key] = i
	}
	m.HasMetadata = h.metaSeen && !h.metaNull
	if len(last) > 0 && m.Metadata == nil {
		m.Metadata = make([]Meta, 0, len(last))
	}
	for i, e := range h.meta {
		if last[e.key] != i {
			continue
		}
		if e.raw && m.room(finding.CodeMetadataNotString) {
			m.add(finding.Finding{Code: finding.CodeMetadataNotString, Severity: finding.SevError, Offset: base + int64(e.pos), RefKind: finding.InvalidHeaderDeserialization,
				Message: fmt.Sprintf("metadata value of %s is not a string (strict readers reject the file)", strconv.Quote(e.key)),
				Hint:    "metadata values must be strings; a writer should JSON-encode nested values into a string"})
		}
		m.Metadata = append(m.Metadata, Meta{Key: e.key, Value: e.value, Offset: base + int64(e.pos), NotString: e.raw})
	}

	// Tensors: the reference keeps the last entry of a name, and every entry must be valid.
	// The kept entries are compacted in place: in the usual file that moves nothing.
	lastT := lastOfEachName(h.tensors) // nil: every name is unique
	kept := h.tensors[:0]
	for i := range h.tensors {
		t := &h.tensors[i]
		last := i
		if lastT != nil {
			last = lastT[i]
		}
		if j := last; j != i && m.room(finding.CodeDuplicateTensor) {
			m.add(finding.Finding{Code: finding.CodeDuplicateTensor, Severity: finding.SevWarning, Offset: base + t.HeaderOffset,
				Message: fmt.Sprintf("tensor %q is defined again at offset %d; the reference keeps the last entry, other readers may keep this one", t.Name, base+h.tensors[j].HeaderOffset),
				Hint:    "two readers can load different weights from this file; re-save it"})
		}
		flags := h.flagsOf(i)
		if flags&entryInvalid != 0 {
			unknown := t.DType != "" && !t.DType.Known()
			switch {
			case unknown && m.room(finding.CodeUnknownDType):
				f := finding.Finding{Code: finding.CodeUnknownDType, Severity: finding.SevError, Offset: base + t.HeaderOffset, RefKind: finding.InvalidHeaderDeserialization,
					Message: fmt.Sprintf("tensor %q has dtype %q, which the reference does not know", t.Name, t.DType)}
				if s := t.DType.Suggest(); s != "" {
					f.Hint = fmt.Sprintf("dtype names are case-sensitive; did the writer mean %q?", s)
				}
				m.add(f)
			case !unknown && m.room(finding.CodeInvalidTensorEntry):
				why := "invalid entry"
				if e := entryError(hb, int(t.HeaderOffset)); e != nil {
					why = e.msg
				}
				m.add(finding.Finding{Code: finding.CodeInvalidTensorEntry, Severity: finding.SevError, Offset: base + t.HeaderOffset, RefKind: finding.InvalidHeaderDeserialization,
					Message: fmt.Sprintf("tensor %q: %s", t.Name, why)})
			}
		}
		// An entry the reference rejects is still listed when it says enough: a name, an unknown dtype,
		// a shape and offsets.
		if last != i || (flags&entryInvalid != 0 && !(t.DType != "" && flags&entryUnknownDType != 0)) {
			continue
		}
		t.HeaderOffset += base
		if len(kept) == i { // nothing dropped so far: the entry is in its place
			kept = kept[:i+1]
		} else {
			kept = append(kept, *t)
		}
	}
	m.Tensors = kept
	if h.oddForms > 0 {
		m.add(finding.Finding{Code: finding.CodeOddTensorForm, Severity: finding.SevWarning, Offset: -1,
			Message: fmt.Sprintf("%d tensor entries use a form only serde-based readers accept (array or {\"DTYPE\":null}), e.g. %s", h.oddForms, strconv.Quote(h.firstOdd)),
			Hint:    "JavaScript and Python header readers expect {\"dtype\":…,\"shape\":…,\"data_offsets\":…}"})
	}
	if h.extraFields > 0 {
		m.add(finding.Finding{Code: finding.CodeUnknownField, Severity: finding.SevInfo, Offset: -1,
			Message: fmt.Sprintf("%d tensor entries carry fields readers ignore, e.g. %s", h.extraFields, strconv.Quote(h.firstExtra))})
	}
}

// lastOfEachName maps each entry to the index of the last entry with the same name (itself when its name
// is unique), or returns nil when every name is unique, as in the usual header. Names in strictly
// increasing order (as the reference writer sorts them) are unique; others are looked up in a table
// of hashes and indices only, so a 50,000-tensor header costs no map of strings.
func lastOfEachName(ts []tensor.Tensor) []int {
	increasing := true
	for i := 1; i < len(ts) && increasing; i++ {
		increasing = ts[i-1].Name < ts[i].Name
	}
	if increasing || len(ts) < 1<<16-1 && namesUnique(ts) {
		return nil
	}
	size := 1
	for size < 2*len(ts) {
		size <<= 1
	}
	x := &nameTable{ts: ts, slots: make([]uint64, size), seed: maphash.MakeSeed()}
	prev := make([]int32, len(ts)) // previous entry of the same name + 1; 0 is none
	for i := range ts {
		k, tag := x.slot(ts[i].Name)
		prev[i] = int32(uint32(x.slots[k]))
		x.slots[k] = tag | uint64(i+1)
	}
	last := make([]int, len(ts))
	for i := range last {
		last[i] = -1
	}
	for i := len(ts) - 1; i >= 0; i-- { // newest first: each entry hands its answer down its chain
		if last[i] < 0 {
			last[i] = i
		}
		if p := int(prev[i]) - 1; p >= 0 {
			last[p] = last[i]
		}
	}
	return last
}

// namesUnique reports whether no two entries of ts, fewer than 65,535, have the same name. Its table
// has 32-bit slots, 16 bits of a name's hash and 16 of its index, half the memory of nameTable's.
func namesUnique(ts []tensor.Tensor) bool {
	size := 1
	for size < 2*len(ts) {
		size <<= 1
	}
	slots, seed, mask := make([]uint32, size), maphash.MakeSeed(), uint64(size-1)
	for i := range ts {
		h := maphash.String(seed, ts[i].Name)
		tag := uint32(h>>48) << 16
		for k := h & mask; ; k = (k + 1) & mask {
			s := slots[k]
			if s == 0 {
				slots[k] = tag | uint32(i+1)
				break
			}
			if s&^0xffff == tag && ts[int(s&0xffff)-1].Name == ts[i].Name {
				return false
			}
		}
	}
	return true
}

// checkLayout runs the reference's offset walk (strict verdict) and then lenient checks of every tensor.
func (m *Header) checkLayout() {
	order := m.sortedByOffsets()
	// The reference's walk fails only where the lenient checks, which check all it does, find a
	// problem: a clean layout is walked once.
	if m.lenientLayout(order) && m.RefErr == nil {
		m.referenceWalk(order)
	}
	if len(m.Tensors) == 0 && m.HeaderParsed {
		m.add(finding.Finding{Code: finding.CodeNoTensors, Severity: finding.SevInfo, Offset: -1, Message: "the file holds no tensors"})
	}
}

// sortedByOffsets returns the tensors' indices sorted by (begin, end), ties in header order; nil when
// header order is that order, the usual case.
func (m *Header) sortedByOffsets() []int {
	sorted := true
	for i := 1; i < len(m.Tensors) && sorted; i++ {
		a, b := &m.Tensors[i-1], &m.Tensors[i]
		sorted = a.Begin < b.Begin || (a.Begin == b.Begin && a.End <= b.End)
	}
	if sorted {
		return nil
	}
	idx := make([]int, len(m.Tensors))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ta, tb := &m.Tensors[idx[a]], &m.Tensors[idx[b]]
		if ta.Begin != tb.Begin {
			return ta.Begin < tb.Begin
		}
		return ta.End < tb.End
	})
	return idx
}

// referenceWalk is the reference's validate(): the first failing check in offset order wins. order is
// sortedByOffsets' (nil: header order).
func (m *Header) referenceWalk(order []int) {
	var start uint64
	for k := range m.Tensors {
		i := k
		if order != nil {
			i = order[k]
		}
		t := &m.Tensors[i]
		if t.Begin != start || t.End < t.Begin {
			m.setRef(finding.InvalidOffset, "invalid offset for tensor "+strconv.Quote(t.Name), t.HeaderOffset)
			return
		}
		start = t.End
		e, ok := t.Elements()
		b, _ := t.DType.Bits()
		hi, lo := bits64Mul(e, b)
		if !ok || hi != 0 {
			m.setRef(finding.ValidationOverflow, "overflow computing the size of tensor "+strconv.Quote(t.Name), t.HeaderOffset)
			return
		}
		if lo%8 != 0 {
			m.setRef(finding.MisalignedSlice, "tensor "+strconv.Quote(t.Name)+" does not end on a byte boundary", t.HeaderOffset)
			return
		}
		if t.End-t.Begin != lo/8 {
			m.setRef(finding.TensorInvalidInfo, "tensor "+strconv.Quote(t.Name)+": data_offsets do not match dtype and shape", t.HeaderOffset)
			return
		}
	}
	if dataLen := uint64(m.DataLen()); start != dataLen {
		m.setRef(finding.MetadataIncompleteBuffer, "metadata incomplete buffer: data does not cover the file exactly", m.DataOffset()+int64(min(start, dataLen)))
	}
}

// lenientLayout checks every tensor and the whole data section, reporting each problem once (findings
// past a code's limit are counted); found says whether there was any. order is sortedByOffsets' (nil:
// header order).
func (m *Header) lenientLayout(order []int) (found bool) {
	for i := range m.Tensors {
		t := &m.Tensors[i]
		if !t.DType.Known() {
			continue // already reported as unknown-dtype
		}
		if t.End < t.Begin {
			found = true
			if !m.room(finding.CodeOffsetReversed) {
				continue
			}
			m.add(finding.Finding{Code: finding.CodeOffsetReversed, Severity: finding.SevError, Offset: t.HeaderOffset, RefKind: finding.InvalidOffset,
				Message: fmt.Sprintf("tensor %s ends (%d) before it begins (%d)", strconv.Quote(t.Name), t.End, t.Begin)})
			continue
		}
		e, ok := t.Elements()
		b, _ := t.DType.Bits()
		hi, lo := bits64Mul(e, b)
		if ok && hi == 0 && lo%8 == 0 && t.End-t.Begin == lo/8 {
			continue // the common case, before a finding is so much as set up
		}
		f := finding.Finding{Severity: finding.SevError, Offset: t.HeaderOffset}
		switch {
		case !ok || hi != 0:
			f.Code, f.RefKind = finding.CodeShapeOverflow, finding.ValidationOverflow
		case lo%8 != 0:
			f.Code, f.RefKind = finding.CodeMisalignedSlice, finding.MisalignedSlice
		default:
			f.Code, f.RefKind = finding.CodeSizeMismatch, finding.TensorInvalidInfo
		}
		found = true
		if !m.room(f.Code) { // messages are made only for the findings kept
			continue
		}
		switch f.Code {
		case finding.CodeShapeOverflow:
			f.Message = fmt.Sprintf("tensor %q: shape %v overflows a 64-bit size", t.Name, t.Shape)
		case finding.CodeMisalignedSlice:
			f.Message = fmt.Sprintf("tensor %q: %d elements of %s are %d bits, not a whole number of bytes", t.Name, e, t.DType, lo)
		default:
			f.Message = fmt.Sprintf("tensor %q: %s %v needs %d bytes but data_offsets [%d, %d] span %d", t.Name, t.DType, t.Shape, lo/8, t.Begin, t.End, t.End-t.Begin)
		}
		m.add(f)
	}
	var end uint64
	for k := range m.Tensors {
		i := k
		if order != nil {
			i = order[k]
		}
		t := &m.Tensors[i]
		if t.End < t.Begin {
			continue
		}
		q := t.Name                     // quoted only when a finding is made
		found = found || t.Begin != end // for the first tensor, end is 0
		switch {
		case k == 0 && t.Begin != 0:
			m.add(finding.Finding{Code: finding.CodeOffsetNotZero, Severity: finding.SevError, Offset: t.HeaderOffset, RefKind: finding.InvalidOffset,
				Message: fmt.Sprintf("the first tensor (%q) starts at data offset %d, not 0", q, t.Begin)})
		case t.Begin > end && m.room(finding.CodeOffsetGap):
			m.add(finding.Finding{Code: finding.CodeOffsetGap, Severity: finding.SevError, Offset: t.HeaderOffset, RefKind: finding.InvalidOffset,
				Message: fmt.Sprintf("%d unused bytes before tensor %q (data offsets %d to %d)", t.Begin-end, q, end, t.Begin)})
		case t.Begin < end && m.room(finding.CodeOffsetOverlap):
			m.add(finding.Finding{Code: finding.CodeOffsetOverlap, Severity: finding.SevError, Offset: t.HeaderOffset, RefKind: finding.InvalidOffset,
				Message: fmt.Sprintf("tensor %q (data offsets %d to %d) overlaps the tensor before it, which ends at %d", q, t.Begin, t.End, end)})
		}
		end = max(end, t.End)
	}
	dataLen := uint64(m.DataLen())
	found = found || end != dataLen
	switch {
	case end < dataLen:
		m.add(finding.Finding{Code: finding.CodeTrailingBytes, Severity: finding.SevError, Offset: m.DataOffset() + int64(end), RefKind: finding.MetadataIncompleteBuffer,
			Message: fmt.Sprintf("%d bytes follow the last tensor's data; strict readers reject files not covered exactly", dataLen-end),
			Hint:    "something appended to the file; if the tensors are right, re-save it"})
	case end > dataLen:
		m.add(finding.Finding{Code: finding.CodeTruncatedData, Severity: finding.SevError, Offset: m.FileSize, RefKind: finding.MetadataIncompleteBuffer,
			Message: fmt.Sprintf("the tensors need %d data bytes but the file has %d: %d bytes are missing", end, dataLen, end-dataLen),
			Hint:    "the file is truncated (an interrupted download?); fetch it again"})
	}
	return found
}

func bits64Mul(a, b uint64) (hi, lo uint64) {
	if a == 0 || b == 0 {
		return 0, 0
	}
	lo = a * b
	if lo/b != a {
		return 1, lo
	}
	return 0, lo
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// diagnoseNotSafetensors says what a file whose header length is absurd most likely is.
func diagnoseNotSafetensors(head []byte, n uint64, size int64) finding.Finding {
	f := finding.Finding{Code: finding.CodeHeaderTooLarge, Severity: finding.SevError, Offset: 0, RefKind: finding.HeaderTooLarge,
		Message: fmt.Sprintf("the header length is %d, over the %d-byte limit: this is not a safetensors file", n, finding.MaxHeaderLen)}
	text := string(head)
	lower := strings.ToLower(strings.TrimSpace(text))
	switch {
	case strings.HasPrefix(text, "version https://git-lfs.github.com/spec/"):
		f.Code = finding.CodeLFSPointer
		f.Message = "this is a Git LFS pointer file, not the model: the weights were never downloaded"
		if sz, err := strconv.ParseUint(lfsField(text, "size "), 10, 64); err == nil {
			f.Message += fmt.Sprintf(" (the real file is %s)", textfmt.Bytes(sz))
		}
		f.Hint = "run `git lfs pull` in the repository (or `git lfs install` and clone again)"
	case strings.HasPrefix(lower, "<!doctype html") || strings.HasPrefix(lower, "<html") || strings.HasPrefix(lower, "<?xml"):
		f.Code = finding.CodeHTMLPage
		f.Message = "this is an HTML/XML page, not a model (a login, error or redirect page saved under the model's name)"
		f.Hint = "download the file again with a direct link (and a token if the model is gated)"
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		f.Code = finding.CodeNotSafetensors
		f.Message = "this is a ZIP archive (a PyTorch .bin/.pt checkpoint?), not a safetensors file"
	case len(head) > 0 && head[0] == 0x80 && len(head) > 1 && head[1] <= 5:
		f.Code = finding.CodeNotSafetensors
		f.Message = "this is a Python pickle (a PyTorch checkpoint?), not a safetensors file"
	case len(head) > 0 && (head[0] == '{' || head[0] == '['):
		f.Code = finding.CodeNotSafetensors
		f.Message = "this is a JSON text file, not a safetensors file (a config or index file under the wrong name?)"
	default:
		if be := binary.BigEndian.Uint64(head[:8]); be > 0 && be <= finding.MaxHeaderLen && int64(be)+8 <= size {
			f.Code = finding.CodeBigEndianLength
			f.Message = fmt.Sprintf("the header length is stored big-endian (%d read as little-endian, %d as big-endian)", n, be)
			f.Hint = "the writer is broken: safetensors stores the length little-endian"
		}
	}
	return f
}

func lfsField(text, prefix string) string {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(strings.TrimPrefix(line, prefix))
		}
	}
	return ""
}

// nameTable finds tensors by name, holding hashes' slots and indices only (as canon.NameIndex does).
type nameTable struct {
	ts    []tensor.Tensor
	slots []uint64 // high 32 bits: the name's hash; low 32: index + 1; 0 is empty
	seed  maphash.Seed
}

// slot is where name is, or the empty slot where it would go, and the hash tag stored with it. Names
// are compared only when their tags are equal, so a look-up rarely touches other tensors.
func (x *nameTable) slot(name string) (k, tag uint64) {
	h := maphash.String(x.seed, name)
	tag = h &^ (1<<32 - 1)
	mask := uint64(len(x.slots) - 1)
	for k = h & mask; ; k = (k + 1) & mask {
		s := x.slots[k]
		if s == 0 || (s&^(1<<32-1) == tag && x.ts[int(uint32(s))-1].Name == name) {
			return k, tag
		}
	}
}
