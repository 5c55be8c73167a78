// Package linediff is the line diff of two texts that stdiff shows (go-diff's line mode, deterministic:
// no time limit) and its folding of unchanged runs: metadata values in diff, the files beside the
// tensors in diff/companion.
package linediff

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Line is one line of a value diff: Op is ' ' (same), '-' (only in the old value) or '+' (only in the new).
type Line struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// Of is the line diff of two texts (go-diff's line mode, each text ended by a newline). It is deterministic: no time limit.
func Of(old, new string) []Line {
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
