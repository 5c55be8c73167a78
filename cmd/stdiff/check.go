package main

import (
	"github.com/stdiff/stdiff/canon/check"
	"github.com/stdiff/stdiff/canon/values"
)

type checkCmd struct {
	Fix     bool     `help:"Repair NUL-padded headers in place (padding becomes spaces; N and tensor bytes stay). Other defects are refused."`
	Values  bool     `help:"Also read every tensor's values: NaN and Inf (errors), weights all zero, constant or subnormal (warnings); statistics per tensor in JSON."`
	Full    bool     `help:"List every finding (text shows the first 3 of a code, then how many more)."`
	Quiet   bool     `short:"q" help:"Print no report; exit status only (errors still go to stderr)."`
	AsFiles bool     `help:"Check each FILE as the one file it is: a shard without its set (as the pre-commit hook checks staged files)."`
	Files   []string `arg:"" name:"FILE" help:"Model files to check." type:"string"`
}

func (c *checkCmd) run(o *out) int {
	opt := check.Options{Source: o.src, Fix: c.Fix, AsFiles: c.AsFiles}
	if c.Values {
		opt.Values = check.ScanValues(values.Options{})
	}
	r := check.Run(o.ctx, c.Files, opt)
	for _, f := range r.Files {
		o.readFailed(f.FixErr)
		o.readFailed(f.Err)
	}
	return write(o, r, c.Quiet, r.Outcome(), writers[*check.Report]{text: withOptions(check.WriteText, check.TextOptions{Palette: o.pal, Full: c.Full}),
		json: check.WriteJSON, jsonl: check.WriteJSONL, markdown: check.WriteMarkdown, html: check.WriteHTML})
}
