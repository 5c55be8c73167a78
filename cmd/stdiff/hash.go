package main

import "github.com/stdiff/stdiff/hash"

type hashCmd struct {
	Content   bool     `help:"Also compute the content ID (reads every tensor byte, in parallel)."`
	All       bool     `help:"Also compute the ecosystem hashes (SHA256, AutoV1/V2/V3, BLAKE3, CRC32) in one pass, and verify hashes embedded in the metadata."`
	Canonical bool     `help:"Print the exact canonical bytes the structure ID hashes (with --content, the content form)."`
	Check     string   `help:"Verify the hashes in MANIFEST (as stdiff hash, sha256sum, sha256sum --tag or b3sum write them) against the files it names." placeholder:"MANIFEST" type:"existingfile"`
	Kind      string   `help:"With --check: what a bare hash line (<hex>  <path>) holds: sha256 (sha256sum's) or blake3 (b3sum's)." enum:"sha256,blake3" default:"sha256"`
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
	add, stop := func(int64) {}, func() {} // on a terminal, for the model whose bytes are being read
	opt := hash.Options{Content: c.Content, All: c.All, Canonical: c.Canonical, Source: o.src,
		Reading:  func(name string, total int64) { stop(); add, stop = o.bytesProgress("hashing "+name, total) },
		Progress: func(n int64) { add(n) }, BareKind: c.Kind}
	if c.Check != "" {
		return c.check(o, opt, func() { stop() })
	}
	rep := hash.Run(o.ctx, c.Files, opt)
	stop()
	for i := range rep.Files { // first, as sha256sum and dupes do
		if f := &rep.Files[i]; f.Err != nil {
			o.readFailed(f.Err)
		} else {
			for _, d := range f.Diagnostics(o.format == "text" && !c.Canonical) {
				o.errorf(d.Hint, "%s", d.Message)
			}
		}
	}
	ws := writers[*hash.Report]{json: hash.WriteJSON, jsonl: hash.WriteJSONL, markdown: hash.WriteMarkdown,
		text: withOptions(hash.WriteText, hash.TextOptions{Palette: o.pal})}
	if c.Canonical {
		ws = writers[*hash.Report]{text: hash.WriteCanonical} // whatever the format
	}
	return write(o, rep, c.Quiet, rep.Outcome(), ws)
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
	if s := rep.Summary(); s != "" && o.format != "json" && o.format != "jsonl" {
		defer o.errorf("", "%s", s) // after the report, as sha256sum's warnings
	}
	return write(o, rep, c.Quiet && o.format != "text", rep.Outcome(), writers[*hash.VerifyReport]{
		text: withOptions(hash.WriteVerifyText, hash.TextOptions{Palette: o.pal, OnlyFailed: c.Quiet}), json: hash.WriteVerifyJSON, jsonl: hash.WriteVerifyJSONL, markdown: hash.WriteVerifyMarkdown})
}

// manyFiles: hashing many files collects garbage (see memoryPolicy): each file's buffers are garbage once read.
func (c *hashCmd) manyFiles() bool { return len(c.Files) > 1 || c.Check != "" }
