package main

import (
	"sync"

	"github.com/stdiff/stdiff/diff"
)

type diffCmd struct {
	Content        bool     `help:"Also compare tensor bytes (reads both files; confirms renames)."`
	All            bool     `help:"List every tensor instead of folding alike changes into one line."`
	IgnoreMetadata bool     `help:"Compare tensors only."`
	MetadataOnly   bool     `help:"Compare metadata only."`
	IgnoreKey      []string `help:"Leave out metadata keys matching PATTERN (glob; repeatable)." placeholder:"PATTERN"`
	IgnoreVolatile bool     `help:"Leave out keys that change on every training run: session ids, timestamps, commit and weight hashes, __spacer."`
	Tensor         []string `help:"Compare only tensors whose names match PATTERN (glob; repeatable)." placeholder:"PATTERN"`
	Quiet          bool     `short:"q" help:"Print nothing; exit status only (0 identical, 1 different)."`
	A              string   `arg:"" name:"A" help:"The old model." type:"string"`
	B              string   `arg:"" name:"B" help:"The new model." type:"string"`
}

func (c *diffCmd) run(o *out) int {
	if c.IgnoreMetadata && c.MetadataOnly {
		o.errorf("use one of them", "--ignore-metadata and --metadata-only leave nothing to compare")
		return exitTrouble
	}
	// Both sides are read at once: header parsing and byte hashing use both cores.
	sides := make([]diff.Side, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, path := range []string{c.A, c.B} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sides[i], errs[i] = c.load(o, path)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			o.readFailed(err)
			return exitTrouble
		}
	}
	r := diff.Compare(sides[0], sides[1], diff.Options{IgnoreMetadata: c.IgnoreMetadata, MetadataOnly: c.MetadataOnly,
		IgnoreKeys: c.IgnoreKey, IgnoreVolatile: c.IgnoreVolatile, Tensors: c.Tensor})
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
		diff.Text(o.w, r, diff.TextOptions{Color: o.color, All: c.All})
	}
	return status
}

// load reads one side: its header, and with --content its tensor digests.
func (c *diffCmd) load(o *out, path string) (diff.Side, error) {
	o2, err := openModel(o.ctx, path)
	if err != nil {
		return diff.Side{}, err
	}
	defer o2.Close()
	m := o2.Model
	if !m.HeaderParsed {
		return diff.Side{}, headerError(m)
	}
	if !m.Valid() && !c.Quiet {
		o.errorf("`stdiff check "+esc(path)+"` says what is wrong", "%s: warning: the reference reader rejects this file (%s); comparing what could be read", esc(path), m.RefErr.Kind)
	}
	side := diff.Side{Model: m}
	if c.Content && !c.MetadataOnly {
		if side.Digests, err = contentDigests(o, o2, path); err != nil {
			return diff.Side{}, err
		}
	}
	return side, nil
}
