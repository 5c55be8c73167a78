package pickle

// The weights-only unpickler's rules on what an operation may act on, as torch ≥ 2.10 has them
// (torch/_weights_only_unpickler.py; 2.10.0a0 line numbers, and the pytorch pull request for what
// that pre-release lacks). stdiff's machine applies them without running anything; Debian's torch
// (1.13) predates both, so they come from reading the 2.10 source, not from running it.
//
//   - SETITEM and SETITEMS only on a dict, collections.OrderedDict or collections.Counter
//     (_check_set_item_target, added by pytorch#170085, in 2.10.0; before it SETITEM wrote into
//     whatever was on the stack, a tensor included).
//   - BUILD only on a Tensor, a Parameter, an OrderedDict, or an instance of an allowlisted class
//     (the BUILD branch, 2.10.0a0 lines 417-448): the result of an allowlisted function that is no
//     such instance (_codecs.encode's bytes, _get_layout's layout) is refused.
//   - APPEND and APPENDS only on a list (_check_append_target, line 455); REDUCE and NEWOBJ only of
//     an allowlisted global (lines 360-415); a persistent id only a tuple whose first item is
//     "storage", or an int (line 520); globals only by GLOBAL, looked up after Python 2 renaming
//     (_read_global_instruction, line 230) and never from sys, os, posix, nt (line 80).

// setItemTarget reports whether SETITEM and SETITEMS may set items of o: a dict, or the result of
// calling collections.OrderedDict or collections.Counter.
func setItemTarget(o *Object) bool {
	return o.Kind == Dict || (o.Kind == Call && (o.IsCallOf("collections.OrderedDict") || o.IsCallOf("collections.Counter")))
}

// notInstances are the allowlisted callables whose results are no instance of an allowlisted
// class, so BUILD on them is refused.
var notInstances = map[string]bool{"_codecs.encode": true, "torch.serialization._get_layout": true}

// buildTarget reports whether BUILD may set the state of o: the result of calling an allowlisted
// global that makes a tensor, a parameter or an instance of an allowlisted class.
func buildTarget(o *Object) bool {
	return o.Kind == Call && allowedGlobal(o.Func) && !notInstances[Normalize(o.Func.Module, o.Func.Name)]
}
