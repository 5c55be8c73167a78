package diff

import (
	"context"
	"slices"
	"strings"

	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/diff/ggufsrc"
)

// NotReadUnsupported: a pair whose GGUF type cannot be dequantised, or whose source dtype cannot be
// decoded: its values were not compared.
const NotReadUnsupported NotRead = "unsupported-type"

// NotReadSnapshot: a GGUF compared with its source where one side is a snapshot (package
// canon/snapshot): tensors pair by name and shape, values are not compared.
const NotReadSnapshot NotRead = "snapshot"

// sourceModels compares a GGUF file with its Hugging Face source (Models, when ggufsrc.Side finds such
// a pair) and adapts what package ggufsrc found into a Report: pairs whose values or shapes differ are
// changes, unpaired tensors added or removed, the config.json keys that differ changed metadata.
func sourceModels(ctx context.Context, a, b *source.Opened, side int, opt Options) (*Report, error) {
	var notRead NotRead
	switch {
	case opt.HeaderOnly:
		notRead = NotReadHeaderOnly
	case a.Remote || b.Remote:
		notRead = NotReadRemote
	case a.Snapshot != nil || b.Snapshot != nil:
		notRead = NotReadSnapshot
	}
	g, _ := ggufsrc.Sides(side, a, b)
	readValues := notRead == "" && !g.Model.BigEndian()
	keep := func(names ...string) bool {
		if len(opt.Tensors) == 0 {
			return true
		}
		return slices.ContainsFunc(names, func(n string) bool { return matchAny(opt.Tensors, n) })
	}
	res, err := ggufsrc.Compare(ctx, a, b, side, ggufsrc.Options{Keep: keep, ReadValues: readValues, Config: !opt.IgnoreMetadata,
		Tolerance: opt.Tolerance, Values: opt.Values, Progress: opt.Progress})
	if err != nil {
		return nil, err
	}
	sr := res.Report

	r := &Report{Schema: Schema, A: a.Model.Name, B: b.Model.Name, TensorsCompared: true, MetadataCompared: !opt.IgnoreMetadata,
		FailOn: opt.FailOn, Source: sr}
	if len(r.FailOn) == 0 {
		r.FailOn = Categories
	}
	r.Tensors = TensorReport{Added: []Tensor{}, Removed: []Tensor{}, Changed: []Change{}, Renamed: []Rename{}, NotCompared: []NotCompared{}, Groups: []Group{}}
	r.Metadata = MetadataReport{Added: []MetaEntry{}, Removed: []MetaEntry{}, Changed: []MetaChange{}}
	r.Notes = []Note{}
	r.Verdict = VerdictReport{A: verdictOf(a.Model), B: verdictOf(b.Model)}
	r.Verdict.Changed = !r.Verdict.A.same(r.Verdict.B)
	r.ContentCompared, r.ValuesCompared = readValues, readValues
	if !opt.Tolerance.IsZero() && readValues {
		tol := opt.Tolerance
		r.Tolerance = &tol
	}

	sa, sb := Side{Model: a.Model}, Side{Model: b.Model}
	gs, hs := ggufsrc.Sides(side, sa, sb) // Sides is its own inverse
	both := 0
	for k, pr := range res.Pairs {
		sp := &sr.Pairs[k]
		gd, hd := describe(gs, pr.GGUF), describe(hs, pr.Source[0])
		if n := len(pr.Source); n > 1 { // stacked experts: the source's as one tensor
			hd.Name, hd.Shape, hd.Bytes = pr.SourceName, append([]uint64{uint64(n)}, hd.Shape...), hd.Bytes*uint64(n)
		}
		old, new := ggufsrc.Sides(side, gd, hd)
		ch := Change{Name: sp.Name, NameB: sp.NameB, Old: old, New: new, Transform: sp.Transform, Heads: sp.Heads}
		switch sp.Status {
		case ggufsrc.PairShape:
			ch.Fields = []string{"shape"}
		case ggufsrc.PairDiffers:
			ch.Fields, ch.Values, ch.MatchesUnder = []string{"data"}, pr.Values, pr.MatchesUnder
		case ggufsrc.PairEqual, ggufsrc.PairExactRounding:
			ch.Values = pr.Values // across dtypes: a conversion, faithful (its values say so)
		case ggufsrc.PairNotCompared:
			if readValues {
				why := NotReadUnsupported
				if pr.BytesMissing {
					why = NotReadBytesMissing
				}
				r.Tensors.NotCompared = append(r.Tensors.NotCompared, NotCompared{Name: sp.Name, Reason: why})
			}
		}
		if old.DType != new.DType { // a dtype change, as between two files, whether values were read or not
			ch.Fields = append([]string{"dtype"}, ch.Fields...)
			if sp.Status == ggufsrc.PairNotCompared && readValues {
				both++ // changed, and not compared: counted once
			}
		}
		if len(ch.Fields) > 0 {
			r.Tensors.Changed = append(r.Tensors.Changed, ch)
		}
	}

	removed, added := ggufsrc.Sides(side, res.UnpairedGGUF, res.UnpairedSource)
	for _, i := range removed {
		if t := describe(sa, i); keep(t.Name) {
			r.Tensors.Removed = append(r.Tensors.Removed, t)
		}
	}
	for _, j := range added {
		if t := describe(sb, j); keep(t.Name) {
			r.Tensors.Added = append(r.Tensors.Added, t)
		}
	}
	byName := func(x, y Tensor) int { return strings.Compare(x.Name, y.Name) }
	slices.SortFunc(r.Tensors.Added, byName)
	slices.SortFunc(r.Tensors.Removed, byName)
	slices.SortFunc(r.Tensors.Changed, func(x, y Change) int { return strings.Compare(x.Name, y.Name) })
	r.Tensors.Unchanged = len(sr.Pairs) - len(r.Tensors.Changed) - len(r.Tensors.NotCompared) + both
	r.Tensors.Groups = groupChanges(&r.Tensors, r.Tolerance != nil)

	if !opt.IgnoreMetadata {
		for _, ck := range sr.ConfigKeys {
			if ck.Equal {
				r.Metadata.Unchanged++
				continue
			}
			old, new := ggufsrc.Sides(side, ck.GGUF, ck.Config)
			r.Metadata.Changed = append(r.Metadata.Changed, MetaChange{Key: ck.Key, Old: old, New: new, Kind: "value"})
		}
	} else {
		r.Notes = append(r.Notes, Note{Code: NoteIgnoreMetadata, plain: true})
	}
	r.settle()
	if !readValues {
		r.Notes = append(r.Notes, Note{Code: NoteContentNotCompared, Reason: notRead, plain: true})
	}
	return r, nil
}
