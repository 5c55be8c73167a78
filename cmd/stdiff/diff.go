package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/canon/values"
	"github.com/stdiff/stdiff/diff"
	"github.com/stdiff/stdiff/diff/pattern"
)

type diffCmd struct {
	AsFiles        bool     `name:"as-files" help:"Read each model named as the one file it is: a shard without its set (as check --as-files does)."`
	HeaderOnly     bool     `help:"Compare headers only (structure and metadata): read no tensor byte."`
	Content        bool     `help:"Also read the tensor bytes of remote models (local ones are compared by value unless --header-only)."`
	Atol           float64  `help:"Absolute tolerance: a tensor whose values all have |a−b| ≤ atol + rtol·|b| is equal within tolerance." placeholder:"X"`
	Rtol           float64  `help:"Relative tolerance (see --atol)." placeholder:"Y"`
	EqualNaN       bool     `name:"equal-nan" help:"Count NaN as equal to NaN (with --atol/--rtol)."`
	FailOn         []string `help:"Exit 1 only when one of these occurs: added, removed, renamed, dtype, shape, data, values, metadata, nan, companion (a file beside the tensors of a folder model: config.json, tokenizer, chat template…) (default: any difference); a changed reference verdict (verdict) always counts unless the list has -verdict, and -NAME leaves NAME out." placeholder:"LIST" sep:"none"`
	Full           bool     `help:"List every tensor instead of folding alike changes into one line."`
	IgnoreMetadata bool     `help:"Compare tensors only."`
	MetadataOnly   bool     `help:"Compare metadata only."`
	IgnoreKey      []string `help:"Leave out metadata keys matching PATTERN (glob; repeatable; one that matches nothing is an error)." placeholder:"PATTERN"`
	IgnoreVolatile bool     `help:"Leave out keys that change on every training run: session ids, timestamps, commit and weight hashes, __spacer."`
	Tensor         []string `help:"Compare only tensors whose names match PATTERN (glob; repeatable; one that matches nothing is an error)." placeholder:"PATTERN"`
	Xet            bool     `help:"Also say how much of B is made of A's chunks under the Hugging Face Hub's chunker: what an upload of B after A would not send (both local files, each read whole once more)."`
	Render         bool     `help:"Render both sides of a changed chat template on a fixed conversation (system, user, assistant, user; generation prompt), sandboxed, and diff the prompts: what the model will now see."`
	Quiet          bool     `short:"q" help:"Print nothing; exit status only (0 identical, 1 different); stops at the first difference."`
	Output         string   `short:"o" help:"Write the report to FILE (whole or not at all: a temporary file renamed over FILE) instead of standard output." placeholder:"FILE" type:"string"`
	A              string   `arg:"" name:"A" help:"The old model." type:"string"`
	B              string   `arg:"" name:"B" help:"The new model." type:"string"`
}

// Validate refuses a --fail-on name that is no category (kong calls it after parsing: a usage error).
func (c *diffCmd) Validate() error {
	if _, err := diff.ParseCategories(c.FailOn); err != nil {
		return fmt.Errorf("--fail-on: %w", err)
	}
	return nil
}

func (c *diffCmd) run(o *out) int {
	if c.IgnoreMetadata && c.MetadataOnly {
		o.errorf("use one of them", "--ignore-metadata and --metadata-only leave nothing to compare")
		return exitTrouble
	}
	o.src.Snapshots = true // a snapshot stands for its model
	o.src.OneFile = c.AsFiles
	paths, sides, errs := []string{c.A, c.B}, make([]*source.Opened, 2), make([]error, 2)
	_ = pool.Run(o.ctx, 2, 2, func(_ context.Context, i int) error { // both headers at once; A's error first
		sides[i], errs[i] = o.open(paths[i])
		return nil
	})
	for i, s := range sides {
		if s == nil {
			continue
		}
		defer s.Close()
		if m := s.Model; m.HeaderParsed && !m.Valid() && !c.Quiet {
			o.errorf("`stdiff check "+textfmt.Escape(paths[i])+"` says what is wrong", "%s: warning: the reference reader rejects this file (%s); comparing what could be read", textfmt.Escape(paths[i]), m.RefErr.Kind)
		}
	}
	if err := cmp.Or(errs[0], errs[1], o.ctx.Err()); err != nil {
		o.readFailed(err)
		return exitTrouble
	}
	failOn, _ := diff.ParseCategories(c.FailOn) // Validate checked the names
	opt := diff.Options{IgnoreMetadata: c.IgnoreMetadata, MetadataOnly: c.MetadataOnly, IgnoreKeys: c.IgnoreKey,
		IgnoreVolatile: c.IgnoreVolatile, Tensors: c.Tensor, HeaderOnly: c.HeaderOnly, Content: c.Content, FailOn: failOn,
		Tolerance: values.Tolerance{Atol: c.Atol, Rtol: c.Rtol, EqualNaN: c.EqualNaN}, Quick: c.Quiet, Xet: c.Xet,
		RenderTemplates: c.Render}
	stop := func() {}
	if !c.HeaderOnly && !c.MetadataOnly {
		opt.Progress, stop = o.bytesProgress("reading "+c.A+" and "+c.B, sides[0].Model.DataLen()+sides[1].Model.DataLen())
	}
	r, err := diff.Models(o.ctx, sides[0], sides[1], opt)
	var pe *pattern.Error
	switch stop(); {
	case errors.As(err, &pe):
		lists := "`stdiff inspect --full " + textfmt.Escape(c.A) + "` lists them"
		if pe.Option == "IgnoreKeys" {
			lists = "`stdiff inspect " + textfmt.Escape(c.A) + "` lists them"
		}
		o.errorf(pe.Hint(lists), "%s %s %s", optionFlags[pe.Option], textfmt.Escape(strconv.Quote(pe.Pattern)), pe.Problem())
		return exitTrouble
	case err != nil:
		o.readFailed(err)
		return exitTrouble
	}
	return write(o, r, c.Quiet, r.Outcome(),
		withOptions(diff.Write, diff.WriteOptions{Format: o.format, Palette: o.pal, Full: c.Full, Flags: cliFlags})) // the notes name its flags
}
