package main

import (
	"context"
	"errors"
	"strconv"

	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/diff"
)

type diffCmd struct {
	Content        bool     `help:"Also compare tensor bytes (reads both files; confirms renames)."`
	All            bool     `help:"List every tensor instead of folding alike changes into one line."`
	IgnoreMetadata bool     `help:"Compare tensors only."`
	MetadataOnly   bool     `help:"Compare metadata only."`
	IgnoreKey      []string `help:"Leave out metadata keys matching PATTERN (glob; repeatable; one that matches nothing is an error)." placeholder:"PATTERN"`
	IgnoreVolatile bool     `help:"Leave out keys that change on every training run: session ids, timestamps, commit and weight hashes, __spacer."`
	Tensor         []string `help:"Compare only tensors whose names match PATTERN (glob; repeatable; one that matches nothing is an error)." placeholder:"PATTERN"`
	Quiet          bool     `short:"q" help:"Print nothing; exit status only (0 identical, 1 different)."`
	A              string   `arg:"" name:"A" help:"The old model." type:"string"`
	B              string   `arg:"" name:"B" help:"The new model." type:"string"`
}

func (c *diffCmd) run(o *out) int {
	if c.IgnoreMetadata && c.MetadataOnly {
		o.errorf("use one of them", "--ignore-metadata and --metadata-only leave nothing to compare")
		return exitTrouble
	}
	opt := diff.Options{IgnoreMetadata: c.IgnoreMetadata, MetadataOnly: c.MetadataOnly,
		IgnoreKeys: c.IgnoreKey, IgnoreVolatile: c.IgnoreVolatile, Tensors: c.Tensor}
	// Both sides are read at once: header parsing and byte hashing use both cores.
	opened := make([]*source.Opened, 2)
	defer func() {
		for _, op := range opened {
			if op != nil {
				op.Close()
			}
		}
	}()
	if !c.each(o, func(i int, path string) (err error) {
		opened[i], err = c.open(o, path)
		return err
	}) {
		return exitTrouble
	}
	// A filter that matches nothing is a typo, not "identical": refuse it before reading any tensor byte.
	if err := opt.CheckPatterns(opened[0].Model, opened[1].Model); err != nil {
		c.patternFailed(o, err)
		return exitTrouble
	}
	sides := []diff.Side{{Model: opened[0].Model}, {Model: opened[1].Model}}
	if c.Content && !c.MetadataOnly && !c.each(o, func(i int, path string) (err error) {
		sides[i].Digests, err = contentDigests(o, opened[i], path)
		return err
	}) {
		return exitTrouble
	}
	r := diff.Compare(sides[0], sides[1], opt)
	status := exitOK
	if !r.Identical {
		status = exitFound
	}
	if c.Quiet {
		return status
	}
	switch o.format {
	case "json":
		o.writeJSON(r)
	case "markdown":
		diff.Markdown(o.w, r)
	default:
		diff.Text(o.w, r, diff.TextOptions{Palette: o.pal, All: c.All})
	}
	return status
}

// each runs f on both sides at once and reports the first error (A's before B's); it returns false after
// an error.
func (c *diffCmd) each(o *out, f func(i int, path string) error) bool {
	errs := make([]error, 2)
	paths := []string{c.A, c.B}
	err := pool.Run(o.ctx, 2, 2, func(_ context.Context, i int) error {
		errs[i] = f(i, paths[i])
		return nil
	})
	for _, err := range errs {
		if err != nil {
			o.readFailed(err)
			return false
		}
	}
	return err == nil // else interrupted before a side ran: run says so
}

// open reads one side's header.
func (c *diffCmd) open(o *out, path string) (*source.Opened, error) {
	opened, err := o.open(path)
	if err != nil {
		return nil, err
	}
	m := opened.Model
	if !m.HeaderParsed {
		opened.Close()
		return nil, headerError(m)
	}
	if !m.Valid() && !c.Quiet {
		o.errorf("`stdiff check "+textfmt.Escape(path)+"` says what is wrong", "%s: warning: the reference reader rejects this file (%s); comparing what could be read", textfmt.Escape(path), m.RefErr.Kind)
	}
	return opened, nil
}

// patternFailed reports a --tensor or --ignore-key pattern that filters nothing.
func (c *diffCmd) patternFailed(o *out, err error) {
	var pe *diff.PatternError
	if !errors.As(err, &pe) {
		o.errorf("", "%v", err)
		return
	}
	flag, what, list := "--tensor", "tensor", "`stdiff inspect --tensors "+textfmt.Escape(c.A)+"` lists them"
	if pe.Option == "IgnoreKeys" {
		flag, what, list = "--ignore-key", "metadata key", "`stdiff inspect "+textfmt.Escape(c.A)+"` lists them"
	}
	if errors.Is(pe.Err, diff.ErrNoMatch) {
		o.errorf("a pattern matches whole names (* any run of characters, ? one character); "+list,
			"%s %s matches no %s in either model", flag, textfmt.Escape(strconv.Quote(pe.Pattern)), what)
		return
	}
	o.errorf(`patterns are globs: * any run of characters, ? one character, [abc] or [a-z] one of them; \ quotes the next character`,
		"%s %s is not a valid pattern: %v", flag, textfmt.Escape(strconv.Quote(pe.Pattern)), pe.Err)
}
