package diff

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/values"
	"github.com/stdiff/stdiff/diff/namefold"
)

// Group is a set of tensors that changed the same way and whose names differ only in numbers, such as
// every layer's q_proj converted from F32 to F16. Groups fold a report for people; the full lists stay
// in TensorReport.
type Group struct {
	Kind ChangeKind `json:"kind"`
	// Pattern is the names with their numbers folded: layers.{0..31}.self_attn.q_proj.weight. For
	// renames it is the old names, and To the new ones.
	Pattern string `json:"pattern"`
	To      string `json:"to,omitempty"`
	// Count is the number of tensors in the group; Names lists them (not in JSON: the full lists are
	// in the report already).
	Count int      `json:"count"`
	Names []string `json:"-"`
	// Changes are what changed (kind "changed"), field by field.
	Changes []FieldChange `json:"changes,omitempty"`
	// Tensor is the dtype and shape of added, removed or renamed tensors, e.g. "F32 [8, 8]".
	Tensor string `json:"tensor,omitempty"`
	// Confirmed is true for renames whose bytes were compared and are equal.
	Confirmed bool `json:"confirmed,omitempty"`
	// ValuesEqual says why the bytes of the group's tensors differ while their values are equal
	// (Change.ValuesEqual), when they are.
	ValuesEqual EqualValues `json:"values_equal,omitempty"`
	// Worst is the member of a group of tensors compared by value that changed most (the largest
	// relative L2; one whose old values are all zero first), and Values its comparison (in JSON with
	// the member's change).
	Worst  string       `json:"worst,omitempty"`
	Values *values.Diff `json:"-"`
}

// ChangeKind is what happened to the tensors of a group. Kinds are stable and safe to match in
// scripts; cmd/stdiff/docs/scripting.md lists them.
type ChangeKind string

// Change kinds.
const (
	Added   ChangeKind = "added"
	Removed ChangeKind = "removed"
	// Changed: on both sides under the same name, with another dtype, shape, size or bytes.
	Changed ChangeKind = "changed"
	// Renamed: removed under one name and added under another, with the same dtype, shape and size
	// (and bytes, when compared).
	Renamed ChangeKind = "renamed"
)

// FieldChange is one field of a tensor before and after.
type FieldChange struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// appendShape appends a shape as text: [2, 3].
func appendShape(dst []byte, s []uint64) []byte {
	dst = append(dst, '[')
	for i, d := range s {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = strconv.AppendUint(dst, d, 10)
	}
	return append(dst, ']')
}

// appendField appends the text of one field of a tensor (dtype, shape, bytes or data) as changes show it.
func appendField(dst []byte, t *Tensor, field string) []byte {
	switch field {
	case "dtype":
		return append(dst, t.DType...)
	case "shape":
		return appendShape(dst, t.Shape)
	case "bytes":
		return strconv.AppendUint(dst, t.Bytes, 10)
	case "data":
		return append(dst, t.Digest...)
	}
	return dst
}

// fieldChanges lists what a change did, field by field.
func fieldChanges(c *Change) []FieldChange {
	out := make([]FieldChange, 0, len(c.Fields))
	for _, f := range c.Fields {
		out = append(out, FieldChange{Field: f, Old: string(appendField(nil, &c.Old, f)), New: string(appendField(nil, &c.New, f))})
	}
	return out
}

// grouper sorts report entries into groups keyed by kind, what changed and the name template(s), in
// order of first appearance. A key is built in a reused buffer and looked up without allocating, so
// only a group's first entry costs a key string, and each entry costs the index of its group: a report
// of a million unrelated changes costs a few words per change, not a map entry and a slice each.
//
// A key is the kind, a zero byte, then fields (what changed, the template, for renames the new name's
// template), each after its length in 4 bytes, so that no two different keys are equal whatever bytes
// names and dtypes hold.
type grouper struct {
	buf    []byte
	nums   []int // the numbers of the names being keyed
	index  map[string]int
	groups []pending
	of     []int32 // the group of each entry, in the order they were added
}

type pending struct {
	key     string
	changes []FieldChange
	count   int
}

// fields splits the key of a group: its kind, then what changed, the template and, for renames, the
// new names' template.
func (p *pending) fields() (kind ChangeKind, fields [4]string) {
	k, rest, _ := strings.Cut(p.key, "\x00")
	kind = ChangeKind(k)
	for k := 0; k < len(fields) && len(rest) >= 4; k++ {
		n := int(binary.LittleEndian.Uint32([]byte(rest[:4])))
		fields[k], rest = rest[4:4+n], rest[4+n:]
	}
	return kind, fields
}

// start begins a key in the buffer for kind.
func (g *grouper) start(kind ChangeKind) {
	g.buf = append(append(g.buf[:0], kind...), 0)
	g.nums = g.nums[:0]
}

// open begins a field of the key; close(at) ends the field open returned.
func (g *grouper) open() int {
	g.buf = append(g.buf, 0, 0, 0, 0)
	return len(g.buf)
}

func (g *grouper) close(at int) {
	binary.LittleEndian.PutUint32(g.buf[at-4:], uint32(len(g.buf)-at))
}

// template adds name's template to the key as a field and its numbers to g.nums.
func (g *grouper) template(name string) {
	at := g.open()
	g.buf, g.nums = namefold.AppendTemplate(g.buf, g.nums, name)
	g.close(at)
}

// add puts the next entry into the group of the key in the buffer. changes, for a new group of changed
// tensors, says what changed field by field.
func (g *grouper) add(changes func() []FieldChange) {
	k, ok := g.index[string(g.buf)]
	if !ok {
		k = len(g.groups)
		p := pending{key: string(g.buf)}
		g.index[p.key] = k
		if changes != nil {
			p.changes = changes()
		}
		g.groups = push(g.groups, p)
	}
	g.groups[k].count++
	g.of = append(g.of, int32(k))
}

// groupChanges folds a report's tensor changes into groups. tolerance is true when a tolerance was
// given: tensors equal within it group apart from the others.
func groupChanges(t *TensorReport, tolerance bool) []Group {
	g := &grouper{index: map[string]int{}, of: make([]int32, 0, len(t.Added)+len(t.Removed)+len(t.Changed)+len(t.Renamed))}
	// whatTensor adds "DTYPE [shape]" to the key.
	whatTensor := func(x *Tensor) {
		at := g.open()
		if x.DType == "" { // known by name only: a shard of its set is missing
			g.buf = append(g.buf, "? (name only)"...)
		} else {
			g.buf = appendShape(append(append(g.buf, x.DType...), ' '), x.Shape)
		}
		g.close(at)
	}
	for _, list := range []struct {
		kind ChangeKind
		ts   []Tensor
	}{{Added, t.Added}, {Removed, t.Removed}} {
		for i := range list.ts {
			g.start(list.kind)
			whatTensor(&list.ts[i])
			g.template(list.ts[i].Name)
			g.add(nil)
		}
	}
	for i := range t.Changed {
		c := &t.Changed[i]
		g.start(kindOf(c))
		at := g.open()
		if len(c.Fields) == 1 && c.Fields[0] == "data" {
			g.buf = append(g.buf, "data"...) // bytes changed: one group whatever the digests
		} else {
			for _, f := range c.Fields {
				g.buf = append(append(g.buf, f...), 0)
				g.buf = append(appendField(g.buf, &c.Old, f), 0)
				g.buf = append(appendField(g.buf, &c.New, f), 0)
			}
		}
		if c.Values != nil { // how the values compare: tensors that changed alike group together
			g.buf = append(g.buf, 0, valueVerdict(c.Values, tolerance))
			g.buf = append(append(g.buf, 0), c.ValuesEqual...) // equal values group apart, by reason
		}
		g.close(at)
		g.template(c.Name)
		g.add(func() []FieldChange { return fieldChanges(c) })
	}
	for i := range t.Renamed {
		rn := &t.Renamed[i]
		g.start(Renamed)
		whatTensor(&rn.Tensor)
		mark := len(g.buf)
		g.template(rn.From)
		nf := len(g.nums)
		g.template(rn.To)
		if !slices.Equal(g.nums[:nf], g.nums[nf:]) { // the numbers changed too: not a pattern, a group of its own
			g.buf = g.buf[:mark]
			for _, name := range []string{rn.From, rn.To} {
				at := g.open()
				g.buf = append(g.buf, name...)
				g.close(at)
			}
			g.buf = append(g.buf, 0, 0, 0, 0) // an empty field: unlike any pair of templates
		}
		g.add(nil)
	}

	// The groups, then their names in the order the entries came.
	out := make([]Group, len(g.groups))
	for k := range g.groups {
		out[k].Names = make([]string, 0, g.groups[k].count)
	}
	e := 0
	next := func(name, to string) {
		gr := &out[g.of[e]]
		e++
		if len(gr.Names) == 0 {
			gr.Pattern, gr.To = name, to
		}
		gr.Names = append(gr.Names, name)
	}
	for _, list := range [][]Tensor{t.Added, t.Removed} {
		for i := range list {
			next(list[i].Name, "")
		}
	}
	worst := make([]int, len(out)) // the index in t.Changed of each group's worst member, +1
	for i := range t.Changed {
		k := g.of[e]
		next(t.Changed[i].Name, "")
		if c := &t.Changed[i]; c.Values != nil && (worst[k] == 0 || moreChanged(c.Values, t.Changed[worst[k]-1].Values)) {
			worst[k] = i + 1
		}
	}
	for i := range t.Renamed {
		next(t.Renamed[i].From, t.Renamed[i].To)
	}
	confirmed := len(t.Renamed) > 0 && t.Renamed[0].Confirmed
	for k := range out {
		gr, p := &out[k], &g.groups[k]
		kind, fields := p.fields()
		what := fields[0]
		gr.Kind, gr.Count = kind, len(gr.Names)
		switch kind {
		case Renamed:
			gr.Tensor, gr.Confirmed = what, confirmed
			if gr.Count > 1 { // the numbers are the same on both sides
				gr.Pattern, gr.To = namefold.Fold(fields[1], gr.Names), namefold.Fold(fields[2], gr.Names)
			}
		case Changed, Requantized:
			gr.Changes = p.changes
			if strings.HasPrefix(what, "data") && gr.Count > 1 { // each member has digests of its own
				gr.Changes = []FieldChange{{Field: "data"}}
			}
			if w := worst[k]; w > 0 {
				gr.Worst, gr.Values, gr.ValuesEqual = t.Changed[w-1].Name, t.Changed[w-1].Values, t.Changed[w-1].ValuesEqual
			}
		default:
			gr.Tensor = what
		}
		if kind != Renamed && gr.Count > 1 {
			gr.Pattern = namefold.Fold(fields[1], gr.Names)
		}
	}
	rank := map[ChangeKind]int{Removed: 0, Added: 1, Changed: 2, Requantized: 3, Renamed: 4}
	slices.SortStableFunc(out, func(x, y Group) int {
		if x.Kind != y.Kind {
			return rank[x.Kind] - rank[y.Kind]
		}
		return strings.Compare(x.Names[0], y.Names[0])
	})
	return out
}

// valueVerdict is a byte that says how a comparison by value came out, for group keys: NaN or Inf
// appeared ('n'), an exact rounding across dtypes ('r'), within the tolerance ('t'), or changed ('v').
func valueVerdict(d *values.Diff, tolerance bool) byte {
	switch {
	case nanAppeared(d):
		return 'n'
	case d.ExactRounding != nil && *d.ExactRounding:
		return 'r'
	case tolerance && d.WithinTolerance:
		return 't'
	}
	return 'v'
}

// moreChanged reports whether comparison x changed more than y: a larger relative L2, where an
// undefined one (old values all zero, or not finite) counts as the largest.
func moreChanged(x, y *values.Diff) bool {
	rank := func(d *values.Diff) float64 {
		if math.IsNaN(d.RelL2) {
			return math.Inf(1)
		}
		return d.RelL2
	}
	return rank(x) > rank(y)
}
