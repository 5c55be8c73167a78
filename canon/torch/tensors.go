package torch

import (
	"math/bits"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/pickle"
)

// dtypeInfo is a storage's element type in safetensors' names and its size in bytes.
type dtypeInfo struct {
	name string
	size int64
}

// storageDTypes maps the legacy storage classes (torch.FloatStorage, …) to their element type.
var storageDTypes = map[string]dtypeInfo{
	"Double": {"F64", 8}, "Float": {"F32", 4}, "Half": {"F16", 2}, "BFloat16": {"BF16", 2},
	"Long": {"I64", 8}, "Int": {"I32", 4}, "Short": {"I16", 2}, "Char": {"I8", 1}, "Byte": {"U8", 1},
	"Bool": {"BOOL", 1}, "ComplexFloat": {"C64", 8}, "ComplexDouble": {"C128", 16},
	"QUInt8": {"QUINT8", 1}, "QInt8": {"QINT8", 1}, "QInt32": {"QINT32", 4}, "QUInt4x2": {"QUINT4X2", 1},
	"QUInt2x4": {"QUINT2X4", 1},
}

// torchDTypes maps torch's dtype globals (torch.float32, …) to their element type.
var torchDTypes = map[string]dtypeInfo{
	"float64": {"F64", 8}, "float32": {"F32", 4}, "float16": {"F16", 2}, "bfloat16": {"BF16", 2},
	"int64": {"I64", 8}, "int32": {"I32", 4}, "int16": {"I16", 2}, "int8": {"I8", 1}, "uint8": {"U8", 1},
	"bool": {"BOOL", 1}, "complex64": {"C64", 8}, "complex128": {"C128", 16}, "complex32": {"C32", 4},
	"uint16": {"U16", 2}, "uint32": {"U32", 4}, "uint64": {"U64", 8},
	"float8_e5m2": {"F8_E5M2", 1}, "float8_e4m3fn": {"F8_E4M3", 1}, "float8_e5m2fnuz": {"F8_E5M2FNUZ", 1},
	"float8_e4m3fnuz": {"F8_E4M3FNUZ", 1}, "float8_e8m0fnu": {"F8_E8M0", 1},
}

// storageType returns the element type of a storage class global.
func storageType(g *pickle.Object) (dtypeInfo, bool) {
	n := g.FullName()
	for _, p := range []string{"torch.cuda.", "torch."} {
		if s, ok := strings.CutPrefix(n, p); ok && strings.HasSuffix(s, "Storage") {
			d, ok := storageDTypes[strings.TrimSuffix(s, "Storage")]
			return d, ok
		}
	}
	return dtypeInfo{}, false
}

// storageRef is a persistent id as torch.save writes it: ('storage', class, key, location, numel
// [, view metadata]).
type storageRef struct {
	key     string
	dtype   dtypeInfo
	untyped bool
	numel   int64
	offset  int64 // legacy views: the view's offset into its root storage, in elements
	nbytes  int64 // numel × the storage class's element size, as torch computes it; -1 when no int64
}

func parseStorageRef(o *pickle.Object) (storageRef, bool) {
	if o == nil || o.Kind != pickle.Persistent || o.PID == nil || o.PID.Kind != pickle.Tuple || len(o.PID.Items) < 5 {
		return storageRef{}, false
	}
	it := o.PID.Items
	var s storageRef
	var ok bool
	if s.key, ok = it[2].Text(); !ok {
		if it[2].Kind != pickle.Int {
			return s, false
		}
		s.key = strconv.FormatInt(it[2].Int, 10)
	}
	if n := it[1].FullName(); n == "torch.storage.UntypedStorage" || n == "torch.UntypedStorage" {
		s.dtype, s.untyped = dtypeInfo{"U8", 1}, true
	} else if s.dtype, ok = storageType(it[1]); !ok {
		return s, false
	}
	if it[4].Kind == pickle.Int {
		s.numel = it[4].Int
	}
	if hi, lo := bits.Mul64(uint64(s.numel), uint64(s.dtype.size)); it[4].Kind == pickle.Int && s.numel >= 0 && hi == 0 && lo < 1<<63 {
		s.nbytes = int64(lo)
	} else {
		s.nbytes = -1
	}
	if len(it) > 5 && it[5].Kind == pickle.Tuple && len(it[5].Items) == 3 && it[5].Items[1].Kind == pickle.Int {
		s.offset = it[5].Items[1].Int
	}
	return s, true
}

// walker turns an object tree into tensors and metadata.
type walker struct {
	f        *File
	entry    string
	onPath   map[*pickle.Object]bool
	refs     map[string]storageRef // storage key → what the pickle says of it
	refOrder []string
	deep     bool
	budget   int  // visits left: a tree that shares values through the memo is walked within it
	full     bool // the walk stopped: its budget or the file's is spent
	// pathBytes is how many bytes of paths the walk may build (most are dropped at once)
	pathBytes int64
}

// maxVisits is how many values the walk for tensors visits at most, counting a value shared
// through the memo once per path to it.
const maxVisits = 1 << 22

// maxMetadata is the most metadata entries a file gives.
const maxMetadata = 10000

func newWalker(f *File, entry string) *walker {
	return &walker{f: f, entry: entry, onPath: map[*pickle.Object]bool{}, refs: map[string]storageRef{}, budget: maxVisits,
		pathBytes: 32<<20 + 8*min(f.Size, 1<<58)}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func dictLike(o *pickle.Object) bool {
	return o != nil && (o.Kind == pickle.Dict || (o.Kind == pickle.Call && len(o.Keys) > 0) ||
		o.IsCallOf("collections.OrderedDict") || o.IsCallOf("collections.Counter"))
}

// root walks the pickle's root, unwrapping a top-level state_dict as convert.py and kohya do.
func (w *walker) root(o *pickle.Object) {
	if dictLike(o) {
		for i, k := range o.Keys {
			if s, _ := k.Text(); s == "state_dict" && dictLike(o.Vals[i]) {
				w.walk("", o.Vals[i], 1)
				for j, k2 := range o.Keys {
					if j != i {
						w.walk(keyName(k2, j), o.Vals[j], 1)
					}
				}
				return
			}
		}
	}
	w.walk("", o, 0)
}

func keyName(k *pickle.Object, i int) string {
	if s, ok := k.Text(); ok {
		return s
	}
	if k.Kind == pickle.Int {
		return strconv.FormatInt(k.Int, 10)
	}
	return "<key " + strconv.Itoa(i) + ">"
}

var rebuilds = map[string]bool{
	"torch._utils._rebuild_tensor": true, "torch._utils._rebuild_tensor_v2": true, "torch._utils._rebuild_tensor_v3": true,
}

var parameters = map[string]bool{
	"torch._utils._rebuild_parameter": true, "torch._utils._rebuild_parameter_with_state": true,
	"torch.nn.parameter.Parameter": true,
}

func (w *walker) walk(path string, o *pickle.Object, depth int) {
	if o == nil {
		return
	}
	if depth > MaxDepth {
		if !w.deep {
			w.deep = true
			w.f.add(finding.CodeTooDeep, finding.SevWarning, o.Offset, w.entry, "the object tree nests deeper than %d levels; what lies deeper is not listed", MaxDepth)
		}
		return
	}
	if w.onPath[o] {
		return
	}
	// A visit costs its items and the path it builds: a tree that shares long keys through the memo
	// makes long paths on every path to a value.
	w.pathBytes -= int64(len(path))
	if w.budget -= 1 + len(o.Items); w.budget < 0 || w.pathBytes < 0 {
		w.tooLarge(o)
		return
	}
	w.onPath[o] = true
	defer delete(w.onPath, o)
	switch {
	case o.Kind == pickle.Call && o.Func != nil && rebuilds[o.Func.FullName()]:
		w.tensor(path, o)
	case o.Kind == pickle.Call && o.Func != nil && parameters[o.Func.FullName()] && o.Args != nil && len(o.Args.Items) > 0:
		w.walk(path, o.Args.Items[0], depth+1)
	case o.IsCallOf("torch._tensor._rebuild_from_type_v2") && o.Args != nil && len(o.Args.Items) >= 3:
		inner := &pickle.Object{Kind: pickle.Call, Offset: o.Offset, Func: o.Args.Items[0], Args: o.Args.Items[2]}
		w.walk(path, inner, depth+1)
	case o.Kind == pickle.Call && strings.HasPrefix(o.Func.FullName(), "torch._utils._rebuild_"):
		w.f.add(finding.CodeUnlistedTensor, finding.SevWarning, o.Offset, w.entry, "%s is a tensor of a kind stdiff does not list (%s)", orRoot(path), o.Func.FullName())
	case dictLike(o):
		for i, k := range o.Keys {
			w.walk(join(path, keyName(k, i)), o.Vals[i], depth+1)
		}
	case (o.Kind == pickle.List || o.Kind == pickle.Tuple) && !scalars(o.Items):
		for i, it := range o.Items {
			w.walk(join(path, strconv.Itoa(i)), it, depth+1)
		}
	default:
		if path != "" && len(w.f.Metadata) < maxMetadata {
			v := repr(o, 0)
			if w.keep(o, 64+len(path)+len(v)) {
				w.f.Metadata = append(w.f.Metadata, Meta{Key: path, Value: v})
			}
		}
	}
}

// tooLarge notes, once, that the walk stopped: the tree has more values than it visits, or what it
// lists (names, values) is over the file's budget.
func (w *walker) tooLarge(o *pickle.Object) {
	if w.full {
		return
	}
	w.full, w.budget = true, -1
	w.f.add(finding.CodeTreeTooLarge, finding.SevWarning, o.Offset, w.entry, "the object tree has more values (shared through the memo) or longer names than stdiff lists within its budget; what lies beyond is not listed")
}

// keep spends n bytes of the file's budget on what the walk lists; false when it is spent.
func (w *walker) keep(o *pickle.Object, n int) bool {
	if w.full || !w.f.listBudget.Spend(int64(n)) || !w.f.budget.Spend(int64(n)) {
		w.tooLarge(o)
		return false
	}
	return true
}

func orRoot(path string) string {
	if path == "" {
		return "the root object"
	}
	return path
}

func scalars(items []*pickle.Object) bool {
	for _, it := range items {
		switch it.Kind {
		case pickle.None, pickle.Bool, pickle.Int, pickle.Float, pickle.String, pickle.Bytes:
		default:
			return false
		}
	}
	return true
}

// repr renders a value that is not a tensor, at most about 200 bytes.
func repr(o *pickle.Object, depth int) string {
	const maxLen = 200
	cut := func(s string) string {
		if len(s) > maxLen {
			return s[:maxLen] + "…"
		}
		return s
	}
	if depth > 3 {
		return "…"
	}
	switch o.Kind {
	case pickle.None:
		return "None"
	case pickle.Bool:
		if o.Int != 0 {
			return "True"
		}
		return "False"
	case pickle.Int:
		if o.BigInt != "" {
			return cut(o.BigInt)
		}
		return strconv.FormatInt(o.Int, 10)
	case pickle.Float:
		return strconv.FormatFloat(o.Float, 'g', -1, 64)
	case pickle.String:
		return cut(o.Str)
	case pickle.Bytes:
		return cut(strconv.Quote(o.Str))
	case pickle.Tuple, pickle.List, pickle.Set:
		var sb strings.Builder
		open, end := "(", ")"
		if o.Kind == pickle.List {
			open, end = "[", "]"
		} else if o.Kind == pickle.Set {
			open, end = "{", "}"
		}
		sb.WriteString(open)
		for i, it := range o.Items {
			if i > 0 {
				sb.WriteString(", ")
			}
			if sb.Len() > maxLen {
				sb.WriteString("…")
				break
			}
			sb.WriteString(repr(it, depth+1))
		}
		sb.WriteString(end)
		return sb.String()
	case pickle.Global:
		return o.FullName()
	case pickle.Call:
		if o.Func != nil {
			return cut(o.Func.FullName() + "(…)")
		}
	case pickle.Dict:
		return "{…}"
	case pickle.Persistent:
		return "<storage>"
	}
	return "…"
}

func ints(o *pickle.Object) ([]int64, bool) {
	if o != nil && o.Kind == pickle.Call && o.IsCallOf("torch.Size") && o.Args != nil && len(o.Args.Items) == 1 {
		o = o.Args.Items[0]
	}
	if o == nil || (o.Kind != pickle.Tuple && o.Kind != pickle.List) || len(o.Items) > MaxDims {
		return nil, false
	}
	out := make([]int64, len(o.Items))
	for i, it := range o.Items {
		if it.Kind != pickle.Int || it.BigInt != "" {
			return nil, false
		}
		out[i] = it.Int
	}
	return out, true
}

// tensor records a call of a rebuild function.
func (w *walker) tensor(path string, o *pickle.Object) {
	a := o.Args
	bad := func(what string) {
		w.f.add(finding.CodeUnlistedTensor, finding.SevWarning, o.Offset, w.entry, "%s: %s has %s", orRoot(path), o.Func.FullName(), what)
	}
	if a == nil || a.Kind != pickle.Tuple || len(a.Items) < 4 {
		bad("too few arguments")
		return
	}
	ref, ok := parseStorageRef(a.Items[0])
	if !ok {
		bad("a storage that is not a torch.save persistent id")
		return
	}
	off := a.Items[1]
	shape, ok1 := ints(a.Items[2])
	stride, ok2 := ints(a.Items[3])
	if off.Kind != pickle.Int || off.Int < 0 || !ok1 || !ok2 || len(shape) != len(stride) {
		bad("a storage offset, shape or stride that is not integers")
		return
	}
	dt := ref.dtype
	if o.Func.Name == "_rebuild_tensor_v3" && len(a.Items) > 6 && a.Items[6].Kind == pickle.Global {
		if d, ok := torchDTypes[strings.TrimPrefix(a.Items[6].FullName(), "torch.")]; ok {
			dt = d
		}
	}
	if ref.untyped && dt.size > 1 {
		ref.numel /= dt.size // an untyped storage counts bytes
	}
	if prev, ok := w.refs[ref.key]; !ok {
		w.refs[ref.key] = storageRefWith(ref, dt)
		w.refOrder = append(w.refOrder, ref.key)
	} else if prev.dtype.name != dt.name {
		w.f.add(finding.CodeStorageSize, finding.SevWarning, o.Offset, w.entry, "%s views storage %s as %s, another tensor as %s", orRoot(path), ref.key, dt.name, prev.dtype.name)
	}
	t := Tensor{Name: path, DType: dt.name, Shape: shape, Stride: stride, Storage: ref.key, StorageOffset: ref.offset + off.Int, Offset: -1,
		BigEndian: w.f.ByteOrder == "big"}
	t.Contiguous = contiguous(shape, stride)
	extent, ok := extentOf(shape, stride)
	if !ok {
		bad("a shape and stride whose extent overflows")
		return
	}
	hi, c := bits.Mul64(uint64(extent), uint64(dt.size))
	if hi != 0 || c > 1<<62 {
		bad("a size that overflows")
		return
	}
	t.Size = int64(c)
	if !w.keep(o, 256+len(path)+32*len(shape)) {
		return
	}
	if !t.Contiguous {
		w.f.add(finding.CodeNonContiguous, finding.SevInfo, o.Offset, w.entry, "%s has strides %v, not row-major for shape %v", orRoot(path), stride, shape)
	}
	w.f.Tensors = append(w.f.Tensors, t)
}

func storageRefWith(r storageRef, d dtypeInfo) storageRef { r.dtype = d; return r }

func contiguous(shape, stride []int64) bool {
	want := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] != 1 && stride[i] != want {
			return false
		}
		want *= shape[i]
	}
	return true
}

// extentOf is how many elements of its storage a view reaches: 1 + Σ (shape[i]-1)·stride[i], 0
// for an empty tensor.
func extentOf(shape, stride []int64) (int64, bool) {
	e := uint64(1)
	for i := range shape {
		if shape[i] < 0 || stride[i] < 0 {
			return 0, false
		}
		if shape[i] == 0 {
			return 0, true
		}
	}
	for i := range shape {
		hi, p := bits.Mul64(uint64(shape[i]-1), uint64(stride[i]))
		if hi != 0 || p > 1<<62 {
			return 0, false
		}
		if e += p; e > 1<<62 {
			return 0, false
		}
	}
	return int64(e), true
}

// place gives tensors their file offsets from their storages and checks each lies within its
// storage.
func (f *File) place(entry string) {
	by := map[string]*Storage{}
	for i := range f.Storages {
		by[f.Storages[i].Key] = &f.Storages[i]
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		s := by[t.Storage]
		if s == nil {
			continue
		}
		es := int64(1)
		if d, ok := sizeOf(s.DType); ok {
			es = d
		}
		start := t.StorageOffset * es
		if t.StorageOffset > s.Numel || start+t.Size > s.Size || start < 0 {
			f.add(finding.CodeTensorBounds, finding.SevError, s.Offset, entry, "%s reaches byte %d of storage %s, which has %d bytes", orRoot(t.Name), start+t.Size, s.Key, s.Size)
			continue
		}
		if s.Offset >= 0 {
			t.Offset = s.Offset + start
		}
	}
}

func sizeOf(name string) (int64, bool) {
	for _, d := range storageDTypes {
		if d.name == name {
			return d.size, true
		}
	}
	for _, d := range torchDTypes {
		if d.name == name {
			return d.size, true
		}
	}
	return 0, false
}
