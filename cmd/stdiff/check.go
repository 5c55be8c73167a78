package main

import (
	"errors"

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
	Error          string        `json:"error,omitempty"`
	Fixed          *fixJSON      `json:"fixed,omitempty"`
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
				files = append(files, checkFileJSON{Path: path, Error: err.Error(), Findings: []findingJSON{}})
				continue
			case res.Changed > 0:
				fixed = &res
			}
		}
		m, err := readModel(path)
		if err != nil {
			if !c.Quiet {
				o.readFailed(err)
			}
			status = exitTrouble
			files = append(files, checkFileJSON{Path: path, Error: err.Error(), Findings: []findingJSON{}})
			continue
		}
		if !m.Valid() && status == exitOK {
			status = exitFound
		}
		fj := checkFileJSON{Path: path, Valid: m.Valid(), Findings: findingsJSON(m.Findings)}
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
		o.writeJSON(map[string]any{"schema": "stdiff.check/v1", "files": files})
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
	if m.Valid() {
		o.printf("%s: %s (%d tensors, header %s bytes)\n", name, o.paint(green, "OK"), len(m.Tensors), thousands(m.HeaderLen))
	} else {
		o.printf("%s: %s: %s: %s\n", name, o.paint(red, "INVALID"), m.RefErr.Kind, esc(m.RefErr.Message))
	}
	o.printFindings(m.Findings, "  ")
}

// readModel opens a local file and reads its header.
func readModel(path string) (*canon.Model, error) {
	src, err := canon.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return canon.Read(src)
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
