package diff

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Group is a set of tensors that changed the same way and whose names differ only in numbers, such as
// every layer's q_proj converted from F32 to F16. Groups fold a report for people; the full lists stay
// in TensorReport.
type Group struct {
	// Kind is "added", "removed", "changed" or "renamed".
	Kind string `json:"kind"`
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
}

// FieldChange is one field of a tensor before and after.
type FieldChange struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// template replaces each number that stands alone between separators (layers.12.mlp, blocks_3_attn)
// with {} and returns the numbers, so names that differ only there share a template.
func template(name string) (string, []int) {
	b, nums := appendTemplate(nil, nil, name)
	return string(b), nums
}

// appendTemplate appends name's template to dst and its numbers to nums.
func appendTemplate(dst []byte, nums []int, name string) ([]byte, []int) {
	last := 0 // name[last:i] is still to copy
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' || (i > 0 && !isSep(name[i-1])) {
			continue
		}
		j, n := i, 0
		for j < len(name) && name[j] >= '0' && name[j] <= '9' {
			n = n*10 + int(name[j]-'0')
			j++
		}
		if j-i <= 9 && (j == len(name) || isSep(name[j])) {
			nums = append(nums, n)
			dst = append(append(dst, name[last:i]...), "{}"...)
			last = j
		}
		i = j - 1
	}
	return append(dst, name[last:]...), nums
}

func isSep(c byte) bool { return c == '.' || c == '_' || c == '-' || c == '/' }

// templater computes templates for many names with few allocations: equal templates share one
// string, and the numbers share one arena.
type templater struct {
	buf    []byte
	intern map[string]string
	arena  []int
}

func (tp *templater) of(name string) (string, []int) {
	if tp.intern == nil {
		tp.intern = map[string]string{}
	}
	start := len(tp.arena)
	tp.buf, tp.arena = appendTemplate(tp.buf[:0], tp.arena, name)
	s, ok := tp.intern[string(tp.buf)]
	if !ok {
		s = string(tp.buf)
		tp.intern[s] = s
	}
	return s, tp.arena[start:len(tp.arena):len(tp.arena)]
}

func shapeText(s []uint64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.FormatUint(d, 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// fieldChanges lists what a change did, field by field.
func fieldChanges(c *Change) []FieldChange {
	out := make([]FieldChange, 0, len(c.Fields))
	for _, f := range c.Fields {
		fc := FieldChange{Field: f}
		switch f {
		case "dtype":
			fc.Old, fc.New = c.Old.DType, c.New.DType
		case "shape":
			fc.Old, fc.New = shapeText(c.Old.Shape), shapeText(c.New.Shape)
		case "bytes":
			fc.Old, fc.New = strconv.FormatUint(c.Old.Bytes, 10), strconv.FormatUint(c.New.Bytes, 10)
		case "data":
			fc.Old, fc.New = c.Old.Digest, c.New.Digest
		}
		out = append(out, fc)
	}
	return out
}

type member struct {
	name string
	nums []int
	to   string // the new name, for renames
}

func groupChanges(t *TensorReport) []Group {
	type key struct{ kind, tmpl, what string }
	groups := map[key][]member{}
	var order []key
	addTo := func(k key, name string, nums []int) {
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], member{name: name, nums: nums})
	}
	var tp templater
	for _, x := range t.Added {
		tmpl, nums := tp.of(x.Name)
		addTo(key{"added", tmpl, x.DType + " " + shapeText(x.Shape)}, x.Name, nums)
	}
	for _, x := range t.Removed {
		tmpl, nums := tp.of(x.Name)
		addTo(key{"removed", tmpl, x.DType + " " + shapeText(x.Shape)}, x.Name, nums)
	}
	changes := map[string][]FieldChange{}
	for i := range t.Changed {
		c := &t.Changed[i]
		tmpl, nums := tp.of(c.Name)
		fcs := fieldChanges(c)
		var w strings.Builder
		for _, fc := range fcs {
			w.WriteString(fc.Field + "\x00" + fc.Old + "\x00" + fc.New + "\x00")
		}
		what := w.String()
		if len(c.Fields) == 1 && c.Fields[0] == "data" {
			what = "data" // bytes changed: one group whatever the digests
		}
		changes[what] = fcs
		addTo(key{"changed", tmpl, what}, c.Name, nums)
	}
	for _, rn := range t.Renamed {
		tf, nf := tp.of(rn.From)
		tt, nt := tp.of(rn.To)
		k := key{"renamed", tf + "\x00" + tt, rn.Tensor.DType + " " + shapeText(rn.Tensor.Shape)}
		if !slices.Equal(nf, nt) { // the numbers changed too: not a pattern, a group of its own
			k.tmpl = rn.From + "\x00" + rn.To
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], member{name: rn.From, nums: nf, to: rn.To})
	}
	confirmed := len(t.Renamed) > 0 && t.Renamed[0].Confirmed
	out := make([]Group, 0, len(order))
	for _, k := range order {
		ms := groups[k]
		g := Group{Kind: k.kind, Pattern: ms[0].name, To: ms[0].to}
		if k.kind == "renamed" {
			g.Tensor, g.Confirmed = k.what, confirmed
			if len(ms) > 1 {
				from, to, _ := strings.Cut(k.tmpl, "\x00")
				g.Pattern, g.To = foldPattern(from, ms), foldPattern(to, ms)
			}
			g.Names = make([]string, len(ms))
			for i, m := range ms {
				g.Names[i] = m.name
			}
			g.Count = len(ms)
			out = append(out, g)
			continue
		}
		if k.kind == "changed" {
			g.Changes = changes[k.what]
			if k.what == "data" && len(ms) > 1 { // each member has digests of its own
				g.Changes = []FieldChange{{Field: "data"}}
			}
		} else {
			g.Tensor = k.what
		}
		for _, m := range ms {
			g.Names = append(g.Names, m.name)
		}
		g.Count = len(ms)
		if len(ms) > 1 {
			g.Pattern = foldPattern(k.tmpl, ms)
		}
		out = append(out, g)
	}
	rank := map[string]int{"removed": 0, "added": 1, "changed": 2, "renamed": 3}
	slices.SortStableFunc(out, func(x, y Group) int {
		if x.Kind != y.Kind {
			return rank[x.Kind] - rank[y.Kind]
		}
		return strings.Compare(x.Names[0], y.Names[0])
	})
	return out
}

// foldPattern fills a template's placeholders with the numbers the members have there: a constant
// number as itself, a run as {0..31}, anything else as {0,2,5..7}.
func foldPattern(tmpl string, ms []member) string {
	parts := strings.Split(tmpl, "{}")
	var b strings.Builder
	for p, part := range parts {
		b.WriteString(part)
		if p == len(parts)-1 {
			break
		}
		nums := make([]int, len(ms))
		for i, m := range ms {
			nums[i] = m.nums[p]
		}
		slices.Sort(nums)
		nums = slices.Compact(nums)
		if len(nums) == 1 {
			b.WriteString(strconv.Itoa(nums[0]))
			continue
		}
		b.WriteString("{" + ranges(nums) + "}")
	}
	return b.String()
}

// ranges writes sorted numbers as runs: 0..3,7,9..12.
func ranges(nums []int) string {
	var parts []string
	for i := 0; i < len(nums); {
		j := i
		for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, fmt.Sprintf("%d..%d", nums[i], nums[j]))
		case j > i:
			parts = append(parts, strconv.Itoa(nums[i]), strconv.Itoa(nums[j]))
		default:
			parts = append(parts, strconv.Itoa(nums[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
