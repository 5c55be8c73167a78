package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/stdiff/stdiff/canon"
	"os"
	"slices"
	"strings"

	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/hash/dupes"
	"github.com/stdiff/stdiff/hash/dupes/act"
	"github.com/stdiff/stdiff/hash/dupes/dupecache"
	"github.com/stdiff/stdiff/hash/dupes/render"
)

type dupesCmd struct {
	Level          string   `help:"The loosest copies reported: bytes (identical files), content (also the same tensors, other metadata or layout), renamed (also the same tensors under other names), run (also the epochs one training run saved) or structure (also the same architecture, other weights); or derived (renamed, and also each model with the copies derived from it: rounded to F16, BF16 or FP8, a subset of its tensors such as an EMA-pruned checkpoint, the same tensors in another container; --delete deletes those copies, always keeping the original whatever --keep says, after reading both again; --link leaves them)." enum:"bytes,content,renamed,run,structure,derived" default:"renamed"`
	Keep           string   `help:"Which copy of a group to keep: most-info (the most metadata keys and sidecars, then the copy under the PATH given first, then the deeper path — Loras/characters/x over downloads/x — then the oldest), newest, oldest or path:PREFIX (one under PREFIX). Whatever the rule, a safe file is kept over a pickle torch refuses and safetensors over another format; a diffusers pipeline folder over a DDUF file of its very files unless the rule keeps the DDUF file; then, where the rule leaves a tie, the first PATH's copy, then the deeper path. Each group says why its copy is kept." default:"most-info" placeholder:"RULE"`
	PrintDeletable bool     `help:"Print the files --delete would delete, one per line, for xargs." xor:"act"`
	Null           bool     `short:"0" help:"With --print-deletable: end each path with a NUL byte (xargs -0)."`
	Link           bool     `help:"Replace each byte-identical copy with a hard link to the copy kept (same filesystem only)." xor:"act"`
	Delete         bool     `help:"Delete every copy but the one kept (checked again first; its sidecars move to the one kept). Asks on a terminal, else needs --yes." xor:"act"`
	Yes            bool     `help:"Delete without asking."`
	DryRun         bool     `help:"With --delete or --link: check everything, change nothing, say what would be done (alone: nothing to do)."`
	Full           bool     `help:"Shorten nothing: every metadata key a copy differs in, every model a note names."`
	Quiet          bool     `short:"q" help:"Write no report: the exit status answers (errors still go to stderr)."`
	Output         string   `short:"o" help:"Write the report to FILE (whole or not at all: a temporary file renamed over FILE) instead of standard output." placeholder:"FILE" type:"string"`
	NoCache        bool     `help:"Neither read nor write the cache of what earlier scans learnt."`
	ClearCache     bool     `help:"Delete the cache of what earlier scans learnt first."`
	Paths          []string `arg:"" optional:"" name:"PATH" help:"Folders (searched recursively) and files." type:"string"`
}

// dupesKnobs name what dupes' reports let people choose by the flags that choose it.
var dupesKnobs = render.Knobs{render.KnobKeepPath: "the --keep path", render.KnobDelete: "--delete"}

func (c *dupesCmd) run(o *out) int {
	rule, err := dupes.ParseKeepRule(c.Keep)
	if err != nil {
		o.errorf("see `stdiff help dupes`", "%s", textfmt.Escape(err.Error()))
		return exitTrouble
	}
	opt := dupes.Options{Level: dupes.Level(c.Level), Keep: rule, Source: o.src}
	derived := opt.Level == dupes.LevelDerived // asked for by name: --delete deletes derived copies, keeping their originals
	path, err := dupecache.CachePath(os.Getenv("STDIFF_CACHE_DIR"))
	if err != nil && (!c.NoCache || c.ClearCache) {
		o.errorf("", "no cache folder: %v (set STDIFF_CACHE_DIR)", err)
		return exitTrouble
	}
	if c.ClearCache {
		if err := dupecache.ClearCache(path); err != nil {
			o.errorf("", "clearing the cache: %v", err)
			return exitTrouble
		}
		if len(c.Paths) == 0 {
			o.errorf("", "cache cleared (%s)", textfmt.Escape(path))
			return exitOK
		}
	}
	if !c.NoCache {
		if opt.Cache, err = dupecache.OpenCache(path); err != nil { // one line; the scan goes on
			var ce *dupecache.CacheError
			errors.As(err, &ce)
			o.errorf(ce.Hint(), "%s", textfmt.Escape(err.Error()))
		}
	}
	if len(c.Paths) == 0 {
		o.errorf("try `stdiff dupes ~/loras`", "dupes needs at least one PATH")
		return exitTrouble
	}
	var stage string
	var n, total int
	var read int64
	mu, stop := o.progress(func() string {
		return fmt.Sprintf("%s: %d of %d, %s of tensor data read", stage, n, total, textfmt.Bytes(uint64(read)))
	})
	opt.Progress = func(s string, k, t int, b int64) { mu.Lock(); stage, n, total, read = s, k, t, b; mu.Unlock() }
	rep, err := dupes.Find(o.ctx, c.Paths, opt)
	stop()
	if err != nil {
		o.readFailed(err)
		return exitTrouble
	}
	for _, f := range rep.Errors {
		o.readFailed(f.Err)
	}
	if opt.Cache != nil {
		if err := opt.Cache.Save(o.ctx); err != nil {
			o.errorf("run with --no-cache to do without", "saving the cache %s: %v", textfmt.Escape(opt.Cache.Path()), err)
		}
	}
	switch {
	case c.PrintDeletable: // what --delete would delete, after the same checks
		plan, err := act.Act(o.ctx, rep, act.Options{Delete: true, DryRun: true, Derived: derived, Source: o.src})
		if err != nil {
			o.errorf("", "%s", textfmt.Escape(err.Error()))
			return exitTrouble
		}
		for _, a := range plan.Actions {
			if a.Error != "" { // a check failed: the copy is not listed, and the user is told why
				o.errorf("", "%s: %s", textfmt.Escape(a.Path), textfmt.Escape(a.Error))
			}
		}
		return write(o, plan, c.Quiet, max(rep.Outcome(), plan.Outcome()),
			withOptions(act.Write, act.WriteOptions{Deletable: true, Null: c.Null}))
	case !c.Delete && !c.Link:
		return write(o, rep, c.Quiet, rep.Outcome(),
			withOptions(render.Write, render.WriteOptions{Format: o.format, Palette: o.pal, Full: c.Full, Knobs: dupesKnobs}))
	case c.Delete && !c.Yes && !c.DryRun: // ask, on a terminal
		if !isTerminal(os.Stdin) {
			o.errorf("add --yes to delete without asking, or --dry-run to see what would be done", "--delete asks first, and stdin is not a terminal")
			return exitTrouble
		}
		plan, err := act.Act(o.ctx, rep, act.Options{Delete: true, DryRun: true, Derived: derived, Source: o.src})
		if err != nil {
			o.errorf("", "%s", textfmt.Escape(err.Error()))
			return exitTrouble
		}
		render.Write(o.w, rep, render.WriteOptions{Palette: o.pal, Full: c.Full, Knobs: dupesKnobs}) // as text, whatever the format
		o.w.Flush()
		fmt.Fprintf(o.errw, "delete %s, freeing %s? [y/N] ", textfmt.Plural(len(plan.Deletable()), "file"), textfmt.Bytes(uint64(plan.Freed)))
		if answer, _ := bufio.NewReader(os.Stdin).ReadString('\n'); !slices.Contains([]string{"y", "yes"}, strings.ToLower(strings.TrimSpace(answer))) {
			return int(rep.Outcome())
		}
	}
	done, err := act.Act(o.ctx, rep, act.Options{Delete: c.Delete, Link: c.Link, DryRun: c.DryRun, Derived: derived, Source: o.src})
	if err != nil {
		o.errorf("", "%s", textfmt.Escape(err.Error()))
		return exitTrouble
	}
	ctx := o.ctx
	o.ctx = context.WithoutCancel(ctx) // what was done is written, even after Ctrl-C
	defer func() { o.ctx = ctx }()
	outcome := done.Outcome()
	if rep.Outcome() == canon.Trouble { // a path the scan could not read: its copies were not acted on
		outcome = canon.Trouble
	}
	return write(o, done, c.Quiet, outcome, withOptions(act.Write, act.WriteOptions{Format: o.format, Palette: o.pal}))
}
