package companion

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/diff/linediff"
)

// Heading is the heading of the companion files in a text report.
const Heading = "files beside the tensors"

// maxKeys is the most key changes of one file the text lists; the JSON report has every one.
const maxKeys = 100

// Text renders the changes for a terminal, one line each, indented by two spaces, as dyff does: a
// marker (- removed, + added, ~ changed), the file, and under a changed file its keys (path, old →
// new), a line diff (unchanged runs folded to context lines) or what changed in a tokenizer. Names and
// values from the files are escaped.
func (r *Report) Text(p textfmt.Palette, context int) []string {
	if !r.Differs() {
		return nil
	}
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for _, f := range r.Removed {
		add("  %s %s  %s", p.Red("-"), textfmt.Escape(f.Path), p.Red(textfmt.Bytes(uint64(f.Size))))
	}
	for _, f := range r.Added {
		add("  %s %s  %s", p.Green("+"), textfmt.Escape(f.Path), p.Green(textfmt.Bytes(uint64(f.Size))))
	}
	for i := range r.Changed {
		c := &r.Changed[i]
		add("  %s %s", p.Yellow("~"), textfmt.Escape(c.Path))
		switch {
		case c.Tokenizer != nil:
			for _, l := range tokenizerText(c.Tokenizer) {
				add("      %s", l)
			}
			if t := c.Tokenizer; len(t.Settings) > 0 {
				add("      settings:")
				out = append(out, keyLines(p, t.Settings, context, "        ")...)
			}
		case c.Keys != nil:
			out = append(out, keyLines(p, c.Keys, context, "      ")...)
		case c.Lines != nil:
			out = append(out, lineText(p, c.Lines, context, "      ")...)
		case c.Kind == "json" && c.Detail == "":
			add("      %s", p.Dim("the same JSON value, formatted otherwise"))
		default:
			add("      %s", p.Dim(textfmt.Escape(c.Detail)))
		}
	}
	return out
}

// keyLines renders key changes: path, then old → new, or a line diff under it.
func keyLines(p textfmt.Palette, keys []KeyChange, context int, ind string) []string {
	width := 0
	for _, k := range keys {
		width = max(width, min(len(k.Path), 40))
	}
	var out []string
	for i, k := range keys {
		if i == maxKeys {
			out = append(out, ind+p.Dim(fmt.Sprintf("… and %d more keys", len(keys)-maxKeys)))
			break
		}
		path := textfmt.Escape(k.Path)
		if path == "" {
			path = "(the whole file)"
		}
		switch {
		case k.Change == KeyAdded:
			out = append(out, fmt.Sprintf("%s%s %-*s  %s", ind, p.Green("+"), width, path, p.Green(short(k.New))))
		case k.Change == KeyRemoved:
			out = append(out, fmt.Sprintf("%s%s %-*s  %s", ind, p.Red("-"), width, path, p.Red(short(k.Old))))
		case k.Lines != nil:
			out = append(out, fmt.Sprintf("%s%s %-*s  %s", ind, p.Yellow("~"), width, path, p.Dim("text diff")))
			out = append(out, lineText(p, k.Lines, context, ind+"    ")...)
		default:
			out = append(out, fmt.Sprintf("%s%s %-*s  %s → %s", ind, p.Yellow("~"), width, path, p.Red(short(k.Old)), p.Green(short(k.New))))
		}
	}
	return out
}

// short is a JSON value on one line, cut when long.
func short(v string) string {
	r := []rune(v)
	if len(r) > shortValue {
		return textfmt.Escape(string(r[:shortValue])) + fmt.Sprintf("… (%d bytes)", len(v))
	}
	return textfmt.Escape(v)
}

// lineText renders a line diff, unchanged runs folded.
func lineText(p textfmt.Palette, lines []linediff.Line, context int, ind string) []string {
	var out []string
	for _, l := range linediff.Fold(lines, context) {
		text := textfmt.Escape(l.Text)
		switch l.Op {
		case "-":
			out = append(out, ind+p.Red("- "+text))
		case "+":
			out = append(out, ind+p.Green("+ "+text))
		case "…":
			out = append(out, ind+p.Dim("… "+text))
		default:
			out = append(out, ind+"  "+text)
		}
	}
	return out
}

// tokenizerText says in words what changed in a tokenizer.json, a line each.
func tokenizerText(t *TokenizerChange) []string {
	var out []string
	if t.OldModel != t.NewModel {
		out = append(out, fmt.Sprintf("model %s → %s", textfmt.Escape(t.OldModel), textfmt.Escape(t.NewModel)))
	}
	list := func(what string, l *ListChange, unit string) {
		if l == nil {
			return
		}
		line := fmt.Sprintf("%s %d → %d %s", what, l.Old, l.New, unit)
		if !l.Listed {
			out = append(out, line+" (changed; a snapshot records it by digest: not listed)")
			return
		}
		var parts []string
		if l.AddedCount > 0 {
			parts = append(parts, fmt.Sprintf("%d added (%s)", l.AddedCount, entries(l.Added, l.AddedCount)))
		}
		if l.RemovedCount > 0 {
			parts = append(parts, fmt.Sprintf("%d removed (%s)", l.RemovedCount, entries(l.Removed, l.RemovedCount)))
		}
		if l.ChangedCount > 0 {
			var shown []string
			for _, c := range l.Changed[:min(len(l.Changed), 5)] {
				shown = append(shown, fmt.Sprintf("%s %s → %s", textfmt.Escape(strconv.Quote(c.Token)), textfmt.Escape(c.Old), textfmt.Escape(c.New)))
			}
			if l.ChangedCount > len(shown) {
				shown = append(shown, fmt.Sprintf("… and %d more", l.ChangedCount-len(shown)))
			}
			word := "changed"
			if l.Reordered {
				word = "reordered"
			}
			parts = append(parts, fmt.Sprintf("%d %s (%s)", l.ChangedCount, word, strings.Join(shown, ", ")))
		}
		out = append(out, line+": "+strings.Join(parts, "; "))
	}
	list("vocabulary", t.Vocab, "tokens")
	list("merges", t.Merges, "merges")
	for i, c := range t.AddedTokens {
		if i == 20 {
			out = append(out, fmt.Sprintf("… and %d more added tokens changed", len(t.AddedTokens)-20))
			break
		}
		switch {
		case c.Old == nil:
			out = append(out, fmt.Sprintf("+ added token %d %s%s", c.ID, textfmt.Escape(strconv.Quote(c.New.Content)), special(c.New.Special)))
		case c.New == nil:
			out = append(out, fmt.Sprintf("- added token %d %s%s", c.ID, textfmt.Escape(strconv.Quote(c.Old.Content)), special(c.Old.Special)))
		default:
			out = append(out, fmt.Sprintf("~ added token %d %s%s → %s%s", c.ID, textfmt.Escape(strconv.Quote(c.Old.Content)), special(c.Old.Special),
				textfmt.Escape(strconv.Quote(c.New.Content)), special(c.New.Special)))
		}
	}
	if t.SettingsChanged && len(t.Settings) == 0 {
		out = append(out, "settings changed (a snapshot records them by digest: not listed)")
	}
	return out
}

func special(s bool) string {
	if s {
		return " (special)"
	}
	return ""
}

// entries lists a few entries: "\"<tool>\" 32000, … and 3 more".
func entries(es []Entry, total int) string {
	var shown []string
	for _, e := range es[:min(len(es), 5)] {
		s := textfmt.Escape(strconv.Quote(e.Token))
		if e.Value != "" {
			s += " " + textfmt.Escape(e.Value)
		}
		shown = append(shown, s)
	}
	if total > len(shown) {
		shown = append(shown, fmt.Sprintf("… and %d more", total-len(shown)))
	}
	return strings.Join(shown, ", ")
}

// Summary is the companion files' part of a report's summary line: "files: 1 changed, 3 unchanged",
// or "" when they were not compared.
func (r *Report) Summary() string {
	if r == nil || !r.Compared {
		return ""
	}
	var parts []string
	for _, p := range []struct {
		n    int
		word string
	}{{len(r.Removed), "removed"}, {len(r.Added), "added"}, {len(r.Changed), "changed"}, {r.Unchanged, "unchanged"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.word))
		}
	}
	if len(parts) == 0 {
		return "files: none"
	}
	return "files: " + strings.Join(parts, ", ")
}

// Markdown writes the changes for a pull request comment through p (a printf): a table of the files,
// then each changed file's text rendering in a folded diff block. Names and values are escaped with
// package canon/markdown. A report without changes writes nothing.
func (r *Report) Markdown(p func(string, ...any)) {
	if !r.Differs() {
		return
	}
	p("\n| | %s | change |\n|---|---|---|\n", Heading)
	for _, f := range r.Removed {
		p("| − | %s | removed |\n", markdown.Code(f.Path))
	}
	for _, f := range r.Added {
		p("| + | %s | added |\n", markdown.Code(f.Path))
	}
	for _, f := range r.Changed {
		what := "changed"
		if len(f.Keys) > 0 {
			what = fmt.Sprintf("%d keys changed", len(f.Keys))
		}
		p("| ~ | %s | %s |\n", markdown.Code(f.Path), markdown.Text(what))
	}
	one := &Report{Compared: true}
	for _, f := range r.Changed {
		one.Changed = append(one.Changed[:0], f)
		body := strings.Join(one.Text(textfmt.Palette{}, 2), "\n") + "\n"
		fence := markdown.Fence(body)
		p("\n<details><summary><code>%s</code></summary>\n\n%sdiff\n%s%s\n\n</details>\n", markdown.HTML(f.Path), fence, body, fence)
	}
}
