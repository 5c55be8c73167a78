// Package render writes the reports of dupes.Find (Write): for a terminal, as JSON and JSONL, as
// Markdown and as one HTML page. Names from files are escaped; what the caller lets people choose is
// named as the caller says (Knobs: the CLI names its flags). It never prints but to the writer given.
package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stdiff/stdiff/canon/delta"
	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/hash/dupes"
	"github.com/stdiff/stdiff/hash/dupes/derived"
)

// WriteOptions say how Write writes a report: its format, and how the text looks.
type WriteOptions struct {
	// Format is the form: text (the zero value), JSON, JSONL, Markdown or HTML.
	Format textfmt.Format
	// Palette colours the text (the zero Palette: none).
	Palette textfmt.Palette
	// Full shortens nothing: every metadata key a member differs in (else the first 4), every model a
	// note names (else the first 3).
	Full bool
	// Knobs name what the caller lets people choose (the CLI: by its flags), in the text, the Markdown
	// and the page; nil: the library's words.
	Knobs Knobs
}

// Write writes the report in opt.Format. Text is for a terminal: each group with its members (how
// each differs from the keeper), the notes, the skipped models, and a summary line; names from files
// are escaped (textfmt.Escape), and Report.Errors are left to the caller. JSON is the report indented
// (textfmt.WriteJSON). JSONL is one compact record per member of each group (Records), each with the
// schema first (textfmt.WriteRecords): nothing when there are no duplicates; skipped models, notes and
// totals are in the JSON only. Markdown is a list per group, the notes and the skipped models, and the
// summary line; every name from a file goes through canon/markdown. HTML is one page: each group with
// its heading (what deleting would free), its members (the copy kept and why, how each other differs
// from it), the skipped models and the summary.
func Write(w io.Writer, r *dupes.Report, opt WriteOptions) error {
	switch opt.Format {
	case textfmt.JSON:
		return textfmt.WriteJSON(w, r)
	case textfmt.JSONL:
		return writeJSONL(w, r)
	case textfmt.Markdown:
		return writeMarkdown(w, r, opt.Knobs)
	case textfmt.HTML:
		return writeHTML(w, r, opt.Knobs)
	}
	return writeText(w, r, opt)
}

// Knob is something the caller of Find and package act lets people choose, named in the text the
// writers write. Codes are stable.
type Knob string

// Knobs the writers name.
const (
	// KnobKeepPath is the prefix of the keep rule KeepPath.
	KnobKeepPath Knob = "keep-path"
	// KnobDelete is deleting copies (package act, with Delete).
	KnobDelete Knob = "delete"
)

// Knobs say how a caller names knobs in text (the CLI: "the --keep path", "--delete"); a knob it
// does not name is in the library's words.
type Knobs map[Knob]string

// knobWords are the library's words for knobs.
var knobWords = Knobs{KnobKeepPath: "the keep rule's path", KnobDelete: "deleting"}

// name is how k says knob.
func (k Knobs) name(knob Knob) string {
	if w, ok := k[knob]; ok {
		return w
	}
	return knobWords[knob]
}

// Shortened lists are cut after this many items, unless WriteOptions.Full.
const (
	keysShown = 4
	withShown = 3
)

// writeJSONL writes one compact JSON record per member of each group (Write).
func writeJSONL(w io.Writer, r *dupes.Report) error {
	recs := r.Records()
	out := make([]any, len(recs))
	for i := range recs {
		out[i] = &recs[i]
	}
	return textfmt.WriteRecords(w, dupes.Schema, out...)
}

// printer writes formatted text and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// writeText writes the report for a terminal (Write).
func writeText(w io.Writer, r *dupes.Report, opt WriteOptions) error {
	p := &printer{w: w}
	pal := opt.Palette
	for _, g := range r.Groups {
		p.printf("%s\n", heading(g, pal.Bold, opt.Knobs))
		width := 0
		for _, m := range g.Members {
			width = max(width, min(len(textfmt.Escape(m.Path)), 60))
		}
		for i, m := range g.Members {
			mark := map[bool]string{true: "keep  ", false: "      "}[i == 0]
			if g.Keeper == "" {
				mark = ""
			}
			if d := describe(g, i, opt.Full, textfmt.Escape, opt.Knobs); d != "" {
				p.printf("  %s%-*s  %s\n", mark, width, textfmt.Escape(m.Path), pal.Dim(d))
			} else {
				p.printf("  %s%s\n", mark, textfmt.Escape(m.Path))
			}
		}
		p.printf("\n")
	}
	for _, ns := range notesByCode(r.Notes) {
		p.printf("%s\n", pal.Yellow(notesHeading(ns)))
		for _, n := range ns {
			p.printf("  %s: with %s%s\n", textfmt.Escape(n.Path), strings.Join(shorten(n.With, withShown, "%d more", opt.Full, textfmt.Escape), ", "), noteFiles(n, textfmt.Escape))
		}
		p.printf("\n")
	}
	if len(r.Skipped) > 0 {
		p.printf("%s\n", pal.Yellow(fmt.Sprintf("skipped %s:", textfmt.Plural(len(r.Skipped), "file"))))
		for _, s := range r.Skipped {
			p.printf("  %s: %s\n", textfmt.Escape(s.Path), textfmt.Escape(s.Reason))
		}
		p.printf("\n")
	}
	p.printf("%s\n", summary(r))
	return p.err
}

// writeMarkdown writes the report as Markdown (Write); knobs are named as knobs says.
func writeMarkdown(w io.Writer, r *dupes.Report, knobs Knobs) error {
	p := &printer{w: w}
	for _, g := range r.Groups {
		p.printf("**%s** (%s, %s reclaimable)\n\n", g.Level, textfmt.Plural(len(g.Members), "file"), textfmt.Bytes(uint64(g.Reclaimable)))
		for i, m := range g.Members {
			line := markdown.Text(m.Path)
			if i == 0 && g.Keeper != "" {
				line = "**keep** " + line
			}
			if d := describe(g, i, false, func(s string) string { return s }, knobs); d != "" {
				line += " — " + markdown.Text(d)
			}
			p.printf("- %s\n", line)
		}
		p.printf("\n")
	}
	for _, ns := range notesByCode(r.Notes) {
		p.printf("%s\n\n", markdown.Text(notesHeading(ns)))
		for _, n := range ns {
			p.printf("- %s: with %s%s\n", markdown.Text(n.Path), strings.Join(shorten(n.With, withShown, "%d more", false, markdown.Text), ", "), noteFiles(n, markdown.Text))
		}
		p.printf("\n")
	}
	if len(r.Skipped) > 0 {
		p.printf("skipped %s:\n\n", textfmt.Plural(len(r.Skipped), "file"))
		for _, s := range r.Skipped {
			p.printf("- %s: %s\n", markdown.Text(s.Path), markdown.Text(s.Reason))
		}
		p.printf("\n")
	}
	p.printf("%s\n", summary(r))
	return p.err
}

// layoutLabels name layout codes in text; sharding is said with the shard counts.
var layoutLabels = map[delta.Code]string{delta.HeaderSize: "header size", delta.Order: "tensor order",
	delta.Offsets: "offsets", delta.KeyOrder: "key order"}

// describe says in words why member i of g is kept, or how it differs from g's keeper ("" when
// there is nothing to say), names from files passed through esc.
func describe(g dupes.Group, i int, full bool, esc func(string) string, knobs Knobs) string {
	m := g.Members[i]
	var what []string
	if m.Format != "" {
		what = append(what, string(m.Format))
	}
	if m.Unsafe {
		what = append(what, "unsafe to load: its pickle names globals torch.load(weights_only=True) refuses")
	}
	if n := len(m.Companions); n > 0 && m.Pipeline {
		what = append(what, fmt.Sprintf("diffusers pipeline folder: with %s%s", textfmt.Plural(n, "other file"), map[bool]string{true: ", deleted whole"}[i > 0]))
	} else if n > 0 {
		what = append(what, fmt.Sprintf("model folder: with %s", textfmt.Plural(n, "other file")))
	}
	return strings.Join(slices.DeleteFunc(append(what, describeMember(g, i, full, esc, knobs)...), func(s string) bool { return s == "" }), "; ")
}

// describeMember is what describe says of member i of g but its format and safety.
func describeMember(g dupes.Group, i int, full bool, esc func(string) string, knobs Knobs) []string {
	m := g.Members[i]
	if g.Level == dupes.LevelDerived {
		return []string{derivedWords(m, esc)}
	}
	if i == 0 && g.Keeper != "" {
		return []string{keptBecause(g.KeeperReason, m, knobs)}
	}
	d := m.Differences
	var what []string
	if d != nil && d.Renamed != nil {
		return []string{renamedWords(d.Renamed, full, esc)}
	}
	if m.Managed != "" && g.Keeper != "" {
		what = append(what, "left alone: managed by "+m.Managed.Describe())
	}
	switch {
	case m.IdenticalTo != "":
		what = append(what, "identical to "+esc(m.IdenticalTo))
	case d == nil || (d.Empty() && g.Level == dupes.LevelBytes):
		return what
	case d.Empty():
		return append(what, "same metadata; header bytes differ")
	}
	var keys []string
	for _, k := range d.Metadata.Added {
		keys = append(keys, "+"+k)
	}
	for _, k := range d.Metadata.Removed {
		keys = append(keys, "-"+k)
	}
	keys = append(keys, d.Metadata.Changed...)
	if len(keys) > 0 {
		what = append(what, "metadata: "+strings.Join(shorten(keys, keysShown, "… %d more", full, esc), ", "))
	}
	var layout []string
	for _, c := range d.Layout {
		switch {
		case c == delta.Sharding:
			layout = append(layout, "stored as "+storedAs(g.Members[0].Shards)+" → "+storedAs(m.Shards))
		case layoutLabels[c] != "":
			layout = append(layout, layoutLabels[c])
		default:
			layout = append(layout, string(c))
		}
	}
	if len(layout) > 0 {
		what = append(what, "layout: "+strings.Join(layout, ", "))
	}
	if len(d.Sidecars) > 0 {
		var sc []string
		for _, c := range d.Sidecars {
			sc = append(sc, sidecarSigns[c.Change]+c.Kind)
		}
		what = append(what, "sidecars: "+strings.Join(shorten(sc, keysShown, "… %d more", full, esc), ", "))
	}
	return what
}

// renamedWords says how a renamed copy names the keeper's tensors: how many are renamed, an example,
// and the tensors on one side only.
func renamedWords(r *dupes.Renaming, full bool, esc func(string) string) string {
	var what []string
	if n := len(r.Mapping); n > 0 {
		ex := r.Mapping[0]
		what = append(what, fmt.Sprintf("%s renamed (%s → %s%s)", textfmt.Plural(n, "tensor"), esc(ex.From), esc(ex.To),
			map[bool]string{true: ", …"}[n > 1]))
	}
	if len(r.Mapping) == 0 {
		what = append(what, "the same names")
	}
	if n := len(r.Reshaped); n > 0 {
		var shapes []string
		for _, x := range r.Reshaped {
			shapes = append(shapes, fmt.Sprintf("%s: %s → %s", esc(x.Name), shapeText(x.Keeper), shapeText(x.Here)))
		}
		what = append(what, fmt.Sprintf("%s of one element reshaped (%s)", textfmt.Plural(n, "tensor"), strings.Join(shorten(shapes, 1, "… %d more", full, func(s string) string { return s }), ", ")))
	}
	for _, side := range []struct {
		label string
		names []string
	}{{"only in the kept copy", r.OnlyInKeeper}, {"only here", r.OnlyHere}} {
		if len(side.names) > 0 {
			what = append(what, fmt.Sprintf("%s: %d (%s)", side.label, len(side.names), strings.Join(shorten(side.names, 1, "… %d more", full, esc), ", ")))
		}
	}
	return strings.Join(what, "; ")
}

// shapeText writes a shape as Python does a list: [] or [1, 4].
func shapeText(shape []uint64) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// sidecarSigns mark sidecar changes in text, as metadata keys are: + the member has it, - the keeper
// has it, ~ both have one, different.
var sidecarSigns = map[dupes.SidecarChange]string{dupes.SidecarAdded: "+", dupes.SidecarRemoved: "-", dupes.SidecarChanged: "~"}

// keptBecause says why the keeper m was kept.
func keptBecause(why dupes.KeepReason, m dupes.Member, knobs Knobs) string {
	switch why {
	case dupes.ReasonSharesFiles:
		return "kept: it shares files with other models"
	case dupes.ReasonPartOfModel:
		return "kept: one file of a model made of several"
	case dupes.ReasonLocal:
		return "kept: the others are URLs"
	case dupes.ReasonPathPrefix:
		return "kept: under " + knobs.name(KnobKeepPath)
	case dupes.ReasonMostInfo:
		info := textfmt.Plural(m.MetadataKeys, "metadata key")
		if len(m.Sidecars) > 0 {
			info += ", " + textfmt.Plural(len(m.Sidecars), "sidecar")
		}
		return "kept: most information (" + info + ")"
	case dupes.ReasonNewest:
		return "kept: modified last"
	case dupes.ReasonOldest:
		return "kept: modified first"
	case dupes.ReasonSafe:
		return "kept: safe to load (the others' pickles name globals torch.load(weights_only=True) refuses)"
	case dupes.ReasonSafetensors:
		return "kept: safetensors (the others are another format)"
	case dupes.ReasonPipeline:
		return "kept: the pipeline's folder (the others are DDUF files of its very files)"
	case dupes.ReasonFirstRoot:
		return "kept: under the first folder given"
	case dupes.ReasonDeeperPath:
		return "kept: deepest path (the organised copy)"
	}
	return "kept: first path"
}

// storedAs says how a model is stored: "1 file" or "N shards".
func storedAs(shards int) string {
	if shards == 0 {
		return "1 file"
	}
	return textfmt.Plural(shards, "shard")
}

// shorten passes items through esc, keeping the first n unless full, then says how many more there
// are with the format more.
func shorten(items []string, n int, more string, full bool, esc func(string) string) []string {
	out := make([]string, 0, min(len(items), n+1))
	for i, s := range items {
		if !full && i == n {
			return append(out, fmt.Sprintf(more, len(items)-n))
		}
		out = append(out, esc(s))
	}
	return out
}

// notesByCode groups notes by code, codes in order of their first note.
func notesByCode(notes []dupes.Note) [][]dupes.Note {
	idx := map[dupes.NoteCode]int{}
	var out [][]dupes.Note
	for _, n := range notes {
		i, ok := idx[n.Code]
		if !ok {
			i = len(out)
			idx[n.Code] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], n)
	}
	return out
}

// notesHeading introduces the notes ns, all of one code.
func notesHeading(ns []dupes.Note) string {
	if ns[0].Code == dupes.NoteSharesFiles {
		return fmt.Sprintf("%s share files with other models (%s), so are never offered as copies to delete:",
			textfmt.Plural(len(ns), "model"), ns[0].Code)
	}
	if ns[0].Code == dupes.NotePipelineDiffers {
		return fmt.Sprintf("%s the same weights as a DDUF file and other files beside them (%s), so neither is a copy of the other:",
			map[bool]string{true: "a pipeline folder holds", false: fmt.Sprintf("%d pipeline folders hold", len(ns))}[len(ns) == 1], ns[0].Code)
	}
	return string(ns[0].Code) + ":"
}

// noteFiles says which files a note's pipeline folder and DDUF file do not share ("" for none).
func noteFiles(n dupes.Note, esc func(string) string) string {
	var out []string
	for _, f := range n.Files {
		out = append(out, esc(f.Name)+" "+string(f.Change))
	}
	if out == nil {
		return ""
	}
	return " (" + strings.Join(shorten(out, keysShown, "… %d more", false, func(s string) string { return s }), ", ") + ")"
}

// heading is a group's first line: its level (through bold), how alike its models are, and what deleting
// would free.
func heading(g dupes.Group, bold func(string) string, knobs Knobs) string {
	switch g.Level {
	case dupes.LevelBytes:
		return fmt.Sprintf("%s  %d identical files, %s each, %s reclaimable", bold(string(g.Level)), len(g.Members),
			textfmt.Bytes(uint64(g.Members[0].Size)), textfmt.Bytes(uint64(g.Reclaimable)))
	case dupes.LevelContent:
		if slices.ContainsFunc(g.Members, func(m dupes.Member) bool { return m.Pipeline }) {
			return fmt.Sprintf("%s  a diffusers pipeline folder and %s holding its very files, %s reclaimable", bold(string(g.Level)),
				textfmt.Plural(len(g.Members)-1, "DDUF file"), textfmt.Bytes(uint64(g.Reclaimable)))
		}
		return fmt.Sprintf("%s  %d files with the same tensors, other metadata or layout, %s reclaimable", bold(string(g.Level)),
			len(g.Members), textfmt.Bytes(uint64(g.Reclaimable)))
	case dupes.LevelRenamed:
		if !slices.ContainsFunc(g.Members, func(m dupes.Member) bool {
			return m.Differences != nil && m.Differences.Renamed != nil && len(m.Differences.Renamed.Mapping) > 0
		}) {
			return fmt.Sprintf("%s  %d files with the same tensor bytes under the same names, in other shapes or formats (%s leaves them)", bold(string(g.Level)), len(g.Members), knobs.name(KnobDelete))
		}
		return fmt.Sprintf("%s  %d files with the same tensors under other names (%s leaves them)", bold(string(g.Level)), len(g.Members), knobs.name(KnobDelete))
	case dupes.LevelDerived:
		return fmt.Sprintf("%s  a model and %s derived from it (%s keeps the original)", bold(string(g.Level)),
			copies(len(g.Members)-1), knobs.name(KnobDelete))
	case dupes.LevelRun:
		return fmt.Sprintf("%s  %d files saved by one training run (%s), different weights", bold(string(g.Level)), len(g.Members), textfmt.Escape(g.Run))
	}
	return fmt.Sprintf("%s  %d files of the same architecture, different weights", bold(string(g.Level)), len(g.Members))
}

// summary is the last line: models scanned, groups by level, what could be freed, tensor bytes read.
func summary(r *dupes.Report) string {
	counts := map[dupes.Level]int{}
	for _, g := range r.Groups {
		counts[g.Level]++
	}
	var parts []string
	for _, l := range []dupes.Level{dupes.LevelBytes, dupes.LevelContent, dupes.LevelRenamed, dupes.LevelDerived, dupes.LevelRun, dupes.LevelStructure} {
		if counts[l] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[l], l))
		}
	}
	found := "no duplicates"
	if len(parts) > 0 {
		found = textfmt.Plural(len(r.Groups), "group") + " (" + strings.Join(parts, ", ") + ")"
	}
	return fmt.Sprintf("%s scanned: %s, %s reclaimable; %s of tensor data read", textfmt.Plural(r.Files, "model"), found,
		textfmt.Bytes(uint64(r.Reclaimable)), textfmt.Bytes(uint64(r.TensorBytesRead)))
}

// derivedWords says how member m of a derived group comes from its original: "original", "rounded
// to F16", "subset: 1,024 tensors left out (model_ema.*), rounded to F16", "same tensors".
func derivedWords(m dupes.Member, esc func(string) string) string {
	var w string
	switch m.Relation {
	case derived.Original:
		return "original"
	case derived.SameTensors:
		return "same tensors, another container or metadata"
	case derived.Subset:
		w = fmt.Sprintf("subset: %s left out", textfmt.Plural(m.LeftOut.Count, "tensor"))
		if len(m.LeftOut.Names) > 0 {
			names := make([]string, len(m.LeftOut.Names))
			for i, n := range m.LeftOut.Names {
				names[i] = esc(n)
			}
			w += " (" + strings.Join(names, ", ")
			if m.LeftOut.Count > len(names) && !strings.HasSuffix(names[len(names)-1], "*") {
				w += ", …"
			}
			w += ")"
		}
		if m.RoundedTo != "" {
			w += ", rounded to " + string(m.RoundedTo)
		}
		return w
	}
	return "rounded to " + string(m.RoundedTo)
}

// copies is "1 copy", "2 copies".
func copies(n int) string {
	if n == 1 {
		return "1 copy"
	}
	return fmt.Sprintf("%d copies", n)
}
