package check

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/loadcode"
	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// WriteOptions say how Write writes a report: its format, and how the text looks.
type WriteOptions struct {
	// Format is the form: text (the zero value), JSON, JSONL (a record per model), Markdown or HTML.
	Format textfmt.Format
	// Palette colours the verdict and the severities when its On is set.
	Palette textfmt.Palette
	// Full lists every finding kept; otherwise past the first FoldedFindings of a code the text says
	// how many more there are.
	Full bool
	// Flags names the options of the caller's users; a fixable finding's hint then says how to ask
	// for the repair (Options.Fix), as "run `stdiff check --fix` to …".
	Flags textfmt.Flags
}

// FoldedFindings is how many findings of one code the text shows unless WriteOptions.Full is set.
const FoldedFindings = 3

// Write writes the report in opt.Format. Text is for a terminal: a verdict line per model that could
// be read, its findings indented below; models that could not be read are left out: their errors are
// the caller's to show (File.Err, File.FixErr). Markdown is a table of each model's verdict and its
// findings; JSON the report as indented JSON; JSONL one compact record per model (its record in the
// JSON, after "schema": textfmt.WriteRecords); HTML one page with per model its verdict and every
// finding kept (severity, code, byte offset, message, hint).
func Write(w io.Writer, r *Report, opt WriteOptions) error {
	switch opt.Format {
	case textfmt.JSON:
		return textfmt.WriteJSON(w, r)
	case textfmt.JSONL:
		return writeJSONL(w, r)
	case textfmt.Markdown:
		return writeMarkdown(w, r)
	case textfmt.HTML:
		return writeHTML(w, r)
	}
	return writeText(w, r, opt)
}

// writeText writes the report for a terminal (Write).
func writeText(w io.Writer, r *Report, opt WriteOptions) error {
	b := bufio.NewWriter(w)
	p := opt.Palette
	for i := range r.Files {
		f := &r.Files[i]
		if f.Err != nil || f.Error != "" {
			continue
		}
		name := textfmt.Escape(f.Name)
		if f.Fixed != nil {
			fmt.Fprintf(b, "%s: fixed: %d NUL padding bytes (file bytes %d to %d) are now spaces; no tensor byte changed\n",
				name, f.Fixed.Bytes, f.Fixed.Start, f.Fixed.End-1)
		}
		switch {
		case f.Valid && f.Shards > 0 && !HasError(f.Findings):
			fmt.Fprintf(b, "%s: %s (%d tensors in %s)\n", name, p.Green("OK"), f.TensorCount, textfmt.Plural(f.Shards, "shard"))
		case f.Valid && f.Shards > 0:
			fmt.Fprintf(b, "%s: %s: every shard is valid, but the set is not\n", name, p.Red("INVALID"))
		case f.Valid && unsafeLoad(f.Findings): // chat templates, Hydra targets, Python operators
			fmt.Fprintf(b, "%s: %s: strict readers load it, but loading or serving it runs code beyond the weights\n", name, p.Red("UNSAFE"))
		case f.Valid && HasError(f.Findings): // what check --values found
			fmt.Fprintf(b, "%s: %s: strict readers load it, but its values are broken\n", name, p.Red("BAD VALUES"))
		case f.Valid && f.Format == canon.FormatONNX:
			fmt.Fprintf(b, "%s: %s (%s, ONNX)\n", name, p.Green("OK"), textfmt.Plural(f.TensorCount, "tensor"))
		case f.Valid && (f.Format == canon.FormatPyTorch || f.Format == canon.FormatNumPy):
			fmt.Fprintf(b, "%s: %s (%s, %s)\n", name, p.Green("OK"), textfmt.Plural(f.TensorCount, "tensor"), f.Format)
		case f.Valid:
			fmt.Fprintf(b, "%s: %s (%s, header %s bytes)\n", name, p.Green("OK"), textfmt.Plural(f.TensorCount, "tensor"), textfmt.Thousands(f.HeaderLen))
		case f.ReferenceError != nil:
			fmt.Fprintf(b, "%s: %s: %s: %s\n", name, p.Red("INVALID"), f.ReferenceError.Kind, textfmt.Escape(f.ReferenceError.Message))
		default:
			fmt.Fprintf(b, "%s: %s\n", name, p.Red("INVALID"))
		}
		WriteFindings(b, f.Findings, f.FindingCounts, "  ", opt)
	}
	return b.Flush()
}

// WriteFindings writes findings as indented lines of text, as Write's text does and whatever
// opt.Format: severity, code, offset, message, and the hint below (a hint once, below the first
// finding it is for): the findings block of every report that lists findings in its text. Unless opt.Full is set, past the first
// FoldedFindings of a code it writes "… and N more CODE"
// instead; counts (per code, as File.FindingCounts) also covers findings not in fs, which that line
// counts too.
func WriteFindings(w io.Writer, fs []finding.Finding, counts map[string]int, indent string, opt WriteOptions) error {
	b := bufio.NewWriter(w)
	limit := FoldedFindings
	kept := map[string]int{}
	for _, f := range fs {
		kept[f.Code]++
	}
	shown := map[string]int{}
	hinted := map[string]bool{} // a hint is said once, after the first finding it is for
	for _, f := range fs {
		if !opt.Full && shown[f.Code] == limit {
			continue
		}
		shown[f.Code]++
		sev := string(f.Severity)
		switch f.Severity {
		case finding.SevError:
			sev = opt.Palette.Red(sev)
		case finding.SevWarning:
			sev = opt.Palette.Yellow(sev)
		default:
			sev = opt.Palette.Cyan(sev)
		}
		fmt.Fprintf(b, "%s%s %s%s: %s\n", indent, sev, f.Code, at(f.Offset), textfmt.Escape(f.Message))
		if f.Hint != "" && !hinted[f.Hint] {
			hinted[f.Hint] = true
			fmt.Fprintf(b, "%s  hint: %s\n", indent, textfmt.Escape(hintOf(f, opt.Flags)))
		}
		last := kept[f.Code]
		if !opt.Full {
			last = min(last, limit)
		}
		if n := max(counts[f.Code], kept[f.Code]) - shown[f.Code]; shown[f.Code] == last && n > 0 {
			fmt.Fprintf(b, "%s… and %s more %s\n", indent, textfmt.Thousands(uint64(n)), f.Code)
		}
	}
	return b.Flush()
}

// at is " at byte N", or "" for a finding about the whole file.
func at(offset int64) string {
	if offset < 0 {
		return ""
	}
	return fmt.Sprintf(" at byte %d", offset)
}

// FindingMarkdown is a finding on one line of Markdown: severity in bold, code, offset, message.
func FindingMarkdown(f finding.Finding) string {
	return fmt.Sprintf("**%s** %s%s: %s", markdown.Text(string(f.Severity)), markdown.Code(f.Code), at(f.Offset), markdown.Text(f.Message))
}

// writeMarkdown writes the report as a table: each model's verdict and its findings.
func writeMarkdown(w io.Writer, r *Report) error {
	b := bufio.NewWriter(w)
	b.WriteString("| file | verdict | findings |\n|---|---|---|\n")
	for _, f := range r.Files {
		verdict := "valid"
		switch {
		case f.Error != "":
			verdict = "unreadable: " + markdown.Text(f.Error)
		case f.ReferenceError != nil:
			verdict = "**invalid** (" + markdown.Text(string(f.ReferenceError.Kind)) + ")"
		}
		found := make([]string, len(f.Findings))
		for i, fd := range f.Findings {
			found[i] = FindingMarkdown(fd)
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", markdown.Text(f.Path), verdict, strings.Join(found, "<br>"))
	}
	return b.Flush()
}

// writeJSONL writes one compact JSON record per model: the fields of its record in the JSON, after
// "schema" (textfmt.WriteRecords).
func writeJSONL(w io.Writer, r *Report) error {
	records := make([]any, len(r.Files))
	for i := range r.Files {
		records[i] = &r.Files[i]
	}
	return textfmt.WriteRecords(w, r.Schema, records...)
}

// hintOf is f's hint, preceded by the way to ask for the repair when f is fixable and flags name it.
func hintOf(f finding.Finding, flags textfmt.Flags) string {
	if fix := flags.Of("Fix"); f.Fixable && fix != "" {
		return "run `stdiff check " + fix + "` to " + f.Hint
	}
	return f.Hint
}

// unsafeLoad reports whether an error among fs is about code a loader runs (package loadcode).
func unsafeLoad(fs []finding.Finding) bool {
	for _, f := range fs {
		if f.Severity == finding.SevError && loadcode.Known(f.Code) {
			return true
		}
	}
	return false
}
