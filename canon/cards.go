package canon

import (
	"path"
	"slices"
	"strings"

	"github.com/stdiff/stdiff/canon/card"
	"github.com/stdiff/stdiff/canon/dduf"
	"github.com/stdiff/stdiff/canon/onnx"
	"github.com/stdiff/stdiff/canon/torch"
)

// Card is what m's format says of it besides its tensors and metadata, for inspect's card, as its
// reader gives it (FormatReader.Card): a *card.GGUF, *card.ONNX, *card.PyTorch or *card.DDUF for the
// built-in formats; nil when the format says nothing more (safetensors, a registered format without
// Card) or m's header could not be read.
func (m *Model) Card() any {
	if _, ok := m.Detail.(*dduf.File); ok { // also the pipeline a DDUF file holds, whose Format is its weights'
		return orNil(ddufCard(m))
	}
	if f := readerOf(m); f != nil && f.Card != nil {
		return f.Card(m)
	}
	return nil
}

// orNil is p as an any, nil when p is nil (so that a caller's x == nil holds).
func orNil[T any](p *T) any {
	if p == nil {
		return nil
	}
	return p
}

// onnxCard is the ONNX facts of a model, nil for other formats.
func onnxCard(m *Model) *card.ONNX {
	f, _ := m.Detail.(*onnx.File)
	if f == nil {
		return nil
	}
	o := &card.ONNX{IRVersion: f.IRVersion, Producer: f.ProducerName, ProducerVersion: f.ProducerVersion, Domain: f.Domain,
		ModelVersion: f.ModelVersion, Nodes: f.Nodes}
	for _, s := range f.Opsets {
		o.Opsets = append(o.Opsets, card.Opset{Domain: s.Domain, Version: s.Version})
	}
	for _, v := range f.Inputs {
		o.Inputs = append(o.Inputs, card.Value{Name: v.Name, Type: v.Type, Shape: v.Shape})
	}
	for _, v := range f.Outputs {
		o.Outputs = append(o.Outputs, card.Value{Name: v.Name, Type: v.Type, Shape: v.Shape})
	}
	for _, op := range f.Ops {
		o.Ops = append(o.Ops, card.OpCount{Op: op.Op, Count: op.Count})
	}
	seen := map[string]bool{}
	for _, t := range f.Tensors {
		if t.External != nil && !seen[t.External.Location] {
			seen[t.External.Location] = true
			o.External = append(o.External, t.External.Location)
		}
	}
	if o.Opsets == nil {
		o.Opsets = []card.Opset{}
	}
	if o.Inputs == nil {
		o.Inputs = []card.Value{}
	}
	if o.Outputs == nil {
		o.Outputs = []card.Value{}
	}
	if o.Ops == nil {
		o.Ops = []card.OpCount{}
	}
	return o
}

// torchCard is the PyTorch facts of a model, nil for other formats.
func torchCard(m *Model) *card.PyTorch {
	f, _ := m.Detail.(*torch.File)
	if f == nil {
		return nil
	}
	t := &card.PyTorch{Container: string(f.Format), Kind: "state-dict", Pickles: len(f.Pickles), Globals: []card.Global{}, Aliases: [][]string{}}
	seen := map[string]bool{}
	for _, p := range f.Pickles {
		for _, g := range p.Globals {
			if n := g.FullName(); !seen[n] {
				seen[n] = true
				t.Globals = append(t.Globals, card.Global{Name: n, Class: g.Class.String()})
			}
		}
	}
	slices.SortFunc(t.Globals, func(a, b card.Global) int { return strings.Compare(a.Name, b.Name) })
	grouped := map[string]bool{}
	for _, tn := range f.Tensors {
		if !tn.Contiguous {
			t.Strided++
		}
		if len(tn.Aliases) > 0 && !grouped[tn.Name] {
			g := append([]string{tn.Name}, tn.Aliases...)
			for _, n := range g {
				grouped[n] = true
			}
			t.Aliases = append(t.Aliases, g)
		}
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			for _, e := range f.Metadata {
				if e.Key == k || strings.HasPrefix(e.Key, k+".") {
					return true
				}
			}
		}
		return false
	}
	tensorPrefix := func(p string) bool {
		return slices.ContainsFunc(f.Tensors, func(tn torch.Tensor) bool { return strings.HasPrefix(tn.Name, p) })
	}
	switch {
	case has("pytorch-lightning_version") || has("epoch") && has("global_step") && has("optimizer_states"):
		t.Kind = "lightning"
	case tensorPrefix("string_to_param.") || has("string_to_token"):
		t.Kind = "a1111-embedding"
	case has("layer_structure") || has("activation_func"):
		t.Kind = "a1111-hypernetwork"
	}
	return t
}

// ddufCard is the DDUF facts of a model, nil for other formats.
func ddufCard(m *Model) *card.DDUF {
	f, _ := m.Detail.(*dduf.File)
	if f == nil {
		return nil
	}
	d := &card.DDUF{Class: f.Class, Members: len(f.Members), Components: []card.DDUFComponent{}}
	for _, c := range f.Components {
		dc := card.DDUFComponent{Name: c.Name, Library: c.Library, Class: c.Class, Files: []string{}}
		for _, t := range m.Tensors {
			if strings.HasPrefix(t.Name, c.Name+"/") {
				n := uint64(1)
				for _, s := range t.Shape {
					n *= s
				}
				dc.Tensors++
				dc.Params += n
			}
		}
		for _, mem := range f.Members {
			if dir, file := path.Split(mem.Name); dir == c.Name+"/" {
				dc.Files = append(dc.Files, file)
			}
		}
		d.Components = append(d.Components, dc)
	}
	return d
}
