package diff

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/canon/values"
)

// defaultTop is how many of the most changed tensors the text and Markdown list unless told otherwise.
const defaultTop = 10

// num shows a statistic with three significant digits; an undefined one as "n/a".
func num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// percent shows a fraction as a percentage, never rounding a few elements to 0% or all but a few to
// 100%.
func percent(f float64) string {
	switch {
	case f > 0 && f < 0.001:
		return "<0.1%"
	case f < 1 && f > 0.999:
		return ">99.9%"
	}
	return strconv.FormatFloat(100*f, 'f', 1, 64) + "%"
}

// coords shows the flat (row-major) index of an element of a tensor of the given shape as its
// coordinates: [3, 17].
func coords(shape []uint64, idx int64) string {
	if idx < 0 {
		return ""
	}
	c := make([]uint64, len(shape))
	rest := uint64(idx)
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] > 0 {
			c[k], rest = rest%shape[k], rest/shape[k]
		}
	}
	return string(appendShape(nil, c))
}

// roundingText says how the narrower side of a comparison across dtypes relates to the rounding of
// the wider one; "" when no rounding was checked.
func roundingText(d *values.Diff) string {
	r := d.Rounding
	if r == nil {
		return ""
	}
	exact := d.ExactRounding != nil && *d.ExactRounding
	switch {
	case r.Narrow == "a" && exact && d.Differing == 0:
		return fmt.Sprintf("same values (%s holds every %s value)", r.From, r.To)
	case r.Narrow == "a" && exact:
		return fmt.Sprintf("the %s values round to the old %s values", r.From, r.To)
	case r.Narrow == "a":
		return ""
	case exact && r.Saturated > 0:
		return fmt.Sprintf("exact %s rounding of the %s values (%d out of range held at the largest)", r.To, r.From, r.Saturated)
	case exact:
		return fmt.Sprintf("exact %s rounding of the %s values", r.To, r.From)
	}
	off := fmt.Sprintf("%d elements off", r.Mismatches)
	if r.MaxULP > 0 {
		off += fmt.Sprintf(", up to %d ULP", r.MaxULP)
	}
	return fmt.Sprintf("not %s rounding of the %s values (%s)", r.To, r.From, off)
}

// valuesText says how the values of a tensor (or of the worst member of a group) compare, for a
// change line. tolerance is true when a tolerance was given.
func valuesText(p textfmt.Palette, d *values.Diff, tolerance bool) string {
	stats := fmt.Sprintf("rel L2 %s, max |a−b| %s", num(d.RelL2), num(d.MaxAbsDiff))
	var parts []string
	switch rt := roundingText(d); {
	case d.ExactRounding != nil && *d.ExactRounding && rt != "":
		parts = append(parts, rt)
	case tolerance && d.WithinTolerance:
		parts = append(parts, "equal within tolerance, max |a−b| "+num(d.MaxAbsDiff))
	case rt != "":
		parts = append(parts, rt, stats)
	default:
		parts = append(parts, "values: "+stats)
	}
	if d.NaNA != d.NaNB {
		parts = append(parts, fmt.Sprintf("NaN %s → %s", p.Red(strconv.FormatInt(d.NaNA, 10)), p.Green(strconv.FormatInt(d.NaNB, 10))))
	}
	if d.InfA != d.InfB {
		parts = append(parts, fmt.Sprintf("Inf %s → %s", p.Red(strconv.FormatInt(d.InfA, 10)), p.Green(strconv.FormatInt(d.InfB, 10))))
	}
	return strings.Join(parts, ", ")
}

// mostChanged lists the changes compared by value whose values moved (or gained NaN or Inf), most
// changed first (relative L2; ties by name).
func mostChanged(r *Report) []*Change {
	var out []*Change
	for i := range r.Tensors.Changed {
		c := &r.Tensors.Changed[i]
		if d := c.Values; d != nil && (valuesMoved(d, r.Tolerance != nil) || nanAppeared(d)) {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(x, y *Change) int {
		switch {
		case moreChanged(x.Values, y.Values):
			return -1
		case moreChanged(y.Values, x.Values):
			return 1
		}
		return strings.Compare(x.Name, y.Name)
	})
	return out
}

// statRow is the statistics of one change as the columns of the most-changed table.
func statRow(c *Change) []string {
	d := c.Values
	at := ""
	if s := coords(valuesShape(c), d.MaxAbsDiffIndex); s != "" {
		at = "at " + s
	}
	row := []string{"rel L2 " + num(d.RelL2), "max |a−b| " + num(d.MaxAbsDiff), at, "mean |a−b| " + num(d.MeanAbsDiff),
		"cos " + cosine(d.Cosine), percent(d.DiffFraction) + " differ"}
	if s := nonFinite(d); s != "" {
		row = append(row, s)
	}
	return row
}

// nonFinite shows the NaN and Inf counts of both sides, those that are not zero: "NaN 0 → 3".
func nonFinite(d *values.Diff) string {
	var parts []string
	if d.NaNA+d.NaNB > 0 {
		parts = append(parts, fmt.Sprintf("NaN %d → %d", d.NaNA, d.NaNB))
	}
	if d.InfA+d.InfB > 0 {
		parts = append(parts, fmt.Sprintf("Inf %d → %d", d.InfA, d.InfB))
	}
	return strings.Join(parts, ", ")
}

// cosine shows a cosine similarity with the digits that tell nearly equal tensors apart.
func cosine(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return strconv.FormatFloat(x, 'f', 6, 64)
}

// summaryChanges lists the changes with value summaries (Change.Summary), the most moved first (the
// relative change of the L2 norm; ties by name).
func summaryChanges(r *Report) []*Change {
	var out []*Change
	for i := range r.Tensors.Changed {
		if c := &r.Tensors.Changed[i]; c.Summary != nil {
			out = append(out, c)
		}
	}
	moved := func(c *Change) float64 {
		d := math.Abs(c.Summary.To.L2 - c.Summary.From.L2)
		if d == 0 || math.IsNaN(d) {
			return 0
		}
		return d / math.Abs(c.Summary.From.L2) // +Inf from 0
	}
	slices.SortStableFunc(out, func(x, y *Change) int {
		if c := cmp.Compare(moved(y), moved(x)); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	})
	return out
}

// summaryRow is how a value summary moved, as table cells: L2 norm (and its relative change), mean,
// std, and NaN and Inf counts when either side has some ("" when not).
func summaryRow(s *SummaryChange) []string {
	l2 := "L2 " + num(s.From.L2) + " → " + num(s.To.L2)
	if s.From.L2 != 0 && !math.IsNaN(s.From.L2) && !math.IsNaN(s.To.L2) {
		l2 += " (" + relChange(s.From.L2, s.To.L2) + ")"
	}
	row := []string{l2, "mean " + num(s.From.Mean) + " → " + num(s.To.Mean), "std " + num(s.From.Std) + " → " + num(s.To.Std)}
	var bad []string
	if s.From.NaN+s.To.NaN > 0 {
		bad = append(bad, fmt.Sprintf("NaN %d → %d", s.From.NaN, s.To.NaN))
	}
	if s.From.Inf+s.To.Inf > 0 {
		bad = append(bad, fmt.Sprintf("Inf %d → %d", s.From.Inf, s.To.Inf))
	}
	return append(row, strings.Join(bad, ", "))
}

// relChange is the relative change from a (not 0) to b as a signed percentage: +1.6%, -0.0123%, +250%.
func relChange(a, b float64) string {
	p := 100 * (b - a) / math.Abs(a)
	if math.Abs(p) >= 1000 {
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	}
	return fmt.Sprintf("%+.3g%%", p)
}
