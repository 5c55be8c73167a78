package main

import (
	"context"
	"io"
	"path/filepath"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/hash"
	"github.com/stdiff/stdiff/hash/dupes/derived"
)

type inspectCmd struct {
	AsFiles bool     `name:"as-files" help:"Read each model named as the one file it is: a shard without its set (as check --as-files does)."`
	Full    bool     `help:"Fold and shorten nothing: every tensor (text lists the first 10), every metadata value and hash whole, every finding."`
	Short   bool     `help:"One row per file (name, kind, base, rank, size, triggers), as wide as the terminal (COLUMNS when set; 120 columns when piped); folders are searched for .safetensors and .gguf files (and ollama's blobs); a Hugging Face cache's model is listed once, by the snapshot refs/main names."`
	Verify  bool     `help:"Also read the data and verify the hashes embedded in the metadata (sshs_model_hash, modelspec.hash_sha256) and those a .civitai.info records."`
	Quiet   bool     `short:"q" help:"Print no report; exit status only (errors still go to stderr)."`
	Output  string   `short:"o" help:"Write the report to FILE (whole or not at all) instead of standard output; a gallery's images are then referenced relative to FILE." placeholder:"FILE" type:"string"`
	Files   []string `arg:"" name:"PATH" help:"Model files (and with --short, folders)." type:"string"`
}

func (c *inspectCmd) run(o *out) int {
	if c.Output != "" {
		return toFile(o, c.Output, "a report", c.report)
	}
	return c.report(o)
}

// report writes the cards (or the short table) to o.
func (c *inspectCmd) report(o *out) int {
	o.src.Snapshots = !c.Short // a snapshot stands for its model (folders are not searched for them)
	o.src.OneFile = c.AsFiles
	opt := inspect.Options{Source: o.src, Verify: c.Verify, FileHashes: hash.FileHashesOf, Images: o.format == "html",
		Inherit:      func(ctx context.Context, card *inspect.Card, spec string) { derived.Inherit(ctx, card, spec, o.src) },
		InheritShort: func(ctx context.Context, r *inspect.ShortReport) { derived.InheritRows(ctx, r, o.src, 0) }}
	wopt := inspect.WriteOptions{Format: o.format, Palette: o.pal, Full: c.Full, Width: tableWidth(o), Flags: cliFlags, Dir: filepath.Dir(c.Output)}
	if c.Short {
		return c.runShort(o, opt, wopt)
	}
	if !wopt.Full && (o.format == "text" || o.format == "markdown") {
		opt.MaxTensors = inspect.FoldedTensors // all the text shows; Markdown shows none
	}
	status, written := canon.Clean, 0
	for _, spec := range c.Files {
		card, err := inspect.Inspect(o.ctx, spec, opt)
		if err != nil {
			o.readFailed(err)
			status = canon.Trouble
			continue
		}
		status = max(status, card.Outcome())
		if c.Quiet || o.ctx.Err() != nil {
			continue
		}
		if written++; written > 1 && o.format == "text" {
			io.WriteString(o.w, "\n") // a blank line between cards
		}
		if code := write(o, card, false, card.Outcome(), withOptions(inspect.Write, wopt)); code == exitTrouble {
			return code
		}
	}
	return int(status)
}
