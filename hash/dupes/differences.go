package dupes

import (
	"context"
	"errors"
	"slices"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/delta"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/hash/dupes/internal/diskfile"
)

// Differences say how a member of a content group differs from the group's keeper: the same tensors,
// so only metadata and layout can. All lists are empty, never nil, when there is nothing to list.
type Differences struct {
	// Metadata are the metadata keys the member adds, lacks or has with another value.
	Metadata MetadataKeys `json:"metadata"`
	// Layout are the codes of the layout differences (package delta; diff's layout notes): how the same tensors are
	// laid out on disk (header size, tensor order, offsets, key order, sharding).
	Layout []delta.Code `json:"layout"`
	// Sidecars are the sidecar files (lora.SidecarFiles) the member and the keeper do not share.
	Sidecars []SidecarDifference `json:"sidecars"`
	// Renamed is how a member of a renamed group names the keeper's tensors (nil in other groups).
	Renamed *Renaming `json:"renamed,omitempty"`
}

// MetadataKeys are metadata keys, by kind of change, each list in the member's order (removed keys:
// the keeper's).
type MetadataKeys struct {
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	Changed []string `json:"changed"`
}

// Empty reports whether the member differs from the keeper in no key and no layout: their headers
// differ in a way neither says (formatting a diff does not count, writer bookkeeping).
func (d *Differences) Empty() bool {
	m := d.Metadata
	return len(m.Added)+len(m.Removed)+len(m.Changed)+len(d.Layout)+len(d.Sidecars) == 0
}

// noDifferences is a Differences that lists nothing.
func noDifferences() *Differences {
	return &Differences{Metadata: MetadataKeys{Added: []string{}, Removed: []string{}, Changed: []string{}},
		Layout: []delta.Code{}, Sidecars: []SidecarDifference{}}
}

// contentGroup is a content group of a report (its members shared with the report's) and its scanned
// members in the group's order, with the headers a comparison read whole (models; nil where it did not).
type contentGroup struct {
	group   Group
	members []*scanned
	models  []*canon.Model
}

// newContentGroup is the content group g of members, with the headers a comparison read whole, taken
// now: the search for renamed copies may read its members again meanwhile.
func newContentGroup(g Group, members []*scanned) contentGroup {
	cg := contentGroup{group: g, members: members, models: make([]*canon.Model, len(members))}
	for i, f := range members {
		if f.fullModel {
			cg.models[i] = f.model
		}
	}
	return cg
}

// differences fills in how each member of a content group differs from its keeper: identical when
// their header bytes are, else what compare finds in their headers. A member (or keeper) that
// cannot be read again gets no Differences.
func differences(ctx context.Context, cg contentGroup) {
	g, members := &cg.group, cg.members
	keeper := &g.Members[0]
	var first *canon.Model
	for i := 1; i < len(g.Members); i++ {
		m := &g.Members[i]
		if m.Header != "" && m.Header == keeper.Header {
			m.IdenticalTo, m.Differences = keeper.Path, noDifferences()
			continue
		}
		if first == nil {
			var err error
			if first, err = readModel(ctx, members[0], cg.models[0]); err != nil {
				return
			}
		}
		model, err := readModel(ctx, members[i], cg.models[i])
		if err != nil {
			continue
		}
		m.Differences = compare(first, model)
	}
}

// sidecarsOf fills in how the sidecars of each member of a group with a keeper differ from the
// keeper's; a member of a bytes group gets Differences for that alone.
func sidecarsOf(ctx context.Context, g *Group) {
	if g.Keeper == "" {
		return
	}
	for i := 1; i < len(g.Members); i++ {
		m := &g.Members[i]
		if m.Differences == nil && g.Level == LevelBytes {
			m.Differences = noDifferences()
		}
		if m.Differences != nil {
			m.Differences.Sidecars = sidecarDifferences(ctx, g.Members[0].Sidecars, m.Sidecars)
		}
	}
}

// compare says how model b differs from a, which have the same tensors: every metadata key added,
// removed and changed (writer bookkeeping too: a copy that goes with its "format" loses it), or when
// there are none how the tensors of the same names are laid out (package delta, as diff's layout
// notes say).
func compare(a, b *canon.Model) *Differences {
	bookkeeping := func(key string) bool { return slices.Contains(lora.BookkeepingKeys, key) }
	d := noDifferences()
	added, removed, changed := delta.Keys(delta.Metadata(a, b, func(string) bool { return false }))
	d.Metadata.Added = append(d.Metadata.Added, added...)
	d.Metadata.Removed = append(d.Metadata.Removed, removed...)
	d.Metadata.Changed = append(d.Metadata.Changed, changed...)
	if len(added)+len(removed)+len(changed) > 0 {
		// Other metadata is another header: how it is laid out says nothing more, but for a file
		// against a set of shards.
		if len(a.Shards) != len(b.Shards) {
			d.Layout = append(d.Layout, delta.Sharding)
		}
		return d
	}
	names := canon.NewNameIndex(b.Tensors)
	var matched [][2]int
	for i := range a.Tensors {
		if j, ok := names.Find(a.Tensors[i].Name); ok {
			matched = append(matched, [2]int{i, j})
		}
	}
	for _, l := range delta.LayoutOf(a, b, matched, bookkeeping) {
		d.Layout = append(d.Layout, l.Code)
	}
	return d
}

// readModel reads a scanned model's header again (the model, not its tensor bytes), unless a
// comparison kept it whole (kept).
func readModel(ctx context.Context, f *scanned, kept *canon.Model) (*canon.Model, error) {
	if kept != nil {
		return kept, nil
	}
	o, err := f.open(ctx)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	return o.Model, nil
}

// walk expands roots into the models to scan (diskfile.Walk), recording in rep.Errors the roots that do
// not exist (ErrNoSuchPath) and what cannot be read under the others.
func walk(ctx context.Context, roots []string, rep *Report) []string {
	paths, errs := diskfile.Walk(ctx, roots, ErrNoSuchPath)
	for _, err := range errs {
		f := Failure{Error: diskfile.Reason(err), Err: err}
		var re *canon.ReadError
		if errors.As(err, &re) {
			f.Path = re.Name
		}
		rep.Errors = append(rep.Errors, f)
	}
	return paths
}
