// Package holds says what a model holds besides its tensors, which a copy must not lose (dupes asks it
// without knowing the formats): for a GGUF
// file the key-value pairs llama.cpp reads (GGUF); for a checkpoint package torch read, whether it
// holds anything at all besides its tensors (OnlyTensors):
// a value that is no tensor (an epoch, hyperparameters, optimizer settings), an attribute set by
// BUILD (an OrderedDict's _metadata), a wrapper around the tensors (a "state_dict" key), a second
// pickle, or a global the weights-only unpickler refuses. Such a checkpoint is more than the tensors
// a safetensors file could hold: dupes never deletes it as a copy of one.
package holds

import (
	"io"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/pickle"
	"github.com/stdiff/stdiff/canon/torch"
)

// Checkpoint reports whether m is one PyTorch, pickle or NumPy file as canon.Read reads it (not a set):
// what OnlyTensors looks into.
func Checkpoint(m *canon.Model) bool {
	_, ok := m.Detail.(*torch.File)
	return ok
}

// OnlyTensors reports whether the checkpoint m (Checkpoint), whose bytes r holds, is a flat dict (or
// OrderedDict with no state) from names to tensors and nothing else: a .npy or .npz array without
// pickles, or a torch.save file (zip, legacy) or bare pickle whose one object pickle is such a dict.
// Anything it cannot tell (a compressed pickle, a pickle it cannot read again, a Model that is no
// checkpoint) is "no".
func OnlyTensors(m *canon.Model, r io.ReaderAt) bool {
	f, ok := m.Detail.(*torch.File)
	if !ok {
		return false
	}
	if len(f.Metadata) > 0 {
		return false
	}
	for _, p := range f.Pickles {
		if !p.WeightsOnly {
			return false
		}
	}
	var root *torch.PickleInfo
	switch f.Format {
	case torch.FormatNPY, torch.FormatNPZ:
		return len(f.Pickles) == 0
	case torch.FormatZip, torch.FormatPickle:
		if len(f.Pickles) != 1 || (f.Format == torch.FormatZip && !strings.HasSuffix(f.Pickles[0].Entry, "data.pkl")) {
			return false
		}
		root = &f.Pickles[0]
	case torch.FormatLegacy:
		for i := range f.Pickles {
			if f.Pickles[i].Entry == "object" {
				root = &f.Pickles[i]
			}
		}
	}
	if root == nil || root.Offset < 0 || root.End <= root.Offset {
		return false
	}
	p, err := pickle.Read(r, root.Offset, root.End)
	if err != nil || p.Root == nil {
		return false
	}
	return flat(p.Root)
}

// flat reports whether o is a dict or a stateless OrderedDict whose keys are text and whose values
// are tensors.
func flat(o *pickle.Object) bool {
	switch {
	case o.Kind == pickle.Dict:
	case o.IsCallOf("collections.OrderedDict") && noState(o.State) && (o.Args == nil || len(o.Args.Items) == 0):
	default:
		return false
	}
	if len(o.Keys) != len(o.Vals) || len(o.Items) > 0 {
		return false
	}
	for i, k := range o.Keys {
		if _, ok := k.Text(); !ok || !tensor(o.Vals[i]) {
			return false
		}
	}
	return true
}

// noState reports whether a BUILD state is absent or empty.
func noState(s *pickle.Object) bool {
	return s == nil || s.Kind == pickle.None || (s.Kind == pickle.Dict && len(s.Keys) == 0)
}

// rebuilds are the calls that make a tensor; parameters those that wrap one (their first argument).
var (
	rebuilds = map[string]bool{
		"torch._utils._rebuild_tensor": true, "torch._utils._rebuild_tensor_v2": true, "torch._utils._rebuild_tensor_v3": true,
	}
	parameters = map[string]bool{"torch._utils._rebuild_parameter": true, "torch.nn.parameter.Parameter": true}
)

// tensor reports whether o is a tensor (or a parameter wrapping one) with no state of its own.
func tensor(o *pickle.Object) bool {
	if o == nil || o.Kind != pickle.Call || o.Func == nil || !noState(o.State) {
		return false
	}
	name := o.Func.FullName()
	switch {
	case rebuilds[name]:
		return true
	case parameters[name]:
		return o.Args != nil && len(o.Args.Items) > 0 && tensor(o.Args.Items[0])
	}
	return false
}

// UnsafePickle reports whether m is a PyTorch or NumPy file whose pickles name globals outside
// torch's weights-only allowlist.
func UnsafePickle(m *canon.Model) bool {
	for i := range m.Findings {
		if c := m.Findings[i].Code; (m.Format == canon.FormatPyTorch || m.Format == canon.FormatNumPy) && (c == finding.CodeUnsafeGlobal || c == finding.CodeUnknownGlobal) {
			return true
		}
	}
	return false
}

// OnlyGlobals reports whether every error of m is about a pickle's globals.
func OnlyGlobals(m *canon.Model) bool {
	for i := range m.Findings {
		if fd := &m.Findings[i]; fd.Severity == finding.SevError && fd.Code != finding.CodeUnsafeGlobal && fd.Code != finding.CodeUnknownGlobal {
			return false
		}
	}
	return true
}
