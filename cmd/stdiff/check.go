package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
)

type checkCmd struct {
	Fix   bool     `help:"Repair NUL-padded headers in place (padding becomes spaces; N and tensor bytes stay). Other defects are refused."`
	Quiet bool     `short:"q" help:"Print nothing; exit status only."`
	Files []string `arg:"" name:"FILE" help:"Model files to check." type:"string"`
}

type refErrJSON struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Offset  int64  `json:"offset"`
}

// refErrorJSON is the reference's error as scripts see it (nil for a valid file).
func refErrorJSON(e *canon.RefError) *refErrJSON {
	if e == nil {
		return nil
	}
	return &refErrJSON{Kind: string(e.Kind), Message: e.Message, Offset: e.Offset}
}

type checkFileJSON struct {
	Path           string        `json:"path"`
	Valid          bool          `json:"valid"`
	ReferenceError *refErrJSON   `json:"reference_error"`
	Findings       []findingJSON `json:"findings"`
	// FindingCounts counts the findings of each code in full: findings lists at most
	// canon.MaxFindingsPerCode of one code.
	FindingCounts map[string]int `json:"finding_counts"`
	Error         string         `json:"error,omitempty"`
	Fixed         *fixJSON       `json:"fixed,omitempty"`
}

type fixJSON struct {
	Bytes int   `json:"bytes"`
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

func (c *checkCmd) run(o *out) int {
	status := exitOK
	var files []checkFileJSON
	for _, path := range c.Files {
		var fixed *canon.FixResult
		if c.Fix && !isLocalFile(path) {
			if !c.Quiet {
				o.errorf("fix the shard files one by one: stdiff check --fix model-00001-of-00002.safetensors", "%s: --fix repairs one local file, not a folder, an index or a URL", textfmt.Escape(path))
			}
			status = exitTrouble
			continue
		}
		if c.Fix {
			res, err := canon.FixNulPadding(o.ctx, path)
			switch {
			case errors.Is(err, canon.ErrNotFixable):
				if !c.Quiet {
					o.errorf("only NUL padding can be repaired in place; re-save the file with a safetensors writer", "%s", textfmt.Escape(err.Error()))
				}
			case err != nil:
				if !c.Quiet {
					o.readFailed(err)
				}
				status = exitTrouble
				files = append(files, checkFileJSON{Path: path, Error: err.Error(), Findings: []findingJSON{}, FindingCounts: map[string]int{}})
				continue
			case res.Changed > 0:
				fixed = &res
			}
		}
		opened, err := o.open(path)
		var m *canon.Model
		if err == nil {
			m = opened.Model
			opened.Close()
		}
		if err != nil {
			if !c.Quiet {
				o.readFailed(err)
			}
			status = exitTrouble
			files = append(files, checkFileJSON{Path: path, Error: err.Error(), Findings: []findingJSON{}, FindingCounts: map[string]int{}})
			continue
		}
		if (!m.Valid() || m.HasErrors()) && status == exitOK {
			status = exitFound
		}
		fj := checkFileJSON{Path: path, Valid: m.Valid(), ReferenceError: refErrorJSON(m.RefErr), Findings: findingsJSON(m.Findings), FindingCounts: m.FindingCounts()}
		if fixed != nil {
			fj.Fixed = &fixJSON{Bytes: fixed.Changed, Start: fixed.Start, End: fixed.End}
		}
		files = append(files, fj)
		if o.format == "text" && !c.Quiet {
			c.printText(o, m, fixed)
		}
	}
	if c.Quiet {
		return status
	}
	switch o.format {
	case "json":
		o.writeJSON(filesJSON{Schema: "stdiff.check/v1", Files: files})
	case "markdown":
		o.printf("| file | verdict | findings |\n|---|---|---|\n")
		for _, f := range files {
			verdict := "valid"
			switch {
			case f.Error != "":
				verdict = "unreadable: " + markdown.Text(f.Error)
			case f.ReferenceError != nil:
				verdict = "**invalid** (" + markdown.Text(f.ReferenceError.Kind) + ")"
			}
			found := make([]string, len(f.Findings))
			for i, fd := range f.Findings {
				found[i] = mdFinding(fd)
			}
			o.printf("| %s | %s | %s |\n", markdown.Text(f.Path), verdict, strings.Join(found, "<br>"))
		}
	}
	return status
}

func (c *checkCmd) printText(o *out, m *canon.Model, fixed *canon.FixResult) {
	name := textfmt.Escape(m.Name)
	if fixed != nil {
		o.printf("%s: fixed: %d NUL padding bytes (file bytes %d to %d) are now spaces; no tensor byte changed\n",
			name, fixed.Changed, fixed.Start, fixed.End-1)
	}
	switch {
	case m.Valid() && m.Shards != nil && !m.HasErrors():
		o.printf("%s: %s (%d tensors in %s)\n", name, o.pal.Green("OK"), len(m.Tensors), textfmt.Plural(len(m.Shards), "shard"))
	case m.Valid() && m.Shards != nil:
		o.printf("%s: %s: every shard is valid, but the set is not\n", name, o.pal.Red("INVALID"))
	case m.Valid():
		o.printf("%s: %s (%s, header %s bytes)\n", name, o.pal.Green("OK"), textfmt.Plural(len(m.Tensors), "tensor"), textfmt.Thousands(m.HeaderLen))
	default:
		o.printf("%s: %s: %s: %s\n", name, o.pal.Red("INVALID"), m.RefErr.Kind, textfmt.Escape(m.RefErr.Message))
	}
	o.printFindings(m.Findings, m.Omitted, "  ")
}

// isLocalFile reports whether spec names one local file (a shard counts), not a folder, an index or a URL.
func isLocalFile(spec string) bool {
	if source.IsRemote(spec) {
		return false
	}
	st, err := os.Stat(spec)
	if err != nil {
		return true // a missing file is reported by what follows
	}
	return !st.IsDir() && !strings.HasSuffix(spec, ".index.json")
}

// mdFinding is a finding on one Markdown line: severity in bold, code, offset, message.
func mdFinding(f findingJSON) string {
	where := ""
	if f.Offset != nil {
		where = fmt.Sprintf(" at byte %d", *f.Offset)
	}
	return fmt.Sprintf("**%s** %s%s: %s", markdown.Text(f.Severity), markdown.Code(f.Code), where, markdown.Text(f.Message))
}
