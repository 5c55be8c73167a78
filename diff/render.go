package diff

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"

	companiondiff "github.com/stdiff/stdiff/diff/companion"
	"github.com/stdiff/stdiff/diff/linediff"

	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// WriteOptions say how Write writes a report: its format, how the text looks, and the words for the
// caller's options.
type WriteOptions struct {
	// Format is the form: text (the zero value), JSON, JSONL (the report on one line), Markdown or HTML.
	Format textfmt.Format
	// Palette colours the text (red for old, green for new) when its On is set.
	Palette textfmt.Palette
	// Full lists every tensor instead of folding alike changes into one line per group.
	Full bool
	// Context is the number of unchanged lines kept around each change in a value diff (default 2).
	Context int
	// Top is how many of the tensors whose values changed most are listed with their statistics
	// (default 10); Full lists every one.
	Top int
	// Flags, when set, names the caller's options as its users give them, in every format: in the
	// notes about what an option left out (Options.MetadataOnly and others: stdiff's notes say
	// "tensors not compared (--metadata-only)"), and, in the text, where it says what lists the tensors
	// it folded (Full: "… and 3 more (--full lists them)").
	Flags textfmt.Flags
}

// textWriter writes a report; after the first write error it writes nothing and keeps the error.
type textWriter struct {
	w   io.Writer
	opt WriteOptions
	err error
}

func (t *textWriter) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

// Write writes a report in opt.Format, its notes worded as it writes them (opt.Flags naming the
// caller's options). Text is for a terminal: each change with its path, a marker (- removed, + added,
// ~ changed, → renamed) and old and new values, value diffs folded, a summary line last. JSON is the
// report indented (schema stdiff.diff/v1, as textfmt.WriteJSON writes it), each note with its
// message; JSONL the same fields on one line of compact JSON. Markdown is for a pull request comment:
// names and values from the files are escaped with package canon/markdown, so none of them can add
// markup, raw HTML or table cells. HTML is one page: the verdict, the changed tensors in a table that
// sorts by relative L2 (a bar per row), the added, removed and renamed ones, the metadata that changed
// (line diffs of long values) and the notes. It returns the first write error.
func Write(w io.Writer, r *Report, opt WriteOptions) error {
	switch opt.Format {
	case textfmt.JSON:
		return textfmt.WriteJSON(w, withMessages(r, opt.Flags))
	case textfmt.JSONL:
		return textfmt.WriteJSONL(w, withMessages(r, opt.Flags))
	case textfmt.Markdown:
		return writeMarkdown(w, r, opt.Flags)
	case textfmt.HTML:
		return writeHTML(w, withMessages(r, opt.Flags))
	}
	return writeText(w, r, opt)
}

// withMessages is r with each note's Message, for the writers that write the field: a copy of r when
// it has notes (r is left as it is).
func withMessages(r *Report, flags textfmt.Flags) *Report {
	if len(r.Notes) == 0 {
		return r
	}
	cp := *r
	cp.Notes = make([]Note, len(r.Notes))
	for i, n := range r.Notes {
		n.Message = worded(n, flags)
		cp.Notes[i] = n
	}
	return &cp
}

// writeText writes a report for a terminal (Write).
func writeText(w io.Writer, r *Report, opt WriteOptions) error {
	if opt.Context <= 0 {
		opt.Context = 2
	}
	t := &textWriter{w: w, opt: opt}
	t.printf("%s\n%s\n", t.opt.Palette.Red("--- "+textfmt.Escape(r.A)), t.opt.Palette.Green("+++ "+textfmt.Escape(r.B)))
	if v := &r.Verdict; v.Changed {
		t.printf("\n%s\n  %s reference reader  %s → %s\n", t.opt.Palette.Bold("verdict"), t.opt.Palette.Yellow("~"),
			t.opt.Palette.Red(v.A.String()), t.opt.Palette.Green(v.B.String()))
	}
	tr := &r.Tensors
	if len(tr.Groups) > 0 {
		t.printf("\n%s\n", t.opt.Palette.Bold("tensors"))
		rows := t.tensorRows(r)
		width := 0
		for _, row := range rows {
			width = max(width, min(len(row[1]), 64))
		}
		for _, row := range rows {
			t.printf("  %s %-*s  %s\n", row[0], width, row[1], row[2])
		}
	}
	if most := mostChanged(r); len(most) > 0 {
		t.mostChanged(most)
	}
	if r.Source != nil {
		t.source(r)
	}
	if moved := summaryChanges(r); len(moved) > 0 {
		t.summaries(moved)
	}
	m := &r.Metadata
	if len(m.Added)+len(m.Removed)+len(m.Changed) > 0 {
		t.printf("\n%s\n", t.opt.Palette.Bold("metadata"))
		width := 0
		for _, k := range metaKeys(m) {
			width = max(width, min(len(k), 40))
		}
		for _, e := range m.Removed {
			t.printf("  %s %-*s  %s\n", t.opt.Palette.Red("-"), width, textfmt.Escape(e.Key), t.opt.Palette.Red(shortValueText(e.Value)))
		}
		for _, e := range m.Added {
			t.printf("  %s %-*s  %s\n", t.opt.Palette.Green("+"), width, textfmt.Escape(e.Key), t.opt.Palette.Green(shortValueText(e.Value)))
		}
		for _, c := range m.Changed {
			t.metaChange(c, width)
		}
	}
	if lines := r.Companions.Text(t.opt.Palette, t.opt.Context); len(lines) > 0 {
		t.printf("\n%s\n%s\n", t.opt.Palette.Bold(companiondiff.Heading), strings.Join(lines, "\n"))
	}
	if r.Xet != nil {
		t.xet(r.Xet)
	}
	if len(r.Notes) > 0 {
		t.printf("\n%s\n", t.opt.Palette.Dim("notes"))
		for _, n := range r.Notes {
			t.printf("  %s\n", t.opt.Palette.Dim(worded(n, t.opt.Flags)))
		}
	}
	t.printf("\n%s\n", Summary(r, t.opt.Flags))
	return t.err
}

// tensorRows renders the tensor changes as (marker, name, what) rows: groups, or every tensor with Full.
func (t *textWriter) tensorRows(r *Report) [][3]string {
	n := len(r.Tensors.Groups)
	if t.opt.Full {
		n = len(r.Tensors.Added) + len(r.Tensors.Removed) + len(r.Tensors.Changed) + len(r.Tensors.Renamed)
	}
	rows := make([][3]string, 0, n)
	marker := map[ChangeKind]string{Removed: t.opt.Palette.Red("-"), Added: t.opt.Palette.Green("+"), Changed: t.opt.Palette.Yellow("~"),
		Requantized: t.opt.Palette.Yellow("~"), Renamed: t.opt.Palette.Cyan("→")}
	renames := map[string]string{}
	if t.opt.Full {
		for _, rn := range r.Tensors.Renamed {
			renames[rn.From] = rn.To
		}
	}
	pairedAs := pairedAs(r)
	var shared string // what the group before says; a million alike groups share one text
	for i := range r.Tensors.Groups {
		g := &r.Tensors.Groups[i]
		if p := &r.Tensors.Groups[max(i-1, 0)]; i == 0 || g.Kind == Changed || g.Kind == Requantized || g.Kind != p.Kind || g.Tensor != p.Tensor || g.Confirmed != p.Confirmed {
			shared = t.groupText(g, r.Tolerance != nil)
		}
		what := shared
		if as := pairedAs[g.Pattern]; as != "" && g.Count == 1 {
			what += t.opt.Palette.Dim(as)
		}
		if !t.opt.Full {
			name := textfmt.Escape(g.Pattern)
			if g.Kind == Renamed {
				name += " → " + textfmt.Escape(g.To)
			}
			if g.Count > 1 {
				what += t.opt.Palette.Dim(fmt.Sprintf("  (%d tensors)", g.Count))
			}
			rows = append(rows, [3]string{marker[g.Kind], name, what})
			continue
		}
		for _, name := range g.Names {
			shown := textfmt.Escape(name)
			if g.Kind == Renamed {
				shown += " → " + textfmt.Escape(renames[name])
			}
			rows = append(rows, [3]string{marker[g.Kind], shown, what})
		}
	}
	return rows
}

// groupText says what happened to the tensors of a group: their dtype and shape, or what changed.
func (t *textWriter) groupText(g *Group, tolerance bool) string {
	switch g.Kind {
	case Removed:
		return t.opt.Palette.Red(textfmt.Escape(g.Tensor))
	case Added:
		return t.opt.Palette.Green(textfmt.Escape(g.Tensor))
	case Renamed:
		how := "likely: same dtype, shape and size (bytes not compared)"
		if g.Confirmed {
			how = "same bytes"
		}
		return textfmt.Escape(g.Tensor) + ", " + t.opt.Palette.Dim(how)
	}
	return t.changeText(g, tolerance)
}

// changeText says what changed in the tensors of a group, field by field (the dtype of a
// requantisation is named so), and how their values compare (of the group's worst member, named
// when the group has several).
func (t *textWriter) changeText(g *Group, tolerance bool) string {
	parts := make([]string, 0, len(g.Changes)+1)
	for _, fc := range g.Changes {
		switch {
		case fc.Field == "data" && g.Values != nil:
		case fc.Field == "dtype" && g.Kind == Requantized:
			parts = append(parts, fmt.Sprintf("requantised %s → %s", t.opt.Palette.Red(textfmt.Escape(fc.Old)), t.opt.Palette.Green(textfmt.Escape(fc.New))))
		case fc.Field == "data" && fc.Old == "":
			parts = append(parts, "data: bytes differ")
		case fc.Field == "data":
			parts = append(parts, fmt.Sprintf("data: %s → %s", t.opt.Palette.Red("blake3 "+fc.Old[:12]+"…"), t.opt.Palette.Green(fc.New[:12]+"…")))
		case fc.Field == "bytes":
			o, _ := strconv.ParseUint(fc.Old, 10, 64)
			n, _ := strconv.ParseUint(fc.New, 10, 64)
			parts = append(parts, fmt.Sprintf("size %s → %s", t.opt.Palette.Red(textfmt.Bytes(o)), t.opt.Palette.Green(textfmt.Bytes(n))))
		default:
			parts = append(parts, fmt.Sprintf("%s %s → %s", fc.Field, t.opt.Palette.Red(textfmt.Escape(fc.Old)), t.opt.Palette.Green(textfmt.Escape(fc.New))))
		}
	}
	if g.ValuesEqual != "" {
		parts = append(parts, "bytes differ, values equal: "+equalText[g.ValuesEqual])
	} else if g.Values != nil {
		v := valuesText(t.opt.Palette, g.Values, tolerance)
		if g.Count > 1 && !(g.Values.ExactRounding != nil && *g.Values.ExactRounding) {
			v += " (most changed: " + textfmt.Escape(g.Worst) + ")"
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, ", ")
}

// equalText says in words why bytes differ where values are equal.
var equalText = map[EqualValues]string{EqualSignOfZero: "sign of zero", EqualNaNPayload: "NaN payload", EqualEncoding: "another encoding"}

// mostChanged writes the tensors whose values changed most, with their statistics: the first Top,
// or every one with Full.
func (t *textWriter) mostChanged(most []*Change) {
	top := t.opt.Top
	if top <= 0 {
		top = defaultTop
	}
	shown := most
	if !t.opt.Full && len(most) > top {
		shown = most[:top]
	}
	t.printf("\n%s\n", t.opt.Palette.Bold("most changed")+t.opt.Palette.Dim(" (rel L2 = ‖a−b‖/‖a‖, a the old values)"))
	rows := make([][]string, len(shown))
	for i, c := range shown {
		rows[i] = append([]string{textfmt.Escape(c.Name)}, statRow(c)...)
	}
	t.table(rows)
	if len(shown) < len(most) {
		t.printf("  %s\n", t.opt.Palette.Dim(fmt.Sprintf("… and %d more", len(most)-len(shown))+t.listsThem()))
	}
}

// listsThem says which option lists what text left out, " (--full lists them)", as WriteOptions.Flags
// names Full: "" when it does not.
func (t *textWriter) listsThem() string {
	if f := t.opt.Flags.Of("Full"); f != "" {
		return " (" + f + " lists them)"
	}
	return ""
}

// summaries writes how the value summaries of the tensors whose digests differ moved, most moved
// first: the first Top, or every one with Full.
func (t *textWriter) summaries(moved []*Change) {
	shown := moved
	if top := cmp.Or(t.opt.Top, defaultTop); !t.opt.Full && len(moved) > top {
		shown = moved[:top]
	}
	t.printf("\n%s\n", t.opt.Palette.Bold("changed tensors")+t.opt.Palette.Dim(" (from value summaries, not element-wise)"))
	rows := make([][]string, len(shown))
	for i, c := range shown {
		rows[i] = append([]string{textfmt.Escape(c.Name)}, summaryRow(c.Summary)...)
	}
	t.table(rows)
	if len(shown) < len(moved) {
		t.printf("  %s\n", t.opt.Palette.Dim(fmt.Sprintf("… and %d more", len(moved)-len(shown))+t.listsThem()))
	}
}

// table writes rows of cells in aligned columns (each at most 64 wide), indented by two spaces.
func (t *textWriter) table(rows [][]string) {
	var width []int
	for _, row := range rows {
		for k, cell := range row {
			if k == len(width) {
				width = append(width, 0)
			}
			width[k] = max(width[k], min(len([]rune(cell)), 64))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for k, cell := range row {
			if k > 0 {
				b.WriteString("  ")
			}
			b.WriteString(cell)
			if k < len(row)-1 {
				b.WriteString(strings.Repeat(" ", max(width[k]-len([]rune(cell)), 0)))
			}
		}
		t.printf("  %s\n", strings.TrimRight(b.String(), " "))
	}
}

func (t *textWriter) metaChange(c MetaChange, width int) {
	key := textfmt.Escape(c.Key)
	mark := t.opt.Palette.Yellow("~")
	switch c.Kind {
	case "value":
		old, new := typedValues(c)
		t.printf("  %s %-*s  %s → %s\n", mark, width, key, t.opt.Palette.Red(old), t.opt.Palette.Green(new))
	case KindArray:
		t.printf("  %s %-*s  %s → %s\n", mark, width, key, t.opt.Palette.Red(arrayText(c.Array.Old)), t.opt.Palette.Green(arrayText(c.Array.New)))
		for _, line := range elementLines(c.Array) {
			t.printf("      %s\n", t.opt.Palette.Dim(textfmt.Escape(line)))
		}
	case "large":
		t.printf("  %s %-*s  %s → %s\n", mark, width, key, t.opt.Palette.Red(ValueSummary(c.Old)), t.opt.Palette.Green(ValueSummary(c.New)))
	default:
		t.printf("  %s %-*s  %s\n", mark, width, key, t.opt.Palette.Dim(c.Kind+" diff"))
		for _, l := range linediff.Fold(c.Lines, t.opt.Context) {
			text := textfmt.Escape(l.Text)
			switch l.Op {
			case "-":
				t.printf("      %s\n", t.opt.Palette.Red("- "+text))
			case "+":
				t.printf("      %s\n", t.opt.Palette.Green("+ "+text))
			case "…":
				t.printf("      %s\n", t.opt.Palette.Dim("… "+text))
			default:
				t.printf("        %s\n", text)
			}
		}
	}
	t.prompt(c.Prompt)
}

// prompt shows how the prompts of two chat templates differ (Options.RenderTemplates).
func (t *textWriter) prompt(p *PromptChange) {
	if p == nil {
		return
	}
	switch {
	case p.OldError != "" || p.NewError != "":
		for _, e := range []struct{ side, err string }{{"old", p.OldError}, {"new", p.NewError}} {
			if e.err != "" {
				t.printf("      %s\n", t.opt.Palette.Dim("the "+e.side+" template cannot be rendered: "+textfmt.Escape(e.err)))
			}
		}
	case p.Same:
		t.printf("      %s\n", t.opt.Palette.Dim("prompt unchanged (both render the same on a fixed conversation)"))
	default:
		t.printf("      %s\n", t.opt.Palette.Dim("prompt diff (rendered on a fixed conversation; ⏎ ends a line)"))
		for _, l := range linediff.Fold(p.Lines, t.opt.Context) {
			text := textfmt.Escape(l.Text)
			switch l.Op {
			case "-":
				t.printf("      %s\n", t.opt.Palette.Red("- "+text))
			case "+":
				t.printf("      %s\n", t.opt.Palette.Green("+ "+text))
			case "…":
				t.printf("      %s\n", t.opt.Palette.Dim("… "+text))
			default:
				t.printf("        %s\n", text)
			}
		}
	}
}

func metaKeys(m *MetadataReport) []string {
	var keys []string
	for _, e := range m.Added {
		keys = append(keys, e.Key)
	}
	for _, e := range m.Removed {
		keys = append(keys, e.Key)
	}
	for _, c := range m.Changed {
		keys = append(keys, c.Key)
	}
	return keys
}

// shortValueText shows a metadata value on one line: escaped, and cut when long.
func shortValueText(v string) string {
	if textfmt.IsBlob(v) {
		return ValueSummary(v)
	}
	one := strings.Join(strings.Fields(v), " ")
	r := []rune(one)
	if len(r) > shortValue {
		return textfmt.Escape(string(r[:shortValue])) + fmt.Sprintf("… (%d bytes)", len(v))
	}
	if one != v {
		return textfmt.Escape(strconv.Quote(v))
	}
	return textfmt.Escape(v)
}

// Summary is the report's last line: counts per kind, or that the models are identical (or equal
// within the tolerance); and when tensor data was not compared, that it was not, and why (with the
// option named, as flags names it: WriteOptions.Flags).
func Summary(r *Report, flags textfmt.Flags) string {
	t, m := &r.Tensors, &r.Metadata
	within, equal := 0, 0
	for i := range t.Changed {
		switch d := t.Changed[i].Values; {
		case t.Changed[i].ValuesEqual != "":
			equal++
		case d != nil && r.Tolerance != nil && d.WithinTolerance:
			within++
		}
	}
	notRead := ""
	if r.TensorsCompared && !r.ContentCompared {
		notRead = " · tensor data not compared"
		for _, n := range r.Notes {
			switch {
			case n.Code != NoteContentNotCompared:
			case n.Reason == NotReadHeaderOnly: // with the option named, as flags names it
				notRead = " · " + worded(n, flags)
			case n.Reason == NotReadRemote:
				notRead += " (remote)"
			}
		}
	}
	if len(r.Categories) == 0 {
		var scope []string
		if r.TensorsCompared {
			scope = append(scope, fmt.Sprintf("%d tensors", t.Unchanged+len(t.Changed)))
		}
		if r.MetadataCompared {
			scope = append(scope, fmt.Sprintf("%d metadata keys", m.Unchanged))
		}
		if c := r.Companions; c != nil && c.Compared {
			scope = append(scope, fmt.Sprintf("%d files beside the tensors", c.Unchanged))
		}
		what := "identical"
		switch {
		case !r.Identical:
			what = fmt.Sprintf("equal within tolerance: %d tensors differ within it", len(t.Changed))
		case !r.ContentCompared:
			what = "identical structure and metadata"
		}
		return fmt.Sprintf("%s (%s compared)%s", what, strings.Join(scope, ", "), notRead)
	}
	count := func(parts ...any) string {
		var out []string
		for i := 0; i < len(parts); i += 2 {
			if n := parts[i].(int); n > 0 {
				out = append(out, fmt.Sprintf("%d %s", n, parts[i+1]))
			}
		}
		if len(out) == 0 {
			return "no change"
		}
		return strings.Join(out, ", ")
	}
	var parts []string
	if r.TensorsCompared {
		changed := "changed"
		var how []string
		if within > 0 {
			how = append(how, fmt.Sprintf("%d within tolerance", within))
		}
		if equal > 0 {
			how = append(how, fmt.Sprintf("%d with equal values", equal))
		}
		if len(how) > 0 {
			changed += " (" + strings.Join(how, ", ") + ")"
		}
		parts = append(parts, "tensors: "+count(len(t.Removed), "removed", len(t.Added), "added", len(t.Changed), changed, len(t.Renamed), "renamed", len(t.NotCompared), "not compared", t.Unchanged, "unchanged"))
	}
	if r.MetadataCompared {
		parts = append(parts, "metadata: "+count(len(m.Removed), "removed", len(m.Added), "added", len(m.Changed), "changed", m.Unchanged, "unchanged"))
	}
	if v := &r.Verdict; v.Changed {
		parts = append(parts, "verdict: "+v.A.String()+" → "+v.B.String())
	}
	if s := r.Companions.Summary(); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ") + notRead
}

// writeMarkdown writes a report for a pull request comment (Write), its notes and summary worded
// with flags.
func writeMarkdown(w io.Writer, r *Report, flags textfmt.Flags) error {
	t := &textWriter{w: w} // no colour, nothing said of the options but in the notes
	p := t.printf
	p("### stdiff: %s → %s\n\n", markdown.Code(r.A), markdown.Code(r.B))
	p("**%s**\n", markdown.Text(Summary(r, flags)))
	if v := &r.Verdict; v.Changed {
		p("\n| | verdict | change |\n|---|---|---|\n| ~ | reference reader | %s → %s |\n", markdown.Text(v.A.String()), markdown.Text(v.B.String()))
	}
	if len(r.Tensors.Groups) > 0 {
		p("\n| | tensors | change |\n|---|---|---|\n")
		for _, g := range r.Tensors.Groups {
			what, name := g.Tensor, markdown.Code(g.Pattern)
			switch g.Kind {
			case Changed, Requantized:
				what = t.changeText(&g, r.Tolerance != nil)
			case Renamed:
				name += " → " + markdown.Code(g.To)
				what = "likely rename (same dtype, shape, size)"
				if g.Confirmed {
					what = "renamed (same bytes)"
				}
			}
			if g.Count > 1 {
				what += fmt.Sprintf(" (%d tensors)", g.Count)
			}
			p("| %s | %s | %s |\n", map[ChangeKind]string{Removed: "−", Added: "+", Changed: "~", Requantized: "~", Renamed: "→"}[g.Kind], name, markdown.Text(what))
		}
	}
	if most := mostChanged(r); len(most) > 0 {
		p("\n| most changed | rel L2 | max abs diff | at | mean abs diff | cosine | differ | NaN, Inf |\n|---|---|---|---|---|---|---|---|\n")
		for k, c := range most {
			if k == defaultTop {
				p("\n%d more tensors changed (JSON lists every one).\n", len(most)-k)
				break
			}
			d := c.Values
			p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", markdown.Code(c.Name), num(d.RelL2), num(d.MaxAbsDiff),
				coords(valuesShape(c), d.MaxAbsDiffIndex), num(d.MeanAbsDiff), cosine(d.Cosine), percent(d.DiffFraction), nonFinite(d))
		}
	}
	if r.Source != nil {
		sourceMarkdown(p, r)
	}
	if moved := summaryChanges(r); len(moved) > 0 {
		p("\n| changed tensor (from value summaries, not element-wise) | L2 norm | mean | std | NaN, Inf |\n|---|---|---|---|---|\n")
		for k, c := range moved {
			if k == defaultTop {
				p("\n%d more tensors changed (JSON lists every one).\n", len(moved)-k)
				break
			}
			p("| %s | %s |\n", markdown.Code(c.Name), strings.Join(summaryRow(c.Summary), " | "))
		}
	}
	m := &r.Metadata
	if len(m.Added)+len(m.Removed)+len(m.Changed) > 0 {
		p("\n| | metadata | value |\n|---|---|---|\n")
		for _, e := range m.Removed {
			p("| − | %s | %s |\n", markdown.Code(e.Key), markdown.Text(shortValueText(e.Value)))
		}
		for _, e := range m.Added {
			p("| + | %s | %s |\n", markdown.Code(e.Key), markdown.Text(shortValueText(e.Value)))
		}
		var long []MetaChange
		for _, c := range m.Changed {
			switch c.Kind {
			case "value":
				old, new := typedValues(c)
				p("| ~ | %s | %s → %s |\n", markdown.Code(c.Key), markdown.Text(old), markdown.Text(new))
			case KindArray:
				p("| ~ | %s | %s → %s%s |\n", markdown.Code(c.Key), markdown.Text(arrayText(c.Array.Old)), markdown.Text(arrayText(c.Array.New)),
					markdown.Text(strings.Join(append([]string{""}, elementLines(c.Array)...), "; ")))
			case "large":
				p("| ~ | %s | %s → %s |\n", markdown.Code(c.Key), markdown.Text(ValueSummary(c.Old)), markdown.Text(ValueSummary(c.New)))
			default:
				p("| ~ | %s | %s diff below |\n", markdown.Code(c.Key), c.Kind)
				long = append(long, c)
			}
		}
		for _, c := range long {
			var body strings.Builder
			lines := func(ls []linediff.Line) {
				for _, l := range linediff.Fold(ls, 2) {
					op := l.Op
					if op == "…" {
						op = "@@"
					}
					fmt.Fprintf(&body, "%s %s\n", op, textfmt.Escape(l.Text))
				}
			}
			lines(c.Lines)
			if pr := c.Prompt; pr != nil && pr.Lines != nil { // the prompts' diff (Options.RenderTemplates)
				body.WriteString("@@ prompt diff (rendered on a fixed conversation; ⏎ ends a line)\n")
				lines(pr.Lines)
			}
			fence := markdown.Fence(body.String())
			p("\n<details><summary><code>%s</code></summary>\n\n%sdiff\n%s%s\n\n</details>\n", markdown.HTML(c.Key), fence, body.String(), fence)
		}
	}
	r.Companions.Markdown(p)
	if len(r.Notes) > 0 {
		p("\n")
		for _, n := range r.Notes {
			p("- %s\n", markdown.Text(worded(n, flags)))
		}
	}
	return t.err
}
