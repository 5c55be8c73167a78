package gguf

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/bits"
	"sort"
	"unicode/utf8"
)

const (
	hintTruncated = "the file is truncated (an interrupted download?); fetch it again"
	hintReconvert = "convert the model again with a current llama.cpp (convert_hf_to_gguf.py)"
)

// Smallest encodings, used to cap preallocation by the bytes that remain.
const (
	minKVBytes     = 8 + 4 + 1     // key length, type, a one-byte value
	minTensorBytes = 8 + 4 + 4 + 8 // name length, dimension count, type, offset
	maxPrealloc    = 1 << 16
)

// parser reads one file into its File.
type parser struct {
	f       *File
	b       *bReader
	stopped bool // the rest of the header cannot be located

	keys  nameSet
	names nameSet

	nameBuf   []byte // all tensor names, back to back
	nameEnds  []int  // where each tensor's name ends in nameBuf
	dims      []uint64
	sizeKnown bool // every tensor's size is known (the layout can be checked)

	overlapping []bool // per tensor, built when an offset is wrong
}

func newParser(f *File) *parser {
	return &parser{f: f, b: newBReader(f.r, f.Size, binary.LittleEndian, int(min(max(f.Size, 1), minBuf))), sizeKnown: true}
}

func (p *parser) run() {
	f, b := p.f, p.b
	n := int(min(f.Size, 512))
	if !b.fill(n) {
		return
	}
	head := b.buf[:n]
	f.Format, _ = Sniff(head)
	if n < 4 || string(head[:4]) != "GGUF" {
		p.notGGUF(head)
		return
	}
	b.pos = 4
	if !p.header() {
		return
	}
	p.kvs()
	if !p.stopped {
		p.alignment()
		p.tensorInfos()
	}
	f.HeaderEnd = b.off()
	if p.stopped || b.err != nil {
		return
	}
	p.layout()
}

// notGGUF explains a file that does not start with the GGUF magic.
func (p *parser) notGGUF(head []byte) {
	f := p.f
	const rule = RuleMagic
	switch {
	case len(head) == 0:
		f.fail(rule, CodeEmptyFile, 0, "the download or copy did not finish; fetch the file again", "the file is empty")
	case len(head) < 4:
		f.fail(rule, CodeFileTooSmall, 0, hintTruncated, "the file has %d bytes, fewer than the 4-byte magic", len(head))
	case f.Format != "":
		f.fail(rule, CodeLegacyGGML, 0, "convert it with llama.cpp's convert_llama_ggml_to_gguf.py, or download a GGUF build of the model",
			"the file is %s, the format before GGUF, which llama.cpp no longer reads", f.Format)
	case bytes.HasPrefix(head, []byte("version https://git-lfs")):
		f.fail(rule, CodeLFSPointer, 0, "fetch the real file with `git lfs pull` (or download it again)",
			"this is a Git LFS pointer file, not the model")
	case looksHTML(head):
		f.fail(rule, CodeHTMLPage, 0, "the URL served a web page (a login, a 404 or a redirect page); download the file's raw URL",
			"this is an HTML page, not a model file")
	case looksSafetensors(head):
		f.fail(rule, CodeNotGGUF, 0, "", "this is a safetensors file, not GGUF")
	default:
		f.fail(rule, CodeNotGGUF, 0, "", "not a GGUF file: it starts with %q, not \"GGUF\"", head[:4])
	}
}

func looksHTML(head []byte) bool {
	t := bytes.ToLower(bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf"))
	return bytes.HasPrefix(t, []byte("<!doctype html")) || bytes.HasPrefix(t, []byte("<html"))
}

func looksSafetensors(head []byte) bool {
	if len(head) < 9 {
		return false
	}
	n := binary.LittleEndian.Uint64(head)
	return n > 1 && n < 100_000_000 && head[8] == '{'
}

// header reads the version and the two counts; false when reading cannot go on.
func (p *parser) header() bool {
	f, b := p.f, p.b
	if b.remain() < 4 {
		p.truncated(RuleHeaderRead, 4, "the version is cut off by the end of the file")
		return false
	}
	v := b.u32()
	f.Version = v
	switch {
	case v == 0:
		f.fail(RuleVersion, CodeUnsupportedVersion, 4, "", "GGUF version 0 does not exist")
		return false
	case v&0xFFFF == 0:
		if sw := bits.ReverseBytes32(v); sw == 2 || sw == 3 {
			f.Version, f.ByteOrder, b.be = sw, binary.BigEndian, true
			f.fail(RuleVersion, CodeBigEndian, 4, "use the little-endian build of the model (convert it again without --bigendian)",
				"big-endian GGUF v%d: llama.cpp reads only files in the byte order of its machine (little-endian)", sw)
			break // read on, in big-endian
		}
		f.fail(RuleVersion, CodeUnsupportedVersion, 4, "", "GGUF version %d is unknown (a big-endian file of an unknown version?)", v)
		return false
	case v == 1:
		f.fail(RuleVersion, CodeUnsupportedVersion, 4, hintReconvert, "the file is GGUF v1, the first GGUF version (2023), which llama.cpp no longer reads")
		return false
	case v > 3:
		f.fail(RuleVersion, CodeUnsupportedVersion, 4, "", "GGUF version %d is newer than the versions known here (2 and 3)", v)
		return false
	}
	if b.remain() < 8 {
		p.truncated(RuleHeaderRead, b.off(), "the tensor count is cut off by the end of the file")
		return false
	}
	nt := int64(b.u64())
	f.TensorCount = nt
	if nt < 0 || nt > MaxTensorCount {
		f.fail(RuleTensorCount, CodeCountOverLimit, 8, "", "the tensor count is %d; gguf.cpp accepts 0 to %d", nt, int64(MaxTensorCount))
		return false
	}
	if b.remain() < 8 {
		p.truncated(RuleHeaderRead, b.off(), "the key-value count is cut off by the end of the file")
		return false
	}
	nkv := int64(b.u64())
	f.KVCount = nkv
	if nkv < 0 || nkv > MaxKVCount {
		f.fail(RuleKVCount, CodeCountOverLimit, 16, "", "the key-value count is %d; gguf.cpp accepts 0 to %d", nkv, int64(MaxKVCount))
		return false
	}
	return true
}

// truncated records that the header runs past the end of the file, and stops reading.
func (p *parser) truncated(rule Rule, off int64, format string, args ...any) {
	p.f.fail(rule, CodeTruncatedHeader, off, hintTruncated, format, args...)
	p.stopped = true
}

// strLen reads a string's length and checks it against gguf.cpp's limit and the bytes that remain.
// what describes the string, for messages.
func (p *parser) strLen(eofRule Rule, what func() string) (uint64, bool) {
	b := p.b
	at := b.off()
	if b.remain() < 8 {
		p.truncated(eofRule, at, "the length of %s is cut off by the end of the file", what())
		return 0, false
	}
	n := b.u64()
	if n > MaxStringLength {
		p.f.fail(RuleStringLength, CodeStringTooLong, at, "", "%s is %d bytes long; gguf.cpp reads strings of at most 1 GiB", what(), n)
		p.stopped = true
		return 0, false
	}
	if n > uint64(b.remain()) {
		p.truncated(eofRule, at, "%s (%d bytes) runs past the end of the file", what(), n)
		return 0, false
	}
	return n, true
}

func (p *parser) kvs() {
	f, b := p.f, p.b
	n := f.KVCount
	f.KVs = make([]KV, 0, min(n, b.remain()/minKVBytes, maxPrealloc))
	p.keys.init(cap(f.KVs))
	for i := int64(0); i < n && b.ok(); i++ {
		at := b.off()
		kl, ok := p.strLen(RuleKVRead, func() string { return "key " + itoa(i) })
		if !ok {
			return
		}
		kv := b.str(kl, MaxStringLength)
		if !b.ok() {
			return
		}
		key := kv.str
		switch {
		case key == "":
			f.fail(RuleEmptyKey, CodeEmptyKey, at, "", "key-value pair %d has an empty key", i)
		default:
			h := maphash.String(p.keys.seed, key)
			if j := p.keys.seen(h, int32(len(f.KVs)), func(j int32) bool { return f.KVs[j].Key == key }, func() string { return key }); j >= 0 {
				f.fail(RuleDuplicateKey, CodeDuplicateKey, at, "remove one of them (gguf-py's gguf_set_metadata.py, or re-convert)",
					"key %q appears twice (pairs %d and %d)", key, j, i)
			}
		}
		p.checkText(key, at, "key "+quote(key))
		if !p.value(KV{Key: key, Offset: at}) {
			return
		}
	}
}

// value reads the type and value of the pair kv, appending it; false when reading cannot go on.
func (p *parser) value(kv KV) bool {
	f, b := p.f, p.b
	typeAt := b.off()
	if b.remain() < 4 {
		p.truncated(RuleKVRead, typeAt, "the type of key %s is cut off by the end of the file", quote(kv.Key))
		return false
	}
	t := ValueType(b.u32())
	if t == ValArray {
		if b.remain() < 4+8 {
			p.truncated(RuleKVRead, b.off(), "the element type and length of array %s are cut off by the end of the file", quote(kv.Key))
			return false
		}
		et := ValueType(b.u32())
		cnt := b.u64()
		if et >= valTypeCount || et == ValArray {
			code, msg := CodeInvalidValueType, "an unknown element type ("+itoa(int64(int32(et)))+")"
			if et == ValArray {
				code, msg = CodeNestedArray, "arrays as elements (gguf.cpp does not read arrays of arrays)"
			}
			f.fail(RuleKVType, code, typeAt+4, "", "array %s has %s", quote(kv.Key), msg)
			p.stopped = true
			return false
		}
		arr, ok := p.array(kv.Key, et, cnt, typeAt)
		if !ok {
			return false
		}
		kv.Value = Value{Type: ValArray, Offset: typeAt + 4, Array: arr}
		f.KVs = append(f.KVs, kv)
		return true
	}
	switch {
	case t >= valTypeCount:
		f.fail(RuleKVType, CodeInvalidValueType, typeAt, "", "key %s has an unknown value type (%d)", quote(kv.Key), int32(t))
		p.stopped = true
		return false
	case t == ValString:
		n, ok := p.strLen(RuleKVRead, func() string { return "the value of key " + quote(kv.Key) })
		if !ok {
			return false
		}
		kv.Value = b.str(n, MaxInline)
		if !b.ok() {
			return false
		}
		p.checkText(kv.Value.str, kv.Value.Offset, "the value of key "+quote(kv.Key))
	default:
		if b.remain() < int64(t.Size()) {
			p.truncated(RuleKVRead, b.off(), "the %s value of key %s is cut off by the end of the file", t, quote(kv.Key))
			return false
		}
		kv.Value = b.scalar(t)
		if t == ValBool && kv.Value.bits > 1 {
			f.warn(CodeOddBool, kv.Value.Offset, "", "bool %s is stored as %d, not 0 or 1 (llama.cpp reads it as true)", quote(kv.Key), kv.Value.bits)
		}
	}
	f.KVs = append(f.KVs, kv)
	return true
}

// array reads an array of cnt elements of type et (its type fields start at typeAt).
func (p *parser) array(key string, et ValueType, cnt uint64, typeAt int64) (*Array, bool) {
	f, b := p.f, p.b
	if cnt > MaxArrayLength {
		f.fail(RuleKVRead, CodeArrayTooLong, typeAt+8, "", "array %s has %d elements; gguf.cpp reads at most 2^30", quote(key), cnt)
		p.stopped = true
		return nil, false
	}
	elemMin := uint64(et.Size())
	if et == ValString {
		elemMin = 8
	}
	if cnt*elemMin > uint64(b.remain()) {
		p.truncated(RuleKVRead, typeAt+8, "array %s of %d %s elements needs at least %d bytes; %d remain in the file",
			quote(key), cnt, et, cnt*elemMin, b.remain())
		return nil, false
	}
	a := &Array{ElemType: et, Len: cnt, Offset: b.off(), f: f}
	a.Head = make([]Value, 0, min(cnt, HeadLen))
	b.startTap()
	defer func() { b.tap = nil }()
	if et != ValString {
		k := min(cnt, HeadLen)
		if et == ValBool {
			k = cnt // every bool is checked
		}
		odd := int64(-1)
		for i := uint64(0); i < k; i++ {
			v := b.scalar(et)
			if i < HeadLen {
				a.Head = append(a.Head, v)
			}
			if et == ValBool && v.bits > 1 && odd < 0 {
				odd = v.Offset
			}
		}
		b.skip(int64(cnt-k) * int64(elemMin))
		if odd >= 0 {
			f.warn(CodeOddBool, odd, "", "array %s holds bools stored as neither 0 nor 1 (llama.cpp reads them as true)", quote(key))
		}
	} else if !p.stringElems(a, key) {
		return nil, false
	}
	if !b.ok() {
		return nil, false
	}
	a.Size = b.off() - a.Offset
	a.Digest = b.stopTap()
	return a, true
}

// stringElems reads the elements of a string array: the first HeadLen kept, all checked.
func (p *parser) stringElems(a *Array, key string) bool {
	b := p.b
	bad, firstBad := 0, uint64(0)
	what := func() string { return "an element of array " + quote(key) }
	for i := uint64(0); i < a.Len; i++ {
		n, ok := p.strLen(RuleKVRead, what)
		if !ok {
			return false
		}
		var valid bool
		if i < HeadLen {
			v := b.str(n, MaxInline)
			a.Head = append(a.Head, v)
			valid = utf8.ValidString(v.str) // the rest of a long string is not checked
		} else if n <= uint64(b.end-b.pos) { // the common case: the string is in the buffer
			valid = utf8.Valid(b.buf[b.pos : b.pos+int(n)])
			b.pos += int(n)
		} else if n <= maxBuf {
			s, _ := b.bytes(int(n))
			valid = utf8.Valid(s)
		} else {
			valid = true
			b.skip(int64(n))
		}
		if !b.ok() {
			return false
		}
		if !valid {
			if bad == 0 {
				firstBad = i
			}
			bad++
		}
	}
	if bad > 0 {
		p.f.warn(CodeInvalidUTF8, a.Offset, "", "%d of the %d strings of array %s are not valid UTF-8 (the first is element %d)",
			bad, a.Len, quote(key), firstBad)
	}
	return true
}

// checkText warns about a string that is not valid UTF-8 (gguf.cpp accepts any bytes).
func (p *parser) checkText(s string, off int64, what string) {
	if !utf8.ValidString(s) {
		p.f.warn(CodeInvalidUTF8, off, "", "%s is not valid UTF-8", what)
	}
}

// alignment applies general.alignment as gguf.cpp does: the first key that reads as that C string.
func (p *parser) alignment() {
	f := p.f
	kv := f.KV(AlignmentKey)
	if kv == nil {
		return
	}
	v := kv.Value
	if v.Type != ValUint32 {
		what := v.Type.String()
		if v.Array != nil {
			what = "array of " + v.Array.ElemType.String()
		}
		f.fail(RuleAlignmentType, CodeAlignmentType, kv.Offset, "", "%s is a %s; gguf.cpp requires a uint32", AlignmentKey, what)
		return
	}
	if v.bits == 0 || v.bits&(v.bits-1) != 0 {
		f.fail(RuleAlignment, CodeBadAlignment, v.Offset, "", "%s is %d, not a power of two", AlignmentKey, v.bits)
		return
	}
	f.Alignment = v.bits
}

func (p *parser) tensorInfos() {
	f, b := p.f, p.b
	n := f.TensorCount
	c := min(n, b.remain()/minTensorBytes, maxPrealloc)
	f.Tensors = make([]TensorInfo, 0, c)
	p.nameEnds = make([]int, 0, c)
	p.nameBuf = make([]byte, 0, min(b.remain(), 32*c))
	p.dims = make([]uint64, 0, 4*c)
	p.names.init(int(c))
	for i := int64(0); i < n && b.ok() && !p.stopped; i++ {
		p.tensorInfo(i)
	}
	if len(f.Tensors) == 0 {
		return
	}
	// Names and dims share one allocation each.
	all := string(p.nameBuf)
	start := 0
	for i := range f.Tensors {
		f.Tensors[i].Name = all[start:p.nameEnds[i]]
		start = p.nameEnds[i]
	}
	k := 0
	for i := range f.Tensors {
		nd := len(f.Tensors[i].Dims)
		f.Tensors[i].Dims = p.dims[k : k+nd : k+nd]
		k += nd
	}
}

// tensorInfo reads tensor info i, checking it as gguf.cpp does, in its order.
func (p *parser) tensorInfo(i int64) {
	f, b := p.f, p.b
	at := b.off()
	nl, ok := p.strLen(RuleTensorInfoRead, func() string { return "the name of tensor " + itoa(i) })
	if !ok {
		return
	}
	start := len(p.nameBuf)
	for left := nl; left > 0; {
		s, ok := b.bytes(int(min(left, maxBuf)))
		if !ok {
			return
		}
		p.nameBuf = append(p.nameBuf, s...)
		left -= uint64(len(s))
	}
	name := p.nameBuf[start:]
	if nl > MaxNameLength {
		f.fail(RuleTensorNameLength, CodeNameTooLong, at, "", "tensor %d's name %s is %d bytes; ggml allows at most %d",
			i, quoteBytes(name[:min(len(name), 80)]), nl, MaxNameLength)
	}
	// ggml keeps a name as a C string of at most 63 bytes, and compares those.
	cname := name
	if z := bytes.IndexByte(cname, 0); z >= 0 {
		cname = cname[:z]
		f.warn(CodeNulInName, at, "", "tensor %d's name %s holds a NUL byte: llama.cpp knows it as %s", i, quoteBytes(name), quoteBytes(cname))
	}
	cname = cname[:min(len(cname), MaxNameLength)]
	h := maphash.Bytes(p.names.seed, cname)
	same := func(j int32) bool { return bytes.Equal(p.cName(j), cname) }
	if j := p.names.seen(h, int32(len(f.Tensors)), same, func() string { return string(cname) }); j >= 0 {
		f.fail(RuleDuplicateTensor, CodeDuplicateTensor, at, "", "tensor name %s appears twice (tensors %d and %d)", quoteBytes(cname), j, i)
	}
	if !utf8.Valid(name) {
		f.warn(CodeInvalidUTF8, at, "", "tensor %d's name %s is not valid UTF-8", i, quoteBytes(name))
	}
	qname := func() string { return quoteBytes(name) }

	if b.remain() < 4 {
		p.truncated(RuleTensorInfoRead, b.off(), "the dimension count of tensor %s is cut off by the end of the file", qname())
		return
	}
	ndAt := b.off()
	nd := b.u32()
	if nd > MaxDims {
		f.fail(RuleTensorDims, CodeTooManyDims, ndAt, "", "tensor %s has %d dimensions; ggml allows at most %d", qname(), nd, MaxDims)
		p.stopped = true
		return
	}
	ne := [MaxDims]int64{1, 1, 1, 1}
	valid := true // no negative dimension
	for j := uint32(0); j < nd; j++ {
		if b.remain() < 8 {
			p.truncated(RuleTensorInfoRead, b.off(), "the dimensions of tensor %s are cut off by the end of the file", qname())
			return
		}
		dimAt := b.off()
		ne[j] = int64(b.u64())
		if ne[j] < 0 {
			f.fail(RuleNegativeDim, CodeNegativeDim, dimAt, "", "dimension %d of tensor %s is negative (%d)", j, qname(), ne[j])
			valid = false
		}
	}
	for j := uint32(0); j < nd; j++ {
		p.dims = append(p.dims, uint64(max(ne[j], 0)))
	}
	if valid && elementsTooMany(ne) {
		// gguf.cpp skips this check when the product wraps to zero or below.
		if wrapped := ne[0] * ne[1] * ne[2] * ne[3]; wrapped <= 0 {
			f.overflow(RuleTensorElements, ndAt, "tensor %s has %d×%d×%d×%d elements, 2^63 or more", qname(), ne[0], ne[1], ne[2], ne[3])
		} else {
			f.fail(RuleTensorElements, CodeShapeOverflow, ndAt, "", "tensor %s has %d×%d×%d×%d elements, 2^63 or more", qname(), ne[0], ne[1], ne[2], ne[3])
		}
		valid = false
	}

	if b.remain() < 4 {
		p.truncated(RuleTensorInfoRead, b.off(), "the type of tensor %s is cut off by the end of the file", qname())
		return
	}
	typeAt := b.off()
	t := GGMLType(b.u32())
	size, sizeOK := uint64(0), false
	if t >= TypeCount {
		f.fail(RuleTensorType, CodeUnknownType, typeAt, "", "tensor %s has ggml type %d, which ggml does not know (it knows 0 to %d)",
			qname(), int32(t), TypeCount-1)
	} else if info := Types[t]; info.Removed {
		f.fail(RuleBlockSize, CodeRemovedType, typeAt, info.Hint, "tensor %s has type %s (%d), which ggml no longer reads", qname(), info.Name, t)
		if valid {
			size, sizeOK = t.ByteLen(p.dims[len(p.dims)-int(nd):])
		}
	} else if valid {
		size, sizeOK = p.tensorSize(qname, t, ne, typeAt)
	}

	if b.remain() < 8 {
		p.truncated(RuleTensorInfoRead, b.off(), "the data offset of tensor %s is cut off by the end of the file", qname())
		return
	}
	off := b.u64()
	p.nameEnds = append(p.nameEnds, len(p.nameBuf))
	p.sizeKnown = p.sizeKnown && sizeOK
	f.Tensors = append(f.Tensors, TensorInfo{Type: t, Offset: off, Size: size, SizeOK: sizeOK, HeaderOffset: at,
		Dims: p.dims[len(p.dims)-int(nd):]})
}

func (p *parser) cName(j int32) []byte {
	start := 0
	if j > 0 {
		start = p.nameEnds[j-1]
	}
	name := p.nameBuf[start:p.nameEnds[j]]
	if z := bytes.IndexByte(name, 0); z >= 0 {
		name = name[:z]
	}
	return name[:min(len(name), MaxNameLength)]
}

// elementsTooMany is gguf.cpp's test that a tensor's element count (all dims >= 0) stays below
// INT64_MAX, evaluated without its guard that the (wrapping) product is positive.
func elementsTooMany(ne [MaxDims]int64) bool {
	for _, d := range ne {
		if d == 0 {
			return false
		}
	}
	const m = math.MaxInt64
	return m/ne[1] <= ne[0] || m/ne[2] <= ne[0]*ne[1] || m/ne[3] <= ne[0]*ne[1]*ne[2]
}

// tensorSize checks a known type's block size and byte size as gguf.cpp does, and returns the byte
// length (ggml_nbytes). ne holds no negative dimension and fewer than 2^63 elements.
func (p *parser) tensorSize(qname func() string, t GGMLType, ne [MaxDims]int64, typeAt int64) (uint64, bool) {
	f := p.f
	info := Types[t]
	blck, ts := info.BlockSize, info.TypeSize
	if uint64(ne[0])%blck != 0 {
		f.fail(RuleBlockSize, CodePartialBlock, typeAt, "", "tensor %s of type %s has rows of %d elements, not a multiple of the block size %d",
			qname(), info.Name, ne[0], blck)
		return 0, false
	}
	nel := uint64(ne[0] * ne[1] * ne[2] * ne[3])
	if nel/blck > math.MaxUint64/ts {
		f.fail(RuleTensorBytes, CodeShapeOverflow, typeAt, "", "tensor %s of type %s with %d elements needs more than 2^64 bytes", qname(), info.Name, nel)
		return 0, false
	}
	if nel == 0 {
		return 0, true
	}
	// ggml_nbytes computes ne[0]*type_size before dividing by the block size, which can wrap.
	if hi, _ := bits.Mul64(uint64(ne[0]), ts); hi != 0 && blck > 1 {
		f.overflow(RuleTensorBytes, typeAt, "tensor %s of type %s needs %d bytes; ggml's size arithmetic overflows", qname(), info.Name, nel/blck*ts)
		return 0, false
	}
	return nel / blck * ts, true
}

// layout checks where the data section starts and that the tensors' data follow each other as gguf.cpp
// requires and lie within the file as llama.cpp's loader requires; it notes bytes after the data.
func (p *parser) layout() {
	f := p.f
	align := f.Alignment
	f.DataOffset = f.HeaderEnd
	if len(f.Tensors) > 0 {
		f.DataOffset = int64(padUp(uint64(f.HeaderEnd), align))
		if f.DataOffset > f.Size {
			f.fail(RuleDataStart, CodeDataStartBeyond, f.HeaderEnd, hintTruncated,
				"the data section would start at byte %d (the header ends at %d, padded to %d), past the end of the file (%d bytes)",
				f.DataOffset, f.HeaderEnd, align, f.Size)
		}
	}
	if !p.sizeKnown {
		return
	}
	expected, placed := uint64(0), true
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Offset != expected {
			p.offsetFinding(i, expected)
			placed = false
		}
		// As in gguf.cpp, a size within the alignment of 2^64 pads to a wrapped value; the bounds
		// check below rejects such a tensor.
		padded := padUp(t.Size, align)
		if t.Offset > math.MaxUint64-padded {
			f.fail(RuleDataSize, CodeShapeOverflow, t.HeaderOffset, "", "tensor %s (at data offset %d, %d bytes padded) ends past 2^64",
				quote(t.Name), t.Offset, padded)
			return
		}
		expected = t.Offset + padded
	}
	if placed {
		f.DataSize = expected
	}
	if p.bounds() && placed {
		end := padUp(uint64(f.DataOffset)+f.DataSize, align)
		if uint64(f.Size) > end {
			f.warn(CodeTrailingBytes, int64(end), "", "%d bytes follow the end of the data section (byte %d); llama.cpp ignores them",
				uint64(f.Size)-end, end)
		}
	}
}

// bounds is llama.cpp's loader check: every tensor's bytes lie within the file. It reports whether they do.
func (p *parser) bounds() bool {
	f := p.f
	var first *TensorInfo
	n, maxEnd := 0, uint64(0)
	wrapped := false
	for i := range f.Tensors {
		t := &f.Tensors[i]
		start, c1 := bits.Add64(uint64(f.DataOffset), t.Offset, 0)
		end, c2 := bits.Add64(start, t.Size, 0)
		if c1 == 0 && c2 == 0 && end <= uint64(f.Size) {
			continue
		}
		if first == nil {
			first = t
		}
		n++
		if c1 != 0 || c2 != 0 {
			wrapped = true
		} else {
			maxEnd = max(maxEnd, end)
		}
	}
	if first == nil {
		return f.DataOffset <= f.Size
	}
	msg := "tensor %s's data (%d bytes at byte %d) is not within the file (%d bytes)"
	args := []any{quote(first.Name), first.Size, uint64(f.DataOffset) + first.Offset, f.Size}
	if n > 1 {
		msg += "; %d tensors lie partly or wholly past the end"
		args = append(args, n)
	}
	if !wrapped {
		msg += ": %d bytes are missing"
		args = append(args, maxEnd-uint64(f.Size))
	}
	f.fail(RuleTensorBounds, CodeTruncatedData, f.Size, hintTruncated, msg, args...)
	return false
}

// offsetFinding explains why tensor i does not start at the expected data offset.
func (p *parser) offsetFinding(i int, expected uint64) {
	f := p.f
	t := &f.Tensors[i]
	q := quote(t.Name)
	const hint = "llama.cpp needs each tensor's data right after the previous one's, padded to the alignment; re-save the file with a GGUF writer"
	switch {
	case p.overlaps(i):
		f.fail(RuleTensorOffset, CodeOffsetOverlap, t.HeaderOffset, hint, "tensor %s (data offset %d, %d bytes) overlaps another tensor's data; expected at %d",
			q, t.Offset, t.Size, expected)
	case t.Offset%f.Alignment != 0:
		f.fail(RuleTensorOffset, CodeMisaligned, t.HeaderOffset, hint, "tensor %s starts at data offset %d, not a multiple of the alignment %d; expected at %d",
			q, t.Offset, f.Alignment, expected)
	case t.Offset > expected:
		f.fail(RuleTensorOffset, CodeOffsetGap, t.HeaderOffset, hint, "tensor %s starts at data offset %d, leaving %d unused bytes after the previous tensor (expected at %d)",
			q, t.Offset, t.Offset-expected, expected)
	default:
		f.fail(RuleTensorOffset, CodeTensorOffset, t.HeaderOffset, hint, "tensor %s starts at data offset %d, before the end of the previous tensor's data (expected at %d): the data are not in the order of the tensor infos",
			q, t.Offset, expected)
	}
}

// overlaps reports whether tensor i's bytes overlap another tensor's (empty tensors overlap nothing).
func (p *parser) overlaps(i int) bool {
	f := p.f
	t := &f.Tensors[i]
	if t.Size == 0 {
		return false
	}
	// Sort once by offset; a tensor overlaps another iff it overlaps a neighbour in that order or
	// lies inside a run that started earlier.
	if p.overlapping == nil {
		p.markOverlaps()
	}
	return p.overlapping[i]
}

func (p *parser) markOverlaps() {
	f := p.f
	idx := make([]int, len(f.Tensors))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return f.Tensors[idx[a]].Offset < f.Tensors[idx[b]].Offset })
	p.overlapping = make([]bool, len(f.Tensors))
	reach, owner := uint64(0), -1 // the furthest end so far and the tensor it belongs to
	for _, i := range idx {
		t := &f.Tensors[i]
		if t.Size == 0 {
			continue
		}
		if owner >= 0 && t.Offset < reach {
			p.overlapping[i], p.overlapping[owner] = true, true
		}
		if end := t.Offset + t.Size; owner < 0 || end > reach {
			reach, owner = end, i
		}
	}
}

// padUp rounds x up to a multiple of the power of two a, wrapping as GGML_PAD does.
func padUp(x, a uint64) uint64 { return (x + a - 1) &^ (a - 1) }

// nameSet finds repeated names in linear time without a string per name.
type nameSet struct {
	seed   maphash.Seed
	byHash map[uint64]int32
	byName map[string]int32 // names whose hash collides with a different name's
}

func (s *nameSet) init(n int) {
	s.seed = maphash.MakeSeed()
	s.byHash = make(map[uint64]int32, n)
}

// seen returns the index of an earlier name equal to the name with hash h, or -1 after recording that
// name as index i. same(j) reports whether name j is the name; name returns it.
func (s *nameSet) seen(h uint64, i int32, same func(j int32) bool, name func() string) int32 {
	j, ok := s.byHash[h]
	if !ok {
		s.byHash[h] = i
		return -1
	}
	if same(j) {
		return j
	}
	k := name()
	if j, ok := s.byName[k]; ok {
		return j
	}
	if s.byName == nil {
		s.byName = map[string]int32{}
	}
	s.byName[k] = i
	return -1
}
