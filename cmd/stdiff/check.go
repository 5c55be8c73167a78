package main

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/stdiff/stdiff/canon"
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
				o.errorf("fix the shard files one by one: stdiff check --fix model-00001-of-00002.safetensors", "%s: --fix repairs one local file, not a folder, an index or a URL", esc(path))
			}
			status = exitTrouble
			continue
		}
		if c.Fix {
			res, err := canon.FixNulPadding(path)
			switch {
			case errors.Is(err, canon.ErrNotFixable):
				if !c.Quiet {
					o.errorf("only NUL padding can be repaired in place; re-save the file with a safetensors writer", "%s", esc(err.Error()))
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
		opened, err := openModel(path)
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
		fj := checkFileJSON{Path: path, Valid: m.Valid(), Findings: findingsJSON(m.Findings), FindingCounts: m.FindingCounts()}
		if m.RefErr != nil {
			fj.ReferenceError = &refErrJSON{Kind: string(m.RefErr.Kind), Message: m.RefErr.Message, Offset: m.RefErr.Offset}
		}
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
				verdict = "unreadable: " + f.Error
			case f.ReferenceError != nil:
				verdict = "**invalid** (" + f.ReferenceError.Kind + ")"
			}
			codes := ""
			for i, fd := range f.Findings {
				if i > 0 {
					codes += ", "
				}
				codes += "`" + fd.Code + "`"
			}
			o.printf("| %s | %s | %s |\n", mdEsc(f.Path), mdEsc(verdict), codes)
		}
	}
	return status
}

func (c *checkCmd) printText(o *out, m *canon.Model, fixed *canon.FixResult) {
	name := esc(m.Name)
	if fixed != nil {
		o.printf("%s: fixed: %d NUL padding bytes (file bytes %d to %d) are now spaces; no tensor byte changed\n",
			name, fixed.Changed, fixed.Start, fixed.End-1)
	}
	switch {
	case m.Valid() && m.Shards != nil && !m.HasErrors():
		o.printf("%s: %s (%d tensors in %s)\n", name, o.paint(green, "OK"), len(m.Tensors), plural(len(m.Shards), "shard"))
	case m.Valid() && m.Shards != nil:
		o.printf("%s: %s: every shard is valid, but the set is not\n", name, o.paint(red, "INVALID"))
	case m.Valid():
		o.printf("%s: %s (%s, header %s bytes)\n", name, o.paint(green, "OK"), plural(len(m.Tensors), "tensor"), thousands(m.HeaderLen))
	default:
		o.printf("%s: %s: %s: %s\n", name, o.paint(red, "INVALID"), m.RefErr.Kind, esc(m.RefErr.Message))
	}
	o.printFindings(m.Findings, m.Omitted, "  ")
}

// openModel opens a model named on the command line: a file, a shard set, a URL (headers only).
func openModel(spec string) (*canon.Opened, error) {
	return canon.OpenModel(context.Background(), spec)
}

// isLocalFile reports whether spec names one local file (a shard counts), not a folder, an index or a URL.
func isLocalFile(spec string) bool {
	if canon.IsRemote(spec) {
		return false
	}
	st, err := os.Stat(spec)
	if err != nil {
		return true // a missing file is reported by what follows
	}
	return !st.IsDir() && !strings.HasSuffix(spec, ".index.json")
}

func mdEsc(s string) string {
	s = esc(s)
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '|', '`', '*', '_', '[', ']', '<', '>':
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}
