package diff

import (
	"context"

	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/diff/ggufsrc"
	"github.com/stdiff/stdiff/diff/onnxsrc"
)

// The notes of an ONNX export compared with its source (package onnxsrc says what each means).
const (
	NoteGraphConstants = NoteCode(onnxsrc.NoteGraphConstants)
	NotePairedByValue  = NoteCode(onnxsrc.NotePairedByValue)
	NoteGraphCopy      = NoteCode(onnxsrc.NoteGraphCopy)
	NoteGraphShared    = NoteCode(onnxsrc.NoteGraphShared)
)

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
	sd := res.Sided(o.Model, s.Model, side)
	m := matching{matched: sd.Matched, removed: sd.Removed, added: sd.Added, onnx: &sd}
	for _, n := range sd.Notes {
		m.notes = append(m.notes, Note{Code: NoteCode(n.Code), Count: n.Count, Key: n.Key, Old: n.Old, New: n.New})
	}
	return m, nil
}

// pairedAs is, by change name, what an ONNX initializer paired under another name was paired with:
// "  (as onnx::MatMul_30, transpose undone)"; nil for a GGUF and its source, which says so itself.
func pairedAs(r *Report) map[string]string {
	if r.Source != nil {
		return nil
	}
	var out map[string]string
	for _, c := range r.Tensors.Changed {
		if c.NameB == "" {
			continue
		} else if out == nil {
			out = map[string]string{}
		}
		s := "  (as " + textfmt.Escape(c.NameB)
		if c.Transform != "" && c.Transform != ggufsrc.TransformNone {
			s += ", " + string(c.Transform) + " undone"
		}
		out[c.Name] = s + ")"
	}
	return out
}

// valuesShape is the shape a change's values were compared in: side a's, but the source's (side b)
// for a transposed ONNX initializer on side a.
func valuesShape(c *Change) []uint64 {
	if c.Transform == ggufsrc.TransformTranspose && c.NameB != "" && c.Old.Name == c.NameB && c.New.Name == c.Name {
		return c.New.Shape
	}
	return c.Old.Shape
}
