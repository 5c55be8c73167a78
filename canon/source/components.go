package source

import (
	"fmt"
	"slices"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
)

// Component is one part of a model made of several, as a diffusers pipeline is made of its unet, text
// encoders and VAE: the part's model, read on its own (one file or a shard set), and its bytes.
type Component struct {
	// Name is the component's folder ("unet"); it prefixes the names of its tensors, metadata keys and
	// files: "unet/conv_in.weight".
	Name string
	// File is the file read, relative to the component's folder ("diffusion_pytorch_model.safetensors",
	// or the index of a shard set).
	File   string
	Model  *canon.Model
	Source canon.Source
	// Missing, when not "", says why the component's file is not there ("a link to …, which is not
	// there"); Model and Source are then nil.
	Missing string
}

// JoinComponents makes one model of several components, so that everything that reads a model (diff,
// hashes, inspect) reads them as one, component by component: its tensors are the components' in
// order, each name prefixed with its component's ("unet/conv_in.weight"), their offsets in the space
// of the SetSource it returns (the components' data, one after another); its metadata keys are
// prefixed the same way, and so are its Shards (a component in one file is one shard:
// "unet/diffusion_pytorch_model.safetensors"; a shard set gives its shards) and its findings'
// messages ("unet: …"). RefErr is the first component's the reference rejects, HeaderParsed is true
// when every component's header could be read, and Format is the first component's; components of
// different formats are a CodeShardFormat finding. A Missing component is a shard with Missing set
// (see Model.MissingShards: the model has no structure or content ID) and a CodeMissingComponent
// error finding naming its file.
func JoinComponents(name string, parts []Component) (*canon.Model, *SetSource) {
	set := &SetSource{name: name}
	m := &canon.Model{Name: name, HeaderParsed: true}
	var first *Component // the first component read
	for k, p := range parts {
		pm, prefix := p.Model, p.Name+"/"
		if p.Missing != "" {
			m.Shards = append(m.Shards, canon.ShardInfo{Name: prefix + p.File, Start: set.size, Missing: true})
			m.AddFinding(finding.Finding{Code: canon.CodeMissingComponent, Severity: finding.SevError, Offset: -1,
				Message: fmt.Sprintf("%s is missing (%s): the tensors of component %s are unknown", prefix+p.File, p.Missing, p.Name),
				Hint:    "every component's weights must be there to load or hash the model: download it again"})
			continue
		}
		if first == nil {
			first, m.Format = &parts[k], pm.Format
		} else if pm.Format != m.Format {
			m.AddFinding(finding.Finding{Code: canon.CodeShardFormat, Severity: finding.SevError, Offset: -1,
				Message: fmt.Sprintf("%s is a %s file, but %s is %s: stdiff reads the components of one model in one format", prefix+p.File, pm.Format, first.Name+"/"+first.File, m.Format)})
		}
		m.HeaderParsed = m.HeaderParsed && pm.HeaderParsed
		if pm.RefErr != nil && m.RefErr == nil {
			m.RefErr = &canon.RefError{Kind: pm.RefErr.Kind, Message: prefix + pm.RefErr.Message, Offset: pm.RefErr.Offset}
		}
		for _, f := range pm.Findings {
			f.Message = p.Name + ": " + f.Message
			m.AddFinding(f)
		}
		for code, n := range pm.Omitted {
			omit(m, code, n)
		}
		for _, e := range pm.Metadata {
			e.Key, e.Offset = prefix+e.Key, -1
			m.Metadata = append(m.Metadata, e)
		}
		m.HasMetadata = m.HasMetadata || pm.HasMetadata
		if pm.Shards == nil {
			m.Shards = append(m.Shards, canon.ShardInfo{Name: prefix + p.File, FileSize: pm.FileSize, HeaderLen: pm.HeaderLen,
				Start: set.size, Valid: pm.Valid(), RawHeader: pm.RawHeader, Tensors: len(pm.Tensors)})
		}
		for _, sh := range pm.Shards {
			sh.Name, sh.Start = prefix+sh.Name, sh.Start+set.size
			m.Shards = append(m.Shards, sh)
		}
		m.Tensors = slices.Grow(m.Tensors, len(pm.Tensors))
		for _, t := range pm.Tensors {
			t.Name = prefix + t.Name
			t.Begin += uint64(set.size)
			t.End += uint64(set.size)
			t.HeaderOffset = -1
			m.Tensors = append(m.Tensors, t)
		}
		n := max(pm.DataLen(), 0)
		set.shards = append(set.shards, setShard{src: p.Source, data: pm.DataOffset(), start: set.size, length: n})
		set.size += n
	}
	m.FileSize = set.size
	return m, set
}
