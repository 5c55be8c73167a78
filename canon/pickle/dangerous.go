package pickle

// Known-dangerous globals, as data. A global outside PyTorch's weights-only allowlist is refused
// by torch.load(weights_only=True) whatever it is; these lists only decide whether stdiff calls it
// "unsafe" (it runs code, reaches the system, or loads another pickle) rather than "unknown".
//
// Where the entries come from (read, not copied; each list is written out here by hand):
//   - PyTorch's own blocklist: torch/_weights_only_unpickler.py, _blocklisted_modules (sys, os,
//     posix, nt), which torch refuses even from user allowlists (2.10.0a0 line 80).
//   - picklescan (mmaitre314/picklescan, src/picklescan/scanner.py, _unsafe_globals, commit
//     05c3514d): whole modules marked "*" and single names (operator.attrgetter/itemgetter/
//     methodcaller, functools.partial, pydoc "*" for pydoc.pipepager and pydoc.locate,
//     torch.serialization.load, torch._inductor.codecache.compile_file, the idlelib, lib2to3,
//     trace, profile, doctest, ensurepip gadgets, …); a module marked "*" covers its submodules.
//   - fickling (trailofbits/fickling, fickling/fickle.py, UNSAFE_IMPORTS, commit 002cbb03): the
//     module list, including _operator, pydoc, pipes, pexpect, logging, uuid, _osx_support; and its
//     SAFE_BUILTINS, the builtins that are data (those stay "unknown", not "unsafe").
//   - Advisories of 2025–26: picklescan's bypasses through private aliases (_operator.attrgetter
//     for operator.attrgetter), attribute paths through a harmless module (torch.os.system,
//     torch.hub.load: a dotted name reaches whatever the module imports; fickling
//     GHSA-5j3x-jp52-966f "pickle resolves dotted names"), pydoc.pipepager running a shell
//     command, torch.hub.load fetching and running a repository's hubconf.py, numpy.f2py and
//     numpy.testing's runstring (an exec), and torch.load/numpy.load nesting another pickle.

// unsafeModuleList are modules every global of which is unsafe, their submodules included.
var unsafeModuleList = []string{
	// PyTorch's blocklist
	"sys", "os", "posix", "nt",
	// processes, code, imports
	"subprocess", "_posixsubprocess", "pty", "commands", "multiprocessing", "runpy", "code", "codeop",
	"marshal", "types", "importlib", "_frozen_importlib", "_frozen_importlib_external", "_imp", "imp",
	"pkgutil", "zipimport", "site", "gc", "inspect", "_interpreters", "_xxsubinterpreters",
	"compileall", "py_compile", "doctest", "unittest", "atexit",
	// operator and functools gadgets (fickling bans the modules whole)
	"_operator",
	// debuggers and profilers that run code strings
	"pdb", "bdb", "timeit", "trace", "profile", "cProfile",
	// network
	"socket", "_socket", "ssl", "http", "httplib", "urllib", "urllib2", "requests", "aiohttp", "asyncio",
	"webbrowser", "smtplib", "imaplib", "ftplib", "poplib", "telnetlib", "nntplib", "socketserver",
	"xmlrpc", "select", "selectors",
	// native code
	"ctypes", "_ctypes", "mmap",
	// nested pickles
	"pickle", "_pickle", "dill", "cloudpickle", "joblib", "shelve",
	// files and shells
	"shutil", "tempfile", "filecmp", "fileinput", "glob", "linecache", "pathlib", "io", "_io",
	"posixpath", "ntpath", "nturl2path", "distutils", "setuptools", "pydoc", "pexpect", "pipes",
	"tarfile", "zipfile", "sqlite3", "_sqlite3", "logging", "syslog", "fcntl", "resource",
	// processes and threads
	"signal", "_signal", "threading", "_thread", "platform", "uuid", "_osx_support", "_aix_support",
	// packaging and IDE tooling with code-running helpers
	"venv", "ensurepip", "pip", "idlelib", "lib2to3", "IPython",
	// numpy's code runners
	"numpy.f2py", "numpy.testing", "numpy.distutils",
	// torch entry points that load code or other files
	"torch.hub", "torch.package", "torch.jit", "torch.ops", "torch.utils.cpp_extension",
	"torch.utils.collect_env", "torch.utils.bottleneck", "torch._inductor.codecache",
}

// unsafeNameList are single globals (module.name, after PyTorch's Python 2 renaming) that are
// unsafe in modules that are otherwise harmless.
var unsafeNameList = []string{
	"builtins.eval", "builtins.exec", "builtins.execfile", "builtins.compile", "builtins.getattr",
	"builtins.setattr", "builtins.delattr", "builtins.hasattr", "builtins.__import__", "builtins.open",
	"builtins.input", "builtins.breakpoint", "builtins.globals", "builtins.locals", "builtins.vars",
	"builtins.exit", "builtins.quit", "builtins.help", "builtins.memoryview", "builtins.type",
	"builtins.classmethod", "builtins.staticmethod", "builtins.property", "builtins.super",
	"builtins.apply", "builtins.reload", "builtins.file", "builtins.print", "builtins.dir",
	"operator.attrgetter", "operator.itemgetter", "operator.methodcaller", "operator.getitem",
	"operator.call", "functools.partial", "functools.reduce", "functools.partialmethod",
	"copyreg._reconstructor", "copyreg.__newobj__", "copyreg.__newobj_ex__",
	"torch.load", "torch.save", "torch.serialization.load", "torch._C._load_for_lite_interpreter",
	"torch._dynamo.guards.GuardBuilder.get", "torch.fx.experimental.symbolic_shapes.ShapeEnv.evaluate_guards_expression",
	"torch.utils._config_module.ConfigModule.load_config", "torch.utils.data.datapipes.utils.decoder.basichandlers",
	"numpy.load", "numpy.save", "numpy.fromfile", "numpy.tofile", "numpy.memmap", "numpy.lib.npyio.load",
	"numpy.ctypeslib.load_library", "pandas.read_pickle", "pandas.io.pickle.read_pickle",
}

// reachedModules are the modules whose reach through an attribute of another module is itself
// unsafe: torch.os.system is os.system, whatever torch is.
var reachedModules = []string{
	"os", "posix", "nt", "sys", "subprocess", "builtins", "importlib", "runpy", "pickle", "shutil",
	"socket", "ctypes", "pty", "marshal", "operator", "_operator", "functools", "pydoc",
}

// safeBuiltins are the builtins that only make data (fickling's SAFE_BUILTINS): outside PyTorch's
// allowlist they are "unknown", not "unsafe".
var safeBuiltins = []string{
	"bool", "int", "float", "complex", "str", "bytes", "bytearray", "list", "tuple", "set", "frozenset",
	"dict", "len", "abs", "sum", "min", "max", "round", "pow", "divmod", "sorted", "reversed", "enumerate",
	"zip", "range", "map", "filter", "slice", "iter", "next", "all", "any", "hash", "id", "repr", "ascii",
	"bin", "hex", "oct", "ord", "chr", "isinstance", "issubclass", "object", "callable", "format",
	"Exception", "ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError",
}
