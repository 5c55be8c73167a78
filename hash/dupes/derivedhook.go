package dupes

import (
	"context"
	"io"
	"sort"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/safetensors"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/hash/dupes/derived"
)

// derivedGroups adds the groups of models derived from others (package derived), each original
// first: models that were read, hold tensors, and are no part of another.
func (s *finder) derivedGroups(ctx context.Context, live []*scanned) error {
	var fs []*scanned
	var models []derived.Model
	for _, f := range live {
		if f.err != nil || f.tensorless() || f.part || f.shared {
			continue
		}
		fs = append(fs, f)
		models = append(models, derived.Model{Path: f.path,
			Tensors: func(ctx context.Context) ([]canon.Tensor, error) {
				m, err := f.readTensors(ctx)
				if err != nil {
					return nil, err
				}
				return m.Tensors, nil
			},
			Open: func(ctx context.Context) (io.ReaderAt, int64, func(), error) { return f.dataSource(ctx) }, Same: f.class, Summary: f.summary,
			Safetensors: !f.set && !f.virtual && !source.IsRemote(f.path) && (f.format == "" || f.format == canon.FormatSafetensors)})
	}
	// Of models holding the same tensors, the first given is the original: safetensors before other
	// formats, then by path.
	order := make([]int, len(fs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return !fs[order[i]].virtual && fs[order[j]].virtual })
	fs, models = permute(fs, order), permute(models, order)
	groups, err := derived.Find(ctx, models, s.workers)
	if err != nil {
		return err
	}
	for _, g := range groups {
		sc := make([]*scanned, len(g.Members))
		for i, m := range g.Members {
			if sc[i] = fs[m.Index]; !sc[i].set && !source.IsRemote(sc[i].path) {
				sc[i].sidecars = lora.SidecarFiles(sc[i].path)
			}
		}
		grp := makeGroup(LevelDerived, sc, "")
		grp.Reclaimable = 0 // a report: nothing is deleted
		for i, m := range g.Members {
			grp.Members[i].Relation, grp.Members[i].RoundedTo, grp.Members[i].LeftOut = m.Relation, m.RoundedTo, m.LeftOut
		}
		s.rep.Groups = append(s.rep.Groups, grp)
	}
	return nil
}

// permute is xs in order.
func permute[T any](xs []T, order []int) []T {
	out := make([]T, len(xs))
	for i, o := range order {
		out[i] = xs[o]
	}
	return out
}

// skimAlso is skim's keys, each entry also given to also.
func skimAlso(h []byte, dataLen int64, scratch *[][2]uint64, also *derived.Sink) (keys, bool) {
	s := &teeSink{keySink{k: keys{dataLen: dataLen}}, also}
	n, ok := safetensors.Skim(h, dataLen, scratch, s)
	if !ok {
		also.Reset()
		return s.k, false
	}
	s.k.metaKeys = n
	s.k.finish()
	return s.k, true
}

// teeSink is a keySink whose entries also go to a derived.Sink.
type teeSink struct {
	keySink
	also *derived.Sink
}

func (s *teeSink) Entry(name, dtype []byte, shape []uint64, begin, end uint64) {
	s.keySink.Entry(name, dtype, shape, begin, end)
	s.also.Entry(name, dtype, shape, begin, end)
}

func (s *teeSink) Reset() { s.keySink.Reset(); s.also.Reset() }
