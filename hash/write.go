package hash

import (
	"fmt"
	"io"
	"strings"

	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// WriteOptions say how Write, WriteVerify and WriteHubMatch write a report: its format, and how the
// text looks.
type WriteOptions struct {
	// Format is the form: text (the zero value), JSON, JSONL or Markdown (a hub match has no table:
	// Markdown writes its text). No report of this package has a page: HTML writes the text.
	Format textfmt.Format
	// Canonical writes, whatever the format, each file's canonical form (File.Canonical, kept with
	// Options.Canonical), one after another (Write only).
	Canonical bool
	// Palette colours OK and FAILED (the zero Palette: no colour).
	Palette textfmt.Palette
	// Full is accepted for symmetry with the other commands' writers: hash output folds nothing.
	Full bool
	// OnlyFailed leaves out the files a check found OK (as sha256sum --quiet does).
	OnlyFailed bool
}

// writer remembers the first write error, so that writers can write line after line and check once.
type writer struct {
	w   io.Writer
	err error
}

func (w *writer) printf(format string, args ...any) {
	if w.err == nil {
		_, w.err = fmt.Fprintf(w.w, format, args...)
	}
}

// Write writes a report in opt.Format (or its canonical forms, with opt.Canonical). Text is a manifest
// (see ParseManifest): a `<kind>:<hash>  <path>` line per hash each file has, in the order of Kinds,
// which `stdiff hash --check` reads back; a file that could not be read has no lines. JSON is one
// indented object: {schema, files: [...]}. JSONL is one compact record per file, the same fields as
// the file's record in the JSON, each with "schema". Markdown is a table: a row per file that could be
// read, with its structure ID and, as asked, its content ID and ecosystem hashes ("—" where it has
// none).
func Write(w io.Writer, r *Report, opt WriteOptions) error {
	switch {
	case opt.Canonical:
		return writeCanonical(w, r)
	case opt.Format == textfmt.JSON:
		return textfmt.WriteJSON(w, r)
	case opt.Format == textfmt.JSONL:
		return writeJSONL(w, r)
	case opt.Format == textfmt.Markdown:
		return writeMarkdown(w, r)
	}
	return writeText(w, r)
}

// writeText writes a report as a manifest (Write).
func writeText(w io.Writer, r *Report) error {
	out := &writer{w: w}
	for i := range r.Files {
		f := &r.Files[i]
		for _, kind := range Kinds {
			if v, _ := f.Hash(kind); v != "" {
				out.printf("%s", FormatLine(kind, v, f.Path))
			}
		}
	}
	return out.err
}

// writeCanonical writes each file's canonical form, one after another (WriteOptions.Canonical).
func writeCanonical(w io.Writer, r *Report) error {
	for i := range r.Files {
		if _, err := w.Write(r.Files[i].Canonical); err != nil {
			return err
		}
	}
	return nil
}

// writeJSONL writes a report as JSON Lines (Write).
func writeJSONL(w io.Writer, r *Report) error {
	records := make([]any, len(r.Files))
	for i := range r.Files {
		records[i] = r.Files[i].record()
	}
	return textfmt.WriteRecords(w, Schema, records...)
}

// writeMarkdown writes a report as a Markdown table (Write).
func writeMarkdown(w io.Writer, r *Report) error {
	out := &writer{w: w}
	head := false
	for i := range r.Files {
		f := &r.Files[i]
		if f.Err != nil {
			continue
		}
		kinds := []string{"st1"}
		if f.bytesOnly {
			kinds = nil
		}
		if f.ContentID != nil {
			kinds = append(kinds, "ct1")
		}
		if f.Ecosystem != nil {
			for _, k := range Kinds[2:] {
				if k != "xet" && k != "cf1" {
					kinds = append(kinds, k)
				}
			}
		}
		if f.Xet != nil {
			kinds = append(kinds, "xet")
		}
		if f.CompanionsID != "" {
			kinds = append(kinds, "cf1")
		}
		if !head {
			head = true
			names := []string{"file"}
			for _, k := range kinds {
				names = append(names, KindName(k))
			}
			out.printf("| %s |\n|%s\n", strings.Join(names, " | "), strings.Repeat("---|", len(names)))
		}
		row := []string{markdown.Text(f.Path)}
		for _, k := range kinds {
			v, _ := f.Hash(k)
			switch {
			case v == "":
				v = "—"
			case k == "st1":
				v = markdown.Code(string(f.StructureID))
			case k == "ct1":
				v = markdown.Code(string(*f.ContentID))
			default:
				v = markdown.Code(v)
			}
			row = append(row, v)
		}
		out.printf("| %s |\n", strings.Join(row, " | "))
	}
	return out.err
}

// WriteVerify writes a check (Verify) in opt.Format. Text is what sha256sum -c writes: `<path>: OK`
// (left out with opt.OnlyFailed), `<path>: FAILED (<reason>)`, or `<path>: FAILED open or read` for a
// file that could not be read. JSON is one indented object: {schema, files: [...]}. JSONL is one
// compact record per file, the same fields as the file's record in the JSON, each with "schema".
// Markdown is a table: a row per file, OK or **FAILED** with why.
func WriteVerify(w io.Writer, r *VerifyReport, opt WriteOptions) error {
	switch opt.Format {
	case textfmt.JSON:
		return textfmt.WriteJSON(w, r)
	case textfmt.JSONL:
		return writeVerifyJSONL(w, r)
	case textfmt.Markdown:
		return writeVerifyMarkdown(w, r)
	}
	return writeVerifyText(w, r, opt)
}

// writeVerifyText writes a check as sha256sum -c does (WriteVerify).
func writeVerifyText(w io.Writer, r *VerifyReport, opt WriteOptions) error {
	out := &writer{w: w}
	for i := range r.Files {
		f := &r.Files[i]
		path := textfmt.Escape(f.Path)
		switch {
		case f.Err != nil:
			out.printf("%s: %s open or read\n", path, opt.Palette.Red("FAILED"))
		case !f.OK:
			out.printf("%s: %s (%s)\n", path, opt.Palette.Red("FAILED"), textfmt.Escape(f.Reason))
		case !opt.OnlyFailed:
			out.printf("%s: %s\n", path, opt.Palette.Green("OK"))
		}
	}
	return out.err
}

// writeVerifyJSONL writes a check as JSON Lines (WriteVerify).
func writeVerifyJSONL(w io.Writer, r *VerifyReport) error {
	records := make([]any, len(r.Files))
	for i := range r.Files {
		records[i] = r.Files[i].record()
	}
	return textfmt.WriteRecords(w, VerifySchema, records...)
}

// writeVerifyMarkdown writes a check as a Markdown table (WriteVerify).
func writeVerifyMarkdown(w io.Writer, r *VerifyReport) error {
	out := &writer{w: w}
	out.printf("| file | result |\n|---|---|\n")
	for i := range r.Files {
		f := &r.Files[i]
		verdict := "OK"
		switch {
		case f.Err != nil:
			verdict = "**FAILED** open or read"
		case !f.OK:
			verdict = "**FAILED** (" + markdown.Text(f.Reason) + ")"
		}
		out.printf("| %s | %s |\n", markdown.Text(f.Path), verdict)
	}
	return out.err
}
