package dupes

import (
	"context"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/pool"
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
		models = append(models, derived.Model{Path: f.path, Header: f.readTensors, Open: f.dataSource, Same: f.class, Summary: f.summary,
			Safetensors: !f.set && !f.virtual && !source.IsRemote(f.path) && (f.format == "" || f.format == canon.FormatSafetensors)})
	}
	groups, err := derived.Find(ctx, models, s.workers)
	if err != nil {
		return err
	}
	var local []*scanned // members whose sidecars are looked for, on all workers (a dozen names each)
	seen := map[*scanned]bool{}
	for _, g := range groups {
		for _, m := range g.Members {
			if f := fs[m.Index]; !f.set && !source.IsRemote(f.path) && !seen[f] {
				seen[f] = true
				local = append(local, f)
			}
		}
	}
	pool.Run(ctx, s.workers, len(local), func(ctx context.Context, i int) error {
		local[i].sidecars = lora.SidecarFiles(local[i].path)
		return nil
	})
	for _, g := range groups {
		sc := make([]*scanned, len(g.Members))
		for i, m := range g.Members {
			sc[i] = fs[m.Index]
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
