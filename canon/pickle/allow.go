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

// renamed maps Python 2 module names to the Python 3 ones unpicklers look globals up under.
var renamed = map[string]string{
	"__builtin__": "builtins", "exceptions": "builtins", "copy_reg": "copyreg", "cPickle": "pickle",
	"commands": "subprocess", "urllib2": "urllib.request", "httplib": "http.client", "cStringIO": "io",
	"StringIO": "io", "Queue": "queue", "thread": "_thread",
}

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

// unsafeModules are modules every global of which runs code or reaches the system (a module's
// submodules included). PyTorch blocks sys, os, posix and nt even from user allowlists.
var unsafeModules = []string{
	"os", "posix", "nt", "sys", "subprocess", "runpy", "webbrowser", "socket", "pty", "shutil",
	"importlib", "pickle", "_pickle", "marshal", "dill", "cloudpickle", "ctypes", "_ctypes", "code", "codeop",
	"platform", "multiprocessing", "asyncio", "signal", "urllib", "http", "requests", "ftplib", "smtplib",
	"telnetlib", "pathlib", "tempfile", "io", "_io", "posixpath", "ntpath", "pdb", "bdb", "timeit", "trace",
	"profile", "cProfile", "imp", "zipimport", "pkgutil", "site", "ensurepip", "venv", "distutils", "setuptools",
	"_posixsubprocess", "_thread", "threading", "gc", "inspect", "types", "torch.hub", "torch.package",
	"torch.jit", "torch.ops", "torch.utils.cpp_extension", "numpy.testing", "numpy.f2py", "numpy.distutils",
	"IPython", "nturl2path", "mmap", "fcntl", "resource", "select", "selectors", "ssl",
}

// unsafeNames are single globals that run code or reach the system in modules that are otherwise
// harmless.
var unsafeNames = map[string]bool{
	"builtins.eval": true, "builtins.exec": true, "builtins.execfile": true, "builtins.compile": true,
	"builtins.getattr": true, "builtins.setattr": true, "builtins.delattr": true, "builtins.__import__": true,
	"builtins.open": true, "builtins.input": true, "builtins.breakpoint": true, "builtins.globals": true,
	"builtins.locals": true, "builtins.vars": true, "builtins.exit": true, "builtins.quit": true,
	"builtins.help": true, "builtins.memoryview": true, "builtins.type": true, "builtins.object": true,
	"builtins.classmethod": true, "builtins.staticmethod": true, "builtins.property": true,
	"builtins.super": true, "builtins.apply": true, "builtins.reload": true, "builtins.file": true,
	"operator.attrgetter": true, "operator.methodcaller": true, "operator.getitem": true,
	"operator.call": true, "functools.partial": true, "functools.reduce": true,
	"copyreg._reconstructor": true, "copyreg.__newobj__": true, "copyreg.__newobj_ex__": true,
	"torch.load": true, "torch.save": true, "torch._C._load_for_lite_interpreter": true,
	"torch.serialization.load": true, "numpy.load": true, "numpy.save": true, "numpy.fromfile": true,
	"numpy.tofile": true, "numpy.memmap": true, "numpy.lib.npyio.load": true,
	"numpy.core.multiarray._reconstruct": false,
}

// Normalize returns the name under which an unpickler looks a global up: Python 2 module names
// mapped to Python 3's, as PyTorch and Python's pickle do.
func Normalize(module, name string) string {
	if m, ok := renamed[module]; ok {
		module = m
	}
	return module + "." + name
}

// Classify says whether module.name is in PyTorch's weights-only allowlist, runs code or reaches
// the system (Unsafe), or is merely outside the allowlist (Unknown).
func Classify(module, name string) Class {
	full := Normalize(module, name)
	if allowed()[full] {
		return Allowed
	}
	if unsafeNames[full] {
		return Unsafe
	}
	if m, ok := renamed[module]; ok {
		module = m
	}
	for _, u := range unsafeModules {
		if module == u || strings.HasPrefix(module, u+".") {
			return Unsafe
		}
	}
	// Dunder names reach interpreter internals (__reduce__, __globals__, __subclasses__, …).
	if strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__") && name != "__newobj__" {
		return Unsafe
	}
	return Unknown
}
