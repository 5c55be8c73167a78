package diff

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/stdiff/stdiff/canon/delta"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/diff/linediff"
	"github.com/zeebo/blake3"
)

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
func boundedDiff(old, new string) []linediff.Line {
	if strings.Count(old, "\n")+strings.Count(new, "\n") > maxDiffLines || textfmt.IsBlob(old) || textfmt.IsBlob(new) {
		return nil
	}
	return linediff.Of(old, new)
}

// ValueSummary describes a large value by its size and hash.
func ValueSummary(v string) string {
	sum := blake3.Sum256([]byte(v))
	return fmt.Sprintf("%d bytes, blake3 %s…", len(v), hex.EncodeToString(sum[:6]))
}
