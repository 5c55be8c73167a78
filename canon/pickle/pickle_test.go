package pickle_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/pickle"
)

// b builds a pickle from pieces: strings are raw bytes.
func b(parts ...string) []byte { return []byte(strings.Join(parts, "")) }

func u32(n uint32) string {
	var x [4]byte
	binary.LittleEndian.PutUint32(x[:], n)
	return string(x[:])
}

func u64(n uint64) string {
	var x [8]byte
	binary.LittleEndian.PutUint64(x[:], n)
	return string(x[:])
}

// binunicode is a BINUNICODE opcode with its string.
func binunicode(s string) string { return "X" + u32(uint32(len(s))) + s }

func read(data []byte) (*pickle.Pickle, error) {
	return pickle.Read(bytes.NewReader(data), 0, int64(len(data)))
}

// call is GLOBAL module name, an argument tuple of one string, REDUCE.
func call(module, name, arg string) string {
	return "c" + module + "\n" + name + "\n" + binunicode(arg) + "\x85R"
}

// TestHostileGlobals: every class of dangerous global, however it is reached, is found and classed
// unsafe, and the pickle is refused.
func TestHostileGlobals(t *testing.T) {
	cases := []struct {
		name   string
		data   []byte
		global string
	}{
		{"os.system", b("\x80\x02", call("os", "system", "echo hi"), "."), "os.system"},
		{"posix.system", b("\x80\x02", call("posix", "system", "id"), "."), "posix.system"},
		{"nt.system", b(call("nt", "system", "id"), "."), "nt.system"},
		{"subprocess", b(call("subprocess", "check_output", "id"), "."), "subprocess.check_output"},
		{"eval", b(call("builtins", "eval", "1+1"), "."), "builtins.eval"},
		{"py2 eval", b(call("__builtin__", "eval", "1+1"), "."), "__builtin__.eval"},
		{"exec", b(call("builtins", "exec", "x=1"), "."), "builtins.exec"},
		{"compile", b(call("builtins", "compile", "x"), "."), "builtins.compile"},
		{"getattr", b(call("builtins", "getattr", "x"), "."), "builtins.getattr"},
		{"__import__", b(call("builtins", "__import__", "os"), "."), "builtins.__import__"},
		{"open", b(call("builtins", "open", "/etc/passwd"), "."), "builtins.open"},
		{"runpy", b(call("runpy", "_run_code", "x"), "."), "runpy._run_code"},
		{"webbrowser", b(call("webbrowser", "open", "http://x"), "."), "webbrowser.open"},
		{"socket", b(call("socket", "create_connection", "x"), "."), "socket.create_connection"},
		{"pty", b(call("pty", "spawn", "sh"), "."), "pty.spawn"},
		{"importlib", b(call("importlib", "import_module", "os"), "."), "importlib.import_module"},
		{"pickle.loads", b(call("pickle", "loads", "x"), "."), "pickle.loads"},
		{"os.path submodule", b(call("os.path", "join", "x"), "."), "os.path.join"},
		{"stack global", b("\x80\x04", "\x8c\x02os\x8c\x06system\x93", "\x8c\x02id\x85R."), "os.system"},
		{"memo indirection", b("\x80\x02", "cos\nsystem\nq\x01", "0", "}q\x02", "h\x01", binunicode("id"), "\x85R", "."), "os.system"},
		{"long memo", b("\x80\x02", "cos\nsystem\nr", u32(70000), "0", "j", u32(70000), binunicode("id"), "\x85R."), "os.system"},
		{"protocol 0 put/get", b("cos\nsystem\np0\n0g0\n(S'id'\ntR."), "os.system"},
		{"inst", b("(S'id'\nios\nsystem\n."), "os.system"},
		{"obj", b("(cos\nsystem\nS'id'\no."), "os.system"},
		{"build setstate", b("\x80\x02ccollections\nOrderedDict\n)R}", "X\x0c\x00\x00\x00__setstate__", call("builtins", "eval", "1"), "sb."), "builtins.eval"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := read(c.data)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, g := range p.Globals {
				if g.FullName() == c.global {
					found = true
					if g.Class != pickle.Unsafe {
						t.Errorf("%s classed %s", c.global, g.Class)
					}
				}
			}
			if !found {
				t.Errorf("%s not found in %+v", c.global, p.Globals)
			}
			if p.WeightsOnly() {
				t.Error("the weights-only verdict accepts it")
			}
		})
	}
}

func TestClassify(t *testing.T) {
	for name, want := range map[string]pickle.Class{
		"torch._utils._rebuild_tensor_v2": pickle.Allowed, "torch.FloatStorage": pickle.Allowed,
		"collections.OrderedDict": pickle.Allowed, "torch.bfloat16": pickle.Allowed,
		"torch.storage.UntypedStorage": pickle.Allowed, "numpy.core.multiarray._reconstruct": pickle.Unknown,
		"__main__.MyModel": pickle.Unknown, "builtins.dict": pickle.Unknown, "builtins.set": pickle.Allowed,
		"os.system": pickle.Unsafe, "sys.modules": pickle.Unsafe, "builtins.eval": pickle.Unsafe,
		"__builtin__.getattr": pickle.Unsafe, "torch.hub.load": pickle.Unsafe, "x.__reduce__": pickle.Unsafe,
	} {
		i := strings.LastIndexByte(name, '.')
		if got := pickle.Classify(name[:i], name[i+1:]); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// TestBenign: a state dict as torch.save writes it (protocol 2) is accepted and its tree read.
func TestBenign(t *testing.T) {
	data := b("\x80\x02ccollections\nOrderedDict\nq\x00)Rq\x01(",
		binunicode("w"), "ctorch._utils\n_rebuild_tensor_v2\nq\x02((", binunicode("storage"),
		"ctorch\nFloatStorage\nq\x03", binunicode("0"), binunicode("cpu"), "K\x06tq\x04QK\x00K\x02K\x03\x86K\x03K\x01\x86\x89ccollections\nOrderedDict\n)Rtq\x05Rq\x06",
		binunicode("epoch"), "K\x07u}b.")
	p, err := read(data)
	if err != nil {
		t.Fatal(err)
	}
	if !p.WeightsOnly() {
		t.Fatalf("refused: %+v %+v %+v", p.Globals, p.Opcodes, p.Rejections)
	}
	r := p.Root
	if !r.IsCallOf("collections.OrderedDict") || len(r.Keys) != 2 || r.Keys[0].Str != "w" || !r.Vals[0].IsCallOf("torch._utils._rebuild_tensor_v2") {
		t.Fatalf("root %+v", r)
	}
	if r.Vals[1].Int != 7 {
		t.Errorf("epoch %d", r.Vals[1].Int)
	}
	if p.End != int64(len(data)) {
		t.Errorf("end %d of %d", p.End, len(data))
	}
}

// TestProtocol4Refused: opcodes the weights-only unpickler lacks (FRAME, STACK_GLOBAL, MEMOIZE,
// SHORT_BINUNICODE) refuse the pickle even when every global is allowed.
func TestProtocol4Refused(t *testing.T) {
	p, err := read(b("\x80\x04\x95\x20\x00\x00\x00\x00\x00\x00\x00\x8c\x0bcollections\x94\x8c\x0bOrderedDict\x94\x93\x94)R\x94."))
	if err != nil {
		t.Fatal(err)
	}
	if p.WeightsOnly() || len(p.Opcodes) == 0 {
		t.Fatalf("accepted: %+v", p)
	}
	if len(p.Globals) != 1 || p.Globals[0].Class != pickle.Allowed {
		t.Errorf("globals %+v", p.Globals)
	}
}

func TestRejections(t *testing.T) {
	for name, data := range map[string][]byte{
		"reduce of a string": b(binunicode("f"), ")R."),
		"append to a dict":   b("}K\x01a."),
		"setitem to a list":  b("]K\x01K\x02s."),
		"persid not storage": b(binunicode("module"), "\x85Q."),
		"persid of a string": b(binunicode("x"), "Q."),
		"build of a dict":    b("}}b."),
		"newobj of a string": b(binunicode("f"), ")\x81."),
	} {
		p, err := read(data)
		if err != nil {
			if name == "append to a dict" || name == "setitem to a list" {
				continue // malformed for any unpickler
			}
			t.Errorf("%s: %v", name, err)
			continue
		}
		if p.WeightsOnly() {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestMalformed: every malformed pickle is a *FormatError at the offset of the opcode at fault.
func TestMalformed(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		off  int64
		big  bool
	}{
		{"empty", nil, 0, false},
		{"no stop", b("\x80\x02K\x01"), 4, false},
		{"underflow", b("\x80\x02R."), 2, false},
		{"pop mark without mark", b("e."), 0, false},
		{"memo miss", b("\x80\x02h\x05."), 2, false},
		{"huge binunicode", b("\x80\x02X\xff\xff\xff\xff."), 2, false},
		{"huge binbytes8", b("\x80\x04\x8e", u64(1<<62), "."), 2, false},
		{"huge long4", b("\x8b\xff\xff\xff\x7f."), 0, false},
		{"unknown opcode", b("\x80\x02\xff."), 2, false},
		{"stack global of ints", b("K\x01K\x02\x93."), 4, false},
		{"deep marks", bytes.Repeat([]byte("("), pickle.MaxMarks+1), pickle.MaxMarks, true},
		{"long line", b("c", strings.Repeat("a", pickle.MaxLine+1), "\n"), 0, true},
	}
	for _, c := range cases {
		_, err := read(c.data)
		var fe *pickle.FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %v, not a FormatError", c.name, err)
			continue
		}
		if fe.Offset != c.off {
			t.Errorf("%s: offset %d, want %d (%v)", c.name, fe.Offset, c.off, err)
		}
		if c.big != errors.Is(err, pickle.ErrTooLarge) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func allocated(fn func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	fn()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// allocLimit is the most reading an n-byte pickle may allocate.
func allocLimit(n int) uint64 { return 256<<10 + 160*uint64(n) }

// TestMemoBomb: a pickle that appends a list to itself and fetches it from the memo a million
// times costs pointers, not copies, and stays within allocLimit.
func TestMemoBomb(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("\x80\x02]q\x00(")
	for i := 0; i < 20000; i++ {
		sb.WriteString("h\x00h\x00")
	}
	sb.WriteString("e")
	for i := 0; i < 20000; i++ {
		sb.WriteString("(h\x00h\x00eh\x00a")
	}
	sb.WriteString(".")
	data := []byte(sb.String())
	var err error
	if a := allocated(func() { _, err = read(data) }); a > allocLimit(len(data)) {
		t.Errorf("%d bytes allocated for %d", a, len(data))
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadAt: offsets are the reader's, and reading stops at STOP (the bytes after it are left).
func TestReadAt(t *testing.T) {
	data := b("junk", "\x80\x02K\x01.", "after")
	p, err := pickle.Read(bytes.NewReader(data), 4, int64(len(data)))
	if err != nil || p.Root.Int != 1 || p.End != 9 || p.Offset != 4 {
		t.Fatalf("%+v %v", p, err)
	}
	_, err = pickle.Read(bytes.NewReader(data), 4, 7)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("%v", err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add(b("\x80\x02", call("os", "system", "echo hi"), "."))
	f.Add(b("\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x02id\x85R."))
	f.Add(b("(S'id'\nios\nsystem\n."))
	f.Add(b("\x80\x02ccollections\nOrderedDict\nq\x00)Rq\x01(X\x01\x00\x00\x00wK\x01u}b."))
	f.Add(b("\x80\x02]q\x00(h\x00h\x00eh\x00a."))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p *pickle.Pickle
		var err error
		if a := allocated(func() { p, err = read(data) }); a > allocLimit(len(data))+uint64(len(data))*64 {
			t.Fatalf("%d bytes allocated for %d", a, len(data))
		}
		if err == nil && (p.Root == nil || p.End > int64(len(data))) {
			t.Fatalf("no root or end %d past %d", p.End, len(data))
		}
		var fe *pickle.FormatError
		if err != nil && (!errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > int64(len(data))) {
			t.Fatalf("%v", err)
		}
	})
}

// TestClassifyKnownGadgets: the gadgets of picklescan's and fickling's lists and of the 2025–26
// advisories are unsafe however the pickle splits module and name; Python 2 names are renamed only
// as PyTorch renames them (exceptions.set is no builtins.set: torch refuses it).
func TestClassifyKnownGadgets(t *testing.T) {
	for _, c := range []struct {
		module, name string
		want         pickle.Class
	}{
		{"pydoc", "pipepager", pickle.Unsafe},
		{"_operator", "attrgetter", pickle.Unsafe},
		{"operator", "itemgetter", pickle.Unsafe},
		{"torch", "os.system", pickle.Unsafe},
		{"torch.os", "system", pickle.Unsafe},
		{"torch", "hub.load", pickle.Unsafe},
		{"torch.hub", "load", pickle.Unsafe},
		{"torch.serialization", "load", pickle.Unsafe},
		{"numpy.testing._private.utils", "runstring", pickle.Unsafe},
		{"__builtin__", "intern", pickle.Unsafe}, // NAME_MAPPING: sys.intern
		{"__builtin__", "set", pickle.Allowed},
		{"exceptions", "set", pickle.Unknown},
		{"exceptions", "StandardError", pickle.Unknown}, // builtins.Exception: not allowlisted
		{"builtins", "slice", pickle.Unknown},
		{"builtins", "print", pickle.Unsafe},
		{"transformers.models.llama", "LlamaConfig", pickle.Unknown},
	} {
		if got := pickle.Classify(c.module, c.name); got != c.want {
			t.Errorf("%s.%s: %s, want %s", c.module, c.name, got, c.want)
		}
	}
}

// TestTargets: SETITEM and SETITEMS only on dict, OrderedDict and Counter (torch ≥ 2.10); BUILD not
// on the bytes of _codecs.encode nor a layout.
func TestTargets(t *testing.T) {
	tensor := "ctorch._utils\n_rebuild_tensor_v2\n((" + binunicode("storage") + "ctorch\nFloatStorage\n" + binunicode("0") +
		binunicode("cpu") + "K\x02tQK\x00K\x02\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtR"
	for _, c := range []struct {
		name, data string
		ok         bool
	}{
		{"setitem on a dict", "\x80\x02}K\x00K\x01s.", true},
		{"setitems on an OrderedDict", "\x80\x02ccollections\nOrderedDict\n)R(K\x00K\x01u.", true},
		{"setitem on a Counter", "\x80\x02ccollections\nCounter\n)RK\x00K\x01s.", true},
		{"setitem on a tensor", "\x80\x02" + tensor + "K\x00K\x07s.", false},
		{"setitems on a tensor", "\x80\x02" + tensor + "(K\x00K\x07u.", false},
		{"setitem on a set", "\x80\x02cbuiltins\nset\n)RK\x00K\x01s.", false},
		{"build on a tensor", "\x80\x02" + tensor + "}b.", true},
		{"build on encode's bytes", "\x80\x02c_codecs\nencode\n" + binunicode("a") + binunicode("latin1") + "\x86R}b.", false},
	} {
		p, err := read(b(c.data))
		if got := err == nil && p.WeightsOnly(); got != c.ok {
			t.Errorf("%s: accepted %v (err %v, %+v), want %v", c.name, got, err, p.Rejections, c.ok)
		}
	}
}
