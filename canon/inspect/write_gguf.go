package inspect

import (
	"bufio"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/card"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// ggufRows are the GGUF section's rows as (label, text) pairs, the same in text and Markdown; the text
// is not escaped.
func ggufRows(g *card.GGUF) [][2]string {
	var rows [][2]string
	add := func(label string, parts ...string) {
		var kept []string
		for _, p := range parts {
			if p != "" {
				kept = append(kept, p)
			}
		}
		if len(kept) > 0 {
			rows = append(rows, [2]string{label, strings.Join(kept, " · ")})
		}
	}
	format := []string{g.Format, g.Architecture}
	if g.Type != "" && g.Type != "model" {
		format = append(format, g.Type)
	}
	if ft := g.FileType; ft != nil {
		format = append(format, fmt.Sprintf("%s (file type %d)", ft.Name, ft.ID))
	}
	add("format", format...)
	mix := make([]string, 0, len(g.Types))
	for _, t := range g.Types {
		mix = append(mix, fmt.Sprintf("%s %s", t.DType, percent(t.Share)))
	}
	add("types", mix...)
	heads := countText(g.HeadCount)
	if kv := countText(g.HeadCountKV); heads != "" && kv != "" {
		heads += ", kv " + kv
	}
	experts := countText(g.ExpertCount)
	if used := countText(g.ExpertUsedCount); experts != "" && used != "" {
		experts += ", " + used + " used"
	}
	blocks := countText(g.BlockCount)
	if blocks != "" {
		blocks = counted(blocks, "block")
	}
	add("model", named("context", countText(g.ContextLength)), named("embedding", countText(g.EmbeddingLength)),
		blocks, named("feed-forward", countText(g.FeedForwardLength)), named("heads", heads), named("experts", experts))
	r := g.Rope
	scaling := r.ScalingType
	if scaling != "" && r.ScalingFactor != nil {
		scaling += " ×" + floatText(*r.ScalingFactor)
	}
	if scaling != "" && r.OriginalContextLength != nil {
		scaling += " from " + countText(r.OriginalContextLength)
	}
	var base string
	if r.FreqBase != nil {
		base = floatText(*r.FreqBase)
	}
	add("rope", named("dimensions", countText(r.DimensionCount)), named("base", base), named("scaling", scaling))
	if t := g.Tokenizer; t != nil {
		model := t.Model
		if t.Pre != "" {
			model += " (" + t.Pre + ")"
		}
		parts := []string{model, counted(textfmt.Thousands(t.VocabSize), "token")}
		if t.Merges > 0 {
			parts = append(parts, counted(textfmt.Thousands(t.Merges), "merge"))
		}
		for _, name := range specialOrder(t.SpecialTokens) {
			parts = append(parts, fmt.Sprintf("%s %d", name, t.SpecialTokens[name]))
		}
		add("tokenizer", parts...)
	}
	if c := g.ChatTemplate; c != nil {
		parts := []string{fmt.Sprintf("%s, %s", textfmt.Bytes(c.Bytes), textfmt.Plural(c.Lines, "line")), strings.Join(c.Markers, ", ")}
		if len(c.Named) > 0 {
			parts = append(parts, "also "+strings.Join(c.Named, ", "))
		}
		add("chat", parts...)
	}
	licence := g.License
	if g.LicenseLink != "" {
		licence = strings.TrimSpace(licence + " " + g.LicenseLink)
	}
	add("licence", licence)
	add("url", g.URL)
	add("repository", g.RepoURL)
	add("source", g.SourceURL, g.SourceRepoURL)
	add("quantiser", g.QuantizedBy)
	return rows
}

// specialOrder lists special token names: bos, eos, then the others in name order.
func specialOrder(ids map[string]uint64) []string {
	var out, rest []string
	for _, name := range []string{"bos", "eos"} {
		if _, ok := ids[name]; ok {
			out = append(out, name)
		}
	}
	for name := range ids {
		if name != "bos" && name != "eos" {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// writeGGUFText writes the GGUF rows of the text card; with opt.Full the chat template follows whole.
func writeGGUFText(b *bufio.Writer, g *card.GGUF, opt WriteOptions, row func(label, format string, args ...any)) {
	for _, r := range ggufRows(g) {
		aside := ""
		switch {
		case r[0] == "types":
			aside = opt.Palette.Dim("  (share of tensor bytes)")
		case r[0] == "chat" && !opt.Full && opt.asks("Full", "%s") != "":
			aside = opt.Palette.Dim(opt.asks("Full", "  (%s shows it)"))
		}
		row(r[0], "%s%s", textfmt.Escape(r[1]), aside)
		if r[0] == "chat" && opt.Full {
			for _, line := range strings.Split(g.ChatTemplate.Text, "\n") {
				fmt.Fprintf(b, "    %s %s\n", opt.Palette.Dim("│"), textfmt.Escape(line))
			}
		}
	}
}

// percent is a share as a whole percentage; a share that rounds to 0 but is not 0 is "<1%".
func percent(share float64) string {
	p := math.Round(share * 100)
	if p == 0 && share > 0 {
		return "<1%"
	}
	return strconv.FormatFloat(p, 'f', 0, 64) + "%"
}

// countText is a Count as the card shows it: a number, or the per-layer range.
func countText(c *card.Count) string {
	switch {
	case c == nil:
		return ""
	case c.PerLayer == nil:
		return textfmt.Thousands(c.N)
	case len(c.PerLayer) == 0:
		return "none per layer"
	}
	lo, hi := c.PerLayer[0], c.PerLayer[0]
	for _, n := range c.PerLayer {
		lo, hi = min(lo, n), max(hi, n)
	}
	if lo == hi {
		return textfmt.Thousands(lo) + " per layer"
	}
	return textfmt.Thousands(lo) + "–" + textfmt.Thousands(hi) + " per layer"
}

// counted is a number (as text) and a word, plural unless the number is 1.
func counted(n, word string) string {
	if n == "1" {
		return n + " " + word
	}
	return n + " " + word + "s"
}

// named is "label value", or "" for no value.
func named(label, v string) string {
	if v == "" {
		return ""
	}
	return label + " " + v
}

// floatText is a float as short as it reads exactly: 500,000, 1e-05, 0.5.
func floatText(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		sign := ""
		if x < 0 {
			sign = "-"
		}
		return sign + textfmt.Thousands(uint64(math.Abs(x)))
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
