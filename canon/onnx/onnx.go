// Package onnx reads ONNX models from the protobuf wire format, without onnx or protobuf libraries
// and without loading the file: the model's facts (IR version, producer, opsets, graph inputs and
// outputs, operator counts) and every initializer — the graph's, sparse ones, Constant nodes' tensors
// and those of subgraphs, named by their path — with where its bytes are: in raw_data, in a typed
// field (float_data, int32_data, …) or in an external file.
//
// Reading walks the protobuf through a small window: no length read from the file is trusted before
// it is checked against the message it lies in, nesting is bounded (MaxDepth), and tensor bytes are
// never read. Check then says whether every initializer's data is complete and within its file, as
// onnx's loader needs; Data gives the tensors' bytes in row-major little-endian order, decoding typed
// fields, so that a model's content can be hashed and compared like any other format's.
//
// Most callers do not use this package directly: canon.Read calls Read for a file that starts as an
// ONNX model does.
package onnx

import (
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/finding"
)

// Limits on what a file may make Read keep.
const (
	// MaxDepth is how deep messages may nest (graphs in attributes of nodes of graphs…).
	MaxDepth = 64
	// MaxString is the longest name, key or value read; longer ones are an error.
	MaxString = 1 << 20
	// MaxDims is the most dimensions a tensor may have.
	MaxDims = 64
	// maxPieces is the most separately written elements a typed field may have (unpacked repeated
	// fields; writers pack them).
	maxPieces = 1 << 20
)

// DataType is TensorProto.DataType.
type DataType int32

// The data types of the current schema (onnx.proto).
const (
	Undefined      DataType = 0
	Float          DataType = 1
	Uint8          DataType = 2
	Int8           DataType = 3
	Uint16         DataType = 4
	Int16          DataType = 5
	Int32          DataType = 6
	Int64          DataType = 7
	String         DataType = 8
	Bool           DataType = 9
	Float16        DataType = 10
	Double         DataType = 11
	Uint32         DataType = 12
	Uint64         DataType = 13
	Complex64      DataType = 14
	Complex128     DataType = 15
	BFloat16       DataType = 16
	Float8E4M3FN   DataType = 17
	Float8E4M3FNUZ DataType = 18
	Float8E5M2     DataType = 19
	Float8E5M2FNUZ DataType = 20
	Uint4          DataType = 21
	Int4           DataType = 22
	Float4E2M1     DataType = 23
	Float8E8M0     DataType = 24
	Uint2          DataType = 25
	Int2           DataType = 26
)

// dataTypes gives each data type its name in stdiff's terms (safetensors' where it has one) and its
// size in bits.
var dataTypes = map[DataType]struct {
	name string
	bits uint64
}{
	Float: {"F32", 32}, Uint8: {"U8", 8}, Int8: {"I8", 8}, Uint16: {"U16", 16}, Int16: {"I16", 16},
	Int32: {"I32", 32}, Int64: {"I64", 64}, String: {"STRING", 0}, Bool: {"BOOL", 8}, Float16: {"F16", 16},
	Double: {"F64", 64}, Uint32: {"U32", 32}, Uint64: {"U64", 64}, Complex64: {"C64", 64}, Complex128: {"C128", 128},
	BFloat16: {"BF16", 16}, Float8E4M3FN: {"F8_E4M3", 8}, Float8E4M3FNUZ: {"F8_E4M3FNUZ", 8}, Float8E5M2: {"F8_E5M2", 8},
	Float8E5M2FNUZ: {"F8_E5M2FNUZ", 8}, Uint4: {"U4", 4}, Int4: {"I4", 4}, Float4E2M1: {"F4", 4}, Float8E8M0: {"F8_E8M0", 8},
	Uint2: {"U2", 2}, Int2: {"I2", 2},
}

// Name is the type's name in stdiff's terms ("F32", "BF16", "F8_E4M3", "I4"), or "TYPE_N" for a
// number the schema does not define.
func (t DataType) Name() string {
	if d, ok := dataTypes[t]; ok {
		return d.name
	}
	return "TYPE_" + strconv.Itoa(int(t))
}

// Bits is the size of one element in bits, and false for strings and undefined types.
func (t DataType) Bits() (uint64, bool) {
	d, ok := dataTypes[t]
	return d.bits, ok && d.bits > 0
}

// Opset is one operator set the model imports.
type Opset struct {
	Domain  string `json:"domain"`
	Version int64  `json:"version"`
}

// Value is one graph input or output.
type Value struct {
	Name string `json:"name"`
	// Type is the element type's name ("F32"), or what else the value is ("sequence", "map"…).
	Type string `json:"type"`
	// Shape has each dimension's size, or its symbolic name ("batch"), or "?" when unknown; nil when
	// the shape itself is unknown.
	Shape []string `json:"shape"`
}

// OpCount is how many nodes of the graphs run one operator.
type OpCount struct {
	Op    string `json:"op"` // domain-qualified when not the default domain: "com.microsoft.FusedMatMul"
	Count int    `json:"count"`
}

// PythonFunc is a node outside the default domain naming the Python code it runs: its func_name
// attribute (ai.onnx.contrib's Python operators, ONNX Runtime's PythonOp), or the module, class_name
// and compute attributes of ONNX Runtime's PyOp (it imports module, makes a class_name and calls its
// compute), as module.class_name.compute.
type PythonFunc struct {
	Op   string `json:"op"`   // domain-qualified operator
	Func string `json:"func"` // the func_name attribute's value, or module.class_name[.compute]
}

// Use is a reading of an initializer by a node of the main graph.
type Use struct {
	Node  string // the node's name (torch.onnx.export names it by the module that made it: /layer.0/fc/MatMul)
	Op    string // its operator, domain-qualified when not of the default domain
	Input int    // which of its inputs the initializer is, from 0
	At    int    // the node's place among the main graph's nodes, from 0 (the order a runtime may run them)
	// TransB is a Gemm's transB attribute: its input 1 is read transposed.
	TransB bool
}

// MaxUses bounds the readings of one initializer File.Uses keeps.
const MaxUses = 16

// MaxPythonFuncs bounds File.PythonFuncs and File.EPContexts.
const MaxPythonFuncs = 64

// MaxFunctions bounds File.Functions.
const MaxFunctions = 1 << 14

// EPContext is an EPContext node (ONNX Runtime's com.microsoft domain): a graph an execution provider
// (QNN, OpenVINO, TensorRT, …) compiled ahead of time, which the provider loads instead of the nodes:
// from the file its ep_cache_context attribute names (embed_mode 0), or from the attribute itself.
type EPContext struct {
	Node   string `json:"node,omitempty"`
	Source string `json:"source,omitempty"` // the source attribute: the provider that wrote it
	// File is the file ep_cache_context names (embed_mode 0), "" when the context is embedded.
	File string `json:"file,omitempty"`
	// Bytes is the length of an embedded context.
	Bytes int64 `json:"bytes,omitempty"`
}

// KV is one metadata_props entry.
type KV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Where says where a tensor's bytes are.
type Where string

// The places a tensor's bytes can be.
const (
	InRaw      Where = "raw_data"
	InTyped    Where = "typed" // float_data, int32_data, int64_data, double_data, uint64_data
	InExternal Where = "external"
	Nowhere    Where = "none"
)

// External is where an external tensor's bytes are: a file beside the model.
type External struct {
	Location string `json:"location"`
	// Offset and Length are as written, -1 when absent (from 0; to the file's end).
	Offset   int64  `json:"offset"`
	Length   int64  `json:"length"`
	Checksum string `json:"checksum,omitempty"`
}

// Tensor is one initializer: its name, type, dimensions and where its bytes are.
type Tensor struct {
	// Name is the tensor's name; a subgraph's initializer is named by the path to it
	// ("loop_body/W"), a Constant node's tensor by its output's name.
	Name string
	// Kind is "initializer", "sparse-initializer" (the values of a sparse initializer; its indices
	// are a tensor of their own, named NAME.indices) or "constant".
	Kind     string
	DataType DataType
	Dims     []int64
	// Offset is the file offset of the TensorProto.
	Offset int64
	Where  Where
	// Field is the typed field that holds the data (4 float_data, 5 int32_data, 7 int64_data, 10
	// double_data, 11 uint64_data), when Where is InTyped.
	Field uint64
	// Start and End are the file offsets of the raw_data bytes, or of a packed typed field.
	Start, End int64
	// pieces are the offsets of the elements of a typed field written unpacked; msgEnd is where the
	// TensorProto ends.
	pieces []int64
	msgEnd int64
	// External says where the bytes are when Where is InExternal.
	External *External
	// Unreadable is set by File.Check when the tensor's bytes cannot be had as they are (external
	// data refused, missing or of the wrong length, a typed field of the wrong length): readers of
	// values leave it out; its finding says why.
	Unreadable bool
}

// Elements is the product of the dimensions (1 for a scalar), and false when a dimension is
// negative or the product overflows.
func (t *Tensor) Elements() (uint64, bool) {
	n := uint64(1)
	for _, d := range t.Dims {
		if d < 0 {
			return 0, false
		}
		if d != 0 && n > (1<<63)/uint64(d) {
			return 0, false
		}
		n *= uint64(d)
	}
	return n, true
}

// Len is the number of bytes the tensor's elements take in row-major little-endian order (4- and
// 2-bit types packed into bytes, as raw_data holds them), and false when it has no fixed size.
func (t *Tensor) Len() (uint64, bool) {
	bits, ok := t.DataType.Bits()
	n, ok2 := t.Elements()
	if !ok || !ok2 || n > (1<<63)/bits {
		return 0, false
	}
	return (n*bits + 7) / 8, true
}

// File is what an ONNX model says, as Read finds it.
type File struct {
	Name string
	Size int64

	IRVersion       int64
	ProducerName    string
	ProducerVersion string
	Domain          string
	ModelVersion    int64
	Opsets          []Opset
	Metadata        []KV
	GraphName       string
	Inputs, Outputs []Value
	// Ops counts the nodes of every graph (subgraphs too) per operator, in operator order.
	Ops   []OpCount
	Nodes int
	// PythonFuncs are the nodes of a custom domain that carry a func_name attribute (the Python
	// function an ai.onnx.contrib PyOp runs), in file order, at most MaxPythonFuncs.
	PythonFuncs []PythonFunc `json:"python_funcs,omitempty"`
	// EPContexts are the EPContext nodes, in file order, at most MaxPythonFuncs.
	EPContexts []EPContext `json:"ep_contexts,omitempty"`
	// Functions are the model's own functions (ModelProto.functions), domain-qualified as Ops names
	// operators ("pkg.onnxscript.torch_lib.aten_add"): nodes of their operators run the function's
	// nodes, no code from outside the model. At most MaxFunctions.
	Functions []string `json:"functions,omitempty"`
	// FunctionOps counts the nodes of the model's functions per operator, as Ops counts the graphs'.
	FunctionOps []OpCount `json:"function_ops,omitempty"`
	// Tensors are the initializers in file order (a subgraph's after the node that holds it).
	Tensors []Tensor
	// Uses are, per initializer of the main graph (by name), the main graph's nodes that read it, in
	// graph order, at most MaxUses of each: what a comparison with the model's source pairs by.
	Uses map[string][]Use `json:"-"`
	// Findings are the problems found, in the order found.
	Findings []finding.Finding
}

// Finding codes: part of stdiff's contract with scripts; add, never rename.
const (
	// CodeMalformed: the protobuf cannot be read (a length past its message, a bad varint, nesting
	// past MaxDepth); nothing after it is known.
	CodeMalformed = "onnx-malformed"
	// CodeNoGraph: the model has no graph.
	CodeNoGraph = "onnx-no-graph"
	// CodeDataIncomplete: an initializer holds fewer or more bytes than its type and dimensions need.
	CodeDataIncomplete = "onnx-data-incomplete"
	// CodeExternalRefused: external data whose location leaves the model's folder (.., an absolute
	// path, a link that points out of it).
	CodeExternalRefused = "onnx-external-refused"
	// CodeExternalMissing: external data whose file is not there, or shorter than its range.
	CodeExternalMissing = "onnx-external-missing"
	// CodeBadTensor: a tensor of an undefined data type, negative dimensions, or no data at all.
	CodeBadTensor = "onnx-bad-tensor"
	// CodeDuplicateTensor: two initializers of one name.
	CodeDuplicateTensor = "onnx-duplicate-tensor"
)

// FormatError says why a file is not an ONNX model at all.
type FormatError struct {
	Offset int64
	Msg    string
}

// Error says why, and where.
func (e *FormatError) Error() string {
	return fmt.Sprintf("not an ONNX model: %s (at byte %d)", e.Msg, e.Offset)
}

// Sniff reports whether b, the first bytes of a file, look like an ONNX model: a ModelProto whose first
// field is ir_version (1 to 100) followed by another field of ModelProto. ONNX has no magic number;
// every ONNX writer puts ir_version first.
func Sniff(b []byte) bool {
	if len(b) < 4 || b[0] != tag(modelIRVersion, wireVarint) || b[1] == 0 || b[1] > 100 {
		return false
	}
	switch b[2] { // the next field's tag
	case tag(modelProducerName, wireLen), tag(modelProducerVersion, wireLen), tag(modelDomain, wireLen),
		tag(modelModelVersion, wireVarint), tag(modelDocString, wireLen), tag(modelGraph, wireLen), tag(modelOpsetImport, wireLen):
		return true
	}
	return false
}

// Read reads the ONNX model in r (size bytes; name names it in findings). It fails only when r cannot
// be read; a malformed model is a File with a CodeMalformed finding, and a file that is not ONNX at all
// a *FormatError.
func Read(r io.ReaderAt, size int64, name string) (*File, error) {
	f := &File{Name: name, Size: size}
	head := make([]byte, min(size, 16))
	if _, err := r.ReadAt(head, 0); err != nil && err != io.EOF {
		return nil, err
	}
	if !Sniff(head) {
		return nil, &FormatError{0, "it does not start with an ONNX ModelProto's ir_version"}
	}
	p := &parser{rd: newReader(r, size), f: f, ops: map[string]int{}, funcOps: map[string]int{}}
	err := p.model(0, size)
	if p.rd.Err != nil {
		return nil, p.rd.Err
	}
	if err != nil {
		f.malformed(err)
	}
	f.Ops, f.FunctionOps = opCounts(p.ops), opCounts(p.funcOps)
	for _, t := range f.Tensors {
		if u, ok := p.reads[t.Name]; ok {
			if f.Uses == nil {
				f.Uses = map[string][]Use{}
			}
			f.Uses[t.Name] = u
		}
	}
	if !p.sawGraph && err == nil {
		f.add(CodeNoGraph, finding.SevError, -1, "the model has no graph", "")
	}
	f.checkTensors()
	return f, nil
}

func (f *File) add(code string, sev finding.Severity, off int64, msg, hint string) {
	f.Findings = append(f.Findings, finding.Finding{Code: code, Severity: sev, Offset: off, Message: msg, Hint: hint})
}

func (f *File) malformed(err error) {
	off := int64(-1)
	var we *wireError
	if errors.As(err, &we) {
		off = we.Offset
	}
	f.add(CodeMalformed, finding.SevError, off, "the protobuf cannot be read: "+errText(err), "the file is damaged or cut short: export or download it again")
}

// opCounts lists counts per operator in operator order (nil for none).
func opCounts(ops map[string]int) []OpCount {
	var out []OpCount
	for op, n := range ops {
		out = append(out, OpCount{op, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Op < out[j].Op })
	return out
}

// errText is an error's message without the offset a wireError puts first (findings carry it).
func errText(err error) string {
	var we *wireError
	if errors.As(err, &we) {
		return we.Err.Error()
	}
	return err.Error()
}

// Valid reports whether no finding is an error.
func (f *File) Valid() bool {
	for _, fd := range f.Findings {
		if fd.Severity == finding.SevError {
			return false
		}
	}
	return true
}

// parser walks a model's messages.
type parser struct {
	rd       *reader
	f        *File
	ops      map[string]int
	funcOps  map[string]int // the operators of the nodes of the model's functions
	depth    int
	sawGraph bool
	reads    map[string][]Use // what the main graph's nodes read, by name (File.Uses)
	mainAt   int              // main-graph nodes seen
}

var errDepth = errors.New("messages nested deeper than stdiff reads")

func (p *parser) enter(at int64) error {
	if p.depth++; p.depth > MaxDepth {
		return &wireError{at, errDepth}
	}
	return nil
}

func (p *parser) str(fd field) (string, error) {
	b, err := p.rd.bytes(fd, MaxString)
	return string(b), err
}

// model reads a ModelProto.
func (p *parser) model(start, end int64) error {
	return p.rd.each(start, end, func(fd field) error {
		var err error
		switch {
		case fd.Num == modelIRVersion && fd.Type == wireVarint:
			p.f.IRVersion = int64(fd.Value)
		case fd.Num == modelProducerName && fd.Type == wireLen:
			p.f.ProducerName, err = p.str(fd)
		case fd.Num == modelProducerVersion && fd.Type == wireLen:
			p.f.ProducerVersion, err = p.str(fd)
		case fd.Num == modelDomain && fd.Type == wireLen:
			p.f.Domain, err = p.str(fd)
		case fd.Num == modelModelVersion && fd.Type == wireVarint:
			p.f.ModelVersion = int64(fd.Value)
		case fd.Num == modelGraph && fd.Type == wireLen:
			p.sawGraph = true
			err = p.graph(fd.Start, fd.End, "", true)
		case fd.Num == modelOpsetImport && fd.Type == wireLen:
			var o Opset
			err = p.rd.each(fd.Start, fd.End, func(g field) error {
				var err error
				switch {
				case g.Num == opsetDomain && g.Type == wireLen:
					o.Domain, err = p.str(g)
				case g.Num == opsetVersion && g.Type == wireVarint:
					o.Version = int64(g.Value)
				}
				return err
			})
			p.f.Opsets = append(p.f.Opsets, o)
		case fd.Num == modelFunctions && fd.Type == wireLen:
			err = p.function(fd)
		case fd.Num == modelMetadataProps && fd.Type == wireLen:
			var kv KV
			kv.Key, kv.Value, err = p.entry(fd)
			p.f.Metadata = append(p.f.Metadata, kv)
		}
		return err
	})
}

// entry reads a StringStringEntryProto.
func (p *parser) entry(fd field) (key, value string, err error) {
	err = p.rd.each(fd.Start, fd.End, func(g field) error {
		var err error
		switch {
		case g.Num == entryKey && g.Type == wireLen:
			key, err = p.str(g)
		case g.Num == entryValue && g.Type == wireLen:
			value, err = p.str(g)
		}
		return err
	})
	return key, value, err
}

// graph reads a GraphProto; prefix names its tensors ("" for the main graph, "node/attr/" for a
// subgraph), and main says whether its inputs and outputs are the model's.
func (p *parser) graph(start, end int64, prefix string, main bool) error {
	if err := p.enter(start); err != nil {
		return err
	}
	defer func() { p.depth-- }()
	return p.rd.each(start, end, func(fd field) error {
		var err error
		switch {
		case fd.Num == graphNode && fd.Type == wireLen:
			err = p.node(fd.Start, fd.End, prefix, main)
		case fd.Num == graphName && fd.Type == wireLen && main:
			p.f.GraphName, err = p.str(fd)
		case fd.Num == graphInitializer && fd.Type == wireLen:
			_, err = p.tensor(fd, prefix, "initializer", "")
		case fd.Num == graphSparseInitializer && fd.Type == wireLen:
			err = p.sparse(fd, prefix)
		case (fd.Num == graphInput || fd.Num == graphOutput) && fd.Type == wireLen && main:
			var v Value
			v, err = p.valueInfo(fd)
			if fd.Num == graphInput {
				p.f.Inputs = append(p.f.Inputs, v)
			} else {
				p.f.Outputs = append(p.f.Outputs, v)
			}
		}
		return err
	})
}

// uses notes what node n (of operator op, of the main graph) reads, at most MaxUses readings of each
// name; Read keeps those of initializers in File.Uses.
func (p *parser) uses(n *nodeHead, op string) error {
	transB := false
	if op == "Gemm" {
		for _, a := range n.attrs {
			var name string
			var i int64
			err := p.rd.each(a.Start, a.End, func(g field) error {
				var err error
				switch {
				case g.Num == attrName && g.Type == wireLen:
					name, err = p.str(g)
				case g.Num == attrI && g.Type == wireVarint:
					i = int64(g.Value)
				}
				return err
			})
			if err != nil {
				return err
			}
			if name == "transB" {
				transB = i != 0
			}
		}
	}
	if p.reads == nil {
		p.reads = map[string][]Use{}
	}
	for k, in := range n.inputs {
		if in != "" && len(p.reads[in]) < MaxUses {
			p.reads[in] = append(p.reads[in], Use{Node: n.name, Op: op, Input: k, TransB: transB, At: p.mainAt})
		}
	}
	p.mainAt++
	return nil
}

// nodeHead is what a NodeProto says of itself: its operator, name and outputs, and its attributes
// (not read yet).
type nodeHead struct {
	opType, domain, name string
	inputs, outputs      []string
	attrs                []field
}

// op is the node's operator, domain-qualified when not of the default domain.
func (n *nodeHead) op() string {
	if n.custom() {
		return n.domain + "." + n.opType
	}
	return n.opType
}

// custom reports whether the node's domain is not the default one ("" or ai.onnx).
func (n *nodeHead) custom() bool { return n.domain != "" && n.domain != "ai.onnx" }

// nodeHead reads a NodeProto's operator, name, outputs and attribute fields, and its inputs when
// inputs is set.
func (p *parser) nodeHead(start, end int64, inputs bool) (nodeHead, error) {
	var n nodeHead
	err := p.rd.each(start, end, func(fd field) error {
		var err error
		var s string
		switch {
		case fd.Num == nodeOutput && fd.Type == wireLen:
			s, err = p.str(fd)
			n.outputs = append(n.outputs, s)
		case fd.Num == nodeInput && fd.Type == wireLen && inputs:
			s, err = p.str(fd)
			n.inputs = append(n.inputs, s)
		case fd.Num == nodeName && fd.Type == wireLen:
			n.name, err = p.str(fd)
		case fd.Num == nodeOpType && fd.Type == wireLen:
			n.opType, err = p.str(fd)
		case fd.Num == nodeDomain && fd.Type == wireLen:
			n.domain, err = p.str(fd)
		case fd.Num == nodeAttribute && fd.Type == wireLen:
			n.attrs = append(n.attrs, fd)
		}
		return err
	})
	return n, err
}

// node reads a NodeProto: it counts its operator, notes the code and files it names, and reads the
// tensors and graphs its attributes hold; main says whether it is a node of the main graph, whose
// readings of initializers are kept (File.Uses).
func (p *parser) node(start, end int64, prefix string, main bool) error {
	if err := p.enter(start); err != nil {
		return err
	}
	defer func() { p.depth-- }()
	n, err := p.nodeHead(start, end, main)
	if err != nil {
		return err
	}
	op := n.op()
	p.ops[op]++
	p.f.Nodes++
	if main {
		if err := p.uses(&n, op); err != nil {
			return err
		}
	}
	if err := p.codeRefs(&n, op); err != nil {
		return err
	}
	owner := n.name
	if owner == "" && len(n.outputs) > 0 {
		owner = n.outputs[0]
	}
	for _, a := range n.attrs {
		if err := p.attribute(a, prefix, owner, op == "Constant", n.outputs); err != nil {
			return err
		}
	}
	return nil
}

// function reads a FunctionProto of ModelProto.functions: its name, and its nodes, counted in
// FunctionOps and searched for the code and files they name (their attributes' tensors and graphs are
// no initializers of the model).
func (p *parser) function(fd field) error {
	if err := p.enter(fd.Start); err != nil {
		return err
	}
	defer func() { p.depth-- }()
	var fn nodeHead // a function is named as a node's operator is
	var nodes []field
	err := p.rd.each(fd.Start, fd.End, func(g field) error {
		var err error
		switch {
		case g.Num == functionName && g.Type == wireLen:
			fn.opType, err = p.str(g)
		case g.Num == functionDomain && g.Type == wireLen:
			fn.domain, err = p.str(g)
		case g.Num == functionNode && g.Type == wireLen:
			nodes = append(nodes, g)
		}
		return err
	})
	if err != nil {
		return err
	}
	if len(p.f.Functions) < MaxFunctions {
		p.f.Functions = append(p.f.Functions, fn.op())
	}
	for _, g := range nodes {
		n, err := p.nodeHead(g.Start, g.End, false)
		if err != nil {
			return err
		}
		op := n.op()
		p.funcOps[op]++
		if err := p.codeRefs(&n, op); err != nil {
			return err
		}
	}
	return nil
}

// codeAttr is an attribute codeRefs reads: its string's field, or its int.
type codeAttr struct {
	s          field
	hasS, hasI bool
	i          int64
}

// codeAttrNames are the attributes of a node outside the default domain that name code or files
// the runtime loads: func_name (a Python function: ai.onnx.contrib, ONNX Runtime's PythonOp and
// PythonOpGrad), module, class_name and compute (ONNX Runtime's PyOp), and an EPContext node's
// ep_cache_context, embed_mode and source.
var codeAttrNames = map[string]bool{"func_name": true, "module": true, "class_name": true, "compute": true,
	"ep_cache_context": true, "embed_mode": true, "source": true}

// codeRefs notes what a node outside the default domain names that runs code or is loaded: the
// Python function it runs (PythonFuncs), the precompiled context of an EPContext node (EPContexts).
func (p *parser) codeRefs(n *nodeHead, op string) error {
	if !n.custom() || len(p.f.PythonFuncs) >= MaxPythonFuncs && len(p.f.EPContexts) >= MaxPythonFuncs {
		return nil
	}
	attrs, err := p.codeAttrs(n.attrs)
	if err != nil {
		return err
	}
	text := func(name string) (string, error) {
		if a := attrs[name]; a.hasS {
			return p.str(a.s)
		}
		return "", nil
	}
	fn, err := text("func_name")
	if err == nil && fn == "" {
		fn, err = pyOpTarget(text)
	}
	if err != nil {
		return err
	}
	if fn != "" && len(p.f.PythonFuncs) < MaxPythonFuncs {
		p.f.PythonFuncs = append(p.f.PythonFuncs, PythonFunc{Op: op, Func: fn})
	}
	if n.opType != "EPContext" || len(p.f.EPContexts) >= MaxPythonFuncs {
		return nil
	}
	e := EPContext{Node: n.name}
	if e.Source, err = text("source"); err != nil {
		return err
	}
	if mode := attrs["embed_mode"]; mode.hasI && mode.i == 0 { // a file's name (embed_mode is 1 by default)
		if e.File, err = text("ep_cache_context"); err != nil {
			return err
		}
	} else if ctx := attrs["ep_cache_context"]; ctx.hasS {
		e.Bytes = ctx.s.End - ctx.s.Start
	}
	p.f.EPContexts = append(p.f.EPContexts, e)
	return nil
}

// codeAttrs reads the attributes named in codeAttrNames: a string's field (not its bytes: an
// embedded EPContext may be large) or an int.
func (p *parser) codeAttrs(fds []field) (map[string]codeAttr, error) {
	attrs := map[string]codeAttr{}
	for _, fd := range fds {
		var name string
		var a codeAttr
		err := p.rd.each(fd.Start, fd.End, func(g field) error {
			var err error
			switch {
			case g.Num == attrName && g.Type == wireLen:
				name, err = p.str(g)
			case g.Num == attrS && g.Type == wireLen:
				a.s, a.hasS = g, true
			case g.Num == attrI && g.Type == wireVarint:
				a.i, a.hasI = int64(g.Value), true
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if codeAttrNames[name] {
			attrs[name] = a
		}
	}
	return attrs, nil
}

// pyOpTarget is what ONNX Runtime's PyOp runs, module.class_name[.compute], from its attributes; ""
// without a module.
func pyOpTarget(text func(string) (string, error)) (string, error) {
	mod, err := text("module")
	if err != nil || mod == "" {
		return "", err
	}
	for _, k := range []string{"class_name", "compute"} {
		v, err := text(k)
		if err != nil {
			return "", err
		}
		if v != "" {
			mod += "." + v
		}
	}
	return mod, nil
}

// attribute reads an AttributeProto of a node: a Constant's tensor (named by the node's output), and
// the tensors and graphs of any attribute (named by the node and the attribute).
func (p *parser) attribute(fd field, prefix, owner string, constant bool, outputs []string) error {
	if err := p.enter(fd.Start); err != nil {
		return err
	}
	defer func() { p.depth-- }()
	var name string
	var tensors, graphs, sparse []field
	err := p.rd.each(fd.Start, fd.End, func(g field) error {
		var err error
		switch {
		case g.Num == attrName && g.Type == wireLen:
			name, err = p.str(g)
		case (g.Num == attrT || g.Num == attrTensors) && g.Type == wireLen:
			tensors = append(tensors, g)
		case (g.Num == attrG || g.Num == attrGraphs) && g.Type == wireLen:
			graphs = append(graphs, g)
		case (g.Num == attrSparseTensor || g.Num == attrSparseTensors) && g.Type == wireLen:
			sparse = append(sparse, g)
		}
		return err
	})
	if err != nil {
		return err
	}
	base := prefix + owner + "/" + name
	for i, t := range tensors {
		n, kind := base, "attribute"
		if constant && name == "value" && len(outputs) > 0 {
			n, kind = prefix+outputs[0], "constant"
		} else if len(tensors) > 1 {
			n += "/" + strconv.Itoa(i)
		}
		if _, err := p.tensor(t, "", kind, n); err != nil {
			return err
		}
	}
	for _, s := range sparse {
		if err := p.sparse(s, base+"/"); err != nil {
			return err
		}
	}
	for i, g := range graphs {
		sub := base + "/"
		if len(graphs) > 1 {
			sub = base + "/" + strconv.Itoa(i) + "/"
		}
		if err := p.graph(g.Start, g.End, sub, false); err != nil {
			return err
		}
	}
	return nil
}

// sparse reads a SparseTensorProto: its values as a tensor of the sparse initializer's name and dims,
// its indices as NAME.indices.
func (p *parser) sparse(fd field, prefix string) error {
	if err := p.enter(fd.Start); err != nil {
		return err
	}
	defer func() { p.depth-- }()
	var values, indices *field
	var dims []int64
	err := p.rd.each(fd.Start, fd.End, func(g field) error {
		switch {
		case g.Num == sparseValues && g.Type == wireLen:
			values = &g
		case g.Num == sparseIndices && g.Type == wireLen:
			indices = &g
		case g.Num == sparseDims:
			return p.ints(g, &dims)
		}
		return nil
	})
	if err != nil || values == nil {
		return err
	}
	i, err := p.tensor(*values, prefix, "sparse-initializer", "")
	if err != nil || i < 0 {
		return err
	}
	name := p.f.Tensors[i].Name
	if indices != nil {
		if _, err := p.tensor(*indices, "", "sparse-indices", name+".indices"); err != nil {
			return err
		}
	}
	return nil
}

// ints appends the int64 values of a repeated int64 field, packed or not, to dst (at most MaxDims).
func (p *parser) ints(fd field, dst *[]int64) error {
	add := func(v uint64) error {
		if len(*dst) >= MaxDims {
			return &wireError{fd.At, fmt.Errorf("more than %d dimensions", MaxDims)}
		}
		*dst = append(*dst, int64(v))
		return nil
	}
	switch fd.Type {
	case wireVarint:
		return add(fd.Value)
	case wireLen:
		for off := fd.Start; off < fd.End; {
			v, next, err := p.rd.varint(off, fd.End)
			if err != nil {
				return err
			}
			if err := add(v); err != nil {
				return err
			}
			off = next
		}
		return nil
	}
	return &wireError{fd.At, fmt.Errorf("dims of wire type %d", fd.Type)}
}

// tensor reads a TensorProto and adds it to the file's tensors (prefix + its own name, or name when
// given); it returns its index.
func (p *parser) tensor(fd field, prefix, kind, name string) (int, error) {
	t := Tensor{Kind: kind, Offset: fd.At, Where: Nowhere, msgEnd: fd.End}
	external := false
	var typed []field
	err := p.rd.each(fd.Start, fd.End, func(g field) error {
		var err error
		switch {
		case g.Num == tensorDims:
			err = p.ints(g, &t.Dims)
		case g.Num == tensorDataType && g.Type == wireVarint:
			t.DataType = DataType(int32(g.Value))
		case g.Num == tensorName && g.Type == wireLen:
			var own string
			own, err = p.str(g)
			if name == "" {
				name = prefix + own
			}
		case g.Num == tensorRawData && g.Type == wireLen:
			t.Where, t.Start, t.End = InRaw, g.Start, g.End
		case g.Num == tensorExternalData && g.Type == wireLen:
			if t.External == nil {
				t.External = &External{Offset: -1, Length: -1}
			}
			var k, v string
			if k, v, err = p.entry(g); err == nil {
				err = t.External.set(k, v, g.At)
			}
		case g.Num == tensorDataLocation && g.Type == wireVarint:
			external = g.Value == dataLocationExternal
		case g.Num == tensorFloatData || g.Num == tensorInt32Data || g.Num == tensorInt64Data || g.Num == tensorDoubleData ||
			g.Num == tensorUint64Data:
			if len(typed) == maxPieces {
				return &wireError{g.At, fmt.Errorf("a tensor with more than %d elements written one by one", maxPieces)}
			}
			typed = append(typed, g)
		}
		return err
	})
	if err != nil {
		return -1, err
	}
	t.Name = name
	switch {
	case external:
		t.Where = InExternal
		if t.External == nil {
			t.External = &External{Offset: -1, Length: -1}
		}
	case t.Where == InRaw:
	case len(typed) > 0:
		t.Where, t.Field = InTyped, typed[0].Num
		if len(typed) == 1 && typed[0].Type == wireLen {
			t.Start, t.End = typed[0].Start, typed[0].End
		} else {
			for _, g := range typed {
				if g.Num != t.Field || g.Type == wireLen {
					return -1, &wireError{g.At, fmt.Errorf("tensor %q mixes typed fields", name)}
				}
				t.pieces = append(t.pieces, g.At)
			}
		}
	}
	p.f.Tensors = append(p.f.Tensors, t)
	return len(p.f.Tensors) - 1, nil
}

// set records one key of external_data.
func (e *External) set(key, value string, at int64) error {
	switch key {
	case "location":
		e.Location = value
	case "offset", "length":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 {
			return &wireError{at, fmt.Errorf("external data %s %q is not a byte count", key, value)}
		}
		if key == "offset" {
			e.Offset = n
		} else {
			e.Length = n
		}
	case "checksum":
		e.Checksum = value
	}
	return nil
}

// valueInfo reads a ValueInfoProto: a name and a type.
func (p *parser) valueInfo(fd field) (Value, error) {
	v := Value{Type: "?"}
	err := p.rd.each(fd.Start, fd.End, func(g field) error {
		var err error
		switch {
		case g.Num == valueInfoName && g.Type == wireLen:
			v.Name, err = p.str(g)
		case g.Num == valueInfoType && g.Type == wireLen:
			err = p.typeProto(g, &v)
		}
		return err
	})
	return v, err
}

// typeProto reads a TypeProto into v: a tensor's element type and shape, or what kind of value it is.
func (p *parser) typeProto(fd field, v *Value) error {
	return p.rd.each(fd.Start, fd.End, func(g field) error {
		switch {
		case (g.Num == typeTensor || g.Num == typeSparseTensor) && g.Type == wireLen:
			return p.rd.each(g.Start, g.End, func(h field) error {
				switch {
				case h.Num == tensorTypeElemType && h.Type == wireVarint:
					v.Type = DataType(int32(h.Value)).Name()
				case h.Num == tensorTypeShape && h.Type == wireLen:
					v.Shape = []string{}
					return p.rd.each(h.Start, h.End, func(d field) error {
						if d.Num != shapeDim || d.Type != wireLen {
							return nil
						}
						if len(v.Shape) >= MaxDims {
							return &wireError{d.At, fmt.Errorf("more than %d dimensions", MaxDims)}
						}
						dim := "?"
						err := p.rd.each(d.Start, d.End, func(x field) error {
							var err error
							switch {
							case x.Num == dimValue && x.Type == wireVarint:
								dim = strconv.FormatInt(int64(x.Value), 10)
							case x.Num == dimParam && x.Type == wireLen:
								dim, err = p.str(x)
							}
							return err
						})
						v.Shape = append(v.Shape, dim)
						return err
					})
				}
				return nil
			})
		case g.Num == typeSequence && g.Type == wireLen:
			v.Type = "sequence"
		case g.Num == typeMap && g.Type == wireLen:
			v.Type = "map"
		case g.Num == typeOptional && g.Type == wireLen:
			v.Type = "optional"
		}
		return nil
	})
}

// checkTensors checks each tensor's type and dimensions, that its inline bytes are as many as they
// should be, and that no two have one name. External data is checked by Check, which can open files.
func (f *File) checkTensors() {
	seen := make(map[string]bool, len(f.Tensors))
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if seen[t.Name] && t.Kind != "attribute" {
			f.add(CodeDuplicateTensor, finding.SevError, t.Offset, fmt.Sprintf("tensor %q is named twice", t.Name), "")
		}
		seen[t.Name] = true
		want, ok := t.Len()
		switch {
		case t.DataType == String:
			continue // strings have no fixed size; string_data is not read
		case !ok:
			f.add(CodeBadTensor, finding.SevError, t.Offset, fmt.Sprintf("tensor %q: data type %s and dims %v have no size", t.Name, t.DataType.Name(), t.Dims), "")
			continue
		case t.Where == Nowhere && want > 0:
			f.add(CodeDataIncomplete, finding.SevError, t.Offset, fmt.Sprintf("tensor %q has no data: %d bytes needed", t.Name, want), "")
		case t.Where == InRaw && uint64(t.End-t.Start) != want:
			f.add(CodeDataIncomplete, finding.SevError, t.Start, fmt.Sprintf("tensor %q holds %d bytes of raw_data, its type and dims need %d", t.Name, t.End-t.Start, want), "")
		}
	}
}

// ExternalPath is where an external tensor's file is, for a model in dir: its location joined to dir,
// and an error when the location leaves dir (an absolute path, a .. part) — onnx refuses those too.
func ExternalPath(dir string, e *External) (string, error) {
	loc := e.Location
	if loc == "" {
		return "", errors.New("external data without a location")
	}
	clean := path.Clean(strings.ReplaceAll(loc, `\`, "/"))
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(loc, "\x00") || (len(clean) > 1 && clean[1] == ':') {
		return "", fmt.Errorf("external data location %q leaves the model's folder", loc)
	}
	return dir + "/" + clean, nil
}
