package diff

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/textfmt"
)

// transformText is a transform as the text report shows it, with its head count.
func transformText(tr Transform, heads int) string {
	if tr == TransformPermuteQK && heads == 1 {
		return string(tr) + " (1 head)"
	}
	if tr == TransformPermuteQK && heads > 0 {
		return fmt.Sprintf("%s (%d heads)", tr, heads)
	}
	return string(tr)
}

// statusText says what a pair status means, for a count of pairs.
var statusText = map[PairStatus]string{PairEqual: "equal", PairExactRounding: "exact rounding", PairDiffers: "differ",
	PairShape: "of other shapes", PairNotCompared: "not compared"}

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
	count := map[PairStatus]int{}
	transforms := map[Transform]int{}
	for _, sp := range s.Pairs {
		count[sp.Status]++
		if sp.Transform != TransformNone {
			transforms[sp.Transform]++
		}
	}
	var parts []string
	for _, st := range []PairStatus{PairEqual, PairExactRounding, PairDiffers, PairShape, PairNotCompared} {
		if count[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[st], statusText[st]))
		}
	}
	t.printf("  pairs     %d: %s\n", len(s.Pairs), strings.Join(parts, ", "))
	parts = parts[:0]
	for _, tr := range []Transform{TransformPermuteQK, TransformNormPlusOne, TransformTranspose, TransformStackExperts, TransformTrimRows} {
		if transforms[tr] > 0 {
			parts = append(parts, fmt.Sprintf("%s × %d", tr, transforms[tr]))
		}
	}
	if len(parts) > 0 {
		t.printf("  undone    %s\n", strings.Join(parts, ", "))
	}
	if len(s.Skipped)+len(s.Generated) > 0 {
		t.printf("  %s\n", p.Dim(fmt.Sprintf("%d source tensors the converter leaves out, %d GGUF tensors it makes", len(s.Skipped), len(s.Generated))))
	}
	if len(s.Types) > 0 {
		rows := [][]string{{"type", "tensors", "parameters", "bits/weight", "rmse", "max error"}}
		for _, ts := range s.Types {
			e, m := "-", "-"
			if ts.RMSE != nil {
				e = num(*ts.RMSE)
			}
			if ts.MaxError != nil {
				m = num(*ts.MaxError)
			}
			rows = append(rows, []string{textfmt.Escape(ts.Type), strconv.Itoa(ts.Tensors), textfmt.Thousands(ts.Parameters),
				strconv.FormatFloat(ts.BitsPerWeight, 'f', 2, 64), e, m})
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
