package inspect

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/stdiff/stdiff/canon/check"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// TextOptions tune the text rendering.
type TextOptions struct {
	// Palette colours the name, the verdict, the severities and the asides when its On is set.
	Palette textfmt.Palette
	// Full shortens and folds nothing: every tensor, every metadata value whole (cover images
	// too), whole hashes and descriptions, every finding; in the short table, every trigger word.
	Full bool
}

// FoldedTensors is how many tensors the text card lists unless TextOptions.Full is set.
const FoldedTensors = 10

// WriteText writes the card for a terminal: what the model is, in a few aligned lines, its metadata,
// its first tensors and its findings.
func WriteText(w io.Writer, c *Card, opt TextOptions) error {
	b := bufio.NewWriter(w)
	p, info := opt.Palette, &c.Info
	fmt.Fprintf(b, "%s\n", p.Bold(textfmt.Escape(c.Path)))
	row := func(label, format string, args ...any) {
		fmt.Fprintf(b, "  %-11s %s\n", label, fmt.Sprintf(format, args...))
	}
	from := func(field string) string {
		if src := info.Sources[field]; src != "" {
			return p.Dim("  (" + textfmt.Escape(src) + ")")
		}
		return ""
	}
	if c.HeaderParsed {
		row("name", "%s%s", textfmt.Escape(info.Name), from("name"))
		row("is", "%s", strings.Join(what(&info.Info), " · "))
		if info.BaseModel != "" {
			row("base model", "%s%s", textfmt.Escape(info.BaseModel), from("base_model"))
		}
		for i, g := range info.TriggerGroups() {
			label, src := "triggers", textfmt.Escape(g.Source)
			if g.Derived { // guessed from the training data, not declared by anyone
				label = "guessed"
			}
			if i > 0 && !g.Derived == !info.TriggerGroups()[i-1].Derived {
				label = ""
			}
			words := make([]string, len(g.Words))
			for k, w := range g.Words {
				words[k] = textfmt.Escape(w)
			}
			row(label, "%s%s", strings.Join(words, ", "), p.Dim("  ("+src+")"))
		}
		if info.CivitAI.ModelID != 0 {
			u := fmt.Sprintf("https://civitai.com/models/%d", info.CivitAI.ModelID)
			if info.CivitAI.VersionID != 0 {
				u += fmt.Sprintf("?modelVersionId=%d", info.CivitAI.VersionID)
			}
			row("civitai", "%s%s", u, from("civitai.model_id"))
		}
		if info.Author != "" {
			row("author", "%s%s", textfmt.Escape(info.Author), from("author"))
		}
		// A description is prose, often CivitAI's HTML: shown as text, a row per paragraph with Full,
		// else its paragraphs joined by ¶ on one row.
		if lines := textfmt.Paragraphs(info.Description); opt.Full {
			label := "about"
			for _, line := range lines {
				row(label, "%s", textfmt.Escape(line))
				label = ""
			}
		} else if len(lines) > 0 {
			row("about", "%s", textfmt.Shorten(strings.Join(lines, " ¶ "), 100))
		}
		if info.NetworkModule != "" || info.Info.DeclaredRank != "" {
			row("network", "%s", strings.TrimLeft(strings.Join([]string{textfmt.Escape(info.NetworkModule),
				labelled("dim", info.Info.DeclaredRank), labelled("alpha", info.Info.DeclaredAlpha)}, " "), " "))
		}
		if len(info.EmbeddedHashes) > 0 {
			var hs []string
			for _, k := range lora.EmbeddedHashKeys {
				if v, ok := info.EmbeddedHashes[k.Key]; ok {
					if len(v) > 14 && !opt.Full {
						v = v[:12] + "…"
					}
					hs = append(hs, fmt.Sprintf("%s %s", k.Key, textfmt.Escape(v)))
				}
			}
			note := ""
			if !c.Verified {
				note = p.Dim("  (not verified: --verify)")
			}
			row("hashes", "%s%s", strings.Join(hs, ", "), note)
		}
	}
	if c.Valid {
		row("verdict", "%s", p.Green("valid"))
	} else {
		row("verdict", "%s (%s)", p.Red("invalid"), c.refKind())
	}
	switch {
	case c.SnapshotOf != "":
		row("snapshot", "of %s %s", textfmt.Escape(c.SnapshotOf), p.Dim("(its header and digests; size "+textfmt.Bytes(uint64(c.FileSize))+")"))
	case c.Shards > 0:
		row("size", "%s of tensor data in %s", textfmt.Bytes(uint64(c.FileSize)), textfmt.Plural(c.Shards, "shard"))
	case c.HeaderParsed:
		row("size", "%s (header %s B, data %s B)", textfmt.Bytes(uint64(c.FileSize)), textfmt.Thousands(c.HeaderLen), textfmt.Thousands(uint64(c.DataLen)))
	default:
		row("size", "%s (no readable header)", textfmt.Bytes(uint64(c.FileSize)))
	}
	row("tensors", "%d", c.TensorCount)
	if len(c.Params) > 0 {
		parts := make([]string, 0, len(c.Params))
		for _, pc := range c.Params {
			parts = append(parts, fmt.Sprintf("%s %s", textfmt.Escape(string(pc.DType)), textfmt.Thousands(pc.Elements)))
		}
		row("parameters", "%s (%s)", textfmt.Thousands(c.ParamsTotal), strings.Join(parts, " · "))
	}
	if c.GGUF != nil {
		writeGGUFText(b, c.GGUF, opt, row)
	}
	switch {
	case len(c.Metadata) > 0:
		shown, folded := lora.SplitMetadata(c.Metadata)
		if opt.Full {
			shown, folded = c.Metadata, 0
		}
		if len(shown) == 0 { // none that matter (a GGUF file's: summarised in the rows above)
			row("metadata", "%s  %s", textfmt.Plural(len(c.Metadata), "key"), p.Dim("(--full lists them)"))
			break
		}
		row("metadata", "%s", textfmt.Plural(len(c.Metadata), "key"))
		keys := make([]string, len(shown))
		for i, e := range shown {
			keys[i] = textfmt.Escape(e.Key)
		}
		width := columnWidth(keys, maxKeyWidth)
		for i, e := range shown {
			v := metaValueText(e.Value)
			if opt.Full {
				v = textfmt.Escape(e.Value)
			}
			fmt.Fprintf(b, "    %s  %s\n", column(keys[i], width, opt.Full), v)
		}
		if folded > 0 {
			fmt.Fprintf(b, "    %s\n", p.Dim(fmt.Sprintf("… %d more (--full lists all)", folded)))
		}
	case c.HasMetadata:
		row("metadata", "empty")
	default:
		row("metadata", "none")
	}
	if len(c.Tensors) > 0 {
		shown := c.Tensors
		if !opt.Full && len(shown) > FoldedTensors {
			shown = shown[:FoldedTensors]
		}
		fmt.Fprintf(b, "  %s\n", p.Dim("tensors (header order)"))
		names := make([]string, len(shown))
		for i, t := range shown {
			names[i] = textfmt.Escape(t.Name)
		}
		nameW := columnWidth(names, maxNameWidth)
		for i, t := range shown {
			if t.DType == "" { // known by name only: its shard is missing
				fmt.Fprintf(b, "    %s  %s\n", column(names[i], nameW, opt.Full), p.Dim("? (in "+textfmt.Escape(t.Shard)+", missing)"))
				continue
			}
			fmt.Fprintf(b, "    %s  %-7s %-20s %s\n", column(names[i], nameW, opt.Full), textfmt.Escape(string(t.DType)), shapeText(t.Shape), textfmt.Bytes(t.Bytes))
		}
		if n := c.TensorCount - len(shown); n > 0 {
			fmt.Fprintf(b, "    … %d more (--full lists all)\n", n)
		}
	}
	if len(c.Findings) == 0 {
		row("findings", "none")
	} else {
		total := 0
		for _, n := range c.FindingCounts {
			total += n
		}
		row("findings", "%s", textfmt.Thousands(uint64(total)))
		check.WriteFindings(b, c.Findings, c.FindingCounts, "    ", check.TextOptions{Palette: p, Full: opt.Full})
	}
	return b.Flush()
}

// The widest a column of metadata keys and of tensor names grows: longer ones are shortened in the
// middle (or, with TextOptions.Full, put on a line of their own), so the columns after stay aligned.
const (
	maxKeyWidth  = 32
	maxNameWidth = 60
)

// columnWidth is the width of a column of cells (escaped text): its widest cell, at most limit.
func columnWidth(cells []string, limit int) int {
	w := 0
	for _, c := range cells {
		w = max(w, min(utf8.RuneCountInString(c), limit))
	}
	return w
}

// column is cell padded to width. A longer cell is shortened in the middle, keeping its start and
// its end (where kohya's long names differ: ….lora_down.weight); unless whole, then it goes on a line
// of its own and the column continues on the next, indented to width.
func column(cell string, width int, whole bool) string {
	r := []rune(cell)
	switch {
	case len(r) <= width:
		return cell + strings.Repeat(" ", width-len(r))
	case whole:
		return cell + "\n    " + strings.Repeat(" ", width)
	}
	head := (width - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(width-1-head):])
}

// refKind is the reference reader's error kind ("" for a valid model).
func (c *Card) refKind() string {
	if c.ReferenceError == nil {
		return ""
	}
	return string(c.ReferenceError.Kind)
}

// what is what the tensors say a model is: kind, naming, family, rank.
func what(info *lora.Info) []string {
	w := []string{string(info.Kind)}
	if info.Naming != lora.NamingUnknown {
		w = append(w, string(info.Naming))
	}
	if info.Family != lora.FamilyUnknown {
		w = append(w, string(info.Family))
	}
	if info.Rank > 0 {
		r := fmt.Sprintf("rank %d", info.Rank)
		if len(info.Ranks) > 0 {
			parts := make([]string, len(info.Ranks))
			for i, x := range info.Ranks {
				parts[i] = fmt.Sprint(x)
			}
			r = "ranks " + strings.Join(parts, ", ")
		}
		w = append(w, r)
	}
	return w
}

func labelled(label, v string) string {
	if v == "" {
		return ""
	}
	return label + " " + textfmt.Escape(v)
}

// metaValueText shows a metadata value on one line; images and other huge values are summarised.
func metaValueText(v string) string {
	if strings.HasPrefix(v, "data:") {
		kind, _, _ := strings.Cut(strings.TrimPrefix(v, "data:"), ";")
		return fmt.Sprintf("(%s data URL, %s, not shown)", textfmt.Escape(textfmt.Shorten(kind, 30)), textfmt.Bytes(uint64(len(v))))
	}
	if textfmt.IsBlob(v) { // a base64 image or the like
		return fmt.Sprintf("(%s, not shown)", textfmt.Bytes(uint64(len(v))))
	}
	return textfmt.Shorten(v, 100)
}

func shapeText(s []uint64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// WriteMarkdown writes the card as a table, for issues and pull requests, its findings listed below;
// a blank line ends it.
func WriteMarkdown(w io.Writer, c *Card) error {
	b := bufio.NewWriter(w)
	info := &c.Info
	fmt.Fprintf(b, "### %s\n\n| | |\n|---|---|\n", markdown.Text(c.Path))
	verdict := "valid"
	if !c.Valid {
		verdict = "invalid (" + c.refKind() + ")"
	}
	rank := ""
	if info.Rank > 0 {
		rank = fmt.Sprint(info.Rank)
	}
	ids := ""
	if info.CivitAI.ModelID != 0 {
		ids = fmt.Sprintf("model %d, version %d", info.CivitAI.ModelID, info.CivitAI.VersionID)
	}
	parts := make([]string, 0, len(c.Params))
	for _, p := range c.Params {
		parts = append(parts, fmt.Sprintf("%s %s", p.DType, textfmt.Thousands(p.Elements)))
	}
	for _, kv := range [][2]string{{"name", info.Name}, {"kind", string(info.Kind)}, {"naming", string(info.Naming)}, {"family", string(info.Family)},
		{"rank", rank}, {"base model", info.BaseModel}, {"triggers", strings.Join(info.Triggers, ", ")},
		{"guessed triggers", strings.Join(info.GuessedTriggers, ", ")}, {"CivitAI", ids},
		{"verdict", verdict}, {"size", textfmt.Bytes(uint64(c.FileSize))}, {"snapshot of", c.SnapshotOf}, {"tensors", fmt.Sprint(c.TensorCount)},
		{"parameters", fmt.Sprintf("%s (%s)", textfmt.Thousands(c.ParamsTotal), strings.Join(parts, " · "))}} {
		if kv[1] != "" {
			fmt.Fprintf(b, "| %s | %s |\n", kv[0], markdown.Text(kv[1]))
		}
	}
	if c.GGUF != nil {
		for _, kv := range ggufRows(c.GGUF) {
			fmt.Fprintf(b, "| %s | %s |\n", kv[0], markdown.Text(kv[1]))
		}
	}
	if len(c.Findings) > 0 {
		b.WriteString("\n")
	}
	for _, f := range c.Findings {
		fmt.Fprintf(b, "- %s\n", check.FindingMarkdown(f))
	}
	b.WriteString("\n")
	return b.Flush()
}

// WriteJSON writes the card as indented JSON: one object, the schema first. Cards written one after
// the other make a stream of JSON values, as jq reads them.
func WriteJSON(w io.Writer, c *Card) error { return textfmt.WriteJSON(w, c) }

// WriteJSONL writes the card as one compact JSON record on a line of its own, with the same fields
// as its JSON.
func WriteJSONL(w io.Writer, c *Card) error { return textfmt.WriteJSONL(w, c) }

// WriteShortText writes the table: a heading line, then a row per model (name, kind, base family,
// rank, size, triggers and the file); a model that could not be read says why in its row.
func WriteShortText(w io.Writer, r *ShortReport, opt TextOptions) error {
	b := bufio.NewWriter(w)
	cells, widths := shortCells(r, opt)
	fmt.Fprintf(b, "%-*s  %-*s  %-*s  %*s  %9s  %s\n", widths[0], "NAME", widths[1], "KIND", widths[2], "BASE", widths[3], "RANK", "SIZE", "TRIGGERS · FILE")
	for _, c := range cells {
		trig := c[5]
		if trig != "" {
			trig += " · "
		}
		fmt.Fprintf(b, "%-*s  %-*s  %-*s  %*s  %9s  %s%s\n", widths[0], c[0], widths[1], c[1], widths[2], c[2], widths[3], c[3], c[4], trig, c[6])
	}
	return b.Flush()
}

// WriteShortMarkdown writes the table in Markdown.
func WriteShortMarkdown(w io.Writer, r *ShortReport) error {
	b := bufio.NewWriter(w)
	b.WriteString("| name | kind | base | rank | size | triggers | file |\n|---|---|---|---|---|---|---|\n")
	cells, _ := shortCells(r, TextOptions{})
	for _, c := range cells {
		md := make([]string, len(c))
		for k, cell := range c {
			md[k] = markdown.Text(cell)
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(md, " | "))
	}
	return b.Flush()
}

// shortCells are the table's cells, escaped, and the widths of its first four columns.
func shortCells(r *ShortReport, opt TextOptions) ([][]string, []int) {
	widths := []int{4, 4, 4, 4}
	cells := make([][]string, len(r.Files))
	for i, f := range r.Files {
		if f.Err != nil || f.Error != "" {
			cells[i] = []string{"?", "unreadable", "", "", "", textfmt.Escape(f.Error), textfmt.Escape(f.Path)}
			continue
		}
		rank := ""
		if f.Rank > 0 {
			rank = fmt.Sprint(f.Rank)
		}
		kind, base := string(f.Kind), string(f.Family)
		if !f.HeaderParsed {
			kind, base = "not a model", ""
		}
		if !f.Valid {
			kind += " (invalid)"
		}
		if f.Family == lora.FamilyUnknown {
			base = ""
		}
		triggers := triggerCell(f.Triggers, f.GuessedTriggers)
		if !opt.Full {
			triggers = textfmt.Shorten(triggers, 60)
		}
		cells[i] = []string{textfmt.Escape(f.Name), kind, base, rank, textfmt.Bytes(uint64(f.Size)), triggers, textfmt.Escape(f.Path)}
		for k := range widths {
			widths[k] = max(widths[k], min(len([]rune(cells[i][k])), 40))
		}
	}
	return cells, widths
}

// triggerCell is the short table's trigger words, escaped: the declared ones, or when there are none
// the guessed ones, marked as such.
func triggerCell(declared, guessed []string) string {
	words, mark := declared, ""
	if len(words) == 0 && len(guessed) > 0 {
		words, mark = guessed, "(guessed) "
	}
	esc := make([]string, len(words))
	for k, t := range words {
		esc[k] = textfmt.Escape(t)
	}
	return mark + strings.Join(esc, ", ")
}

// WriteShortJSON writes the table as indented JSON: {"schema": …, "files": [row, …]}.
func WriteShortJSON(w io.Writer, r *ShortReport) error { return textfmt.WriteJSON(w, r) }

// WriteShortJSONL writes one compact JSON record per model: the fields of its row in the JSON, after
// "schema".
func WriteShortJSONL(w io.Writer, r *ShortReport) error {
	records := make([]any, len(r.Files))
	for i := range r.Files {
		records[i] = shortRecord{Schema: r.Schema, Row: &r.Files[i]}
	}
	return textfmt.WriteJSONL(w, records...)
}

// shortRecord is a Row on its own, with the report's schema first.
type shortRecord struct {
	Schema string `json:"schema"`
	*Row
}
