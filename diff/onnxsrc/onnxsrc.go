// Package onnxsrc pairs the initializers of an ONNX export with the tensors of its source (the
// safetensors, PyTorch or NumPy file it was exported from), as `stdiff model.safetensors model.onnx`
// does. torch.onnx.export keeps some names (emb.weight, fc1.bias) but stores a Linear layer's weight
// transposed, as an initializer named after the MatMul that reads it (onnx::MatMul_30), and adds the
// graph's constants (Constant nodes' values): by name, such an export is a wall of removed and
// added tensors.
//
// Match pairs by name first, then by the graph (a node named after its module, /layer0/MatMul, reads
// that module's weight: layer0.weight), then by value: the BLAKE3 of each unpaired tensor's bytes, and
// of the bytes of its transpose (a 2-D tensor), keyed by dtype and shape, so a faithful export pairs
// in one pass over the bytes (never a comparison of every tensor with every other). Where no module
// names the nodes (MatMul_3), the weights of numbered layers (layer.0, layer.1) paired by value are
// re-paired in the graph's order of their numbers: the first such initializer read is layer.0's. A square weight's
// orientation is the one the exporter gives the others its operator reads (a MatMul reads a Linear
// weight transposed): equal bytes in the other orientation are a different model, not a match, and such
// an initializer pairs again by value as the graph wants it (one layer's weight the other's transpose). What is left pairs
// by shape (as is, or transposed), in file order: an edited weight is still paired with its source,
// and its values compared under the transform. Graph constants are kept apart. A tensor the graph
// holds twice (a tied embedding and head, exported once as an initializer of its own name and once
// transposed for the MatMul) pairs with a source tensor paired already: a copy, not a difference.
//
// It returns its own result types, which package diff adapts into its Report; it reads no more than
// the tensors it pairs by value, once each, and holds at most a buffer per goroutine in memory.
package onnxsrc

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/values"
	"github.com/zeebo/blake3"
)

// Transform names what was undone to pair an initializer with its source tensor.
type Transform string

// Transforms.
const (
	// TransformNone: the initializer is the source tensor as it is.
	TransformNone Transform = "none"
	// TransformTranspose: the initializer is the source tensor (2-D) transposed, as torch.onnx.export
	// stores the weight of a Linear layer for the MatMul that reads it.
	TransformTranspose Transform = "transpose"
)

// NoteCode names a note of a comparison of an ONNX export with its source; package diff's notes carry
// them. Codes are stable and safe to match in scripts; cmd/stdiff/docs/scripting.md lists them.
type NoteCode string

// Note codes; Count, Key, Old and New are the particulars of package diff's Note.
const (
	// NoteGraphConstants: Count tensors of the ONNX model are graph constants (Constant nodes' values,
	// tensor attributes), not weights: left out of a comparison with its source.
	NoteGraphConstants NoteCode = "scope.graph-constants"
	// NotePairedByValue: Count initializers of the ONNX model are paired with source tensors of other
	// names by their values (Old: how many of them transposed, as torch.onnx.export stores Linear
	// weights), or by shape where their values differ (a change, with name_b and transform).
	NotePairedByValue NoteCode = "tensors.paired-by-value"
	// NoteGraphCopy: an initializer of the ONNX model (Key) holds the values of a source tensor (Old)
	// that is paired already, under a transform (New): a tied weight the exporter wrote twice.
	NoteGraphCopy NoteCode = "tensors.graph-copy"
	// NoteGraphShared: Count source tensors have the values of an initializer paired with another
	// source tensor (the exporter keeps one initializer of tensors with equal values, such as every
	// layer's LayerNorm weight, all ones); Key is the first, Old the initializer that holds it.
	NoteGraphShared NoteCode = "tensors.graph-shared"
)

// Message is a note in words, from its code and particulars.
func Message(code NoteCode, count int, key, old, new string) string {
	plural := func(n int, w string) string {
		if n == 1 {
			return "1 " + w
		}
		return strconv.Itoa(n) + " " + w + "s"
	}
	switch code {
	case NoteGraphConstants:
		return fmt.Sprintf("%s of the ONNX graph (Constant nodes) left out: not weights", plural(count, "constant"))
	case NotePairedByValue:
		return fmt.Sprintf("%s of the ONNX model paired with source tensors of other names by the graph, value or shape (%s transposed back)", plural(count, "initializer"), old)
	case NoteGraphShared:
		return fmt.Sprintf("%s of the source held by an initializer the exporter shares with another of equal values (the first, %s, by %s): not a difference",
			plural(count, "tensor"), strconv.Quote(key), strconv.Quote(old))
	case NoteGraphCopy:
		how := ""
		if new != string(TransformNone) {
			how = " " + new + "d"
		}
		return fmt.Sprintf("%s holds the values of %s%s, paired already: a tied weight the exporter wrote twice, not a difference", strconv.Quote(key), strconv.Quote(old), how)
	}
	return ""
}

// How says how a pair was found.
type How int

// How pairs are found.
const (
	// ByName: the same name on both sides.
	ByName How = iota
	// ByValue: equal bytes, under the pair's transform.
	ByValue
	// ByShape: what was left once names and values paired, by shape (under the pair's transform), in
	// file order: its values differ.
	ByShape
	// ByGraph: the node that reads the initializer names its source tensor: torch.onnx.export names a
	// node after the module that made it (/layer0/MatMul reads layer0.weight).
	ByGraph
)

// Pair is an initializer of the ONNX model and its source tensor (indices into the models' Tensors).
type Pair struct {
	ONNX, Source int
	Transform    Transform
	How          How
	// Copy is true when the source tensor is paired with another initializer already: the graph holds
	// its values twice (a tied weight exported once more, transposed), which is no difference.
	Copy bool
}

// Result is how Match paired the two models' tensors. Pairs are in the ONNX model's tensor order;
// Copies are pairs too, listed apart.
type Result struct {
	Pairs  []Pair
	Copies []Pair
	// Shared are source tensors whose values an initializer paired with another source tensor holds:
	// the exporter keeps one initializer of tensors with equal values. Pairs too, listed apart.
	Shared []Pair
	// Constants are the ONNX model's graph constants (canon.RoleConstant), kept apart: not weights.
	Constants []int
	// UnpairedONNX and UnpairedSource are the tensors left unpaired, in file order.
	UnpairedONNX, UnpairedSource []int
}

// Side is 0 or 1 when a or b is an ONNX model and the other a model of another format that may be its
// source (safetensors, PyTorch, NumPy), else -1.
func Side(a, b *canon.Model) int {
	source := func(m *canon.Model) bool {
		return m.Format == canon.FormatSafetensors || m.Format == "" || m.Format == canon.FormatPyTorch || m.Format == canon.FormatNumPy
	}
	switch {
	case a.Format == canon.FormatONNX && source(b):
		return 0
	case b.Format == canon.FormatONNX && source(a):
		return 1
	}
	return -1
}

// Options tune Match.
type Options struct {
	// Keep, when set, says which tensors take part (by name, either side's); the others are left out.
	Keep func(name string) bool
	// Workers is how many tensors are hashed at once (0: GOMAXPROCS).
	Workers int
	// Progress, when set, is told of the bytes read.
	Progress func(n int64)
}

// Match pairs the tensors of the ONNX model o with those of its source s (both local, opened by
// source.Open). It reads the bytes of the tensors that names do not pair and whose dtype and shape
// (as is or transposed) some tensor on the other side has.
func Match(ctx context.Context, o, s *source.Opened, opt Options) (*Result, error) {
	om, sm := o.Model, s.Model
	keep := func(n string) bool { return opt.Keep == nil || opt.Keep(n) }
	roles, _ := om.Roles()
	res := &Result{}
	pairedS := make([]bool, len(sm.Tensors))
	index := canon.NewNameIndex(sm.Tensors)
	var loose []int // initializers names do not pair
	for i := range om.Tensors {
		t := &om.Tensors[i]
		switch j, ok := index.Find(t.Name); {
		case canon.RoleAt(roles, i) == canon.RoleConstant:
			res.Constants = append(res.Constants, i)
		case !keep(t.Name):
		case ok && !pairedS[j]:
			pairedS[j] = true
			res.Pairs = append(res.Pairs, Pair{ONNX: i, Source: j, Transform: TransformNone, How: ByName})
		default:
			loose = append(loose, i)
		}
	}

	// By value: digests of the loose initializers as they are and transposed, and of the source
	// tensors whose dtype and shape one of them has.
	wanted := map[string]bool{}
	for _, i := range loose {
		t := &om.Tensors[i]
		wanted[key(t.DType, t.Shape)] = true
		if len(t.Shape) == 2 {
			wanted[key(t.DType, transposed(t.Shape))] = true
		}
	}
	var jobs []job
	for _, i := range loose {
		if t := &om.Tensors[i]; t.Len() > 0 && inFile(o, t) {
			jobs = append(jobs, job{0, i, false})
			if len(t.Shape) == 2 && t.Shape[0] > 1 && t.Shape[1] > 1 {
				jobs = append(jobs, job{0, i, true})
			}
		}
	}
	for j := range sm.Tensors {
		if t := &sm.Tensors[j]; keep(t.Name) && wanted[key(t.DType, t.Shape)] && t.Len() > 0 && !t.NameOnly() && inFile(s, t) {
			jobs = append(jobs, job{1, j, false})
		}
	}
	opened := [2]*source.Opened{o, s}
	digests, err := digestAll(ctx, opened, jobs, opt)
	if err != nil {
		return nil, err
	}
	bySource := map[string][]int{} // dtype, shape, digest → source tensors, in file order
	var onnxDigest [2]map[int][32]byte
	onnxDigest[0], onnxDigest[1] = map[int][32]byte{}, map[int][32]byte{}
	for k, jb := range jobs {
		switch {
		case jb.side == 1:
			t := &sm.Tensors[jb.i]
			kk := key(t.DType, t.Shape) + string(digests[k][:])
			bySource[kk] = append(bySource[kk], jb.i)
		case jb.transpose:
			onnxDigest[1][jb.i] = digests[k]
		default:
			onnxDigest[0][jb.i] = digests[k]
		}
	}
	srcDigest := map[int][32]byte{}
	for k, jb := range jobs {
		if jb.side == 1 {
			srcDigest[jb.i] = digests[k]
		}
	}
	g := newGraph(om, sm, keep)
	loose = g.pairByName(loose, pairedS, res)
	var left []int
	for _, i := range loose {
		t := &om.Tensors[i]
		found := false
		for _, tr := range []Transform{TransformNone, TransformTranspose} {
			shape, d, ok := t.Shape, onnxDigest[0][i], true
			if tr == TransformTranspose {
				shape = transposed(t.Shape)
				d, ok = onnxDigest[1][i]
			}
			if !ok {
				continue
			}
			cands := bySource[key(t.DType, shape)+string(d[:])]
			if len(cands) == 0 {
				continue
			}
			j := cands[0]
			if k := slices.IndexFunc(cands, func(j int) bool { return !pairedS[j] }); k >= 0 {
				j = cands[k]
			}
			p := Pair{ONNX: i, Source: j, Transform: tr, How: ByValue}
			if pairedS[j] {
				p.Copy = true
				res.Copies = append(res.Copies, p)
			} else {
				pairedS[j] = true
				res.Pairs = append(res.Pairs, p)
			}
			found = true
			break
		}
		if !found {
			left = append(left, i)
		}
	}

	// The orientation of each square weight the graph reads: as the exporter stores the others.
	// Those found by value in the other orientation pair again by value as the graph wants them.
	left = append(left, rePair(om, res, g.orient(res, onnxDigest, srcDigest), pairedS, bySource, onnxDigest)...)
	slices.Sort(left)
	// Numbered layers whose nodes name no module: in the graph's order.
	g.order(res, onnxDigest, srcDigest)

	// Shared: a source tensor whose values an initializer paired already holds (the exporter keeps one
	// initializer of tensors with equal values: the LayerNorm weights of every layer, all ones).
	if err := shareValues(ctx, opened, res, pairedS, onnxDigest, jobs, digests, keep, g.mixed, opt); err != nil {
		return nil, err
	}

	// By shape, in file order: what is left (an edited weight).
	unpaired := map[string][]int{} // shape → unpaired source tensors, in file order
	srcRoles, _ := sm.Roles()
	for j := range sm.Tensors {
		switch canon.RoleAt(srcRoles, j) {
		case canon.RoleOptimizer, canon.RoleTraining: // an Adam moment has its weight's shape: never its pair
			continue
		}
		if t := &sm.Tensors[j]; !pairedS[j] && keep(t.Name) && !t.NameOnly() {
			unpaired[key("", t.Shape)] = append(unpaired[key("", t.Shape)], j)
		}
	}
	for _, i := range left {
		t := &om.Tensors[i]
		found := false
		for _, tr := range []Transform{TransformNone, TransformTranspose} {
			shape := t.Shape
			if tr == TransformTranspose {
				if len(shape) != 2 {
					break
				}
				shape = transposed(shape)
			}
			k := key("", shape)
			if cands := unpaired[k]; len(cands) > 0 {
				pairedS[cands[0]] = true
				unpaired[k] = cands[1:]
				res.Pairs = append(res.Pairs, Pair{ONNX: i, Source: cands[0], Transform: tr, How: ByShape})
				found = true
				break
			}
		}
		if !found {
			res.UnpairedONNX = append(res.UnpairedONNX, i)
		}
	}
	for j := range sm.Tensors {
		if !pairedS[j] && keep(sm.Tensors[j].Name) {
			res.UnpairedSource = append(res.UnpairedSource, j)
		}
	}
	slices.SortFunc(res.Pairs, func(x, y Pair) int { return x.ONNX - y.ONNX })
	return res, nil
}

// shareValues finds the unpaired source tensors whose values equal those of an initializer paired
// already (as it is, or transposed), adds them to res.Shared and marks them paired. It hashes only the
// unpaired source tensors and the paired initializers of a dtype and shape (as is or transposed) one
// of them has, that are not hashed yet (digests holds those of jobs).
func shareValues(ctx context.Context, opened [2]*source.Opened, res *Result, pairedS []bool, onnxDigest [2]map[int][32]byte,
	jobs []job, digests [][32]byte, keep func(string) bool, mixed map[int]bool, opt Options) error {
	om, sm := opened[0].Model, opened[1].Model
	srcDigest := map[int][32]byte{}
	for k, jb := range jobs {
		if jb.side == 1 {
			srcDigest[jb.i] = digests[k]
		}
	}
	var unpaired []int
	keys := map[string]bool{} // of the unpaired source tensors
	for j := range sm.Tensors {
		if t := &sm.Tensors[j]; !pairedS[j] && keep(t.Name) && !t.NameOnly() && t.Len() > 0 && inFile(opened[1], t) {
			unpaired = append(unpaired, j)
			keys[key(t.DType, t.Shape)] = true
		}
	}
	if len(unpaired) == 0 {
		return nil
	}
	var more []job
	for _, j := range unpaired {
		if _, ok := srcDigest[j]; !ok {
			more = append(more, job{1, j, false})
		}
	}
	var paired []Pair
	for _, p := range res.Pairs {
		t := &om.Tensors[p.ONNX]
		if t.Len() == 0 || !inFile(opened[0], t) || mixed[p.ONNX] {
			continue
		}
		paired = append(paired, p)
		if _, ok := onnxDigest[0][p.ONNX]; !ok && keys[key(t.DType, t.Shape)] {
			more = append(more, job{0, p.ONNX, false})
		}
		if _, ok := onnxDigest[1][p.ONNX]; !ok && len(t.Shape) == 2 && t.Shape[0] > 1 && t.Shape[1] > 1 && keys[key(t.DType, transposed(t.Shape))] {
			more = append(more, job{0, p.ONNX, true})
		}
	}
	d, err := digestAll(ctx, opened, more, opt)
	if err != nil {
		return err
	}
	for k, jb := range more {
		switch {
		case jb.side == 1:
			srcDigest[jb.i] = d[k]
		case jb.transpose:
			onnxDigest[1][jb.i] = d[k]
		default:
			onnxDigest[0][jb.i] = d[k]
		}
	}
	held := map[string]Pair{} // dtype, shape as the source has it, digest → the first initializer holding it
	for _, p := range paired {
		t := &om.Tensors[p.ONNX]
		for _, tr := range []Transform{TransformNone, TransformTranspose} {
			// A square initializer holds values as its readers read it (its pair's orientation, as
			// orient settled it): Aᵀ stored for MatMuls holds the source weight A, never a source
			// tensor Aᵀ (an export whose two MatMuls read that one initializer, where the source's
			// layers are A and Aᵀ, is another model).
			if len(t.Shape) == 2 && t.Shape[0] == t.Shape[1] && tr != p.Transform {
				continue
			}
			shape, dg, ok := t.Shape, [32]byte{}, false
			if tr == TransformTranspose {
				if len(t.Shape) != 2 {
					break
				}
				shape = transposed(t.Shape)
				dg, ok = onnxDigest[1][p.ONNX]
			} else {
				dg, ok = onnxDigest[0][p.ONNX]
			}
			if k := key(t.DType, shape) + string(dg[:]); ok {
				if _, seen := held[k]; !seen {
					held[k] = Pair{ONNX: p.ONNX, Transform: tr, How: ByValue}
				}
			}
		}
	}
	for _, j := range unpaired {
		t := &sm.Tensors[j]
		dg := srcDigest[j]
		if p, ok := held[key(t.DType, t.Shape)+string(dg[:])]; ok {
			p.Source, pairedS[j] = j, true
			res.Shared = append(res.Shared, p)
		}
	}
	return nil
}

// job is a tensor to hash: of the ONNX model (side 0) or the source (1), as it is or transposed.
type job struct {
	side      int
	i         int
	transpose bool
}

// digestAll computes the BLAKE3 of each job's bytes, on opt.Workers goroutines with a buffer each.
func digestAll(ctx context.Context, opened [2]*source.Opened, jobs []job, opt Options) ([][32]byte, error) {
	digests := make([][32]byte, len(jobs))
	err := pool.RunWith(ctx, opt.Workers, len(jobs), func() []byte { return make([]byte, 1<<20) }, func(ctx context.Context, buf []byte, k int) error {
		jb := jobs[k]
		m := opened[jb.side].Model
		t := &m.Tensors[jb.i]
		vt := values.TensorOf(opened[jb.side].Source, m, t)
		r := io.ReaderAt(vt.R)
		off := vt.Off
		if jb.transpose {
			r, off = Transposed(vt, t.Shape), 0
		}
		h := blake3.New()
		for pos := int64(0); pos < vt.Len; {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := min(int64(len(buf)), vt.Len-pos)
			if _, err := r.ReadAt(buf[:n], off+pos); err != nil {
				return err
			}
			h.Write(buf[:n])
			pos += n
			if opt.Progress != nil && !jb.transpose {
				opt.Progress(n)
			}
		}
		h.Sum(digests[k][:0])
		return nil
	})
	return digests, err
}

// inFile reports whether a tensor's bytes are all in its file.
func inFile(o *source.Opened, t *tensor.Tensor) bool { return o.Model.InFile(t, o.Source.Size()) }

// key is a dtype and a shape as a map key.
func key(dt tensor.DType, shape []uint64) string {
	b := append([]byte(dt), ':')
	for _, d := range shape {
		b = strconv.AppendUint(append(b, ' '), d, 10)
	}
	return string(append(b, '|'))
}

// transposed is a 2-D shape transposed.
func transposed(shape []uint64) []uint64 { return []uint64{shape[1], shape[0]} }

// Transposed reads the bytes of t, a 2-D tensor of shape [rows, cols], transposed: the row-major bytes
// of a [cols, rows] tensor, from offset 0 to t.Len. A read of n bytes reads the rows of t it spans
// in one piece per row of the result's span, holding about n bytes and a row more.
func Transposed(t values.Tensor, shape []uint64) io.ReaderAt {
	return &transposer{t: t, rows: int64(shape[0]), cols: int64(shape[1])}
}

type transposer struct {
	t          values.Tensor
	rows, cols int64 // of t; the result is [cols, rows]
}

func (x *transposer) ReadAt(p []byte, off int64) (int, error) {
	n := x.rows * x.cols
	if n == 0 || off < 0 || off >= x.t.Len {
		return 0, io.EOF
	}
	es := x.t.Len / n
	if es == 0 || es*n != x.t.Len || off%es != 0 {
		return 0, io.ErrUnexpectedEOF // sub-byte elements are not transposed
	}
	end := min(off+int64(len(p)), x.t.Len)
	// the result's rows r0 ≤ r < r1 hold bytes [off, end); result row r is t's column r
	e0, e1 := off/es, (end+es-1)/es
	r0, r1 := e0/x.rows, (e1+x.rows-1)/x.rows
	span := r1 - r0                      // columns of t read from each of its rows
	out := make([]byte, span*x.rows*es)  // result rows r0..r1
	row := make([]byte, span*es)         // t[c][r0:r1]
	for c := int64(0); c < x.rows; c++ { // t's row c is the result's column c
		if _, err := x.t.R.ReadAt(row, x.t.Off+(c*x.cols+r0)*es); err != nil {
			return 0, err
		}
		for k := int64(0); k < span; k++ {
			copy(out[(k*x.rows+c)*es:(k*x.rows+c+1)*es], row[k*es:(k+1)*es])
		}
	}
	n2 := copy(p, out[off-r0*x.rows*es:])
	n2 = min(n2, int(end-off))
	if n2 < len(p) {
		return n2, io.EOF
	}
	return n2, nil
}

// Sided is a Result as the pairs of the two models compared, a and b, the ONNX model being on side
// side (0 or 1) and the source on the other.
type Sided struct {
	Side int
	// Matched are the pairs, (a, b) indices; Transposed says, per pair, that its ONNX tensor is the
	// source's transposed (compared transposed back).
	Matched    [][2]int
	Transposed []bool
	// Removed are a's unpaired tensors, Added b's.
	Removed, Added []int
	// Notes are the notes of the pairing, with their particulars.
	Notes []Note
}

// Note is a note of the pairing: its code and the particulars package diff's Note carries.
type Note struct {
	Code          NoteCode
	Count         int
	Key, Old, New string
}

// Sided is r as the pairs of a and b, the ONNX model o on side side, its source s on the other.
func (r *Result) Sided(o, s *canon.Model, side int) Sided {
	out := Sided{Side: side}
	var paired, transposed int
	for _, p := range r.Pairs {
		pr := [2]int{p.ONNX, p.Source}
		if side == 1 {
			pr = [2]int{p.Source, p.ONNX}
		}
		out.Matched = append(out.Matched, pr)
		out.Transposed = append(out.Transposed, p.Transform == TransformTranspose)
		if p.Transform == TransformTranspose {
			transposed++
		}
		if p.How != ByName {
			paired++
		}
	}
	out.Removed, out.Added = r.UnpairedONNX, r.UnpairedSource
	if side == 1 {
		out.Removed, out.Added = r.UnpairedSource, r.UnpairedONNX
	}
	if paired > 0 {
		out.Notes = append(out.Notes, Note{Code: NotePairedByValue, Count: paired, Old: strconv.Itoa(transposed)})
	}
	for _, c := range r.Copies {
		out.Notes = append(out.Notes, Note{Code: NoteGraphCopy, Key: o.Tensors[c.ONNX].Name, Old: s.Tensors[c.Source].Name, New: string(c.Transform)})
	}
	if n := len(r.Shared); n > 0 {
		out.Notes = append(out.Notes, Note{Code: NoteGraphShared, Count: n, Key: s.Tensors[r.Shared[0].Source].Name, Old: o.Tensors[r.Shared[0].ONNX].Name})
	}
	if n := len(r.Constants); n > 0 {
		out.Notes = append(out.Notes, Note{Code: NoteGraphConstants, Count: n})
	}
	return out
}

// Shapes are the shapes a and b of the k-th pair's tensors with a transpose undone.
func (s *Sided) Shapes(k int, a, b []uint64) ([]uint64, []uint64) {
	switch {
	case !s.Transposed[k]:
		return a, b
	case s.Side == 0:
		return transposed(a), b
	}
	return a, transposed(b)
}

// Undo makes the k-th pair's ONNX tensor (of shape a or b, as it is stored) read transposed back.
func (s *Sided) Undo(k int, p *values.Pair, a, b []uint64) {
	switch {
	case !s.Transposed[k]:
	case s.Side == 0:
		p.A = values.Tensor{DType: p.A.DType, R: Transposed(p.A, a), Len: p.A.Len}
	default:
		p.B = values.Tensor{DType: p.B.DType, R: Transposed(p.B, b), Len: p.B.Len}
	}
}
