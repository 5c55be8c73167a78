package act

import (
	"fmt"
	"io"
	"strings"

	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// WriteOptions say how Write writes an act report: its format, and how the text looks.
type WriteOptions struct {
	// Format is the form: text (the zero value), JSON, JSONL or Markdown (an act report has no page:
	// HTML writes the text).
	Format textfmt.Format
	// Palette colours the text's failed and skipped actions (the zero Palette: none).
	Palette textfmt.Palette
	// Deletable writes, whatever the format, only what deleting deletes (Report.Deletable), a path
	// each, each followed by a newline, or by a NUL with Null (for `xargs -0`).
	Deletable, Null bool
}

// Write writes the act report in opt.Format (or its deletable paths, with opt.Deletable). Text is a
// line per action, then a summary line; names from files are escaped (textfmt.Escape). JSON is the
// report indented (textfmt.WriteJSON). JSONL is one compact record per action, each with the schema
// (textfmt.WriteRecords): the fields of the action in the JSON. Markdown is a list of the actions and
// the summary line.
func Write(w io.Writer, r *Report, opt WriteOptions) error {
	switch {
	case opt.Deletable:
		return writeDeletable(w, r, map[bool]byte{true: 0, false: '\n'}[opt.Null])
	case opt.Format == textfmt.JSON:
		return textfmt.WriteJSON(w, r)
	case opt.Format == textfmt.JSONL:
		return writeJSONL(w, r)
	case opt.Format == textfmt.Markdown:
		return writeMarkdown(w, r)
	}
	return writeText(w, r, opt)
}

// writeJSONL writes one compact JSON record per action (Write).
func writeJSONL(w io.Writer, r *Report) error {
	out := make([]any, len(r.Actions))
	for i := range r.Actions {
		out[i] = &r.Actions[i]
	}
	return textfmt.WriteRecords(w, r.Schema, out...)
}

// writeText writes the act report for a terminal (Write).
func writeText(w io.Writer, r *Report, opt WriteOptions) error {
	var p strings.Builder
	for _, a := range r.Actions {
		verb, line := actLine(r, a, textfmt.Escape)
		verb = fmt.Sprintf("%-12s", verb)
		switch {
		case a.Err != nil || a.Error != "":
			verb = opt.Palette.Red(verb)
		case a.Op == OpSkip:
			verb = opt.Palette.Yellow(verb)
		}
		fmt.Fprintf(&p, "%s  %s\n", verb, line)
	}
	fmt.Fprintf(&p, "%s\n", actSummary(r))
	_, err := io.WriteString(w, p.String())
	return err
}

// writeMarkdown writes the act report as a Markdown list and the summary line (Write).
func writeMarkdown(w io.Writer, r *Report) error {
	var p strings.Builder
	for _, a := range r.Actions {
		verb, line := actLine(r, a, markdown.Text)
		fmt.Fprintf(&p, "- **%s** %s\n", verb, line)
	}
	if len(r.Actions) > 0 {
		fmt.Fprintf(&p, "\n")
	}
	fmt.Fprintf(&p, "%s\n", actSummary(r))
	_, err := io.WriteString(w, p.String())
	return err
}

// verbOf is what an action did, or would do in a dry run.
func verbOf(r *Report, a Action) string {
	if a.Err != nil || a.Error != "" {
		return "failed"
	}
	if a.Op == OpSkip {
		return "left alone"
	}
	done := map[Op]string{OpDelete: "deleted", OpLink: "linked", OpMoveSidecar: "moved", OpDeleteSidecar: "deleted"}[a.Op]
	if r.DryRun {
		return "would " + map[Op]string{OpDelete: "delete", OpLink: "link", OpMoveSidecar: "move", OpDeleteSidecar: "delete"}[a.Op]
	}
	return done
}

// skipWords say why a copy was left alone.
var skipWords = map[SkipReason]string{
	SkipChanged:         "changed since the scan",
	SkipKeeperChanged:   "its keeper changed since the scan; the group is left alone",
	SkipNotACopy:        "checked again, it is not a copy of its keeper",
	SkipRemote:          "a URL",
	SkipOtherFilesystem: "not on the keeper's filesystem: no hard link",
	SkipShardSet:        "a shard set: not linked",
	SkipLinked:          "already a link to its keeper",
	SkipSidecarKept:     "its sidecar differs from the keeper's",
	SkipNotDerived:      "checked again, it is not derived from its original as the scan said",
}

// actLine is an action's verb and the rest of its line, names through esc.
func actLine(r *Report, a Action, esc func(string) string) (string, string) {
	verb := verbOf(r, a)
	switch {
	case a.Err != nil || a.Error != "":
		return verb, fmt.Sprintf("%s: %s", esc(a.Path), esc(a.Error))
	case a.Op == OpSkip && a.Reason == SkipManaged && a.To != "":
		return verb, fmt.Sprintf("%s: its sidecar %s would have to move into the keeper's folder, managed by %s", esc(a.Path), esc(a.To), a.Store.Describe())
	case a.Op == OpSkip && a.Reason == SkipKeeperManaged:
		return verb, fmt.Sprintf("%s: its keeper is managed by %s: not linked to it", esc(a.Path), a.Store.Describe())
	case a.Op == OpSkip && a.Reason == SkipManaged:
		return verb, fmt.Sprintf("%s: managed by %s", esc(a.Path), a.Store.Describe())
	case a.Op == OpSkip && a.Reason == SkipDerivedSidecar:
		return verb, fmt.Sprintf("%s: its sidecar %s is its own and the original has none of its kind: not moved to the original", esc(a.Path), esc(a.To))
	case a.Op == OpSkip && a.Reason == SkipSidecarKept:
		return verb, fmt.Sprintf("%s: its sidecar %s differs from the keeper's", esc(a.Path), esc(a.To))
	case a.Op == OpSkip:
		return verb, fmt.Sprintf("%s: %s", esc(a.Path), skipWords[a.Reason])
	case a.Op == OpMoveSidecar:
		return verb, fmt.Sprintf("%s → %s", esc(a.Path), esc(a.To))
	case a.Op == OpLink:
		return verb, fmt.Sprintf("%s → %s (%s)", esc(a.Path), esc(a.Keeper), textfmt.Bytes(uint64(a.Freed)))
	case a.Op == OpDeleteSidecar:
		return verb, fmt.Sprintf("%s (the keeper has the same)", esc(a.Path))
	}
	line := fmt.Sprintf("%s (%s; kept %s", esc(a.Path), textfmt.Bytes(uint64(a.Freed)), esc(a.Keeper))
	if len(a.MetadataLost) > 0 {
		keys := make([]string, len(a.MetadataLost))
		for i, k := range a.MetadataLost {
			keys[i] = esc(k)
		}
		line += "; metadata lost: " + strings.Join(keys, ", ")
	}
	return verb, line + ")"
}

// actSummary is the last line: what was done (would be), left alone and failed, and what it freed.
func actSummary(r *Report) string {
	var parts []string
	for _, c := range []struct {
		n                  int
		one, many, did, do string
	}{{r.Deleted, "copy", "copies", "deleted", "delete"}, {r.Linked, "copy", "copies", "linked", "link"},
		{r.Moved, "sidecar", "sidecars", "moved", "move"}} {
		what := fmt.Sprintf("%d %s", c.n, c.many)
		if c.n == 1 {
			what = "1 " + c.one
		}
		switch {
		case c.n == 0:
		case r.DryRun:
			parts = append(parts, what+" to "+c.do)
		default:
			parts = append(parts, what+" "+c.did)
		}
	}
	if r.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d left alone", r.Skipped))
	}
	if r.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", r.Failed))
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing to do")
	}
	s := strings.Join(parts, ", ") + ": " + textfmt.Bytes(uint64(r.Freed)) + " freed"
	switch {
	case r.DryRun:
		s = strings.Join(parts, ", ") + ": " + textfmt.Bytes(uint64(r.Freed)) + " to free (dry run: nothing changed)"
	case r.Interrupted:
		s = "interrupted (each action above was done whole; nothing else changed): " + s
	}
	return s
}

// Deletable are the files the deletions of r remove (a shard set's index and shards, and the sidecars
// deleted with a copy), in order, for `xargs rm`: from a dry run of Act with Delete, exactly what Act
// would delete, after the same checks. Sidecars Act would move are not among them.
func (r *Report) Deletable() []string {
	var out []string
	for _, a := range r.Actions {
		switch {
		case a.Err != nil || a.Error != "":
		case a.Op == OpDelete:
			out = append(out, a.Files...)
		case a.Op == OpDeleteSidecar:
			out = append(out, a.Path)
		}
	}
	return out
}

// writeDeletable writes r.Deletable, each path followed by sep ('\n', or 0 for `xargs -0`).
func writeDeletable(w io.Writer, r *Report, sep byte) error {
	var b strings.Builder
	for _, p := range r.Deletable() {
		b.WriteString(p)
		b.WriteByte(sep)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
