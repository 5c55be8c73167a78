package onnxsrc

import (
	"slices"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/onnx"
)

// graph is what the ONNX model's graph says of its initializers, for pairing them with the source's
// tensors.
type graph struct {
	om, sm *canon.Model
	keep   func(string) bool
	uses   map[string][]onnx.Use
	index  *canon.NameIndex
	roles  []canon.Role // of the source's tensors
}

func newGraph(om, sm *canon.Model, keep func(string) bool) *graph {
	g := &graph{om: om, sm: sm, keep: keep, index: canon.NewNameIndex(sm.Tensors)}
	if om.ONNX != nil {
		g.uses = om.ONNX.Uses
	}
	g.roles, _ = sm.Roles()
	return g
}

// expected is the name of the source tensor the nodes reading an initializer name: every reading is
// by a node of one module (/encoder/layer.0/fc/MatMul: encoder.layer.0.fc) as the input a weight
// (1) or a bias (2) of MatMul, Gemm, Conv or ConvTranspose is. "" when they do not agree or say nothing.
func expected(uses []onnx.Use) string {
	want := ""
	for _, u := range uses {
		last := strings.LastIndexByte(u.Node, '/')
		if len(u.Node) < 2 || u.Node[0] != '/' || last <= 1 {
			return ""
		}
		var role string
		switch {
		case u.Op != "MatMul" && u.Op != "Gemm" && u.Op != "Conv" && u.Op != "ConvTranspose":
			return ""
		case u.Input == 1:
			role = ".weight"
		case u.Input == 2 && u.Op != "MatMul":
			role = ".bias"
		default:
			return ""
		}
		name := strings.ReplaceAll(u.Node[1:last], "/", ".") + role
		if want != "" && name != want {
			return ""
		}
		want = name
	}
	return want
}

// source is the unpaired source tensor named name, or the one source tensor whose name ends with
// "."+name (a source saved with its base model's prefix, model.layer0.weight), -1 when none is.
func (g *graph) source(name string, paired []bool) int {
	free := func(j int) bool {
		t := &g.sm.Tensors[j]
		switch canon.RoleAt(g.roles, j) {
		case canon.RoleOptimizer, canon.RoleTraining:
			return false
		}
		return !paired[j] && g.keep(t.Name) && !t.NameOnly()
	}
	if j, ok := g.index.Find(name); ok {
		if free(j) {
			return j
		}
		return -1
	}
	found := -1
	for j := range g.sm.Tensors {
		if strings.HasSuffix(g.sm.Tensors[j].Name, "."+name) && free(j) {
			if found >= 0 {
				return -1
			}
			found = j
		}
	}
	return found
}

// pairByName pairs each of loose whose readers name a source tensor of its shape (as it is, or
// transposed), marks that tensor paired, and returns the rest of loose.
func (g *graph) pairByName(loose []int, paired []bool, res *Result) []int {
	var rest []int
	for _, i := range loose {
		t := &g.om.Tensors[i]
		j := -1
		if name := expected(g.uses[t.Name]); name != "" {
			j = g.source(name, paired)
		}
		if j < 0 {
			rest = append(rest, i)
			continue
		}
		s := &g.sm.Tensors[j]
		tr := TransformNone
		switch {
		case slices.Equal(t.Shape, s.Shape):
		case len(t.Shape) == 2 && slices.Equal(transposed(t.Shape), s.Shape):
			tr = TransformTranspose
		default:
			rest = append(rest, i)
			continue
		}
		paired[j] = true
		res.Pairs = append(res.Pairs, Pair{ONNX: i, Source: j, Transform: tr, How: ByGraph})
	}
	return rest
}

// reading is how every node reading an initializer reads it: operator, input and, for Gemm, transB;
// "" when its readers differ or there are none.
func (g *graph) reading(name string) string {
	key := ""
	for _, u := range g.uses[name] {
		k := u.Op + "/" + strconv.Itoa(u.Input) + "/" + strconv.FormatBool(u.TransB)
		if key != "" && k != key {
			return ""
		}
		key = k
	}
	return key
}

// stored are the orientations in which exporters store a Linear layer's weight for the operator that
// reads it (torch.onnx.export): MatMul computes x·W, so W is the weight transposed; Gemm with transB
// transposes it itself.
var stored = map[string]Transform{
	"MatMul/1/false": TransformTranspose,
	"Gemm/1/true":    TransformNone,
	"Gemm/1/false":   TransformTranspose,
}

// orient settles the orientation of the pairs (by the graph or by value) of square initializers: the
// one the model's other weights read the same way have (their shapes tell: a GPT-2 Conv1D weight is
// stored as it is, a Linear one transposed), else the one exporters give a Linear layer's weight;
// where those disagree, nothing is settled. A pair found by value in the other orientation is then a
// difference (ByShape) unless its values match in both (a symmetric matrix).
func (g *graph) orient(res *Result, onnxDigest [2]map[int][32]byte, srcDigest map[int][32]byte) {
	seen := map[string]map[Transform]bool{} // reading → the orientations of non-square weights
	for _, p := range res.Pairs {
		t := &g.om.Tensors[p.ONNX]
		if len(t.Shape) == 2 && t.Shape[0] != t.Shape[1] && p.How != ByShape {
			k := g.reading(t.Name)
			if seen[k] == nil {
				seen[k] = map[Transform]bool{}
			}
			seen[k][p.Transform] = true
		}
	}
	for n := range res.Pairs {
		p := &res.Pairs[n]
		t := &g.om.Tensors[p.ONNX]
		if len(t.Shape) != 2 || t.Shape[0] != t.Shape[1] || t.Shape[0] < 2 || (p.How != ByGraph && p.How != ByValue) {
			continue
		}
		k := g.reading(t.Name)
		want, ok := stored[k]
		if s := seen[k]; len(s) == 1 {
			for tr := range s {
				want, ok = tr, true
			}
		} else if len(s) > 1 {
			ok = false
		}
		if !ok {
			if p.How == ByGraph { // by value, as the exporter left it
				if d, ok := srcDigest[p.Source]; ok && d != onnxDigest[0][p.ONNX] && d == onnxDigest[1][p.ONNX] {
					p.Transform = TransformTranspose
				}
			}
			continue
		}
		if p.Transform == want {
			continue
		}
		d, known := srcDigest[p.Source]
		k1 := 0
		if want == TransformTranspose {
			k1 = 1
		}
		dw, haveW := onnxDigest[k1][p.ONNX]
		p.Transform = want
		if p.How == ByValue && !(known && haveW && d == dw) {
			p.How = ByShape
		}
	}
}
