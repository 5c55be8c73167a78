// Package torchw writes small PyTorch checkpoints for tests: the zip format of torch.save and the
// legacy format, with the pickles torch.save writes (protocol 2, _rebuild_tensor_v2, legacy storage
// classes), and room for hostile pickles beside them; sharded checkpoints as save_pretrained writes
// them; and NumPy's .npy and .npz files. It is not a general pickle writer.
package torchw

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Tensor is one tensor: its name, dtype (safetensors' names), shape and little-endian bytes. A view
// (Stride set, or Offset) has its storage's bytes in Data instead, and reads its elements from Offset
// (in elements) with Stride, as PyTorch saves a slice or a transpose.
type Tensor struct {
	Name   string
	DType  string
	Shape  []uint64
	Data   []byte
	Offset uint64
	Stride []uint64
}

// Strided is t as a view of a larger storage: pad elements of other bytes, then t's elements in
// column-major (Fortran) order; the view has storage offset pad and the strides that read t's
// elements back in row-major order. Its values are t's.
func Strided(t Tensor, pad uint64) Tensor {
	es := uint64(storages[t.DType].size)
	n := uint64(1)
	stride := make([]uint64, len(t.Shape))
	for j, d := range t.Shape {
		stride[j], n = n, n*d
	}
	storage := bytes.Repeat([]byte{0xA5}, int((pad+n)*es))
	idx := make([]uint64, len(t.Shape))
	for e := uint64(0); e < n; e++ {
		rem, at := e, pad
		for j := len(t.Shape) - 1; j >= 0; j-- {
			idx[j], rem = rem%t.Shape[j], rem/t.Shape[j]
			at += idx[j] * stride[j]
		}
		copy(storage[at*es:(at+1)*es], t.Data[e*es:(e+1)*es])
	}
	return Tensor{Name: t.Name, DType: t.DType, Shape: t.Shape, Data: storage, Offset: pad, Stride: stride}
}

var storages = map[string]struct {
	class string
	size  int
}{
	"F64": {"DoubleStorage", 8}, "F32": {"FloatStorage", 4}, "F16": {"HalfStorage", 2}, "BF16": {"BFloat16Storage", 2},
	"I64": {"LongStorage", 8}, "I32": {"IntStorage", 4}, "I16": {"ShortStorage", 2}, "I8": {"CharStorage", 1},
	"U8": {"ByteStorage", 1}, "BOOL": {"BoolStorage", 1},
}

// Str is a pickle's BINUNICODE opcode for s.
func Str(s string) string {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(s)))
	return "X" + string(n[:]) + s
}

func integer(v uint64) string {
	if v < 256 {
		return "K" + string([]byte{byte(v)})
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(v))
	return "J" + string(b[:])
}

func tuple(vs []uint64) string {
	var sb strings.Builder
	sb.WriteString("(")
	for _, v := range vs {
		sb.WriteString(integer(v))
	}
	sb.WriteString("t")
	return sb.String()
}

// StateDict is the pickle torch.save writes for an OrderedDict of the tensors, the i-th on storage
// key "i", followed by the scalar metadata (integers) in meta.
func StateDict(ts []Tensor, meta ...string) string {
	var sb strings.Builder
	sb.WriteString("\x80\x02ccollections\nOrderedDict\n)R(")
	for i, t := range ts {
		st := storages[t.DType]
		n := uint64(len(t.Data) / st.size) // the storage's elements
		stride := t.Stride
		if stride == nil {
			stride = make([]uint64, len(t.Shape))
			acc := uint64(1)
			for j := len(t.Shape) - 1; j >= 0; j-- {
				stride[j], acc = acc, acc*t.Shape[j]
			}
		}
		sb.WriteString(Str(t.Name))
		sb.WriteString("ctorch._utils\n_rebuild_tensor_v2\n((" + Str("storage") + "ctorch\n" + st.class + "\n" +
			Str(strconv.Itoa(i)) + Str("cpu") + integer(n) + "tQ" + integer(t.Offset) + tuple(t.Shape) + tuple(stride) +
			"\x89ccollections\nOrderedDict\n)RtR")
	}
	for i := 0; i+1 < len(meta); i += 2 {
		v, _ := strconv.ParseUint(meta[i+1], 10, 31)
		sb.WriteString(Str(meta[i]) + integer(v))
	}
	sb.WriteString("u.")
	return sb.String()
}

// Call is a pickle (protocol 2) that calls module.name with one string argument: what a hostile
// __reduce__ makes torch.save write.
func Call(module, name, arg string) string {
	return "\x80\x02c" + module + "\n" + name + "\n" + Str(arg) + "\x85R."
}

// Zip is a torch.save archive under prefix: data.pkl, byteorder, the tensors' storages (stored, not
// aligned as PyTorch aligns them), version, and extra entries (name, content pairs under the prefix).
func Zip(prefix, dataPkl string, ts []Tensor, extra ...string) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	add := func(name, content string) {
		fw, _ := w.CreateHeader(&zip.FileHeader{Name: prefix + "/" + name, Method: zip.Store})
		fw.Write([]byte(content))
	}
	add("data.pkl", dataPkl)
	add("byteorder", "little")
	for i, t := range ts {
		add("data/"+strconv.Itoa(i), string(t.Data))
	}
	add("version", "3\n")
	for i := 0; i+1 < len(extra); i += 2 {
		add(extra[i], extra[i+1])
	}
	w.Close()
	return buf.Bytes()
}

// Legacy is torch.save's legacy format around the object pickle, with the tensors' storages.
func Legacy(object string, ts []Tensor) []byte {
	var b strings.Builder
	b.WriteString("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.")
	b.WriteString("\x80\x02M\xe9\x03.")
	b.WriteString("\x80\x02}(" + Str("protocol_version") + "M\xe9\x03" + Str("little_endian") + "\x88" + Str("type_sizes") + "}u.")
	b.WriteString(object)
	b.WriteString("\x80\x02](")
	for i := range ts {
		b.WriteString(Str(strconv.Itoa(i)))
	}
	b.WriteString("e.")
	for _, t := range ts {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(t.Data)/storages[t.DType].size))
		b.Write(n[:])
		b.Write(t.Data)
	}
	return []byte(b.String())
}

// Sharded is a sharded checkpoint as save_pretrained writes one without safetensors: the tensors
// split in n runs, in order, over pytorch_model-0000K-of-0000N.bin (each a torch.save zip archive of
// its state dict), and pytorch_model.bin.index.json, which maps each tensor to its shard. It maps each
// file's name to its bytes.
func Sharded(ts []Tensor, n int) map[string][]byte {
	files := map[string][]byte{}
	var index strings.Builder
	var total uint64
	per := (len(ts) + n - 1) / n
	for k := range n {
		name := fmt.Sprintf("pytorch_model-%05d-of-%05d.bin", k+1, n)
		part := ts[min(k*per, len(ts)):min((k+1)*per, len(ts))]
		files[name] = Zip(fmt.Sprintf("pytorch_model-%05d-of-%05d", k+1, n), StateDict(part), part)
		for _, t := range part {
			if index.Len() > 0 {
				index.WriteString(",\n")
			}
			fmt.Fprintf(&index, "    %q: %q", t.Name, name)
			size := uint64(storages[t.DType].size)
			for _, d := range t.Shape {
				size *= d
			}
			total += size
		}
	}
	files["pytorch_model.bin.index.json"] = fmt.Appendf(nil, "{\n  \"metadata\": {\"total_size\": %d},\n  \"weight_map\": {\n%s\n  }\n}\n", total, index.String())
	return files
}
