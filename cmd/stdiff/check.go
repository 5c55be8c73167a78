package main

import (
	"errors"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/check"
	"github.com/stdiff/stdiff/canon/values"
)

type checkCmd struct {
	Fix     bool     `help:"Repair NUL-padded headers in place (padding becomes spaces; N and tensor bytes stay). Other defects are refused."`
	Values  bool     `help:"Also read every tensor's values: NaN and Inf (errors), weights all zero, constant or subnormal (warnings); statistics per tensor in JSON."`
	Full    bool     `help:"List every finding (text shows the first 3 of a code, then how many more)."`
	Quiet   bool     `short:"q" help:"Print no report; exit status only (errors still go to stderr)."`
	Output  string   `short:"o" help:"Write the report to FILE (whole or not at all: a temporary file renamed over FILE) instead of standard output." placeholder:"FILE" type:"string"`
	AsFiles bool     `help:"Check each FILE as the one file it is: a shard without its set (as the pre-commit hook checks staged files)."`
	Files   []string `arg:"" name:"FILE" help:"Model files to check." type:"string"`
}

func (c *checkCmd) run(o *out) int {
	opt := check.Options{Source: o.src, Fix: c.Fix, AsFiles: c.AsFiles, Flags: cliFlags}
	if c.Values {
		opt.Values = check.ScanValues(values.Options{})
	}
	r := check.Run(o.ctx, c.Files, opt)
	for _, f := range r.Files {
		o.readFailed(f.FixErr)
		o.readFailed(f.Err)
	}
	return write(o, r, c.Quiet, r.Outcome(),
		withOptions(check.Write, check.WriteOptions{Format: o.format, Palette: o.pal, Full: c.Full, Flags: cliFlags}))
}

// fixHint is what to do about a repair --fix refused, in stdiff's words (check.FixError carries the
// particulars: a URL, the NUL-padded files of a model of several, the format).
func fixHint(fe *check.FixError) string {
	switch notLocal := errors.Is(fe, check.ErrNotLocal); {
	case notLocal && fe.Remote:
		return "download the file, then repair it: stdiff check --fix FILE"
	case notLocal && !fe.Listed:
		return "fix the files one by one: stdiff check --fix FILE"
	case notLocal && len(fe.Padded) == 0:
		return "none of its files is NUL-padded: check it without --fix"
	case notLocal:
		return "repair its NUL-padded files one by one: stdiff check --fix " + strings.Join(fe.Padded, " ")
	case fe.Format == canon.FormatGGUF:
		return "--fix repairs nothing in a GGUF file: check it without --fix; a file llama.cpp rejects must be converted or quantised again (convert_hf_to_gguf.py, llama-quantize) or fetched again"
	}
	return fe.Hint
}
