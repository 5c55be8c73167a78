package gguf_test

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
)

// edgeCase is one crafted file. diverges, when set, says why stdiff's verdict may differ from
// gguf.cpp's: the file is accepted (or rejected on another rule) by gguf.cpp only through integer
// wrap-around, and stdiff rejects it with an overflow verdict.
type edgeCase struct {
	name     string
	b        []byte
	diverges string
}

const (
	wrapElems = "the element count is 2^63 or more; gguf.cpp's product wraps to zero or below and it skips its element check"
	wrapBytes = "ggml_nbytes computes ne[0]*type_size before dividing by the block size, which wraps"
)

// base is a small valid file: two pairs, two tensors.
func base() ggufw.File {
	return ggufw.File{
		KVs: []ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("llama")}, {Key: "general.name", Val: ggufw.Str("tiny")}},
		Tensors: []ggufw.Tensor{
			{Name: "a", Type: gguf.TypeF32, Dims: []int64{4, 2}},
			{Name: "b", Type: gguf.TypeQ4_0, Dims: []int64{32}},
		},
	}
}

// withKVs is base with these pairs instead.
func withKVs(kvs ...ggufw.KV) ggufw.File {
	f := base()
	f.KVs = kvs
	return f
}

// withTensors is base with these tensors instead.
func withTensors(ts ...ggufw.Tensor) ggufw.File {
	f := base()
	f.Tensors = ts
	return f
}

func kv(key string, v ggufw.Val) ggufw.KV { return ggufw.KV{Key: key, Val: v} }

func t1(name string, typ gguf.GGMLType, dims ...int64) ggufw.Tensor {
	return ggufw.Tensor{Name: name, Type: typ, Dims: dims}
}

// hdr starts a file by hand: magic, version and counts.
func hdr(version uint32, nTensors, nKV int64) *ggufw.Writer {
	w := &ggufw.Writer{}
	w.Raw([]byte("GGUF"))
	w.U32(version)
	w.U64(uint64(nTensors))
	w.U64(uint64(nKV))
	return w
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// every known ggml type, one tensor of one block each.
func allTypes() ggufw.File {
	var ts []ggufw.Tensor
	for i, info := range gguf.Types {
		if info.Removed {
			continue
		}
		ts = append(ts, t1("t."+info.Name, gguf.GGMLType(i), int64(info.BlockSize), 2))
	}
	return withTensors(ts...)
}

func allValueTypes() ggufw.File {
	return withKVs(
		kv("u8", ggufw.U8(200)), kv("i8", ggufw.I8(-5)), kv("u16", ggufw.U16(60000)), kv("i16", ggufw.I16(-300)),
		kv("u32", ggufw.U32(4000000000)), kv("i32", ggufw.I32(-70000)), kv("f32", ggufw.F32(1.5)),
		kv("bool", ggufw.Bool(true)), kv("str", ggufw.Str("héllo")), kv("u64", ggufw.U64(math.MaxUint64)),
		kv("i64", ggufw.I64(math.MinInt64)), kv("f64", ggufw.F64(-2.25)))
}

func allArrayTypes() ggufw.File {
	var kvs []ggufw.KV
	for t := gguf.ValueType(0); t <= gguf.ValFloat64; t++ {
		switch t {
		case gguf.ValArray:
			continue
		case gguf.ValString:
			kvs = append(kvs, kv("arr.string", ggufw.Strs("a", "", "ccc")))
		default:
			kvs = append(kvs, kv("arr."+t.String(), ggufw.Array(uint32(t), 3, make([]byte, 3*t.Size()))))
		}
	}
	return withKVs(kvs...)
}

func edgeCases() []edgeCase {
	var cs []edgeCase
	add := func(name string, b []byte) { cs = append(cs, edgeCase{name: name, b: b}) }
	addDiv := func(name, why string, b []byte) { cs = append(cs, edgeCase{name: name, b: b, diverges: why}) }
	build := func(name string, f ggufw.File) { add(name, f.Build()) }

	// --- the file as a whole, the magic
	build("ok-base", base())
	add("empty", nil)
	add("three-bytes", []byte("GGU"))
	add("bad-magic", cat([]byte("GGUX"), base().Build()[4:]))
	add("lower-magic", cat([]byte("gguf"), base().Build()[4:]))
	add("ggjt-v3", cat([]byte("tjgg"), le32(3), make([]byte, 64)))
	add("ggjt-v1", cat([]byte("tjgg"), le32(1), make([]byte, 64)))
	add("ggmf-v1", cat([]byte("fmgg"), le32(1), make([]byte, 64)))
	add("ggml-unversioned", cat([]byte("lmgg"), make([]byte, 64)))
	add("lfs-pointer", []byte("version https://git-lfs.github.com/spec/v1\noid sha256:0123\nsize 123\n"))
	add("html", []byte("<!DOCTYPE html><html><body>not found</body></html>"))
	add("safetensors", cat(le64(2), []byte("{}")))
	add("magic-only", []byte("GGUF"))
	add("version-cut", []byte("GGUF\x03\x00"))

	// --- versions
	for _, v := range []uint32{0, 1, 4, 256, 0x00010000, 0xFFFF0000, 0x01000000, math.MaxUint32} {
		b := base().Build()
		binary.LittleEndian.PutUint32(b[4:], v)
		add("version-"+itoa(int64(v)), b)
	}
	v2 := base()
	v2.Version = 2
	build("ok-version-2", v2)
	be := base()
	be.BigEndian = true
	build("big-endian-v3", be)
	be.Version = 2
	build("big-endian-v2", be)
	add("v1-layout", cat([]byte("GGUF"), le32(1), le32(0), le32(1), le32(1), []byte("k"), le32(4), le32(7)))

	// --- counts
	add("counts-cut", []byte("GGUF\x03\x00\x00\x00"))
	add("tensor-count-cut", cat([]byte("GGUF"), le32(3), le32(0)))
	add("kv-count-cut", cat([]byte("GGUF"), le32(3), le64(0), le32(0)))
	add("tensor-count-negative", hdr(3, -1, 0).B)
	add("tensor-count-over-limit", hdr(3, gguf.MaxTensorCount+1, 0).B)
	add("tensor-count-at-limit", hdr(3, gguf.MaxTensorCount, 0).B)
	add("tensor-count-2^40", hdr(3, 1<<40, 0).B)
	add("tensor-count-min-int64", hdr(3, math.MinInt64, 0).B)
	add("kv-count-negative", hdr(3, 0, -1).B)
	add("kv-count-over-limit", hdr(3, 0, gguf.MaxKVCount+1).B)
	add("kv-count-at-limit", hdr(3, 0, gguf.MaxKVCount).B)
	add("kv-count-2^60", hdr(3, 0, 1<<60).B)
	add("both-counts-bad", hdr(3, -1, -1).B)
	add("ok-no-tensors-no-kvs", hdr(3, 0, 0).B)
	add("ok-no-tensors-in-padding", cat(hdr(3, 0, 0).B, []byte("padding!")))
	add("ok-no-tensors-trailing", cat(hdr(3, 0, 0).B, []byte("trailing bytes past the padding")))
	add("ok-no-tensors-kvs", withTensors().Build())
	kvsOnly := withTensors()
	kvsOnly.NoHeaderPad = true
	build("ok-no-tensors-unpadded", kvsOnly)
	add("kv-count-more-than-pairs", func() []byte { b := base().Build(); b[16] = 3; return b }())
	add("tensor-count-more-than-infos", func() []byte { b := base().Build(); b[8] = 3; return b }())
	add("ok-tensor-count-fewer-than-infos", func() []byte { b := base().Build(); b[8] = 1; return b }())

	// --- keys
	build("key-empty", withKVs(kv("", ggufw.U32(1))))
	build("key-empty-second", withKVs(kv("a", ggufw.U32(1)), kv("", ggufw.U32(1))))
	add("key-past-eof", cat(hdr(3, 0, 1).B, le64(100), []byte("abc")))
	add("key-over-1GiB", cat(hdr(3, 0, 1).B, le64(gguf.MaxStringLength+1), []byte("abc")))
	add("key-exactly-1GiB", cat(hdr(3, 0, 1).B, le64(gguf.MaxStringLength), []byte("abc")))
	add("key-length-max", cat(hdr(3, 0, 1).B, le64(math.MaxUint64), []byte("abc")))
	add("key-length-cut", cat(hdr(3, 0, 1).B, []byte{1, 0, 0}))
	build("key-duplicate", withKVs(kv("a", ggufw.U32(1)), kv("b", ggufw.U32(2)), kv("a", ggufw.Str("x"))))
	build("ok-key-nul-differs-after", withKVs(kv("a\x00x", ggufw.U32(1)), kv("a\x00y", ggufw.U32(2))))
	build("ok-key-nul-suffix", withKVs(kv("a", ggufw.U32(1)), kv("a\x00", ggufw.U32(2))))
	build("ok-key-invalid-utf8", withKVs(kv("k\xff\xfe", ggufw.U32(1))))
	build("ok-key-control-chars", withKVs(kv("k\n\t\x1b[31m", ggufw.U32(1))))
	build("key-duplicate-then-truncated", func() ggufw.File {
		f := withKVs(kv("a", ggufw.U32(1)), kv("a", ggufw.U32(1)), kv("c", ggufw.Raw(99, nil)))
		return f
	}())
	build("key-empty-then-bad-type", withKVs(kv("", ggufw.U32(1)), kv("c", ggufw.Raw(99, nil))))

	// --- value types
	build("ok-all-value-types", allValueTypes())
	build("ok-all-array-types", allArrayTypes())
	build("ok-empty-array", withKVs(kv("e", ggufw.Array(uint32(gguf.ValUint8), 0, nil))))
	build("ok-empty-string-array", withKVs(kv("e", ggufw.Strs())))
	build("ok-empty-string", withKVs(kv("e", ggufw.Str(""))))
	build("ok-bool-2", withKVs(kv("b", ggufw.BoolByte(2))))
	build("ok-bool-ff", withKVs(kv("b", ggufw.BoolByte(0xff))))
	build("ok-bool-array-odd", withKVs(kv("b", ggufw.Bools(0, 1, 7))))
	build("ok-string-invalid-utf8", withKVs(kv("s", ggufw.Str("\xc3\x28 \xed\xa0\x80"))))
	build("ok-string-array-invalid-utf8", withKVs(kv("s", ggufw.Strs("ok", "\xff", "\xc0\xaf"))))
	build("ok-string-nul", withKVs(kv("s", ggufw.Str("a\x00b"))))
	for _, t := range []uint32{13, 100, 0x80000000, math.MaxUint32} {
		build("value-type-"+itoa(int64(t)), withKVs(kv("k", ggufw.Raw(t, le64(0)))))
	}
	build("value-type-array-as-scalar-of-array", withKVs(kv("k", ggufw.Array(uint32(gguf.ValArray), 0, nil))))
	build("nested-array", withKVs(kv("k", ggufw.Array(uint32(gguf.ValArray), 1, cat(le32(uint32(gguf.ValUint8)), le64(1), []byte{1})))))
	build("array-elem-type-13", withKVs(kv("k", ggufw.Array(13, 0, nil))))
	build("array-elem-type-negative", withKVs(kv("k", ggufw.Array(math.MaxUint32, 0, nil))))
	add("value-type-cut", cat(hdr(3, 0, 1).B, le64(1), []byte("k"), []byte{4, 0}))
	add("value-type-missing", cat(hdr(3, 0, 1).B, le64(1), []byte("k")))
	add("array-elem-type-cut", cat(hdr(3, 0, 1).B, le64(1), []byte("k"), le32(9), []byte{1}))
	add("array-count-cut", cat(hdr(3, 0, 1).B, le64(1), []byte("k"), le32(9), le32(0), []byte{1, 0}))
	add("bad-elem-type-count-cut", cat(hdr(3, 0, 1).B, le64(1), []byte("k"), le32(9), le32(99), []byte{1, 0}))
	build("array-over-2^30", withKVs(kv("k", ggufw.Array(uint32(gguf.ValUint8), gguf.MaxArrayLength+1, make([]byte, 64)))))
	build("array-2^30-short", withKVs(kv("k", ggufw.Array(uint32(gguf.ValUint8), gguf.MaxArrayLength, make([]byte, 64)))))
	build("array-2^62", withKVs(kv("k", ggufw.Array(uint32(gguf.ValUint32), 1<<62, make([]byte, 64)))))
	build("array-count-max", withKVs(kv("k", ggufw.Array(uint32(gguf.ValString), math.MaxUint64, nil))))
	build("array-numbers-past-eof", withKVs(kv("k", ggufw.Array(uint32(gguf.ValUint64), 1000, make([]byte, 16)))))
	build("string-array-past-eof", withKVs(kv("k", ggufw.Array(uint32(gguf.ValString), 1000, cat(le64(1), []byte("x"))))))
	add("string-array-element-past-eof", cat(hdr(3, 0, 1).B, le64(1), []byte("k"), le32(9), le32(8), le64(2), le64(1), []byte("x"), le64(50), []byte("yyy"), make([]byte, 16)))
	add("string-array-element-over-1GiB", cat(hdr(3, 0, 1).B, le64(1), []byte("k"), le32(9), le32(8), le64(2), le64(gguf.MaxStringLength+1), make([]byte, 16)))
	add("string-value-over-1GiB", cat(hdr(3, 0, 1).B, le64(1), []byte("k"), le32(8), le64(gguf.MaxStringLength+1), make([]byte, 16)))
	add("string-value-past-eof", cat(hdr(3, 0, 1).B, le64(1), []byte("k"), le32(8), le64(17), make([]byte, 16)))
	add("ok-string-value-to-eof", cat(hdr(3, 0, 1).B, le64(1), []byte("k"), le32(8), le64(16), make([]byte, 16)))
	add("u64-value-cut", cat(hdr(3, 0, 1).B, le64(1), []byte("k"), le32(10), make([]byte, 7)))
	add("bool-value-missing", cat(hdr(3, 0, 1).B, le64(1), []byte("k"), le32(7)))

	// --- alignment
	a64 := base()
	a64.KVs = append(a64.KVs, kv(gguf.AlignmentKey, ggufw.U32(64)))
	build("ok-alignment-64", a64)
	a1 := base()
	a1.KVs = append(a1.KVs, kv(gguf.AlignmentKey, ggufw.U32(1)))
	build("ok-alignment-1", a1)
	for _, a := range []uint32{0, 3, 48, 0x80000001} {
		f := base()
		f.Alignment = 32
		f.KVs = append(f.KVs, kv(gguf.AlignmentKey, ggufw.U32(a)))
		build("alignment-"+itoa(int64(a)), f)
	}
	for name, v := range map[string]ggufw.Val{"u64": ggufw.U64(32), "i32": ggufw.I32(32), "u16": ggufw.U16(32),
		"string": ggufw.Str("32"), "array": ggufw.U32s(32), "empty-array": ggufw.U32s()} {
		f := base()
		f.Alignment = 32
		f.KVs = append(f.KVs, kv(gguf.AlignmentKey, v))
		build("alignment-type-"+name, f)
	}
	build("alignment-nul-key-first", func() ggufw.File {
		f := base()
		f.Alignment = 32
		f.KVs = append(f.KVs, kv(gguf.AlignmentKey+"\x00x", ggufw.U32(48)), kv(gguf.AlignmentKey, ggufw.U32(32)))
		return f
	}())
	build("alignment-nul-key-string-first", func() ggufw.File {
		f := base()
		f.Alignment = 32
		f.KVs = append(f.KVs, kv(gguf.AlignmentKey+"\x00", ggufw.Str("x")), kv(gguf.AlignmentKey, ggufw.U32(32)))
		return f
	}())
	build("ok-alignment-key-suffix", func() ggufw.File {
		f := base()
		f.KVs = append(f.KVs, kv(gguf.AlignmentKey+"x", ggufw.Str("x")))
		return f
	}())
	build("alignment-duplicate", func() ggufw.File {
		f := base()
		f.KVs = append(f.KVs, kv(gguf.AlignmentKey, ggufw.U32(32)), kv(gguf.AlignmentKey, ggufw.U32(64)))
		return f
	}())
	huge := base()
	huge.Alignment = 32
	huge.KVs = append(huge.KVs, kv(gguf.AlignmentKey, ggufw.U32(1<<31)))
	build("alignment-2^31-data-start", huge)
	hugeNo := withTensors()
	hugeNo.Alignment = 32
	hugeNo.KVs = append(hugeNo.KVs, kv(gguf.AlignmentKey, ggufw.U32(1<<31)))
	build("ok-alignment-2^31-no-tensors", hugeNo)
	build("alignment-bad-and-offsets-bad", func() ggufw.File {
		f := base()
		f.Alignment = 32
		f.KVs = append(f.KVs, kv(gguf.AlignmentKey, ggufw.U32(3)))
		f.Offsets = []uint64{0, 7}
		return f
	}())

	// --- tensor names
	build("ok-name-63", withTensors(t1(strings.Repeat("n", 63), gguf.TypeF32, 2)))
	build("name-64", withTensors(t1(strings.Repeat("n", 64), gguf.TypeF32, 2)))
	build("name-1000", withTensors(t1(strings.Repeat("n", 1000), gguf.TypeF32, 2)))
	build("ok-name-empty", withTensors(t1("", gguf.TypeF32, 2)))
	build("name-duplicate", withTensors(t1("a", gguf.TypeF32, 2), t1("b", gguf.TypeF32, 2), t1("a", gguf.TypeF32, 2)))
	build("name-duplicate-after-nul", withTensors(t1("a\x00x", gguf.TypeF32, 2), t1("a\x00y", gguf.TypeF32, 2)))
	build("name-duplicate-nul-suffix", withTensors(t1("a", gguf.TypeF32, 2), t1("a\x00", gguf.TypeF32, 2)))
	build("name-duplicate-empty", withTensors(t1("", gguf.TypeF32, 2), t1("\x00", gguf.TypeF32, 2)))
	build("ok-name-63-nul-tail", withTensors(t1("a\x00"+strings.Repeat("x", 61), gguf.TypeF32, 2), t1("a\x01", gguf.TypeF32, 2)))
	build("ok-name-invalid-utf8", withTensors(t1("t\xff", gguf.TypeF32, 2)))
	build("name-long-and-duplicate", withTensors(t1("a", gguf.TypeF32, 2), t1(strings.Repeat("a", 70), gguf.TypeF32, 2), t1("a", gguf.TypeF32, 2)))
	add("name-past-eof", cat(hdr(3, 1, 0).B, le64(10), []byte("abc")))
	add("name-over-1GiB", cat(hdr(3, 1, 0).B, le64(gguf.MaxStringLength+1), make([]byte, 32)))
	add("name-length-cut", cat(hdr(3, 1, 0).B, []byte{1, 0, 0, 0}))

	// --- dimensions
	build("ok-dims-0", withTensors(t1("s", gguf.TypeF32)))
	build("ok-dims-4", withTensors(t1("s", gguf.TypeF32, 2, 3, 4, 5)))
	build("dims-5", withTensors(t1("s", gguf.TypeF32, 2, 3, 4, 5, 6)))
	add("dims-max", cat(hdr(3, 1, 0).B, le64(1), []byte("s"), le32(math.MaxUint32), make([]byte, 64)))
	add("dims-count-cut", cat(hdr(3, 1, 0).B, le64(1), []byte("s"), []byte{1, 0}))
	add("dim-cut", cat(hdr(3, 1, 0).B, le64(1), []byte("s"), le32(2), le64(4), []byte{1, 0, 0}))
	build("dim-negative", withTensors(t1("s", gguf.TypeF32, -1)))
	build("dim-negative-second", withTensors(t1("s", gguf.TypeF32, 2, -2)))
	build("dim-min-int64", withTensors(t1("s", gguf.TypeF32, math.MinInt64)))
	add("dim-negative-then-eof", cat(hdr(3, 1, 0).B, le64(1), []byte("s"), le32(2), le64(math.MaxUint64)))
	build("ok-dim-zero", withTensors(t1("z", gguf.TypeF32, 0, 5), t1("y", gguf.TypeF32, 3)))
	build("ok-dim-zero-huge-other", withTensors(t1("z", gguf.TypeF32, 0, math.MaxInt64)))
	build("elements-int64-max", withTensors(t1("s", gguf.TypeI8, math.MaxInt64)))
	build("elements-int64-max-2d", withTensors(t1("s", gguf.TypeI8, 1, math.MaxInt64)))
	build("elements-2^62-f32", withTensors(t1("s", gguf.TypeF32, 1<<31, 1<<31)))
	build("elements-3d-over", withTensors(t1("s", gguf.TypeI8, 3, 1<<61, 1)))
	// gguf.cpp wraps: products that wrap to zero or below skip its element check
	addDiv("wrap-elements-2^63-f32", wrapElems, withTensors(t1("s", gguf.TypeF32, 1<<31, 1<<31, 2)).Build())
	addDiv("wrap-elements-2^64-f32", wrapElems, withTensors(t1("s", gguf.TypeF32, 1<<32, 1<<32)).Build())
	addDiv("wrap-elements-2^64-i8", wrapElems, withTensors(t1("s", gguf.TypeI8, 1<<32, 1<<32)).Build())
	addDiv("wrap-elements-2^63-i8", wrapElems, withTensors(t1("s", gguf.TypeI8, 1<<62, 2)).Build())
	addDiv("wrap-elements-2^64-q4_k", wrapElems, withTensors(t1("s", gguf.TypeQ4_K, 1<<32, 1<<32)).Build())
	addDiv("wrap-elements-2^64-4d", wrapElems, withTensors(t1("s", gguf.TypeF16, 1<<16, 1<<16, 1<<16, 1<<16)).Build())
	addDiv("wrap-elements-2^63-i8-3d", wrapElems, withTensors(t1("s", gguf.TypeI8, 1<<31, 1<<31, 2)).Build())
	addDiv("wrap-elements-2^64-i8-4d", wrapElems, withTensors(t1("s", gguf.TypeI8, 1<<16, 1<<16, 1<<16, 1<<16)).Build())
	addDiv("wrap-nbytes-q4_k", wrapBytes, withTensors(t1("s", gguf.TypeQ4_K, 1<<57)).Build())

	// --- types and blocks
	build("ok-all-types", allTypes())
	for _, t := range []uint32{4, 5, 31, 32, 33, 36, 37, 38} {
		build("type-removed-"+itoa(int64(t)), withTensors(t1("r", gguf.GGMLType(t), 32)))
	}
	for _, t := range []uint32{uint32(gguf.TypeCount), 100, math.MaxUint32} {
		build("type-"+itoa(int64(t)), withTensors(t1("u", gguf.GGMLType(t), 32)))
	}
	add("type-cut", cat(hdr(3, 1, 0).B, le64(1), []byte("s"), le32(1), le64(4), []byte{0, 0}))
	build("block-q4_0-33", withTensors(t1("q", gguf.TypeQ4_0, 33)))
	build("block-q4_k-32", withTensors(t1("q", gguf.TypeQ4_K, 32, 8)))
	build("ok-block-q4_k-second-dim", withTensors(t1("q", gguf.TypeQ4_K, 256, 3)))
	build("ok-block-q4_0-empty-row", withTensors(t1("q", gguf.TypeQ4_0, 0, 7)))
	build("block-nvfp4-32", withTensors(t1("q", gguf.TypeNVFP4, 32)))
	build("bytes-f32-2^62", withTensors(t1("s", gguf.TypeF32, 1<<62)))
	build("bytes-i64-2^61", withTensors(t1("s", gguf.TypeI64, 1<<61)))
	build("bytes-i64-near-2^64", withTensors(t1("s", gguf.TypeI64, 1<<61-1)))
	addDiv("wrap-nbytes-q8_0", wrapBytes, withTensors(t1("s", gguf.TypeQ8_0, 1<<59)).Build())
	build("negative-dim-and-bad-type", withTensors(t1("s", 99, -4)))
	add("offset-cut", cat(hdr(3, 1, 0).B, le64(1), []byte("s"), le32(1), le64(4), le32(0), []byte{0, 0}))

	// --- layout
	gap := base()
	gap.Offsets = []uint64{32, 64}
	build("offset-first-not-zero", gap)
	mis := base()
	mis.Offsets = []uint64{0, 33}
	build("offset-misaligned", mis)
	over := base()
	over.Offsets = []uint64{0, 16}
	build("offset-overlap", over)
	swap := base()
	swap.Tensors[1].Dims = []int64{64}
	swap.Offsets = []uint64{64, 0}
	build("offset-order-swapped", swap)
	gap2 := base()
	gap2.Offsets = []uint64{0, 64}
	build("offset-gap", gap2)
	build("offset-unpadded", func() ggufw.File {
		f := withTensors(t1("a", gguf.TypeF32, 3), t1("b", gguf.TypeF32, 3))
		f.Offsets = []uint64{0, 12}
		return f
	}())
	build("ok-zero-size-tensors", withTensors(t1("a", gguf.TypeF32, 0), t1("b", gguf.TypeF32, 0)))
	build("offset-zero-size-not-zero", func() ggufw.File {
		f := withTensors(t1("a", gguf.TypeF32, 0), t1("b", gguf.TypeF32, 0))
		f.Offsets = []uint64{0, 32}
		return f
	}())
	noPad := base()
	noPad.NoHeaderPad = true
	build("ok-header-unpadded", noPad)
	noPadT := noPad
	noPadT.Trailing = make([]byte, 64)
	build("ok-header-unpadded-trailing", noPadT)
	build("data-start-past-eof", func() ggufw.File {
		f := withTensors(t1("a", gguf.TypeF32, 0))
		f.NoHeaderPad = true
		return f
	}())
	lastNoPad := base()
	lastNoPad.NoLastPad = true
	build("ok-last-unpadded", lastNoPad)
	trail := base()
	trail.Trailing = []byte("extra bytes")
	build("ok-trailing-bytes", trail)
	full := base().Build()
	add("ok-data-truncated-last-pad-1", full[:len(full)-1])
	add("ok-data-truncated-last-pad", full[:len(full)-14])
	add("data-truncated-last-tensor", full[:len(full)-15])
	add("data-truncated-all", func() []byte {
		f := base()
		f.Tensors[0].NoData, f.Tensors[1].NoData = true, true
		f.Offsets = []uint64{0, 32}
		return f.Build()
	}())
	big := withTensors(t1("big", gguf.TypeF32, 1<<40))
	big.Tensors[0].NoData = true
	build("data-huge-tensor", big)
	build("data-size-overflow", func() ggufw.File {
		f := withTensors(t1("a", gguf.TypeF32, 1<<61), t1("b", gguf.TypeF32, 1<<61))
		f.Tensors[0].NoData, f.Tensors[1].NoData = true, true
		f.Offsets = []uint64{0, 1 << 63}
		return f
	}())
	build("data-padded-size-wraps", func() ggufw.File {
		f := withTensors(t1("a", gguf.TypeI64, 1<<61-1), t1("b", gguf.TypeF32, 4))
		f.Tensors[0].NoData = true
		f.Offsets = []uint64{0, 0}
		return f
	}())
	build("data-offset-beyond-and-huge", func() ggufw.File {
		f := withTensors(t1("a", gguf.TypeF32, 4), t1("b", gguf.TypeF32, 4))
		f.Offsets = []uint64{0, math.MaxUint64 - 15}
		return f
	}())

	// --- a header cut at every byte
	cut := ggufw.File{
		KVs:     []ggufw.KV{kv("s", ggufw.Str("ab")), kv("n", ggufw.U16(7)), kv("a", ggufw.Strs("x", "yz")), kv("f", ggufw.F32s(1))},
		Tensors: []ggufw.Tensor{t1("t", gguf.TypeF16, 2, 2), t1("u", gguf.TypeQ8_0, 32)},
	}
	whole := cut.Build()
	for i := 0; i < len(whole); i++ {
		add("cut-"+itoa(int64(i)), whole[:i])
	}
	add("ok-cut-whole", whole)
	return cs
}
