package pickle

import (
	"strings"
	"sync"
)

// Class says what stdiff makes of a global a pickle names.
type Class uint8

// The classes of globals.
const (
	// Allowed: in the allowlist of PyTorch's weights-only unpickler (torch.load(weights_only=True)).
	Allowed Class = iota
	// Unknown: outside the allowlist, and not one of the globals known to run code.
	Unknown
	// Unsafe: runs code or reaches the system (os, subprocess, builtins.eval, …).
	Unsafe
)

// String names the class: "allowed", "unknown" or "unsafe".
func (c Class) String() string {
	switch c {
	case Allowed:
		return "allowed"
	case Unsafe:
		return "unsafe"
	}
	return "unknown"
}

// importMapping and nameMapping are the Python 2 names PyTorch's weights-only unpickler renames
// before it looks a global up (torch/_utils.py IMPORT_MAPPING and NAME_MAPPING, 2.10.0a0 lines
// 1081-1119; applied by _read_global_instruction, torch/_weights_only_unpickler.py line 230): a
// (module, name) pair first, else the module alone. Nothing else is renamed: "exceptions.set"
// stays exceptions.set, which torch refuses.
var (
	importMapping = sync.OnceValue(func() map[string]string {
		return map[string]string{
			"__builtin__": "builtins", "copy_reg": "copyreg", "Queue": "queue", "repr": "reprlib",
			"_abcoll": "collections.abc", "UserDict": "collections", "UserList": "collections",
			"UserString": "collections", "whichdb": "dbm", "StringIO": "io", "cStringIO": "io",
		}
	})
	nameMapping = sync.OnceValue(func() map[[2]string][2]string {
		return map[[2]string][2]string{
			{"__builtin__", "xrange"}: {"builtins", "range"}, {"__builtin__", "reduce"}: {"functools", "reduce"},
			{"__builtin__", "intern"}: {"sys", "intern"}, {"__builtin__", "unichr"}: {"builtins", "chr"},
			{"__builtin__", "unicode"}: {"builtins", "str"}, {"__builtin__", "long"}: {"builtins", "int"},
			{"itertools", "izip"}: {"builtins", "zip"}, {"itertools", "imap"}: {"builtins", "map"},
			{"itertools", "ifilter"}: {"builtins", "filter"}, {"itertools", "ifilterfalse"}: {"itertools", "filterfalse"},
			{"itertools", "izip_longest"}:    {"itertools", "zip_longest"},
			{"UserDict", "IterableUserDict"}: {"collections", "UserDict"}, {"UserList", "UserList"}: {"collections", "UserList"},
			{"UserString", "UserString"}: {"collections", "UserString"}, {"__builtin__", "basestring"}: {"builtins", "str"},
			{"exceptions", "StandardError"}: {"builtins", "Exception"}, {"UserDict", "UserDict"}: {"collections", "UserDict"},
		}
	})
)

// allowed is PyTorch's weights-only allowlist as of PyTorch 2.x (torch/_weights_only_unpickler.py,
// _get_allowed_globals), written out name by name; made at its first use.
var allowed = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, s := range []string{
		"collections.OrderedDict", "collections.Counter", "torch.nn.parameter.Parameter",
		"torch.serialization._get_layout", "torch.Size", "torch.Tensor", "torch.device",
		"_codecs.encode", "builtins.bytearray", "builtins.set", "builtins.complex",
		"torch._tensor._rebuild_from_type_v2",
	} {
		m[s] = true
	}
	for _, d := range []string{
		"float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
		"complex128", "complex64", "complex32", "qint8", "quint8", "qint32", "quint4x2", "quint2x4",
		"float8_e5m2", "float8_e4m3fn", "float8_e5m2fnuz", "float8_e4m3fnuz", "float8_e8m0fnu",
		"float4_e2m1fn_x2", "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2", "uint16", "uint32", "uint64",
		"uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7",
		"int1", "int2", "int3", "int4", "int5", "int6", "int7",
		"per_tensor_affine", "per_tensor_symmetric", "per_channel_affine", "per_channel_symmetric",
		"per_channel_affine_float_qparams",
	} {
		m["torch."+d] = true
	}
	for _, t := range []string{"Double", "Float", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool"} {
		for _, mod := range []string{"torch.", "torch.cuda."} {
			m[mod+t+"Tensor"] = true
			m[mod+t+"Storage"] = true
		}
		m["torch.sparse."+t+"Tensor"] = true
		m["torch.cuda.sparse."+t+"Tensor"] = true
	}
	for _, s := range []string{"ComplexDouble", "ComplexFloat", "QUInt8", "QInt8", "QInt32", "QUInt4x2", "QUInt2x4"} {
		m["torch."+s+"Storage"] = true
	}
	m["torch.storage.UntypedStorage"] = true
	m["torch.storage.TypedStorage"] = true
	for _, f := range []string{
		"_rebuild_parameter", "_rebuild_parameter_with_state", "_rebuild_qtensor", "_rebuild_tensor",
		"_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_sparse_tensor", "_rebuild_meta_tensor_no_storage",
		"_rebuild_wrapper_subclass", "_rebuild_device_tensor_from_numpy", "_rebuild_device_tensor_from_cpu_tensor",
	} {
		m["torch._utils."+f] = true
	}
	return m
})

func setOf(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

var (
	unsafeModules  = sync.OnceValue(func() map[string]bool { return setOf(unsafeModuleList) })
	unsafeNames    = sync.OnceValue(func() map[string]bool { return setOf(unsafeNameList) })
	reached        = sync.OnceValue(func() map[string]bool { return setOf(reachedModules) })
	builtinsAsData = sync.OnceValue(func() map[string]bool { return setOf(safeBuiltins) })
)

// Normalize returns the name under which PyTorch's weights-only unpickler looks a global up:
// module.name after its Python 2 renaming (NAME_MAPPING for the pair, else IMPORT_MAPPING for the
// module).
func Normalize(module, name string) string {
	if to, ok := nameMapping()[[2]string{module, name}]; ok {
		module, name = to[0], to[1]
	} else if m, ok := importMapping()[module]; ok {
		module = m
	}
	return module + "." + name
}

// Classify says whether module.name is in PyTorch's weights-only allowlist, is known to run code,
// reach the system or load another pickle (Unsafe: the lists in dangerous.go), or is merely
// outside the allowlist (Unknown). The whole dotted path counts, as pickle resolves it: a name may
// itself be dotted ("hub.load" in module "torch" is torch.hub.load), and a module reached through
// another's attribute is that module (torch.os.system is os.system).
func Classify(module, name string) Class {
	full := Normalize(module, name)
	if allowed()[full] {
		return Allowed
	}
	if unsafeNames()[full] {
		return Unsafe
	}
	segs := strings.Split(full, ".")
	for i := 1; i < len(segs); i++ {
		if unsafeModules()[strings.Join(segs[:i], ".")] {
			return Unsafe
		}
	}
	for j := 1; j < len(segs)-1; j++ {
		if reached()[segs[j]] {
			return Unsafe
		}
		if unsafeNames()[strings.Join(segs[j:], ".")] {
			return Unsafe
		}
	}
	if segs[0] == "builtins" && len(segs) == 2 && !builtinsAsData()[segs[1]] {
		return Unsafe
	}
	// Dunder names reach interpreter internals (__reduce__, __globals__, __subclasses__, …).
	for _, s := range segs[1:] {
		if strings.HasPrefix(s, "__") && strings.HasSuffix(s, "__") && s != "__newobj__" {
			return Unsafe
		}
	}
	return Unknown
}
