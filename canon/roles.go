package canon

import (
	"github.com/stdiff/stdiff/canon/onnx"
	"github.com/stdiff/stdiff/canon/torch"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Role is what a tensor is to the model of its file: one of its weights, or something the file holds
// beside them. Codes are stable and safe to match in scripts; cmd/stdiff/docs/scripting.md lists them.
type Role string

// Roles of tensors.
const (
	// RoleWeight: a weight of the model (a parameter or a buffer of its state dict, an initializer).
	RoleWeight Role = "weight"
	// RoleAlias: a view of the very bytes of an earlier tensor of the file (a tied weight: same storage,
	// offset, dtype, shape and stride), which a conversion drops, as transformers' save_model and
	// convert.py do. Its storage is counted once, under the tensor it aliases.
	RoleAlias Role = "alias"
	// RoleOptimizer: optimizer state of a training checkpoint (Adam's moments, its step).
	RoleOptimizer Role = "optimizer"
	// RoleTraining: other training state of a checkpoint (a callback's best score, loops, schedulers,
	// a gradient scaler, random states).
	RoleTraining Role = "training"
	// RoleConstant: a constant of a graph (an ONNX Constant node's value, a tensor attribute of a node),
	// not an initializer.
	RoleConstant Role = "constant"
)

// RoleOrder lists the roles in the order reports list them.
var RoleOrder = []Role{RoleWeight, RoleAlias, RoleOptimizer, RoleTraining, RoleConstant}

// optimizerKeys and trainingKeys are the top-level keys of training checkpoints (PyTorch Lightning's,
// and the dicts training scripts torch.save) whose tensors are not the model's weights.
var (
	optimizerKeys = []string{"optimizer_states", "optimizer", "optimizer_state_dict", "optim", "optimizers"}
	trainingKeys  = []string{"callbacks", "loops", "lr_schedulers", "lr_scheduler", "scheduler", "schedulers",
		"scaler", "grad_scaler", "amp", "rng_state", "rng_states", "step", "global_step", "epoch", "best_model_score"}
	// checkpointKeys say that a pickle is a training checkpoint, whose optimizer and training keys
	// are what they say (in a bare state dict, a module may be named "scheduler").
	checkpointKeys = []string{"optimizer_states", "optimizer", "optimizer_state_dict", "pytorch-lightning_version", "global_step", "epoch"}
)

// Roles says what each tensor of m is, in Tensors order, and for a RoleAlias the index of the tensor
// it aliases (aliasOf[i] is -1 for every other tensor). Tensors of PyTorch files alias when they
// view one storage at the same offset with the same dtype, shape and stride (the first in file order
// is the one kept); optimizer and training state are told by the top-level keys of a training
// checkpoint; ONNX graph constants by where they are. Every other tensor is a RoleWeight. Where
// every tensor is a weight (safetensors, GGUF: every format but PyTorch and ONNX) both are nil, so
// that a header of millions of tensors costs nothing more; RoleAt reads either.
func (m *Model) Roles() (roles []Role, aliasOf []int) {
	of, _ := m.Detail.(*onnx.File)
	tf, _ := m.Detail.(*torch.File)
	if of == nil && tf == nil {
		return nil, nil
	}
	roles, aliasOf = make([]Role, len(m.Tensors)), make([]int, len(m.Tensors))
	for i := range roles {
		roles[i], aliasOf[i] = RoleWeight, -1
	}
	switch {
	case of != nil && len(of.Tensors) == len(m.Tensors):
		for i, t := range of.Tensors {
			if t.Kind == "constant" || t.Kind == "attribute" {
				roles[i] = RoleConstant
			}
		}
	case tf != nil && len(tf.Tensors) == len(m.Tensors):
		f := tf
		top := func(name string) string { k, _, _ := strings.Cut(name, "."); return k }
		checkpoint := false
		for _, e := range f.Metadata {
			checkpoint = checkpoint || slices.Contains(checkpointKeys, top(e.Key))
		}
		for _, t := range f.Tensors {
			checkpoint = checkpoint || slices.Contains(checkpointKeys, top(t.Name))
		}
		type view struct {
			storage, dtype, shape string
			offset                int64
		}
		first := map[view]int{}
		for i, t := range f.Tensors {
			if checkpoint {
				switch k := top(t.Name); {
				case slices.Contains(optimizerKeys, k):
					roles[i] = RoleOptimizer
				case slices.Contains(trainingKeys, k):
					roles[i] = RoleTraining
				}
			}
			if t.Storage == "" || len(t.Aliases) == 0 {
				continue
			}
			v := view{storage: t.Storage, dtype: t.DType, offset: t.StorageOffset, shape: dimsKey(t.Shape, t.Stride)}
			if j, ok := first[v]; ok {
				roles[i], aliasOf[i] = RoleAlias, j
				continue
			}
			first[v] = i
		}
	}
	return roles, aliasOf
}

// dimsKey is a shape and a stride as one comparable string.
func dimsKey(shape, stride []int64) string {
	b := make([]byte, 0, 64)
	for _, d := range shape {
		b = strconv.AppendInt(append(b, ' '), d, 10)
	}
	b = append(b, '/')
	for _, d := range stride {
		b = strconv.AppendInt(append(b, ' '), d, 10)
	}
	return string(b)
}

// RoleAt is the role of the i-th tensor in roles (Roles's): RoleWeight where roles is nil.
func RoleAt(roles []Role, i int) Role {
	if roles == nil {
		return RoleWeight
	}
	return roles[i]
}

// RoleCount is the tensors of one role other than RoleWeight, counted as Params counts: tensors,
// elements and bytes.
type RoleCount struct {
	Role     Role   `json:"role"`
	Tensors  int    `json:"tensors"`
	Elements uint64 `json:"elements"`
	Bytes    uint64 `json:"bytes"`
}

// ParamsApart counts the tensors Params leaves out, by role (in RoleOrder, those present only):
// aliases, optimizer and training state, graph constants.
func (m *Model) ParamsApart() []RoleCount {
	roles, _ := m.Roles()
	if roles == nil {
		return nil
	}
	var out []RoleCount
	for _, r := range RoleOrder[1:] {
		c := RoleCount{Role: r}
		for i := range m.Tensors {
			if t := &m.Tensors[i]; roles[i] == r && !t.NameOnly() {
				e, _ := t.Elements()
				c.Tensors++
				c.Elements, _ = bits.Add64(c.Elements, e, 0)
				c.Bytes += t.Len()
			}
		}
		if c.Tensors > 0 {
			out = append(out, c)
		}
	}
	return out
}

// Untie takes out of list (indices of m's tensors missing on the other side of a comparison) the tied
// aliases of a tensor in kept (indices of m's tensors on both sides), and the tensors an alias in
// kept views: a conversion drops aliases (transformers' save_model, convert.py). It returns what is
// left and, for each tensor taken out, its index and that of the tensor kept in its place.
func (m *Model) Untie(list, kept []int) (left []int, tied [][2]int) {
	_, aliasOf := m.Roles()
	if len(list) == 0 || aliasOf == nil {
		return list, nil
	}
	group := func(i int) int {
		if aliasOf[i] >= 0 {
			return aliasOf[i]
		}
		return i
	}
	keeper := map[int]int{} // group → a tensor of it on both sides
	for _, k := range kept {
		keeper[group(k)] = k
	}
	for _, i := range list {
		if k, ok := keeper[group(i)]; ok { // a tensor in list is in kept: k is another
			tied = append(tied, [2]int{i, k})
		} else {
			left = append(left, i)
		}
	}
	return left, tied
}
