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
	// mixed are the initializers (indices) that orient found read in both orientations, not
	// symmetric: they hold no source tensor but their pair's.
	mixed map[int]bool
}

func newGraph(om, sm *canon.Model, keep func(string) bool) *graph {
	g := &graph{om: om, sm: sm, keep: keep, index: canon.NewNameIndex(sm.Tensors), mixed: map[int]bool{}}
	if f, ok := om.Detail.(*onnx.File); ok {
		g.uses = f.Uses
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
// difference (ByShape) unless its values match in both (a symmetric matrix); orient returns those
// pairs (indices into res.Pairs), for rePair to pair again by value in the orientation wanted.
func (g *graph) orient(res *Result, onnxDigest [2]map[int][32]byte, srcDigest map[int][32]byte) []int {
	var demoted []int
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
	// wants are the orientations the readers of an initializer want it in, each as its reading
	// settles it (the shapes of the model's other weights read so, else the exporter's rule).
	wants := func(name string) []Transform {
		var out []Transform
		for _, u := range g.uses[name] {
			k := u.Op + "/" + strconv.Itoa(u.Input) + "/" + strconv.FormatBool(u.TransB)
			want, ok := stored[k]
			if s := seen[k]; len(s) == 1 {
				for tr := range s {
					want, ok = tr, true
				}
			} else if len(s) > 1 {
				ok = false
			}
			if ok && !slices.Contains(out, want) {
				out = append(out, want)
			}
		}
		return out
	}
	for n := range res.Pairs {
		p := &res.Pairs[n]
		t := &g.om.Tensors[p.ONNX]
		if len(t.Shape) != 2 || t.Shape[0] != t.Shape[1] || t.Shape[0] < 2 || (p.How != ByGraph && p.How != ByValue) {
			continue
		}
		// A square initializer that readers read in both orientations (a MatMul, and a Gemm with
		// transB) holds no source weight as both want it unless it is symmetric: its pair is by the
		// first reader's orientation, its values compared so, and it holds no other source tensor
		// (Shared): a pairing by value in either orientation called another model identical.
		if w := wants(t.Name); len(w) > 1 {
			d0, ok0 := onnxDigest[0][p.ONNX]
			d1, ok1 := onnxDigest[1][p.ONNX]
			if !ok0 || !ok1 || d0 != d1 {
				p.Transform, p.How = w[0], ByShape
				g.mixed[p.ONNX] = true
				continue
			}
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
			demoted = append(demoted, n)
		}
	}
	return demoted
}

// rePair pairs again by value, in the orientation orient settled, the pairs it found by value in the
// other one (demoted, indices into res.Pairs, now ByShape): two square layers where one's weight is
// the other's transpose, exported faithfully, pair each initializer as it is with the other layer's
// weight first. Their source tensors are freed; each such initializer takes the first free source
// tensor of its dtype and shape whose values it holds as its readers want them (a pair by value: equal
// bytes as the graph reads them, never a false identity). One that holds none keeps its source tensor
// if that is still free (a pair by shape: a difference, as before); else it is removed from res.Pairs
// and returned, to pair by shape with what is left.
func rePair(om *canon.Model, res *Result, demoted []int, pairedS []bool, bySource map[string][]int, onnxDigest [2]map[int][32]byte) []int {
	if len(demoted) == 0 {
		return nil
	}
	for _, n := range demoted {
		pairedS[res.Pairs[n].Source] = false
	}
	var kept []int
	for _, n := range demoted {
		p := &res.Pairs[n]
		t := &om.Tensors[p.ONNX]
		shape, k1 := t.Shape, 0
		if p.Transform == TransformTranspose {
			shape, k1 = transposed(t.Shape), 1
		}
		d, ok := onnxDigest[k1][p.ONNX]
		if !ok {
			kept = append(kept, n)
			continue
		}
		cands := bySource[key(t.DType, shape)+string(d[:])]
		if k := slices.IndexFunc(cands, func(j int) bool { return !pairedS[j] }); k >= 0 {
			p.Source, p.How = cands[k], ByValue
			pairedS[p.Source] = true
			continue
		}
		kept = append(kept, n)
	}
	drop := map[int]bool{}
	var left []int
	for _, n := range kept {
		p := &res.Pairs[n]
		if !pairedS[p.Source] {
			pairedS[p.Source] = true
			continue
		}
		drop[n] = true
		left = append(left, p.ONNX)
	}
	if len(drop) > 0 {
		pairs := res.Pairs[:0]
		for n, p := range res.Pairs {
			if !drop[n] {
				pairs = append(pairs, p)
			}
		}
		res.Pairs = pairs
	}
	return left
}

// family is a source tensor's name with each run of digits replaced by "#" (layer.#.fc.weight), and
// its numbers: the tensors of one family are the same weight of numbered layers.
func family(name string) (string, []int) {
	var b strings.Builder
	var nums []int
	for i := 0; i < len(name); {
		if name[i] < '0' || name[i] > '9' {
			b.WriteByte(name[i])
			i++
			continue
		}
		j := i
		for j < len(name) && name[j] >= '0' && name[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(name[i:j])
		if err != nil {
			n = -1
		}
		nums = append(nums, n)
		b.WriteByte('#')
		i = j
	}
	return b.String(), nums
}

// order re-pairs, by the graph's order, the initializers paired by value whose nodes name no module
// (torch.onnx.export before 1.13 named a node MatMul_12, other exporters leave names out): the
// weights of numbered layers of one shape (layer.0.fc.weight, layer.1.fc.weight), read the same way,
// are read in the order of their numbers, so the k-th such initializer the graph reads is the k-th
// layer's. A pairing by value that contradicts it (two layers' weights exchanged) becomes a pairing
// by the graph, whose values then differ, unless the values match either way.
func (g *graph) order(res *Result, onnxDigest [2]map[int][32]byte, srcDigest map[int][32]byte) {
	type member struct {
		pair int // index into res.Pairs
		at   int // the first node reading it
		nums []int
	}
	groups := map[string][]member{}
	var keys []string
	for n, p := range res.Pairs {
		if p.How != ByValue {
			continue
		}
		t := &g.om.Tensors[p.ONNX]
		uses := g.uses[t.Name]
		r := g.reading(t.Name)
		if len(uses) == 0 || r == "" || expected(uses) != "" {
			continue
		}
		s := &g.sm.Tensors[p.Source]
		fam, nums := family(s.Name)
		if len(nums) == 0 {
			continue
		}
		k := fam + "|" + r + "|" + key(t.DType, t.Shape) + string(p.Transform)
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], member{n, uses[0].At, nums})
	}
	for _, k := range keys {
		ms := groups[k]
		if len(ms) < 2 {
			continue
		}
		byGraph := slices.Clone(ms)
		slices.SortStableFunc(byGraph, func(a, b member) int { return a.at - b.at })
		byName := slices.Clone(ms)
		slices.SortStableFunc(byName, func(a, b member) int { return slices.Compare(a.nums, b.nums) })
		sources := make([]int, len(byName))
		for i, m := range byName {
			sources[i] = res.Pairs[m.pair].Source
		}
		for i, m := range byGraph {
			p := &res.Pairs[m.pair]
			if p.Source == sources[i] {
				continue
			}
			k1 := 0
			if p.Transform == TransformTranspose {
				k1 = 1
			}
			d, ok := onnxDigest[k1][p.ONNX]
			p.Source = sources[i]
			if sd, known := srcDigest[p.Source]; !ok || !known || sd != d {
				p.How = ByGraph
			}
		}
	}
}
