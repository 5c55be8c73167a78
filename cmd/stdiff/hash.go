package main

import (
	"io"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/hash"
)

type hashCmd struct {
	Content   bool     `help:"Also compute the content ID (reads every tensor byte, in parallel)."`
	All       bool     `help:"Also compute the ecosystem hashes (SHA256, AutoV1/V2/V3, BLAKE3, CRC32) in one pass, and verify hashes embedded in the metadata."`
	Canonical bool     `help:"Print the exact canonical bytes the structure ID hashes (with --content, the content form)."`
	Check     string   `help:"Verify the hashes in MANIFEST (as written by stdiff hash) against the files it names." placeholder:"MANIFEST" type:"existingfile"`
	Quiet     bool     `short:"q" help:"Print no report, only errors (with --check: only the files that FAILED); the exit status answers."`
	Files     []string `arg:"" optional:"" name:"FILE" help:"Model files." type:"string"`
}

func (c *hashCmd) run(o *out) int {
	if (c.Check == "") == (len(c.Files) == 0) {
		if c.Check != "" {
			o.errorf("name the files in the manifest, not on the command line", "--check takes a manifest and no FILE arguments")
		} else {
			o.errorf("try `stdiff hash model.safetensors`", "hash needs at least one FILE (or --check MANIFEST)")
		}
		return exitTrouble
	}
	prog := &progress{} // on a terminal, for the model whose bytes are being read
	opt := hash.Options{Content: c.Content, All: c.All, Canonical: c.Canonical, Source: o.src,
		Reading:  func(name string, total int64) { prog.stop(); prog = o.progress("hashing "+name, total) },
		Progress: func(n int64) { prog.add(n) }}
	if c.Check != "" {
		return c.check(o, opt, func() { prog.stop() })
	}
	rep := hash.Run(o.ctx, c.Files, opt)
	prog.stop()
	for i := range rep.Files { // first, as sha256sum and dupes do
		if f := &rep.Files[i]; f.Err != nil {
			o.readFailed(f.Err)
		} else {
			for _, d := range f.Diagnostics(o.format == "text" && !c.Canonical) {
				o.errorf(d.Hint, "%s", d.Message)
			}
		}
	}
	var err error
	if c.Canonical && !c.Quiet {
		err = hash.WriteCanonical(o.w, rep)
	} else if !c.Quiet {
		err = write(o, rep, hash.TextOptions{Palette: o.pal}, hash.WriteText, hash.WriteJSON, hash.WriteJSONL, hash.WriteMarkdown)
	}
	return wrote(o, err, rep.Outcome())
}

// check verifies a manifest (see hash.Verify); with -q, text shows only the files that FAILED.
func (c *hashCmd) check(o *out, opt hash.Options, done func()) int {
	rep, err := hash.VerifyManifest(o.ctx, c.Check, opt)
	done()
	if err != nil {
		o.readFailed(err)
		return exitTrouble
	}
	for i := range rep.Files {
		if e := rep.Files[i].Err; e != nil {
			o.readFailed(e)
		}
	}
	if !c.Quiet || o.format == "text" {
		err = write(o, rep, hash.TextOptions{Palette: o.pal, OnlyFailed: c.Quiet}, hash.WriteVerifyText, hash.WriteVerifyJSON, hash.WriteVerifyJSONL, hash.WriteVerifyMarkdown)
	}
	if rep.Outcome() == canon.Found && o.format != "json" && o.format != "jsonl" {
		o.errorf("", "%d of %d files did not match", rep.Failed(), len(rep.Files))
	}
	return wrote(o, err, rep.Outcome())
}

// write writes a report with the writer of the format asked for.
func write[R any](o *out, r R, opt hash.TextOptions, text func(io.Writer, R, hash.TextOptions) error, json, jsonl, md func(io.Writer, R) error) error {
	switch o.format {
	case "json":
		return json(o.w, r)
	case "jsonl":
		return jsonl(o.w, r)
	case "markdown":
		return md(o.w, r)
	}
	return text(o.w, r, opt)
}

// wrote is the exit status of a report written (or not: err) that came to outcome.
func wrote(o *out, err error, outcome canon.Outcome) int {
	if err != nil {
		o.errorf("", "writing the report: %v", err)
		return exitTrouble
	}
	return int(outcome)
}

// contentDigests and headerError serve diff.go until it calls package hash itself.
func contentDigests(o *out, opened *source.Opened, name string) ([][32]byte, error) {
	prog := o.progress("reading "+name, opened.Model.DataLen())
	defer prog.stop()
	return hash.Digests(o.ctx, opened, hash.Options{Progress: prog.add})
}

var headerError = hash.HeaderError

// manyFiles: hashing many files collects garbage (see memoryPolicy): each file's buffers are garbage once read.
func (c *hashCmd) manyFiles() bool { return len(c.Files) > 1 || c.Check != "" }
