package diff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stdiff/stdiff/canon/values"
)

// Category is a kind of difference between two models, as Report.Categories and Options.FailOn name
// them. Categories are stable and safe to match in scripts; cmd/stdiff/docs/scripting.md lists them.
type Category string

// The categories, in the order Report.Categories lists them.
const (
	// CategoryAdded, CategoryRemoved, CategoryRenamed: tensors only on the new side, only on the old
	// side, or under another name with the same dtype, shape and size (and bytes, when compared).
	CategoryAdded   Category = "added"
	CategoryRemoved Category = "removed"
	CategoryRenamed Category = "renamed"
	// CategoryDType, CategoryShape: a tensor's dtype or shape changed.
	CategoryDType Category = "dtype"
	CategoryShape Category = "shape"
	// CategoryData: the bytes of a tensor of one dtype and shape differ (or only its byte size changed),
	// or could not be read (TensorReport.NotCompared); a tensor equal within the tolerance does not count.
	CategoryData Category = "data"
	// CategoryValues: a tensor compared by value is not equal within the tolerance (without one: its
	// values differ), and across dtypes, the new side is not just the rounding of the old one. A
	// tensor whose bytes differ but that could not be compared by value (a snapshot side, a remote
	// one) counts too, and so does a tensor not compared (TensorReport.NotCompared).
	CategoryValues Category = "values"
	// CategoryMetadata: a metadata key was added, removed or changed.
	CategoryMetadata Category = "metadata"
	// CategoryVerdict: the reference reader's verdict differs.
	CategoryVerdict Category = "verdict"
	// CategoryNaN: NaN or Inf appeared in a tensor whose old side had none (of that kind).
	CategoryNaN Category = "nan"
	// CategoryCompanion: a file a loader reads beside the tensors of a folder model (config.json,
	// generation_config.json, the tokenizer's files, a chat template, adapter_config.json, …) was
	// added, removed or changed (Report.Companions).
	CategoryCompanion Category = "companion"
)

// Categories lists every category in report order.
var Categories = []Category{CategoryAdded, CategoryRemoved, CategoryRenamed, CategoryDType, CategoryShape,
	CategoryData, CategoryValues, CategoryMetadata, CategoryVerdict, CategoryNaN, CategoryCompanion}

// ParseCategories reads a list of category names, as `--fail-on` takes them (each may hold several
// separated by commas: "shape,dtype,nan"), into the categories that make the outcome Found (Options.FailOn). The named
// categories, or every one when none is named, and always CategoryVerdict: a model that strict
// readers reject is never what was shipped, whatever a gate allows. A name prefixed with "-" leaves
// that category out ("shape,-verdict": shape alone; "-metadata": every category but metadata). No
// name at all gives nil (every category). An unknown name is an error that lists the known ones.
func ParseCategories(names []string) ([]Category, error) {
	if len(names) == 0 {
		return nil, nil
	}
	named, without := map[Category]bool{}, map[Category]bool{}
	for _, n := range strings.Split(strings.Join(names, ","), ",") {
		name, minus := strings.CutPrefix(strings.TrimSpace(n), "-")
		c := Category(name)
		if !known(c) {
			list := make([]string, len(Categories))
			for i, k := range Categories {
				list[i] = string(k)
			}
			return nil, fmt.Errorf("unknown category %q (known: %s; -NAME leaves one out)", n, strings.Join(list, ", "))
		}
		if minus {
			without[c] = true
		} else {
			named[c] = true
		}
	}
	out := make([]Category, 0, len(Categories))
	for _, c := range Categories {
		if (len(named) == 0 || named[c] || c == CategoryVerdict) && !without[c] {
			out = append(out, c)
		}
	}
	return out, nil
}

func known(c Category) bool { return slices.Contains(Categories, c) }

// Fails reports whether category c makes the report's outcome Found under its FailOn (every category
// when FailOn is empty).
func (r *Report) Fails(c Category) bool { return failing(r.FailOn, c) }

// failing reports whether category c is one of failOn (any category when failOn is empty).
func failing(failOn []Category, c Category) bool {
	return len(failOn) == 0 || slices.Contains(failOn, c)
}

// changeCategories sets has[c] for each category c a changed tensor counts in (and only those). tolerance is true when a
// tolerance was given: a tensor equal within it is no difference.
func changeCategories(c *Change, tolerance bool, has map[Category]bool) {
	within := c.Values != nil && tolerance && c.Values.WithinTolerance
	for _, f := range c.Fields {
		switch f {
		case "dtype":
			has[CategoryDType] = true
		case "shape":
			has[CategoryShape] = true
		case "data":
			if !within {
				has[CategoryData] = true
			}
		}
	}
	if len(c.Fields) == 1 && c.Fields[0] == "bytes" {
		has[CategoryData] = true
	}
	if d := c.Values; d != nil && valuesMoved(d, tolerance) {
		has[CategoryValues] = true
	}
	if c.Values == nil && has[CategoryData] && slices.Contains(c.Fields, "data") {
		// The bytes differ and no comparison by value says otherwise (a snapshot's digest, a remote
		// model's): as far as stdiff can tell the values moved, so --fail-on values does not pass.
		has[CategoryValues] = true
	}
	if d := c.Values; d != nil && nanAppeared(d) {
		has[CategoryNaN] = true
	}
	if s := c.Summary; s != nil && (s.To.NaN > 0 && s.From.NaN == 0 || s.To.Inf > 0 && s.From.Inf == 0) {
		has[CategoryNaN] = true
	}
}

// valuesMoved reports whether a comparison by value counts as changed values: not all equal (a NaN
// equals a NaN, −0 equals +0), not equal within the tolerance, and not an exact rounding across dtypes.
func valuesMoved(d *values.Diff, tolerance bool) bool {
	switch {
	case d.Differing == 0 && d.NaNA == d.NaNB && d.InfA == d.InfB:
		return false
	case tolerance && d.WithinTolerance:
		return false
	case d.ExactRounding != nil && *d.ExactRounding:
		return false
	}
	return d.OutsideTolerance > 0
}

// nanAppeared reports whether the new side has NaN, or Inf, where the old side has none.
func nanAppeared(d *values.Diff) bool {
	return (d.NaNB > 0 && d.NaNA == 0) || (d.InfB > 0 && d.InfA == 0)
}
