package inspect

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/check"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// WriteOptions say how Write and WriteShort write a report: its format, and how the text and the
// page look.
type WriteOptions struct {
	// Format is the form: text (the zero value), JSON, JSONL, Markdown or, for the short table, HTML
	// (a card has no page: HTML writes its text).
	Format textfmt.Format
	// Palette colours the name, the verdict, the severities and the asides when its On is set.
	Palette textfmt.Palette
	// Full shortens and folds nothing: every tensor, every metadata value whole (cover images
	// too), whole hashes and descriptions, every finding; in the short table, every trigger word.
	Full bool
	// Width is the widest a line of the short table may be (the terminal's width): its trigger words
	// are cut ("+3 more"), then its file name in the middle, to fit. 0: no limit.
	Width int
	// Flags, when set, names Full and Verify as the caller's users give them, in the asides that say
	// what shows more: "… 3 more (--full lists all)", "(not verified: --verify)".
	Flags textfmt.Flags
	// Dir is the folder the short table's page (HTML) is written to: preview images are referenced
	// relative to it. "" means the current folder.
	Dir string
}

// Write writes the card in opt.Format. Text is for a terminal: what the model is, in a few aligned
// lines, its metadata, its first tensors and its findings. Markdown is a table, for issues and pull
// requests, its findings listed below; a blank line ends it. JSON is one indented object, the schema
// first: cards written one after the other make a stream of JSON values, as jq reads them. JSONL is
// the card as one compact record on a line of its own, with the same fields as its JSON.
func Write(w io.Writer, c *Card, opt WriteOptions) error {
	switch opt.Format {
	case textfmt.JSON:
		return textfmt.WriteJSON(w, c)
	case textfmt.JSONL:
		return textfmt.WriteJSONL(w, c)
	case textfmt.Markdown:
		return writeMarkdown(w, c)
	}
	return writeText(w, c, opt)
}

// WriteShort writes the short table (Short) in opt.Format. Text is a heading line, then a row per
// model (name, kind, family, base model as people name it, rank, size, trigger words and the file),
// each line at most opt.Width columns unless opt.Full; a model that could not be read says why in its
// row. Markdown is the same table in Markdown; JSON {"schema": …, "files": [row, …]}, indented; JSONL
// one compact record per model (the fields of its row in the JSON, after "schema":
// textfmt.WriteRecords). HTML is a gallery: a card per model with its preview (the image beside it,
// or the cover its metadata embeds), name, kind, base model, rank, trigger words (declared and
// guessed apart, each a button that copies it), its CivitAI page, size, verdict and findings; filters
// by name, base model and kind, and sorting. Images load lazily, so a page of 10,000 models opens at
// once.
func WriteShort(w io.Writer, r *ShortReport, opt WriteOptions) error {
	switch opt.Format {
	case textfmt.JSON:
		return textfmt.WriteJSON(w, r)
	case textfmt.JSONL:
		return writeShortJSONL(w, r)
	case textfmt.Markdown:
		return writeShortMarkdown(w, r)
	case textfmt.HTML:
		return writeShortHTML(w, r, opt.Dir)
	}
	return writeShortText(w, r, opt)
}

// asks is an aside about an option, format with the option's name as Flags gives it: "" when Flags
// names none.
func (o WriteOptions) asks(option, format string) string {
	if f := o.Flags.Of(option); f != "" {
		return fmt.Sprintf(format, f)
	}
	return ""
}

// FoldedTensors is how many tensors the text card lists unless WriteOptions.Full is set.
const FoldedTensors = 10

// writeText writes the card for a terminal (Write). Each step below writes one section, in this
// order.
func writeText(w io.Writer, c *Card, opt WriteOptions) error {
	t := &textCard{b: bufio.NewWriter(w), c: c, opt: opt, p: opt.Palette}
	fmt.Fprintf(t.b, "%s\n", t.p.Bold(textfmt.Escape(c.Path)))
	var steps []func()
	if c.HeaderParsed { // what the header says the model is
		steps = append(steps, t.identity, t.description, t.network, t.hashes)
	}
	steps = append(steps, t.verdict, t.size, t.store, t.counts, t.companions, t.formatRows, t.metadata, t.tensors, t.findings)
	for _, step := range steps {
		step()
	}
	return t.b.Flush()
}

// textCard is a card being written as text (writeText), one section a step.
type textCard struct {
	b   *bufio.Writer
	c   *Card
	opt WriteOptions
	p   textfmt.Palette
}

// row writes a labelled row: the label in its column, then the value.
func (t *textCard) row(label, format string, args ...any) {
	fmt.Fprintf(t.b, "  %-11s %s\n", label, fmt.Sprintf(format, args...))
}

// from is the aside naming where an Info field came from ("  (sidecar …)"), "" when unsaid.
func (t *textCard) from(field string) string {
	if src := t.c.Info.Sources[field]; src != "" {
		return t.p.Dim("  (" + textfmt.Escape(src) + ")")
	}
	return ""
}

// identity writes what the model is: its name, kind, base model, trigger words, CivitAI page,
// preferred weight and author.
func (t *textCard) identity() {
	info := &t.c.Info
	t.row("name", "%s%s", textfmt.Escape(info.Name), t.from("name"))
	t.row("is", "%s", strings.Join(what(&info.Info), " · "))
	if info.BaseModel != "" {
		t.row("base model", "%s%s", textfmt.Escape(info.BaseModel), t.from("base_model"))
	}
	groups := info.TriggerGroups()
	for i, g := range groups {
		label, src := "triggers", textfmt.Escape(g.Source)
		if g.Derived { // guessed from the training data, not declared by anyone
			label = "guessed"
		}
		if i > 0 && !g.Derived == !groups[i-1].Derived {
			label = ""
		}
		words := make([]string, len(g.Words))
		for k, w := range g.Words {
			words[k] = textfmt.Escape(w)
		}
		t.row(label, "%s%s", strings.Join(words, ", "), t.p.Dim("  ("+src+")"))
	}
	if u := info.CivitAI.URL(); u != "" {
		t.row("civitai", "%s%s", u, t.from("civitai.model_id"))
	}
	if info.PreferredWeight != nil {
		t.row("weight", "%s%s", strconv.FormatFloat(*info.PreferredWeight, 'g', -1, 64), t.from("preferred_weight"))
	}
	if info.Author != "" {
		t.row("author", "%s%s", textfmt.Escape(info.Author), t.from("author"))
	}
}

// description writes the description. It is prose, often CivitAI's HTML: shown as text, a row per
// paragraph with Full, else its paragraphs joined by ¶ on one row.
func (t *textCard) description() {
	lines := textfmt.Paragraphs(t.c.Info.Description)
	if !t.opt.Full {
		if len(lines) > 0 {
			t.row("about", "%s", textfmt.Shorten(strings.Join(lines, " ¶ "), 100))
		}
		return
	}
	label := "about"
	for _, line := range lines {
		t.row(label, "%s", textfmt.Escape(line))
		label = ""
	}
}

// network writes the training network's module, dim and alpha, where the metadata declares them.
func (t *textCard) network() {
	info := &t.c.Info
	if info.NetworkModule != "" || info.Info.DeclaredRank != "" {
		t.row("network", "%s", strings.TrimLeft(strings.Join([]string{textfmt.Escape(info.NetworkModule),
			labelled("dim", info.Info.DeclaredRank), labelled("alpha", info.Info.DeclaredAlpha)}, " "), " "))
	}
}

// hashes writes the hashes a trainer embedded, and whether they were verified against the file.
func (t *textCard) hashes() {
	info, c, p := &t.c.Info, t.c, t.p
	if len(info.EmbeddedHashes) == 0 {
		return
	}
	var hs []string
	for _, k := range lora.EmbeddedHashKeys {
		if v, ok := info.EmbeddedHashes[k.Key]; ok {
			if len(v) > 14 && !t.opt.Full {
				v = v[:12] + "…"
			}
			hs = append(hs, fmt.Sprintf("%s %s", k.Key, textfmt.Escape(v)))
		}
	}
	note := p.Dim("  (not verified" + t.opt.asks("Verify", ": %s") + ")")
	switch {
	case c.Verified && c.FindingCounts[canon.CodeHashMismatch] > 0:
		note = "  " + p.Red("(verified: does not match the file, see findings)")
	case c.Verified:
		note = "  " + p.Green("(verified: matches the file)")
	}
	t.row("hashes", "%s%s", strings.Join(hs, ", "), note)
}

// verdict writes the reference reader's verdict.
func (t *textCard) verdict() {
	if t.c.Valid {
		t.row("verdict", "%s", t.p.Green("valid"))
	} else {
		t.row("verdict", "%s (%s)", t.p.Red("invalid"), t.c.refKind())
	}
}

// size writes the model's size, as its kind of source measures it.
func (t *textCard) size() {
	c, p := t.c, t.p
	switch {
	case c.SnapshotOf != "":
		t.row("snapshot", "of %s %s", textfmt.Escape(c.SnapshotOf), p.Dim("(its header and digests; size "+textfmt.Bytes(uint64(c.FileSize))+")"))
	case c.Shards > 0:
		t.row("size", "%s of tensor data in %s", textfmt.Bytes(uint64(c.FileSize)), textfmt.Plural(c.Shards, "shard"))
	case c.ONNX != nil:
		t.row("size", "%s (tensor data %s, external data included)", textfmt.Bytes(uint64(c.FileSize)), textfmt.Bytes(uint64(c.DataLen)))
	case c.PyTorch != nil:
		t.row("size", "%s (tensor data %s)", textfmt.Bytes(uint64(c.FileSize)), textfmt.Bytes(uint64(c.DataLen)))
	case c.HeaderParsed:
		t.row("size", "%s (header %s B, data %s B)", textfmt.Bytes(uint64(c.FileSize)), textfmt.Thousands(c.HeaderLen), textfmt.Thousands(uint64(c.DataLen)))
	default:
		t.row("size", "%s (no readable header)", textfmt.Bytes(uint64(c.FileSize)))
	}
}

// store writes where a store's blob lies (Card.Store).
func (t *textCard) store() {
	for _, r := range storeRows(t.c.Store, t.opt.Full) {
		t.row(r[0], "%s", textfmt.Escape(r[1]))
	}
}

// counts writes the tensor count, the parameters per dtype and the tensors counted apart.
func (t *textCard) counts() {
	c := t.c
	t.row("tensors", "%d", c.TensorCount)
	if len(c.Params) > 0 {
		parts := make([]string, 0, len(c.Params))
		for _, pc := range c.Params {
			parts = append(parts, fmt.Sprintf("%s %s", textfmt.Escape(string(pc.DType)), textfmt.Thousands(pc.Elements)))
		}
		t.row("parameters", "%s (%s)", textfmt.Thousands(c.ParamsTotal), strings.Join(parts, " · "))
	}
	if a := apartText(c.ParamsApart); a != "" {
		t.row("apart", "%s", a)
	}
}

// companions writes the files beside a folder model's tensors (Card.Companions).
func (t *textCard) companions() { writeCompanionsText(t.b, t.c, t.opt, t.row) }

// formatRows writes what a GGUF, ONNX, PyTorch or DDUF file says besides its tensors.
func (t *textCard) formatRows() {
	c := t.c
	if c.GGUF != nil {
		writeGGUFText(t.b, c.GGUF, t.opt, t.row)
	}
	if c.ONNX != nil {
		for _, r := range onnxRows(c.ONNX) {
			t.row(r[0], "%s", textfmt.Escape(r[1]))
		}
	}
	if c.PyTorch != nil {
		for _, r := range torchRows(c.PyTorch) {
			t.row(r[0], "%s", textfmt.Escape(r[1]))
		}
	}
	if c.DDUF != nil {
		for _, r := range ddufRows(c.DDUF) {
			t.row(r[0], "%s", textfmt.Escape(r[1]))
		}
	}
}

// metadata writes the metadata: the keys that matter (every key with Full), one a line, values
// shortened unless Full.
func (t *textCard) metadata() {
	c, p, opt := t.c, t.p, t.opt
	switch {
	case len(c.Metadata) > 0:
	case c.HasMetadata:
		t.row("metadata", "empty")
		return
	default:
		t.row("metadata", "none")
		return
	}
	shown, folded := lora.SplitMetadata(c.Metadata)
	if opt.Full {
		shown, folded = c.Metadata, 0
	}
	if len(shown) == 0 { // none that matter (a GGUF file's: summarised in the rows above)
		if aside := opt.asks("Full", "(%s lists them)"); aside != "" {
			t.row("metadata", "%s  %s", textfmt.Plural(len(c.Metadata), "key"), p.Dim(aside))
		} else {
			t.row("metadata", "%s", textfmt.Plural(len(c.Metadata), "key"))
		}
		return
	}
	t.row("metadata", "%s", textfmt.Plural(len(c.Metadata), "key"))
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
		fmt.Fprintf(t.b, "    %s  %s\n", column(keys[i], width, opt.Full), v)
	}
	if folded > 0 {
		fmt.Fprintf(t.b, "    %s\n", p.Dim(fmt.Sprintf("… %d more", folded)+opt.asks("Full", " (%s lists all)")))
	}
}

// tensors writes the tensors in header order, the first FoldedTensors unless Full, names shortened
// apart to a column.
func (t *textCard) tensors() {
	c, p, opt := t.c, t.p, t.opt
	if len(c.Tensors) == 0 {
		return
	}
	shown := c.Tensors
	if !opt.Full && len(shown) > FoldedTensors {
		shown = shown[:FoldedTensors]
	}
	fmt.Fprintf(t.b, "  %s\n", p.Dim("tensors (header order)"))
	names := make([]string, len(shown))
	for i, x := range shown {
		names[i] = textfmt.Escape(x.Name)
	}
	nameW := columnWidth(names, maxNameWidth)
	if !opt.Full {
		names = shortenApart(names, nameW)
	}
	// a name still too long is one kept whole: on a line of its own
	whole := func(name string) bool { return utf8.RuneCountInString(name) > nameW }
	for i, x := range shown {
		if x.DType == "" { // known by name only: its shard is missing
			fmt.Fprintf(t.b, "    %s  %s\n", column(names[i], nameW, whole(names[i])), p.Dim("? (in "+textfmt.Escape(x.Shard)+", missing)"))
			continue
		}
		fmt.Fprintf(t.b, "    %s  %-7s %-20s %s\n", column(names[i], nameW, whole(names[i])), textfmt.Escape(string(x.DType)), shapeText(x.Shape), textfmt.Bytes(x.Bytes))
	}
	if n := c.TensorCount - len(shown); n > 0 {
		fmt.Fprintf(t.b, "    … %d more%s\n", n, opt.asks("Full", " (%s lists all)"))
	}
}

// findings writes how many findings there are, then each (folded by code unless Full).
func (t *textCard) findings() {
	c := t.c
	if len(c.Findings) == 0 {
		t.row("findings", "none")
		return
	}
	total := 0
	for _, n := range c.FindingCounts {
		total += n
	}
	t.row("findings", "%s", textfmt.Thousands(uint64(total)))
	check.WriteFindings(t.b, c.Findings, c.FindingCounts, "    ", check.WriteOptions{Palette: t.p, Full: t.opt.Full, Flags: t.opt.Flags})
}

// The widest a column of metadata keys and of tensor names grows: longer ones are shortened in the
// middle (or, with WriteOptions.Full, put on a line of their own), so the columns after stay aligned.
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

// shortenApart shortens the cells longer than width (escaped text) in the middle, as column does, but
// so that no two shortened cells look alike: each keeps a start and an end no other cell has together
// (for PEFT's base_model.model.model.layers.12.self_attn… the layer index), as near the middle cut as
// can be. A cell that cannot be told apart so is kept whole (column then puts it on a line of its own).
func shortenApart(cells []string, width int) []string {
	if width < 8 {
		return cells
	}
	sorted := slices.Clone(cells)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	// alike reports whether another cell than c starts with head and ends with tail, apart.
	alike := func(c, head, tail string) bool {
		i, _ := slices.BinarySearch(sorted, head)
		for ; i < len(sorted) && strings.HasPrefix(sorted[i], head); i++ {
			if d := sorted[i]; d != c && len(d) >= len(head)+len(tail) && strings.HasSuffix(d, tail) {
				return true
			}
		}
		return false
	}
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = c
		r := []rune(c)
		if len(r) <= width {
			continue
		}
		mid := (width - 1) / 2
	search:
		for _, atSeparator := range []bool{true, false} { // a cut before a separator first: "….2.self_attn", not "…2.self_attn"
			for k := range width { // heads of mid, mid+1, mid-1, mid+2, … runes
				head := mid - k/2
				if k%2 == 1 {
					head = mid + (k+1)/2
				}
				if head < 0 || head > width-1 {
					continue
				}
				tail := r[len(r)-(width-1-head):]
				if atSeparator && (len(tail) == 0 || !strings.ContainsRune("._/-", tail[0])) {
					continue
				}
				if h, t := string(r[:head]), string(tail); !alike(c, h, t) {
					out[i] = h + "…" + t
					break search
				}
			}
		}
	}
	return out
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

// writeMarkdown writes the card as a table (Write).
func writeMarkdown(w io.Writer, c *Card) error {
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
	weight := ""
	if info.PreferredWeight != nil {
		weight = strconv.FormatFloat(*info.PreferredWeight, 'g', -1, 64)
	}
	parts := make([]string, 0, len(c.Params))
	for _, p := range c.Params {
		parts = append(parts, fmt.Sprintf("%s %s", p.DType, textfmt.Thousands(p.Elements)))
	}
	for _, kv := range [][2]string{{"name", info.Name}, {"kind", string(info.Kind)}, {"naming", string(info.Naming)}, {"family", string(info.Family)},
		{"rank", rank}, {"base model", info.BaseModel}, {"triggers", strings.Join(info.Triggers, ", ")},
		{"guessed triggers", strings.Join(info.GuessedTriggers, ", ")}, {"preferred weight", weight},
		{"verdict", verdict}, {"size", textfmt.Bytes(uint64(c.FileSize))}, {"snapshot of", c.SnapshotOf}, {"tensors", fmt.Sprint(c.TensorCount)},
		{"parameters", fmt.Sprintf("%s (%s)", textfmt.Thousands(c.ParamsTotal), strings.Join(parts, " · "))}, {"apart", apartText(c.ParamsApart)}} {
		if kv[1] != "" {
			fmt.Fprintf(b, "| %s | %s |\n", kv[0], markdown.Text(kv[1]))
		}
		if u := info.CivitAI.URL(); kv[0] == "guessed triggers" && u != "" { // made of ids alone: safe to link
			ids := fmt.Sprintf("model %d", info.CivitAI.ModelID)
			if info.CivitAI.VersionID != 0 {
				ids += fmt.Sprintf(", version %d", info.CivitAI.VersionID)
			}
			fmt.Fprintf(b, "| CivitAI | [%s](%s) |\n", ids, u)
		}
	}
	for _, kv := range storeRows(c.Store, true) {
		fmt.Fprintf(b, "| %s | %s |\n", kv[0], markdown.Text(kv[1]))
	}
	for _, kv := range companionRows(c.Companions) {
		fmt.Fprintf(b, "| %s | %s |\n", kv[0], markdown.Text(kv[1]))
	}
	if c.GGUF != nil {
		for _, kv := range ggufRows(c.GGUF) {
			fmt.Fprintf(b, "| %s | %s |\n", kv[0], markdown.Text(kv[1]))
		}
	}
	if c.ONNX != nil {
		for _, kv := range onnxRows(c.ONNX) {
			fmt.Fprintf(b, "| %s | %s |\n", kv[0], markdown.Text(kv[1]))
		}
	}
	if c.PyTorch != nil {
		for _, kv := range torchRows(c.PyTorch) {
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

// writeShortText writes the short table for a terminal (WriteShort).
func writeShortText(w io.Writer, r *ShortReport, opt WriteOptions) error {
	b := bufio.NewWriter(w)
	cells, widths := shortCells(r, opt.Full)
	head := []string{"NAME", "KIND", "FAMILY", "BASE", "RANK"}
	line := func(c []string) string {
		var sb strings.Builder
		for k := range head {
			if k == 4 {
				fmt.Fprintf(&sb, "%*s  ", widths[k], c[k])
			} else {
				fmt.Fprintf(&sb, "%-*s  ", widths[k], c[k])
			}
		}
		fmt.Fprintf(&sb, "%9s  ", c[5])
		return sb.String()
	}
	fmt.Fprintf(b, "%s%s\n", line(append(head, "SIZE")), "TRIGGERS · FILE")
	for i, c := range cells {
		prefix := line(c)
		f := &r.Files[i]
		var words []string
		mark := ""
		if f.Err != nil || f.Error != "" {
			words = []string{textfmt.Escape(f.Error)}
		} else if words, mark = escapeAll(f.Triggers), ""; len(words) == 0 && len(f.GuessedTriggers) > 0 {
			words, mark = escapeAll(f.GuessedTriggers), "(guessed) "
		}
		fmt.Fprintf(b, "%s%s\n", prefix, lastCell(mark, words, textfmt.Escape(f.Path), opt.Width-utf8.RuneCountInString(prefix), opt.Full))
	}
	return b.Flush()
}

// lastCell is the short table's last cell: the words (after mark), " · " and the file, in at most
// width columns unless full (width < 1: no limit): words are left out from the end, saying how many
// ("+3 more"), then the file name is shortened in the middle.
func lastCell(mark string, words []string, file string, width int, full bool) string {
	join := func(n int) string {
		if len(words) == 0 {
			return file
		}
		s := mark + strings.Join(words[:n], ", ")
		if n < len(words) {
			if n > 0 {
				s += " "
			}
			s += fmt.Sprintf("+%d more", len(words)-n)
		}
		return s + " · " + file
	}
	if full || width < 1 {
		return join(len(words))
	}
	for n := len(words); n >= 0; n-- {
		if s := join(n); utf8.RuneCountInString(s) <= width || n == 0 {
			if over := utf8.RuneCountInString(s) - width; over > 0 {
				s = strings.TrimSuffix(s, file) + shortenPath(file, max(utf8.RuneCountInString(file)-over, 9))
			}
			return s
		}
	}
	return file
}

// shortenPath is path in at most width runes: cut in the middle, keeping twice as much of its end
// (the file's name) as of its start.
func shortenPath(path string, width int) string {
	r := []rune(path)
	if len(r) <= width {
		return path
	}
	head := (width - 1) / 3
	return string(r[:head]) + "…" + string(r[len(r)-(width-1-head):])
}

func escapeAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = textfmt.Escape(w)
	}
	return out
}

// writeShortMarkdown writes the short table in Markdown.
func writeShortMarkdown(w io.Writer, r *ShortReport) error {
	b := bufio.NewWriter(w)
	b.WriteString("| name | kind | family | base | rank | size | triggers | file |\n|---|---|---|---|---|---|---|---|\n")
	cells, _ := shortCells(r, true)
	for i, c := range cells {
		f := &r.Files[i]
		trig := triggerCell(f.Triggers, f.GuessedTriggers)
		if f.Err != nil || f.Error != "" {
			trig = textfmt.Escape(f.Error)
		}
		row := append(c[:6:6], trig, textfmt.Escape(f.Path))
		md := make([]string, len(row))
		for k, cell := range row {
			md[k] = markdown.Text(cell)
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(md, " | "))
	}
	return b.Flush()
}

// shortLimits are the widest the short table's name and base columns grow unless it is to be full:
// longer cells are shortened in the middle.
var shortLimits = [5]int{28, 0, 0, 16, 0}

// shortCells are the table's first six cells per row (name, kind, family, base, rank, size), escaped,
// and the widths of the first five columns; unless full, names and bases are shortened to shortLimits.
func shortCells(r *ShortReport, full bool) ([][]string, []int) {
	widths := []int{4, 4, 6, 4, 4}
	cells := make([][]string, len(r.Files))
	for i, f := range r.Files {
		if f.Err != nil || f.Error != "" {
			cells[i] = []string{"?", "unreadable", "", "", "", ""}
			continue
		}
		rank := ""
		if f.Rank > 0 {
			rank = fmt.Sprint(f.Rank)
		}
		kind, family := string(f.Kind), string(f.Family)
		if f.Kind == lora.KindUnknown && f.Format != canon.FormatSafetensors && f.Format != canon.FormatGGUF && f.Format != "" {
			kind = string(f.Format) // a PyTorch checkpoint, a NumPy file, an ONNX model: what it is, at least
		}
		switch {
		case !f.HeaderParsed:
			kind, family = "not a model", ""
		case !f.Valid:
			kind += " (invalid)"
		}
		if f.Family == lora.FamilyUnknown {
			family = ""
		}
		cells[i] = []string{textfmt.Escape(f.Name + f.FromOriginal()), kind, family, textfmt.Escape(lora.NormalBase(f.BaseModel)), rank, textfmt.Bytes(uint64(f.Size))}
		for k, limit := range shortLimits {
			if limit > 0 && !full && utf8.RuneCountInString(cells[i][k]) > limit {
				cells[i][k] = column(cells[i][k], limit, false)
			}
			widths[k] = max(widths[k], utf8.RuneCountInString(cells[i][k]))
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
	return mark + strings.Join(escapeAll(words), ", ")
}

// writeShortJSONL writes one compact JSON record per model (WriteShort).
func writeShortJSONL(w io.Writer, r *ShortReport) error {
	records := make([]any, len(r.Files))
	for i := range r.Files {
		records[i] = &r.Files[i]
	}
	return textfmt.WriteRecords(w, r.Schema, records...)
}

// roleWords names a role's tensors in the text of a card.
var roleWords = map[canon.Role]string{canon.RoleAlias: "tied aliases", canon.RoleOptimizer: "optimizer state",
	canon.RoleTraining: "training state", canon.RoleConstant: "graph constants"}

// apartText is the tensors counted apart from the parameters, in words: "tied aliases 1 (128) ·
// optimizer state 21 (712)", tensors then elements; "" when there are none.
func apartText(apart []canon.RoleCount) string {
	parts := make([]string, 0, len(apart))
	for _, a := range apart {
		w := roleWords[a.Role]
		if w == "" {
			w = string(a.Role)
		}
		elements := "elements"
		if a.Elements == 1 {
			elements = "element"
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s %s)", w, textfmt.Plural(a.Tensors, "tensor"), textfmt.Thousands(a.Elements), elements))
	}
	return strings.Join(parts, " · ")
}
