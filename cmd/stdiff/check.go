package main

import (
	"errors"
	"io"

	"github.com/stdiff/stdiff/canon/check"
	"github.com/stdiff/stdiff/canon/textfmt"
)

type checkCmd struct {
	Fix   bool     `help:"Repair NUL-padded headers in place (padding becomes spaces; N and tensor bytes stay). Other defects are refused."`
	Full  bool     `help:"List every finding (text shows the first 3 of a code, then how many more)."`
	Quiet bool     `short:"q" help:"Print no report; exit status only (errors still go to stderr)."`
	Files []string `arg:"" name:"FILE" help:"Model files to check." type:"string"`
}

func (c *checkCmd) run(o *out) int {
	r := check.Run(o.ctx, c.Files, check.Options{Source: o.src, Fix: c.Fix})
	for _, f := range r.Files {
		o.failed(f.FixErr)
		o.failed(f.Err)
	}
	if !c.Quiet && o.ctx.Err() == nil && !writeFormatted(o, r, formatWriters[*check.Report]{
		text: func(w io.Writer, r *check.Report) error {
			return check.WriteText(w, r, check.TextOptions{Palette: o.pal, Full: c.Full})
		},
		markdown: check.WriteMarkdown, json: check.WriteJSON, jsonl: check.WriteJSONL}) {
		return exitTrouble
	}
	return int(r.Outcome())
}

// failed says on stderr why a model could not be read or repaired, with a hint when there is one to
// give; nothing for a nil err.
func (o *out) failed(err error) {
	var fe *check.FixError
	switch {
	case err == nil:
	case errors.As(err, &fe):
		o.errorf(fe.Hint, "%s", textfmt.Escape(fe.Error()))
	default:
		o.readFailed(err)
	}
}

// formatWriters are a report's writers, one for each --format.
type formatWriters[R any] struct {
	text, markdown, json, jsonl func(io.Writer, R) error
}

// writeFormatted writes r with the writer o.format picks; when writing fails it says so and returns
// false.
func writeFormatted[R any](o *out, r R, w formatWriters[R]) bool {
	write := map[string]func(io.Writer, R) error{"markdown": w.markdown, "json": w.json, "jsonl": w.jsonl}[o.format]
	if write == nil {
		write = w.text
	}
	if err := write(o.w, r); err != nil {
		o.errorf("", "writing the report: %v", err)
		return false
	}
	return true
}
