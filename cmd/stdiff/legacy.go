package main

// What check, inspect, hash and dupes used before they became a library call and a writer: remove
// each once nothing uses it.

import (
	"errors"
	"fmt"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// printf prints to stdout.
func (o *out) printf(format string, args ...any) { fmt.Fprintf(o.w, format, args...) }

// filesJSON is the envelope of commands that report on several files: the schema first.
type filesJSON struct {
	Schema string `json:"schema"`
	Files  any    `json:"files"`
}

// writeJSON prints v as indented JSON, streamed (see textfmt.WriteJSON).
func (o *out) writeJSON(v any) {
	if err := textfmt.WriteJSON(o.w, v); err != nil {
		o.errorf("", "writing JSON: %v", err)
	}
}

// findingJSON is a finding as scripts see it.
type findingJSON struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Offset   *int64 `json:"offset"`
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
	RefKind  string `json:"reference_kind,omitempty"`
	Fixable  bool   `json:"fixable,omitempty"`
}

func findingsJSON(fs []canon.Finding) []findingJSON {
	out := make([]findingJSON, 0, len(fs))
	for _, f := range fs {
		j := findingJSON{Code: f.Code, Severity: string(f.Severity), Message: f.Message, Hint: f.Hint,
			RefKind: string(f.RefKind), Fixable: f.Fixable}
		if f.Offset >= 0 {
			off := f.Offset
			j.Offset = &off
		}
		out = append(out, j)
	}
	return out
}

// findingsPerCode is how many findings of one code text output shows before "… and N more".
const findingsPerCode = 3

// printFindings prints findings as indented lines: severity, code, offset, message, hint. Past the first
// few of a code it prints "… and N more CODE" instead, counting the findings omitted from fs too.
func (o *out) printFindings(fs []canon.Finding, omitted map[string]int, indent string) {
	counts := canon.CountFindings(fs, omitted)
	shown := map[string]int{}
	for _, f := range fs {
		if shown[f.Code] == findingsPerCode {
			continue
		}
		shown[f.Code]++
		sev := string(f.Severity)
		switch f.Severity {
		case canon.SevError:
			sev = o.pal.Red(sev)
		case canon.SevWarning:
			sev = o.pal.Yellow(sev)
		default:
			sev = o.pal.Cyan(sev)
		}
		where := ""
		if f.Offset >= 0 {
			where = fmt.Sprintf(" at byte %d", f.Offset)
		}
		o.printf("%s%s %s%s: %s\n", indent, sev, f.Code, where, textfmt.Escape(f.Message))
		if f.Hint != "" {
			o.printf("%s  hint: %s\n", indent, textfmt.Escape(f.Hint))
		}
		if n := counts[f.Code] - findingsPerCode; shown[f.Code] == findingsPerCode && n > 0 {
			o.printf("%s… and %s more %s\n", indent, textfmt.Thousands(uint64(n)), f.Code)
		}
	}
}

// errorText is an error as one line, for tables and JSON.
func errorText(err error) string {
	var re *canon.ReadError
	if errors.As(err, &re) {
		return re.Reason()
	}
	return err.Error()
}
