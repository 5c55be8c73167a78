package main

import (
	"errors"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/hash"
)

type hashCmd struct {
	AsFiles       bool     `name:"as-files" help:"Read each model named as the one file it is: a shard without its set (as check --as-files does)."`
	Content       bool     `help:"Also compute the content ID (reads every tensor byte, in parallel)."`
	All           bool     `help:"Also compute the ecosystem hashes (SHA256, AutoV1/V2/V3, BLAKE3, CRC32) in one pass and, of a local file, its Xet hash (see --xet), and verify hashes embedded in the metadata. A shard named on its own is hashed as the file it is."`
	Xet           bool     `help:"Also compute each file's Xet hash, the Hugging Face Hub's identity of its bytes (the xetHash of its tree API), and how much of each file after the first is made of the chunks of those before it. Alone, any regular file is read as bytes, a model or not."`
	Canonical     bool     `help:"Print the exact canonical bytes the structure ID hashes (with --content, the content form)."`
	Check         bool     `short:"c" help:"Verify the hashes in the MANIFEST files named (as stdiff hash, sha256sum, sha256sum --tag or b3sum write them) against the files they name. With --xet and an hf://ORG/REPO[@REV] address first: which local files (the FILEs and folders after it) have the bytes of which files of that repository, from the Hub's file list alone (Xet hash, else LFS SHA-256, else git blob ID); nothing is downloaded."`
	Kind          string   `help:"With --check: what a bare hash line (<hex>  <path>) holds: sha256 (sha256sum's) or blake3 (b3sum's)." enum:"sha256,blake3" default:"sha256"`
	Quiet         bool     `short:"q" help:"Print no report, only errors (with --check: only the files that FAILED); the exit status answers."`
	Output        string   `short:"o" help:"Write the report to FILE (whole or not at all: a temporary file renamed over FILE) instead of standard output." placeholder:"FILE" type:"string"`
	Status        bool     `help:"With --check: print nothing but errors, not even what FAILED; the exit status answers."`
	IgnoreMissing bool     `help:"With --check: leave out the files that do not exist (it fails when none is left)."`
	Strict        bool     `help:"With --check: a line that is not a manifest line fails the check. stdiff is always this strict; the flag is accepted for sha256sum's scripts."`
	Files         []string `arg:"" optional:"" name:"FILE" help:"Model files (with --check: manifests)." type:"string"`
}

func (c *hashCmd) run(o *out) int {
	switch {
	case len(c.Files) == 0 && c.Check:
		o.errorf("try `stdiff hash --check SHA256SUMS`", "hash --check needs at least one MANIFEST")
		return exitTrouble
	case len(c.Files) == 0:
		o.errorf("try `stdiff hash model.safetensors`", "hash needs at least one FILE (or --check MANIFEST)")
		return exitTrouble
	case !c.Check && (c.Status || c.IgnoreMissing || c.Strict):
		o.errorf("add --check (-c) to verify a manifest", "--status, --ignore-missing and --strict apply to --check")
		return exitTrouble
	}
	add, stop := func(int64) {}, func() {} // on a terminal, for the model whose bytes are being read
	o.src.OneFile = c.AsFiles
	opt := hash.Options{Content: c.Content, All: c.All, Canonical: c.Canonical, Xet: c.Xet, Source: o.src,
		Reading:  func(name string, total int64) { stop(); add, stop = o.bytesProgress("hashing "+name, total) },
		Progress: func(n int64) { add(n) }, BareKind: c.Kind}
	if c.Check && c.Xet && strings.HasPrefix(c.Files[0], "hf://") {
		return c.hubCheck(o, opt, func() { stop() })
	}
	if c.Check {
		return c.check(o, opt, func() { stop() })
	}
	rep := hash.Run(o.ctx, c.Files, opt)
	stop()
	for i := range rep.Files {
		rep.Files[i].Err = hashWorded(rep.Files[i].Path, rep.Files[i].Err)
	}
	for i := range rep.Files { // first, as sha256sum and dupes do
		if f := &rep.Files[i]; f.Err != nil {
			o.readFailed(f.Err)
		} else {
			for _, d := range f.Diagnostics(o.format == "text" && !c.Canonical) {
				o.errorf(d.Hint, "%s", d.Message)
			}
		}
	}
	return write(o, rep, c.Quiet, rep.Outcome(), withOptions(hash.Write, hash.WriteOptions{Format: o.format, Palette: o.pal, Canonical: c.Canonical}))
}

// check verifies the manifests named (see hash.VerifyManifest), in turn, as one report; with -q, text
// shows only the files that FAILED, and with --status nothing at all.
func (c *hashCmd) check(o *out, opt hash.Options, done func()) int {
	rep := &hash.VerifyReport{Schema: hash.VerifySchema}
	for _, manifest := range c.Files {
		r, err := hash.VerifyManifest(o.ctx, manifest, opt)
		if err != nil {
			done()
			o.readFailed(err)
			return exitTrouble
		}
		rep.Files = append(rep.Files, r.Files...)
	}
	done()
	if c.IgnoreMissing && rep.DropMissing() {
		o.errorf("", "no file was verified: every file the manifest names is missing")
		return exitFound
	}
	for i := range rep.Files {
		if e := rep.Files[i].Err; e != nil {
			o.readFailed(e)
		}
	}
	if s := rep.Summary(); s != "" && o.format != "json" && o.format != "jsonl" && !c.Status {
		defer o.errorf("", "%s", s) // after the report, as sha256sum's warnings
	}
	return write(o, rep, c.Status || (c.Quiet && o.format != "text"), rep.Outcome(),
		withOptions(hash.WriteVerify, hash.WriteOptions{Format: o.format, Palette: o.pal, OnlyFailed: c.Quiet}))
}

// manyFiles: hashing many files collects garbage (see memoryPolicy): each file's buffers are garbage once read.
func (c *hashCmd) manyFiles() bool { return len(c.Files) > 1 || c.Check }

// hashWorded is err with the flag named where the library names what the flag chose (--all).
func hashWorded(path string, err error) error {
	if errors.Is(err, hash.ErrEcosystemOfSet) {
		return &canon.ReadError{Name: path, Err: flagWords{"ecosystem hashes (--all) are hashes of files, and this is a set of shards", err},
			Hint: "hash the shard files one by one, or drop --all"}
	}
	return err
}

// flagWords is an error of the library worded with the flag that caused it.
type flagWords struct {
	words string
	err   error
}

func (e flagWords) Error() string { return e.words }
func (e flagWords) Unwrap() error { return e.err }

// hubCheck says which local files (the FILEs after the hf:// address) equal which files of the
// repository, from the Hub's file list alone (see hash.MatchHub).
func (c *hashCmd) hubCheck(o *out, opt hash.Options, done func()) int {
	if len(c.Files) < 2 {
		done()
		o.errorf("try `stdiff hash --xet --check hf://ORG/REPO DIR`", "hash --xet --check %s needs the local files or folders to match", c.Files[0])
		return exitTrouble
	}
	rep, err := hash.MatchHub(o.ctx, c.Files[0], c.Files[1:], opt)
	done()
	if err != nil {
		o.readFailed(err)
		return exitTrouble
	}
	for _, f := range rep.Files {
		if f.Err != nil {
			o.readFailed(f.Err)
		}
	}
	return write(o, rep, c.Status || (c.Quiet && o.format != "text"), rep.Outcome(),
		withOptions(hash.WriteHubMatch, hash.WriteOptions{Format: o.format, Palette: o.pal, OnlyFailed: c.Quiet}))
}
