package diff

import (
	"context"
	"strconv"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/canon/values"
	"github.com/stdiff/stdiff/diff/onnxsrc"
)

// The notes of an ONNX export compared with its source (package onnxsrc says what each means).
const (
	NoteGraphConstants = NoteCode(onnxsrc.NoteGraphConstants)
	NotePairedByValue  = NoteCode(onnxsrc.NotePairedByValue)
	NoteGraphCopy      = NoteCode(onnxsrc.NoteGraphCopy)
	NoteGraphShared    = NoteCode(onnxsrc.NoteGraphShared)
)

// undo is what was undone to pair two tensors: a transform of the tensor on side side.
type undo struct {
	transform Transform
	side      int
}

// undo is the k-th matched pair's undo (the zero undo when none).
func (m *matching) undo(k int) undo {
	if m.undone == nil {
		return undo{}
	}
	return m.undone[k]
}

// shapes are the shapes of the k-th matched pair, ta and tb, with the pair's transform undone.
func (m *matching) shapes(k int, ta, tb *canon.Tensor) ([]uint64, []uint64) {
	u := m.undo(k)
	if u.transform != TransformTranspose {
		return ta.Shape, tb.Shape
	}
	if u.side == 0 {
		return []uint64{ta.Shape[1], ta.Shape[0]}, tb.Shape
	}
	return ta.Shape, []uint64{tb.Shape[1], tb.Shape[0]}
}

// apply makes the pair's tensor on the undone side read its bytes with the transform undone.
func (u undo) apply(p *values.Pair, ta, tb *canon.Tensor) {
	if u.transform != TransformTranspose {
		return
	}
	if u.side == 0 {
		p.A = values.Tensor{DType: p.A.DType, R: onnxsrc.Transposed(p.A, ta.Shape), Len: p.A.Len}
	} else {
		p.B = values.Tensor{DType: p.B.DType, R: onnxsrc.Transposed(p.B, tb.Shape), Len: p.B.Len}
	}
}

// onnxMatching pairs the tensors of an ONNX export (side side) with its source's (package onnxsrc):
// by name, by value with transposes undone, then by shape; graph constants apart.
func onnxMatching(ctx context.Context, a, b *source.Opened, side int, opt Options) (matching, error) {
	o, s := a, b
	if side == 1 {
		o, s = b, a
	}
	keep := func(name string) bool { return len(opt.Tensors) == 0 || matchAny(opt.Tensors, name) }
	res, err := onnxsrc.Match(ctx, o, s, onnxsrc.Options{Keep: keep, Workers: opt.Values.Workers, Progress: opt.Progress})
	if err != nil {
		return matching{}, err
	}
	var m matching
	var paired, transposed int
	for _, p := range res.Pairs {
		pr := [2]int{p.ONNX, p.Source}
		if side == 1 {
			pr = [2]int{p.Source, p.ONNX}
		}
		m.matched = append(m.matched, pr)
		u := undo{side: side}
		if p.Transform == onnxsrc.TransformTranspose {
			u.transform = TransformTranspose
			transposed++
		}
		m.undone = append(m.undone, u)
		if p.How != onnxsrc.ByName {
			paired++
		}
	}
	unpairedO, unpairedS := res.UnpairedONNX, res.UnpairedSource
	if side == 0 {
		m.removed, m.added = unpairedO, unpairedS
	} else {
		m.removed, m.added = unpairedS, unpairedO
	}
	if paired > 0 {
		m.notes = append(m.notes, newNote(Note{Code: NotePairedByValue, Count: paired, Old: strconv.Itoa(transposed)}))
	}
	for _, c := range res.Copies {
		m.notes = append(m.notes, newNote(Note{Code: NoteGraphCopy, Key: o.Model.Tensors[c.ONNX].Name, Old: s.Model.Tensors[c.Source].Name, New: string(c.Transform)}))
	}
	if n := len(res.Shared); n > 0 {
		sh := res.Shared[0]
		m.notes = append(m.notes, newNote(Note{Code: NoteGraphShared, Count: n, Key: s.Model.Tensors[sh.Source].Name, Old: o.Model.Tensors[sh.ONNX].Name}))
	}
	if n := len(res.Constants); n > 0 {
		m.notes = append(m.notes, newNote(Note{Code: NoteGraphConstants, Count: n}))
	}
	return m, nil
}

// pairedAs says, by the name of each change of a tensor paired under another name with an ONNX
// initializer, what it was paired with: "  (as onnx::MatMul_30, transpose undone)". Nil for a GGUF
// compared with its source, which says so itself.
func pairedAs(r *Report) map[string]string {
	if r.Source != nil {
		return nil
	}
	var out map[string]string
	for _, c := range r.Tensors.Changed {
		if c.NameB == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		s := "  (as " + textfmt.Escape(c.NameB)
		if c.Transform != "" && c.Transform != TransformNone {
			s += ", " + string(c.Transform) + " undone"
		}
		out[c.Name] = s + ")"
	}
	return out
}

// valuesShape is the shape the values of a change were compared in (its flat indices count in):
// side a's, but the source's for an ONNX initializer on side a paired transposed with its source
// (Change.Name is then the source's name, on side b).
func valuesShape(c *Change) []uint64 {
	if c.Transform == TransformTranspose && c.NameB != "" && c.Old.Name == c.NameB && c.New.Name == c.Name {
		return c.New.Shape
	}
	return c.Old.Shape
}
