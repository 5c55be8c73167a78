package diff

import (
	"encoding/hex"
	"fmt"
	"github.com/stdiff/stdiff/canon/delta"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/zeebo/blake3"
)

// Line is one line of a value diff: Op is ' ' (same), '-' (only in the old value) or '+' (only in the new).
type Line struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

const (
	// shortValue is the longest single-line value shown as old → new.
	shortValue = 80
	// maxDiffLines bounds a line diff (the two values' lines together), so that diffing stays fast
	// and deterministic whatever the values; beyond it a value is summarised.
	maxDiffLines = 20000
)

// changeOf decides how a changed metadata value is shown and computes its line diff. JSON values
// (ss_tag_frequency, ss_dataset_dirs, …) are compared with sorted keys, one leaf a line, however long.
func changeOf(key, old, new string) MetaChange {
	c := MetaChange{Key: key, Old: old, New: new, Kind: "value"}
	switch {
	case delta.IsJSONContainer(old) && delta.IsJSONContainer(new):
		c.Kind = "json"
		c.Lines = boundedDiff(delta.CanonicalJSON(old), delta.CanonicalJSON(new))
	case len(old) > shortValue || len(new) > shortValue || strings.Contains(old, "\n") || strings.Contains(new, "\n"):
		c.Kind = "text"
		c.Lines = boundedDiff(old, new)
	}
	if c.Kind != "value" && c.Lines == nil {
		c.Kind = "large"
	}
	return c
}

// boundedDiff is a line diff, or nil when a value is a blob (a line longer than textfmt.MaxLine) or the two have more
// than maxDiffLines lines together.
func boundedDiff(old, new string) []Line {
	if strings.Count(old, "\n")+strings.Count(new, "\n") > maxDiffLines || textfmt.IsBlob(old) || textfmt.IsBlob(new) {
		return nil
	}
	return lineDiff(old, new)
}

// ValueSummary describes a large value by its size and hash.
func ValueSummary(v string) string {
	sum := blake3.Sum256([]byte(v))
	return fmt.Sprintf("%d bytes, blake3 %s…", len(v), hex.EncodeToString(sum[:6]))
}

// lineDiff is a line-mode diff of two texts. It is deterministic: no time limit.
func lineDiff(old, new string) []Line {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	ca, cb, lines := dmp.DiffLinesToChars(old+"\n", new+"\n")
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	var out []Line
	for _, d := range diffs {
		op := " "
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = "-"
		case diffmatchpatch.DiffInsert:
			op = "+"
		}
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l == "" {
				continue
			}
			out = append(out, Line{Op: op, Text: strings.TrimSuffix(l, "\n")})
		}
	}
	return out
}

// Fold keeps the changed lines of a diff with context lines around them; each run of more unchanged
// lines becomes one Line with Op "…" whose Text says how many were left out.
func Fold(lines []Line, context int) []Line {
	keep := make([]bool, len(lines))
	for i, l := range lines {
		if l.Op != " " {
			for k := max(0, i-context); k <= min(len(lines)-1, i+context); k++ {
				keep[k] = true
			}
		}
	}
	var out []Line
	for i := 0; i < len(lines); {
		if keep[i] {
			out = append(out, lines[i])
			i++
			continue
		}
		j := i
		for j < len(lines) && !keep[j] {
			j++
		}
		text := fmt.Sprintf("%d unchanged lines", j-i)
		if j-i == 1 {
			text = "1 unchanged line"
		}
		out = append(out, Line{Op: "…", Text: text})
		i = j
	}
	return out
}
