package diff

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/diff/ggufsrc"
)

// transformText is a transform as the text report shows it, with its head count.
func transformText(tr ggufsrc.Transform, heads int) string {
	if tr == ggufsrc.TransformPermuteQK && heads == 1 {
		return string(tr) + " (1 head)"
	}
	if tr == ggufsrc.TransformPermuteQK && heads > 0 {
		return fmt.Sprintf("%s (%d heads)", tr, heads)
	}
	return string(tr)
}

// statusText says what a pair status means, for a count of pairs.
var statusText = map[ggufsrc.PairStatus]string{ggufsrc.PairEqual: "equal", ggufsrc.PairExactRounding: "exact rounding", ggufsrc.PairDiffers: "differ",
	ggufsrc.PairShape: "of other shapes", ggufsrc.PairNotCompared: "not compared"}

// source writes how a GGUF file was paired with its Hugging Face source: the name map, config.json,
// the pairs per status and transform, the per-type summary, and pairs that match under another
// transform than the converter's.
func (t *textWriter) source(r *Report) {
	s := r.Source
	p := t.opt.Palette
	t.printf("\n%s\n", p.Bold("gguf source"))
	t.printf("  %s, paired through %s\n", textfmt.Escape(s.Arch), textfmt.Escape(s.NameMap))
	if s.Config != "" {
		t.printf("  config    %s\n", textfmt.Escape(s.Config))
	} else {
		t.printf("  config    %s\n", p.Yellow("no config.json beside the source: head counts from the GGUF, no key compared"))
	}
	pairs, undone := sourceCounts(s)
	t.printf("  pairs     %s\n", pairs)
	if undone != "" {
		t.printf("  undone    %s\n", undone)
	}
	if len(s.Skipped)+len(s.Generated) > 0 {
		t.printf("  %s\n", p.Dim(fmt.Sprintf("%d source tensors the converter leaves out, %d GGUF tensors it makes", len(s.Skipped), len(s.Generated))))
	}
	if rows := typeRows(s); len(rows) > 1 {
		for _, row := range rows[1:] {
			row[0] = textfmt.Escape(row[0])
		}
		t.table(rows)
	}
	for i := range r.Tensors.Changed {
		c := &r.Tensors.Changed[i]
		if a := c.MatchesUnder; a != nil {
			t.printf("  %s %s: values match under %s, not %s\n", p.Yellow("!"), textfmt.Escape(c.Name),
				transformText(a.Transform, a.Heads), transformText(c.Transform, c.Heads))
		}
	}
}

// sourceCounts says how many pairs compare how ("12: 10 equal, 2 differ") and the transforms undone
// ("permute-qk × 4", "" for none).
func sourceCounts(s *ggufsrc.Report) (pairs, undone string) {
	count := map[ggufsrc.PairStatus]int{}
	transforms := map[ggufsrc.Transform]int{}
	for _, sp := range s.Pairs {
		count[sp.Status]++
		if sp.Transform != ggufsrc.TransformNone {
			transforms[sp.Transform]++
		}
	}
	var parts []string
	for _, st := range []ggufsrc.PairStatus{ggufsrc.PairEqual, ggufsrc.PairExactRounding, ggufsrc.PairDiffers, ggufsrc.PairShape, ggufsrc.PairNotCompared} {
		if count[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[st], statusText[st]))
		}
	}
	pairs = fmt.Sprintf("%d: %s", len(s.Pairs), strings.Join(parts, ", "))
	parts = parts[:0]
	for _, tr := range []ggufsrc.Transform{ggufsrc.TransformPermuteQK, ggufsrc.TransformNormPlusOne, ggufsrc.TransformTranspose, ggufsrc.TransformStackExperts, ggufsrc.TransformTrimRows} {
		if transforms[tr] > 0 {
			parts = append(parts, fmt.Sprintf("%s × %d", tr, transforms[tr]))
		}
	}
	return pairs, strings.Join(parts, ", ")
}

// typeRows are the per-type summary as table rows, the header first; names are not escaped.
func typeRows(s *ggufsrc.Report) [][]string {
	rows := [][]string{{"type", "tensors", "parameters", "bits/weight", "rmse", "max error"}}
	for _, ts := range s.Types {
		e, m := "-", "-"
		if ts.RMSE != nil {
			e = num(*ts.RMSE)
		}
		if ts.MaxError != nil {
			m = num(*ts.MaxError)
		}
		rows = append(rows, []string{ts.Type, strconv.Itoa(ts.Tensors), textfmt.Thousands(ts.Parameters),
			strconv.FormatFloat(ts.BitsPerWeight, 'f', 2, 64), e, m})
	}
	return rows
}

// sourceChanges are the pairs of a GGUF compared with its source that differ: those whose values match
// under another transform than the converter's first, then by name.
func sourceChanges(r *Report) []*Change {
	var out []*Change
	for i := range r.Tensors.Changed {
		out = append(out, &r.Tensors.Changed[i])
	}
	slices.SortStableFunc(out, func(x, y *Change) int {
		return cmp.Compare(boolInt(y.MatchesUnder != nil), boolInt(x.MatchesUnder != nil))
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sourceChangeRow is a differing pair as a table row: its two names, what differs (the values' rel L2
// and rmse, or the shapes), the transform undone, the transform its values match under ("" for none).
func sourceChangeRow(c *Change) []string {
	what := shapeString(c.Old.Shape) + " → " + shapeString(c.New.Shape)
	if v := c.Values; v != nil {
		what = "rel L2 " + num(v.RelL2)
		if v.RMSE != nil {
			what += ", rmse " + num(*v.RMSE)
		}
	}
	under := ""
	if a := c.MatchesUnder; a != nil {
		under = transformText(a.Transform, a.Heads)
	}
	return []string{c.Name, c.NameB, what, transformText(c.Transform, c.Heads), under}
}

// configMismatches are the GGUF keys that restate config.json with another value.
func configMismatches(s *ggufsrc.Report) []ggufsrc.ConfigKey {
	var out []ggufsrc.ConfigKey
	for _, ck := range s.ConfigKeys {
		if !ck.Equal {
			out = append(out, ck)
		}
	}
	return out
}

// sourceMarkdown writes the GGUF-source section of WriteMarkdown: the name map and config.json, the
// pairs per status and the transforms undone, the per-type summary, the pairs that differ (the first
// defaultTop) and the config.json keys the GGUF restates otherwise.
func sourceMarkdown(p func(string, ...any), r *Report) {
	s := r.Source
	p("\n**gguf source**: %s, paired through %s\n\n", markdown.Code(s.Arch), markdown.Text(s.NameMap))
	if s.Config != "" {
		p("- config: %s\n", markdown.Code(s.Config))
	} else {
		p("- config: no config.json beside the source: head counts from the GGUF, no key compared\n")
	}
	pairs, undone := sourceCounts(s)
	p("- pairs: %s\n", markdown.Text(pairs))
	if undone != "" {
		p("- undone: %s\n", markdown.Text(undone))
	}
	if rows := typeRows(s); len(rows) > 1 {
		p("\n| %s |\n|---|---|---|---|---|---|\n", strings.Join(rows[0], " | "))
		for _, row := range rows[1:] {
			p("| %s | %s |\n", markdown.Code(row[0]), strings.Join(row[1:], " | "))
		}
	}
	if ch := sourceChanges(r); len(ch) > 0 {
		p("\n| pair that differs | %s | differs | transform | matches under |\n|---|---|---|---|---|\n", []string{"gguf", "source"}[boolInt(s.GGUF == "a")])
		for k, c := range ch {
			if k == defaultTop {
				p("\n%d more pairs differ (JSON lists every one).\n", len(ch)-k)
				break
			}
			row := sourceChangeRow(c)
			p("| %s | %s | %s | %s | %s |\n", markdown.Code(row[0]), markdown.Code(row[1]), markdown.Text(row[2]), markdown.Text(row[3]), markdown.Text(row[4]))
		}
	}
	if cks := configMismatches(s); len(cks) > 0 {
		p("\n| gguf key | config.json key | gguf | config.json |\n|---|---|---|---|\n")
		for _, ck := range cks {
			p("| %s | %s | %s | %s |\n", markdown.Code(ck.Key), markdown.Code(ck.ConfigKey), markdown.Text(ck.GGUF), markdown.Text(ck.Config))
		}
	}
}

// htmlSource is the GGUF-source section of WriteHTML.
type htmlSource struct {
	*ggufsrc.Report
	Counts, Undone string
	Types          [][]string
	Changes        [][]string
	Mismatches     []ggufsrc.ConfigKey
}

func newHTMLSource(r *Report) *htmlSource {
	if r.Source == nil {
		return nil
	}
	h := &htmlSource{Report: r.Source, Types: typeRows(r.Source), Mismatches: configMismatches(r.Source)}
	h.Counts, h.Undone = sourceCounts(r.Source)
	for _, c := range sourceChanges(r) {
		h.Changes = append(h.Changes, sourceChangeRow(c))
	}
	return h
}
