// Package pickle reads Python pickles (protocols 0 to 5) with a restricted machine that never
// imports or calls anything: globals are names, calls (REDUCE, NEWOBJ, NEWOBJ_EX, INST, OBJ) and
// BUILD are recorded as objects, and persistent ids (the storages of PyTorch checkpoints) are kept
// as they are. Reading gives the object tree and the verdict of PyTorch's weights-only unpickler
// (torch.load(weights_only=True)): every global outside its allowlist, every opcode it does not
// accept and every operation it refuses.
//
// Every count, length, depth and memo size is bounded before anything is allocated (see the Max
// constants), so a hostile pickle costs at most a small multiple of its own size; the machine keeps
// memo values by reference, so a pickle that fetches one value a million times costs a million
// pointers, never a million copies. A malformed pickle is a *FormatError with its byte offset.
package pickle

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Limits on what a pickle may make Read keep.
const (
	// MaxStack is the most values the stack (all marks together) may hold.
	MaxStack = 1 << 20
	// MaxMarks is the most marks that may be open at once (nesting depth of tuples, lists, dicts).
	MaxMarks = 1 << 12
	// MaxMemo is the most memo entries a pickle may make.
	MaxMemo = 1 << 20
	// MaxLine is the longest text line (GLOBAL, INT, STRING, …) read.
	MaxLine = 1 << 16
	// MaxItems is the most items one container may be given.
	MaxItems = 1 << 24
	// MaxFindings is the most globals, opcodes and rejections of one kind a Pickle keeps.
	MaxFindings = 100
)

// Budget is what the pickles of one file may make Read keep, in bytes (objects, items, strings, memo
// entries, counted as they are made): a file of a few kilobytes that builds millions of objects, or
// claims a string of gigabytes, runs out of it. One Budget may be shared by every pickle of a file.
// Left goes below zero when it is spent; the pickle then fails with ErrTooLarge.
type Budget struct {
	Left int64
}

// Spend takes n bytes from the budget and reports whether any were left for them.
func (b *Budget) Spend(n int64) bool {
	if b == nil {
		return true
	}
	b.Left -= n
	return b.Left >= 0
}

// DefaultBudget is the budget Read gives a pickle read without one.
const DefaultBudget = 64 << 20

// costObject is what one Object costs the budget: its size and a little for the allocator.
const costObject = int64(unsafe.Sizeof(Object{})) + 16

// ErrTooLarge is wrapped by a FormatError when a pickle exceeds one of the limits.
var ErrTooLarge = errors.New("over a limit")

// FormatError is a malformed pickle: the byte offset of the opcode at fault (in the file, when the
// pickle was read from one with an offset), the opcode and what is wrong.
type FormatError struct {
	Offset int64
	Op     byte
	Msg    string
	Err    error // ErrTooLarge, io.ErrUnexpectedEOF or nil
}

// Error renders the error as "malformed pickle: what (opcode NAME at byte N)".
func (e *FormatError) Error() string {
	return fmt.Sprintf("malformed pickle: %s (opcode %s at byte %d)", e.Msg, OpName(e.Op), e.Offset)
}

// Unwrap returns the sentinel the error wraps, if any.
func (e *FormatError) Unwrap() error { return e.Err }

// Kind is the kind of an Object.
type Kind uint8

// The kinds of objects.
const (
	None Kind = iota
	Bool
	Int
	Float
	String // text: Str
	Bytes  // bytes, bytearray, buffers: Str holds the bytes
	Tuple
	List
	Dict
	Set // set and frozenset
	Global
	Call       // the result of calling Func with Args (REDUCE, NEWOBJ, INST, OBJ); BUILD sets State
	Persistent // a persistent id: PID
	Ext        // an extension code (EXT1, EXT2, EXT4): Int
)

// Object is a value the machine built. Containers hold their items by reference: a value fetched
// from the memo twice is the same *Object twice, and objects may form cycles.
type Object struct {
	Kind Kind
	// Offset is the byte offset of the opcode that made the object.
	Offset int64
	Int    int64
	// BigInt is set for an integer that does not fit Int (its decimal digits).
	BigInt string
	Float  float64
	Str    string
	// Module and Name name a Global.
	Module, Name string
	// Func and Args: a Call's callee and its argument tuple; State what BUILD gave it; PID a
	// Persistent's id.
	Func, Args, State, PID *Object
	// Items: a Tuple's, List's or Set's items, and what APPEND gave a Call.
	Items []*Object
	// Keys and Vals: a Dict's pairs in the order they were set, and what SETITEM gave a Call.
	Keys, Vals []*Object
}

// FullName returns module.name for a Global, "" otherwise.
func (o *Object) FullName() string {
	if o == nil || o.Kind != Global {
		return ""
	}
	return o.Module + "." + o.Name
}

// IsCallOf reports whether o is a Call of the global full (module.name).
func (o *Object) IsCallOf(full string) bool {
	return o != nil && o.Kind == Call && o.Func != nil && o.Func.FullName() == full
}

// Text returns the text of a String, or a Bytes read as text.
func (o *Object) Text() (string, bool) {
	if o == nil || (o.Kind != String && o.Kind != Bytes) {
		return "", false
	}
	return o.Str, true
}

// GlobalRef is one global a pickle names, at the offset of its first GLOBAL, STACK_GLOBAL, INST or
// OBJ opcode.
type GlobalRef struct {
	Module, Name string
	Offset       int64
	Class        Class
}

// FullName returns module.name as the pickle spells it.
func (g GlobalRef) FullName() string { return g.Module + "." + g.Name }

// Rejection is one reason PyTorch's weights-only unpickler refuses a pickle other than a global
// outside its allowlist: an opcode it does not accept, or an operation it does not allow.
type Rejection struct {
	Offset int64
	Op     byte
	Msg    string
}

// Pickle is one pickle read by the machine.
type Pickle struct {
	// Offset and End are where the pickle starts and just past its STOP opcode.
	Offset, End int64
	// Protocol is the protocol its PROTO opcode declares (0 when it has none).
	Protocol int
	// Root is the value STOP returns.
	Root *Object
	// Globals are the distinct globals the pickle names, in order of first use.
	Globals []GlobalRef
	// Opcodes are the opcodes the weights-only unpickler does not accept, each once, in order of
	// first use.
	Opcodes []Rejection
	// Rejections are the operations the weights-only unpickler refuses (REDUCE of something that
	// is not an allowed global, APPEND to a non-list, a persistent id that is not a storage, …).
	Rejections []Rejection
}

// WeightsOnly reports whether PyTorch's weights-only unpickler loads the pickle: every global is
// allowed, every opcode accepted and every operation allowed.
func (p *Pickle) WeightsOnly() bool {
	for _, g := range p.Globals {
		if g.Class != Allowed {
			return false
		}
	}
	return len(p.Opcodes) == 0 && len(p.Rejections) == 0
}

// Opcodes.
const (
	opMark           = '('
	opStop           = '.'
	opPop            = '0'
	opPopMark        = '1'
	opDup            = '2'
	opFloat          = 'F'
	opInt            = 'I'
	opBinInt         = 'J'
	opBinInt1        = 'K'
	opLong           = 'L'
	opBinInt2        = 'M'
	opNone           = 'N'
	opPersID         = 'P'
	opBinPersID      = 'Q'
	opReduce         = 'R'
	opString         = 'S'
	opBinString      = 'T'
	opShortBinString = 'U'
	opUnicode        = 'V'
	opBinUnicode     = 'X'
	opAppend         = 'a'
	opBuild          = 'b'
	opGlobal         = 'c'
	opDict           = 'd'
	opEmptyDict      = '}'
	opAppends        = 'e'
	opGet            = 'g'
	opBinGet         = 'h'
	opInst           = 'i'
	opLongBinGet     = 'j'
	opList           = 'l'
	opEmptyList      = ']'
	opObj            = 'o'
	opPut            = 'p'
	opBinPut         = 'q'
	opLongBinPut     = 'r'
	opSetItem        = 's'
	opTuple          = 't'
	opEmptyTuple     = ')'
	opSetItems       = 'u'
	opBinFloat       = 'G'
	opProto          = 0x80
	opNewObj         = 0x81
	opExt1           = 0x82
	opExt2           = 0x83
	opExt4           = 0x84
	opTuple1         = 0x85
	opTuple2         = 0x86
	opTuple3         = 0x87
	opNewTrue        = 0x88
	opNewFalse       = 0x89
	opLong1          = 0x8a
	opLong4          = 0x8b
	opBinBytes       = 'B'
	opShortBinBytes  = 'C'
	opShortBinUni    = 0x8c
	opBinUnicode8    = 0x8d
	opBinBytes8      = 0x8e
	opEmptySet       = 0x8f
	opAddItems       = 0x90
	opFrozenSet      = 0x91
	opNewObjEx       = 0x92
	opStackGlobal    = 0x93
	opMemoize        = 0x94
	opFrame          = 0x95
	opByteArray8     = 0x96
	opNextBuffer     = 0x97
	opReadonlyBuffer = 0x98
)

// argSize is the size in bytes of the little-endian count or value that follows an opcode, for those
// whose argument is one; seqKind the kind of object an opcode that builds one from a mark makes.
var (
	argSize = [256]uint8{opBinInt1: 1, opBinInt2: 2, opLong1: 1, opLong4: 4, opBinString: 4, opShortBinString: 1,
		opBinBytes: 4, opShortBinBytes: 1, opBinUnicode: 4, opShortBinUni: 1, opBinUnicode8: 8, opBinBytes8: 8,
		opByteArray8: 8, opExt1: 1, opExt2: 2, opExt4: 4}
	seqKind = [256]Kind{opTuple: Tuple, opList: List, opFrozenSet: Set}
)

var opNames = map[byte]string{
	opMark: "MARK", opStop: "STOP", opPop: "POP", opPopMark: "POP_MARK", opDup: "DUP", opFloat: "FLOAT",
	opInt: "INT", opBinInt: "BININT", opBinInt1: "BININT1", opLong: "LONG", opBinInt2: "BININT2",
	opNone: "NONE", opPersID: "PERSID", opBinPersID: "BINPERSID", opReduce: "REDUCE", opString: "STRING",
	opBinString: "BINSTRING", opShortBinString: "SHORT_BINSTRING", opUnicode: "UNICODE",
	opBinUnicode: "BINUNICODE", opAppend: "APPEND", opBuild: "BUILD", opGlobal: "GLOBAL", opDict: "DICT",
	opEmptyDict: "EMPTY_DICT", opAppends: "APPENDS", opGet: "GET", opBinGet: "BINGET", opInst: "INST",
	opLongBinGet: "LONG_BINGET", opList: "LIST", opEmptyList: "EMPTY_LIST", opObj: "OBJ", opPut: "PUT",
	opBinPut: "BINPUT", opLongBinPut: "LONG_BINPUT", opSetItem: "SETITEM", opTuple: "TUPLE",
	opEmptyTuple: "EMPTY_TUPLE", opSetItems: "SETITEMS", opBinFloat: "BINFLOAT", opProto: "PROTO",
	opNewObj: "NEWOBJ", opExt1: "EXT1", opExt2: "EXT2", opExt4: "EXT4", opTuple1: "TUPLE1",
	opTuple2: "TUPLE2", opTuple3: "TUPLE3", opNewTrue: "NEWTRUE", opNewFalse: "NEWFALSE", opLong1: "LONG1",
	opLong4: "LONG4", opBinBytes: "BINBYTES", opShortBinBytes: "SHORT_BINBYTES",
	opShortBinUni: "SHORT_BINUNICODE", opBinUnicode8: "BINUNICODE8", opBinBytes8: "BINBYTES8",
	opEmptySet: "EMPTY_SET", opAddItems: "ADDITEMS", opFrozenSet: "FROZENSET", opNewObjEx: "NEWOBJ_EX",
	opStackGlobal: "STACK_GLOBAL", opMemoize: "MEMOIZE", opFrame: "FRAME", opByteArray8: "BYTEARRAY8",
	opNextBuffer: "NEXT_BUFFER", opReadonlyBuffer: "READONLY_BUFFER",
}

// OpName returns the pickle module's name of opcode op, or its hex value for an unknown one.
func OpName(op byte) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return fmt.Sprintf("0x%02x", op)
}

// weightsOnlyOps are the opcodes PyTorch's weights-only unpickler accepts.
var weightsOnlyOps = func() (a [256]bool) {
	for _, op := range []byte{opAppend, opAppends, opBinFloat, opBinGet, opBinInt, opBinInt1, opBinInt2,
		opBinPersID, opBinPut, opBinUnicode, opBuild, opEmptyDict, opEmptyList, opEmptySet, opEmptyTuple,
		opGlobal, opLong1, opLongBinGet, opLongBinPut, opMark, opNewFalse, opNewObj, opNewTrue, opNone,
		opProto, opReduce, opSetItem, opSetItems, opShortBinString, opStop, opTuple, opTuple1, opTuple2,
		opTuple3} {
		a[op] = true
	}
	return
}()

// Read runs the machine on the pickle that starts at byte off of r and may not run past byte
// limit, and returns it when it reaches STOP. Offsets in the result and in errors are r's. It may
// keep DefaultBudget bytes; ReadBudget takes a budget.
func Read(r io.ReaderAt, off, limit int64) (*Pickle, error) {
	return ReadBudget(r, off, limit, &Budget{Left: DefaultBudget})
}

// ReadBudget is Read within budget b, which it spends (nil: no budget beyond the Max limits).
func ReadBudget(r io.ReaderAt, off, limit int64, b *Budget) (*Pickle, error) {
	if limit < off {
		limit = off
	}
	m := &machine{
		in:     bufio.NewReaderSize(io.NewSectionReader(r, off, limit-off), 64<<10),
		pos:    off,
		end:    limit,
		memo:   map[uint32]*Object{},
		seen:   map[string]int{},
		p:      &Pickle{Offset: off},
		budget: b,
	}
	if err := m.run(); err != nil {
		return m.p, err
	}
	return m.p, nil
}

type machine struct {
	in       *bufio.Reader
	pos, end int64
	opOff    int64
	op       byte

	stack  []*Object
	marks  []int
	memo   map[uint32]*Object
	seen   map[string]int // global name → index in p.Globals
	opSeen [256]bool
	p      *Pickle
	budget *Budget
}

func (m *machine) fail(format string, args ...any) error {
	return &FormatError{Offset: m.opOff, Op: m.op, Msg: fmt.Sprintf(format, args...)}
}

func (m *machine) tooLarge(format string, args ...any) error {
	return &FormatError{Offset: m.opOff, Op: m.op, Msg: fmt.Sprintf(format, args...), Err: ErrTooLarge}
}

func (m *machine) overBudget() error {
	return m.tooLarge("the pickle builds more than its budget of memory (a few times the file's size)")
}

func (m *machine) eof() error {
	return &FormatError{Offset: m.opOff, Op: m.op, Msg: "cut off by the end of the data", Err: io.ErrUnexpectedEOF}
}

func (m *machine) reject(format string, args ...any) {
	if len(m.p.Rejections) < MaxFindings {
		m.p.Rejections = append(m.p.Rejections, Rejection{Offset: m.opOff, Op: m.op, Msg: fmt.Sprintf(format, args...)})
	}
}

// read returns the next n bytes, checking n against what remains before allocating.
func (m *machine) read(n uint64) ([]byte, error) {
	if n > uint64(m.end-m.pos) {
		return nil, m.eof()
	}
	if !m.budget.Spend(int64(n)) {
		return nil, m.overBudget()
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(m.in, b); err != nil {
		return nil, m.eof()
	}
	m.pos += int64(n)
	return b, nil
}

func (m *machine) uint(n int) (uint64, error) {
	if int64(n) > m.end-m.pos {
		return 0, m.eof()
	}
	var v uint64
	for i := 0; i < n; i++ {
		c, err := m.in.ReadByte()
		if err != nil {
			return 0, m.eof()
		}
		v |= uint64(c) << (8 * i)
	}
	m.pos += int64(n)
	return v, nil
}

// line reads up to a newline (which it drops), at most MaxLine bytes.
func (m *machine) line() (string, error) {
	var sb strings.Builder
	for {
		if m.pos >= m.end {
			return "", m.eof()
		}
		c, err := m.in.ReadByte()
		if err != nil {
			return "", m.eof()
		}
		m.pos++
		if c == '\n' {
			return sb.String(), nil
		}
		if sb.Len() >= MaxLine {
			return "", m.tooLarge("a line longer than %d bytes", MaxLine)
		}
		sb.WriteByte(c)
	}
}

func (m *machine) push(o *Object) error {
	if len(m.stack) >= MaxStack {
		return m.tooLarge("more than %d values on the stack", MaxStack)
	}
	m.stack = append(m.stack, o)
	return nil
}

func (m *machine) base() int {
	if len(m.marks) > 0 {
		return m.marks[len(m.marks)-1]
	}
	return 0
}

func (m *machine) pop() (*Object, error) {
	if len(m.stack) <= m.base() {
		return nil, m.fail("the stack is empty")
	}
	o := m.stack[len(m.stack)-1]
	m.stack = m.stack[:len(m.stack)-1]
	return o, nil
}

func (m *machine) top() (*Object, error) {
	if len(m.stack) <= m.base() {
		return nil, m.fail("the stack is empty")
	}
	return m.stack[len(m.stack)-1], nil
}

// popMark returns the values above the last mark and removes them and the mark.
func (m *machine) popMark() ([]*Object, error) {
	if len(m.marks) == 0 {
		return nil, m.fail("no MARK to pop to")
	}
	b := m.marks[len(m.marks)-1]
	m.marks = m.marks[:len(m.marks)-1]
	m.budget.Spend(8 * int64(len(m.stack)-b))
	items := append([]*Object(nil), m.stack[b:]...)
	m.stack = m.stack[:b]
	return items, nil
}

// obj makes an object and spends its cost; run checks the budget after every opcode.
func (m *machine) obj(k Kind) *Object {
	m.budget.Spend(costObject)
	return &Object{Kind: k, Offset: m.opOff}
}

func (m *machine) global(module, name string) *Object {
	full := module + "." + name
	if _, ok := m.seen[full]; !ok {
		m.seen[full] = len(m.p.Globals)
		if len(m.p.Globals) < 100*MaxFindings {
			m.p.Globals = append(m.p.Globals, GlobalRef{Module: module, Name: name, Offset: m.opOff, Class: Classify(module, name)})
		}
	}
	o := m.obj(Global)
	o.Module, o.Name = module, name
	return o
}

// allowedGlobal reports whether o is a global in the weights-only allowlist.
func allowedGlobal(o *Object) bool {
	return o != nil && o.Kind == Global && Classify(o.Module, o.Name) == Allowed
}

func (m *machine) memoPut(idx uint32, o *Object) error {
	if _, ok := m.memo[idx]; !ok {
		if len(m.memo) >= MaxMemo {
			return m.tooLarge("more than %d memo entries", MaxMemo)
		}
		m.budget.Spend(48)
	}
	m.memo[idx] = o
	return nil
}

func (m *machine) addItems(dst *Object, items []*Object) error {
	if len(dst.Items)+len(items) > MaxItems {
		return m.tooLarge("a container with more than %d items", MaxItems)
	}
	m.budget.Spend(16 * int64(len(items))) // the slice grows by doubling
	dst.Items = append(dst.Items, items...)
	return nil
}

func (m *machine) setItems(dst *Object, kv []*Object) error {
	if len(kv)%2 != 0 {
		return m.fail("an odd number of values for SETITEMS")
	}
	if len(dst.Keys)+len(kv)/2 > MaxItems {
		return m.tooLarge("a dict with more than %d items", MaxItems)
	}
	switch {
	case setItemTarget(dst):
	default:
		m.reject("%s to something that is not a dict", OpName(m.op))
		if dst.Kind != Call {
			return m.fail("%s to a %s", OpName(m.op), kindName(dst.Kind))
		}
	}
	m.budget.Spend(16 * int64(len(kv)))
	for i := 0; i < len(kv); i += 2 {
		dst.Keys = append(dst.Keys, kv[i])
		dst.Vals = append(dst.Vals, kv[i+1])
	}
	return nil
}

func kindName(k Kind) string {
	return [...]string{"None", "bool", "int", "float", "str", "bytes", "tuple", "list", "dict", "set", "global", "object", "persistent id", "extension"}[k]
}

func (m *machine) run() error {
	for {
		if m.pos >= m.end {
			m.opOff, m.op = m.pos, 0
			return &FormatError{Offset: m.pos, Msg: "no STOP opcode before the end of the data", Err: io.ErrUnexpectedEOF}
		}
		op, err := m.in.ReadByte()
		if err != nil {
			return &FormatError{Offset: m.pos, Msg: "no STOP opcode before the end of the data", Err: io.ErrUnexpectedEOF}
		}
		m.opOff, m.op = m.pos, op
		m.pos++
		if _, known := opNames[op]; known && !weightsOnlyOps[op] && !m.opSeen[op] {
			m.opSeen[op] = true
			m.p.Opcodes = append(m.p.Opcodes, Rejection{Offset: m.opOff, Op: op, Msg: "opcode " + OpName(op) + " is not accepted by the weights-only unpickler"})
		}
		done, err := m.step(op)
		if err != nil {
			return err
		}
		if m.budget != nil && m.budget.Left < 0 {
			return m.overBudget()
		}
		if done {
			m.p.End = m.pos
			return nil
		}
	}
}

func (m *machine) pushInt(v int64) error {
	o := m.obj(Int)
	o.Int = v
	return m.push(o)
}

func (m *machine) pushStr(k Kind, b []byte) error {
	o := m.obj(k)
	m.budget.Spend(int64(len(b)))
	o.Str = string(b)
	return m.push(o)
}

// decodeLong reads a little-endian two's-complement integer.
func (m *machine) pushLong(b []byte) error {
	o := m.obj(Int)
	if len(b) <= 8 {
		var v uint64
		for i := len(b) - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		if len(b) > 0 && len(b) < 8 && b[len(b)-1]&0x80 != 0 {
			v |= ^uint64(0) << (8 * len(b))
		}
		o.Int = int64(v)
		return m.push(o)
	}
	be := make([]byte, len(b))
	for i := range b {
		be[len(b)-1-i] = b[i]
	}
	n := new(big.Int).SetBytes(be)
	if b[len(b)-1]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	if n.IsInt64() {
		o.Int = n.Int64()
	} else if len(b) <= 4096 {
		o.BigInt = n.String()
	} else {
		o.BigInt = "a " + strconv.Itoa(len(b)) + "-byte integer"
	}
	return m.push(o)
}

// step runs opcode op and reports whether it was STOP, which ends the pickle. Every other opcode
// is run by the step of its family (steps).
func (m *machine) step(op byte) (bool, error) {
	if op == opStop {
		o, err := m.pop()
		if err != nil {
			return false, err
		}
		m.p.Root = o
		return true, nil
	}
	run := steps[op]
	if run == nil {
		return false, m.fail("unknown opcode")
	}
	return false, run(m, op)
}

// steps is the step that runs each opcode but STOP, one function per family of opcodes; nil for an
// opcode the pickle module does not define. (A key given twice does not compile.)
var steps = [256]func(*machine, byte) error{
	// framing and protocol
	opProto: (*machine).stepFraming,
	opFrame: (*machine).stepFraming,
	// the stack and its marks
	opMark:    (*machine).stepStack,
	opPop:     (*machine).stepStack,
	opPopMark: (*machine).stepStack,
	opDup:     (*machine).stepStack,
	// the memo
	opGet:        (*machine).stepMemo,
	opBinGet:     (*machine).stepMemo,
	opLongBinGet: (*machine).stepMemo,
	opPut:        (*machine).stepMemo,
	opBinPut:     (*machine).stepMemo,
	opLongBinPut: (*machine).stepMemo,
	opMemoize:    (*machine).stepMemo,
	// constants and numbers
	opNone:     (*machine).stepConst,
	opNewTrue:  (*machine).stepConst,
	opNewFalse: (*machine).stepConst,
	opBinInt:   (*machine).stepBinNumber,
	opBinInt1:  (*machine).stepBinNumber,
	opBinInt2:  (*machine).stepBinNumber,
	opLong1:    (*machine).stepBinNumber,
	opLong4:    (*machine).stepBinNumber,
	opBinFloat: (*machine).stepBinNumber,
	opInt:      (*machine).stepTextNumber,
	opLong:     (*machine).stepTextNumber,
	opFloat:    (*machine).stepTextNumber,
	// strings, bytes and buffers
	opString:         (*machine).stepTextString,
	opUnicode:        (*machine).stepTextString,
	opBinString:      (*machine).stepBinString,
	opShortBinString: (*machine).stepBinString,
	opBinBytes:       (*machine).stepBinString,
	opShortBinBytes:  (*machine).stepBinString,
	opBinUnicode:     (*machine).stepBinString,
	opShortBinUni:    (*machine).stepBinString,
	opBinUnicode8:    (*machine).stepBinString,
	opBinBytes8:      (*machine).stepBinString,
	opByteArray8:     (*machine).stepBinString,
	opNextBuffer:     (*machine).stepBuffer,
	opReadonlyBuffer: (*machine).stepBuffer,
	// containers: made empty or from the stack, then filled
	opEmptyTuple: (*machine).stepEmpty,
	opEmptyList:  (*machine).stepEmpty,
	opEmptyDict:  (*machine).stepEmpty,
	opEmptySet:   (*machine).stepEmpty,
	opTuple:      (*machine).stepCollect,
	opList:       (*machine).stepCollect,
	opFrozenSet:  (*machine).stepCollect,
	opTuple1:     (*machine).stepCollect,
	opTuple2:     (*machine).stepCollect,
	opTuple3:     (*machine).stepCollect,
	opDict:       (*machine).stepCollect,
	opAppend:     (*machine).stepAppend,
	opAppends:    (*machine).stepAppend,
	opAddItems:   (*machine).stepAppend,
	opSetItem:    (*machine).stepSetItem,
	opSetItems:   (*machine).stepSetItem,
	// globals
	opGlobal:      (*machine).stepGlobal,
	opStackGlobal: (*machine).stepGlobal,
	opExt1:        (*machine).stepGlobal,
	opExt2:        (*machine).stepGlobal,
	opExt4:        (*machine).stepGlobal,
	// calls and BUILD, recorded, never made
	opInst:     (*machine).stepConstruct,
	opObj:      (*machine).stepConstruct,
	opReduce:   (*machine).stepCall,
	opNewObj:   (*machine).stepCall,
	opNewObjEx: (*machine).stepCall,
	opBuild:    (*machine).stepBuild,
	// persistent ids
	opPersID:    (*machine).stepPersistent,
	opBinPersID: (*machine).stepPersistent,
}

// emptyKind is the kind of object an opcode that makes an empty container makes.
var emptyKind = [256]Kind{opEmptyTuple: Tuple, opEmptyList: List, opEmptyDict: Dict, opEmptySet: Set}

// stepFraming runs PROTO (the protocol is kept) and FRAME (its length is read and dropped: frames
// only group opcodes).
func (m *machine) stepFraming(op byte) error {
	if op == opFrame {
		_, err := m.uint(8)
		return err
	}
	v, err := m.uint(1) // PROTO
	if err != nil {
		return err
	}
	m.p.Protocol = int(v)
	return nil
}

// stepStack runs MARK, POP, POP_MARK and DUP.
func (m *machine) stepStack(op byte) error {
	switch op {
	case opMark:
		if len(m.marks) >= MaxMarks {
			return m.tooLarge("more than %d marks open at once", MaxMarks)
		}
		m.marks = append(m.marks, len(m.stack))
		return nil
	case opPop:
		if len(m.stack) == m.base() && len(m.marks) > 0 { // pops the mark, as pickle.py does
			m.marks = m.marks[:len(m.marks)-1]
			return nil
		}
		_, err := m.pop()
		return err
	case opPopMark:
		_, err := m.popMark()
		return err
	}
	o, err := m.top() // DUP
	if err != nil {
		return err
	}
	return m.push(o)
}

// stepMemo runs GET, BINGET and LONG_BINGET (a memo entry pushed), PUT, BINPUT and LONG_BINPUT (the
// top of the stack stored at an index) and MEMOIZE (stored at the next index).
func (m *machine) stepMemo(op byte) error {
	switch op {
	case opMemoize:
		o, err := m.top()
		if err != nil {
			return err
		}
		return m.memoPut(uint32(len(m.memo)), o)
	case opGet, opBinGet, opLongBinGet:
		idx, err := m.memoIndex(op)
		if err != nil {
			return err
		}
		o, ok := m.memo[idx]
		if !ok {
			return m.fail("memo entry %d was never stored", idx)
		}
		return m.push(o)
	}
	idx, err := m.memoIndex(op) // PUT, BINPUT, LONG_BINPUT
	if err != nil {
		return err
	}
	o, err := m.top()
	if err != nil {
		return err
	}
	return m.memoPut(idx, o)
}

// stepConst runs NONE, NEWTRUE and NEWFALSE.
func (m *machine) stepConst(op byte) error {
	if op == opNone {
		return m.push(m.obj(None))
	}
	o := m.obj(Bool)
	if op == opNewTrue {
		o.Int = 1
	}
	return m.push(o)
}

// stepBinNumber runs the opcodes whose number is binary: BININT, BININT1, BININT2, LONG1, LONG4 and
// BINFLOAT.
func (m *machine) stepBinNumber(op byte) error {
	switch op {
	case opBinInt:
		v, err := m.uint(4)
		if err != nil {
			return err
		}
		return m.pushInt(int64(int32(uint32(v))))
	case opBinInt1, opBinInt2:
		v, err := m.uint(int(argSize[op]))
		if err != nil {
			return err
		}
		return m.pushInt(int64(v))
	case opLong1, opLong4:
		n, err := m.uint(int(argSize[op]))
		if err != nil {
			return err
		}
		b, err := m.read(n)
		if err != nil {
			return err
		}
		return m.pushLong(b)
	}
	b, err := m.read(8) // BINFLOAT: big-endian
	if err != nil {
		return err
	}
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	o := m.obj(Float)
	o.Float = math.Float64frombits(v)
	return m.push(o)
}

// stepTextNumber runs the opcodes whose number is a line of text: INT and LONG (where "00" and "01"
// are protocol 0's False and True) and FLOAT.
func (m *machine) stepTextNumber(op byte) error {
	s, err := m.line()
	if err != nil {
		return err
	}
	if op == opFloat {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return m.fail("%q is not a float", s)
		}
		o := m.obj(Float)
		o.Float = v
		return m.push(o)
	}
	s = strings.TrimSuffix(s, "L")
	switch s {
	case "00":
		return m.push(m.obj(Bool))
	case "01":
		o := m.obj(Bool)
		o.Int = 1
		return m.push(o)
	}
	if v, err := strconv.ParseInt(s, 0, 64); err == nil {
		return m.pushInt(v)
	}
	if n, ok := new(big.Int).SetString(s, 10); ok {
		o := m.obj(Int)
		o.BigInt = n.String()
		return m.push(o)
	}
	return m.fail("%q is not an integer", s)
}

// stepTextString runs STRING (a quoted, escaped line: bytes) and UNICODE (a line: text).
func (m *machine) stepTextString(op byte) error {
	s, err := m.line()
	if err != nil {
		return err
	}
	if op == opUnicode {
		return m.pushStr(String, []byte(s))
	}
	if len(s) < 2 || (s[0] != '\'' && s[0] != '"') || s[len(s)-1] != s[0] {
		return m.fail("the STRING argument is not quoted")
	}
	u, err := strconv.Unquote(`"` + strings.ReplaceAll(s[1:len(s)-1], `"`, `\"`) + `"`)
	if err != nil {
		u = s[1 : len(s)-1]
	}
	return m.pushStr(Bytes, []byte(u))
}

// stepBinString runs the opcodes of a counted string: its length (argSize bytes), then its bytes,
// text for the BINUNICODE family (invalid UTF-8 replaced), bytes for the others.
func (m *machine) stepBinString(op byte) error {
	n, err := m.uint(int(argSize[op]))
	if err != nil {
		return err
	}
	if op == opBinString && int32(uint32(n)) < 0 {
		return m.fail("a negative BINSTRING length")
	}
	b, err := m.read(n)
	if err != nil {
		return err
	}
	k := Bytes
	if op == opBinUnicode || op == opShortBinUni || op == opBinUnicode8 {
		k = String
		if !utf8.Valid(b) {
			b = []byte(strings.ToValidUTF8(string(b), "\uFFFD"))
		}
	}
	return m.pushStr(k, b)
}

// stepBuffer runs NEXT_BUFFER (an out-of-band buffer, pushed as empty bytes) and READONLY_BUFFER
// (the top of the stack kept as it is).
func (m *machine) stepBuffer(op byte) error {
	if op == opNextBuffer {
		return m.push(m.obj(Bytes))
	}
	_, err := m.top()
	return err
}

// stepEmpty runs EMPTY_TUPLE, EMPTY_LIST, EMPTY_DICT and EMPTY_SET.
func (m *machine) stepEmpty(op byte) error {
	return m.push(m.obj(emptyKind[op]))
}

// stepCollect runs the opcodes that make a container of values on the stack: TUPLE, LIST,
// FROZENSET and DICT (the values above the mark), TUPLE1, TUPLE2 and TUPLE3 (the top one to three).
func (m *machine) stepCollect(op byte) error {
	switch op {
	case opTuple1, opTuple2, opTuple3:
		n := int(op-opTuple1) + 1
		if len(m.stack)-m.base() < n {
			return m.fail("the stack holds fewer than %d values", n)
		}
		o := m.obj(Tuple)
		o.Items = append([]*Object(nil), m.stack[len(m.stack)-n:]...)
		m.stack = m.stack[:len(m.stack)-n]
		return m.push(o)
	case opDict:
		items, err := m.popMark()
		if err != nil {
			return err
		}
		o := m.obj(Dict)
		if err := m.setItems(o, items); err != nil {
			return err
		}
		return m.push(o)
	}
	items, err := m.popMark() // TUPLE, LIST, FROZENSET
	if err != nil {
		return err
	}
	o := m.obj(seqKind[op])
	o.Items = items
	return m.push(o)
}

// stepAppend runs APPEND (the top value), APPENDS (the values above the mark) to a list, and
// ADDITEMS to a set; to anything else but a call's result the pickle is malformed, and to a call's
// result the weights-only unpickler refuses it.
func (m *machine) stepAppend(op byte) error {
	var items []*Object
	var err error
	if op == opAppend {
		var it *Object
		if it, err = m.pop(); err != nil {
			return err
		}
		items = []*Object{it}
	} else if items, err = m.popMark(); err != nil {
		return err
	}
	dst, err := m.top()
	if err != nil {
		return err
	}
	want := List
	if op == opAddItems {
		want = Set
	}
	if dst.Kind != want {
		m.reject("%s to a %s", OpName(op), kindName(dst.Kind))
		if dst.Kind != Call {
			return m.fail("%s to a %s", OpName(op), kindName(dst.Kind))
		}
	}
	return m.addItems(dst, items)
}

// stepSetItem runs SETITEM (the top key and value) and SETITEMS (the pairs above the mark); setItems
// says where they may go.
func (m *machine) stepSetItem(op byte) error {
	var kv []*Object
	if op == opSetItem {
		v, err := m.pop()
		if err != nil {
			return err
		}
		k, err := m.pop()
		if err != nil {
			return err
		}
		kv = []*Object{k, v}
	} else {
		var err error
		if kv, err = m.popMark(); err != nil {
			return err
		}
	}
	dst, err := m.top()
	if err != nil {
		return err
	}
	return m.setItems(dst, kv)
}

// stepGlobal runs the opcodes that name a global: GLOBAL (two lines), STACK_GLOBAL (two str on the
// stack) and EXT1, EXT2, EXT4 (an extension code, named as copyreg's registry entry).
func (m *machine) stepGlobal(op byte) error {
	switch op {
	case opGlobal:
		mod, err := m.line()
		if err != nil {
			return err
		}
		name, err := m.line()
		if err != nil {
			return err
		}
		return m.push(m.global(mod, name))
	case opStackGlobal:
		name, err := m.pop()
		if err != nil {
			return err
		}
		mod, err := m.pop()
		if err != nil {
			return err
		}
		if mod.Kind != String || name.Kind != String {
			return m.fail("STACK_GLOBAL of a %s and a %s, not two str", kindName(mod.Kind), kindName(name.Kind))
		}
		return m.push(m.global(mod.Str, name.Str))
	}
	v, err := m.uint(int(argSize[op])) // EXT1, EXT2, EXT4
	if err != nil {
		return err
	}
	return m.push(m.global("copyreg", "_extension_registry["+strconv.FormatUint(v, 10)+"]"))
}

// stepConstruct runs protocol 0's instance opcodes, recorded as calls: INST (the class named by two
// lines, the arguments above the mark) and OBJ (the class and arguments above the mark).
func (m *machine) stepConstruct(op byte) error {
	if op == opInst {
		mod, err := m.line()
		if err != nil {
			return err
		}
		name, err := m.line()
		if err != nil {
			return err
		}
		args, err := m.popMark()
		if err != nil {
			return err
		}
		o := m.obj(Call)
		o.Func = m.global(mod, name)
		o.Args = &Object{Kind: Tuple, Offset: m.opOff, Items: args}
		return m.push(o)
	}
	items, err := m.popMark() // OBJ
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return m.fail("OBJ without a class")
	}
	o := m.obj(Call)
	o.Func = items[0]
	o.Args = &Object{Kind: Tuple, Offset: m.opOff, Items: items[1:]}
	return m.push(o)
}

// stepCall runs REDUCE, NEWOBJ and NEWOBJ_EX (whose keyword arguments become the call's State),
// recorded as calls. A callee that is not a global is refused (a global outside the allowlist is
// already a finding of its own).
func (m *machine) stepCall(op byte) error {
	var kwargs *Object
	var err error
	if op == opNewObjEx {
		if kwargs, err = m.pop(); err != nil {
			return err
		}
	}
	args, err := m.pop()
	if err != nil {
		return err
	}
	fn, err := m.pop()
	if err != nil {
		return err
	}
	if !allowedGlobal(fn) && fn.Kind != Global {
		m.reject("%s calls a %s, not an allowed global", OpName(op), kindName(fn.Kind))
	}
	if args.Kind != Tuple && op != opReduce {
		return m.fail("%s arguments are a %s, not a tuple", OpName(op), kindName(args.Kind))
	}
	o := m.obj(Call)
	o.Func, o.Args = fn, args
	if kwargs != nil {
		o.State = kwargs
	}
	return m.push(o)
}

// stepBuild runs BUILD: the state is recorded on the object below it, refused unless buildTarget
// allows it.
func (m *machine) stepBuild(byte) error {
	state, err := m.pop()
	if err != nil {
		return err
	}
	inst, err := m.top()
	if err != nil {
		return err
	}
	if !buildTarget(inst) {
		m.reject("BUILD of a %s value, not a tensor, parameter or OrderedDict", kindName(inst.Kind))
	}
	inst.State = state
	return nil
}

// stepPersistent runs PERSID (a line) and BINPERSID (the top value): a persistent id, kept as it is;
// the weights-only unpickler accepts only an int, an empty tuple or a tuple that starts with
// "storage".
func (m *machine) stepPersistent(op byte) error {
	if op == opPersID {
		s, err := m.line()
		if err != nil {
			return err
		}
		o := m.obj(Persistent)
		o.PID = &Object{Kind: String, Offset: m.opOff, Str: s}
		return m.push(o)
	}
	pid, err := m.pop()
	if err != nil {
		return err
	}
	switch {
	case pid.Kind == Int:
	case pid.Kind == Tuple && len(pid.Items) == 0:
	case pid.Kind == Tuple:
		if s, _ := pid.Items[0].Text(); s != "storage" {
			m.reject("a persistent id that is not a storage")
		}
	default:
		m.reject("a persistent id that is a %s, not a tuple", kindName(pid.Kind))
	}
	o := m.obj(Persistent)
	o.PID = pid
	return m.push(o)
}

func (m *machine) memoIndex(op byte) (uint32, error) {
	switch op {
	case opBinGet, opBinPut:
		v, err := m.uint(1)
		return uint32(v), err
	case opLongBinGet, opLongBinPut:
		v, err := m.uint(4)
		return uint32(v), err
	}
	s, err := m.line()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, m.fail("memo index %q is not a number", s)
	}
	return uint32(v), nil
}
