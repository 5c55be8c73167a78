package main

import (
	"github.com/stdiff/stdiff/canon/snapshot"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/hash"
)

type snapshotCmd struct {
	Output string `short:"o" help:"Write the snapshot to FILE (whole or not at all) instead of standard output." placeholder:"FILE" type:"string"`
	Quiet  bool   `short:"q" help:"Print no warning (errors still go to stderr); the snapshot is written all the same."`
	Model  string `arg:"" name:"MODEL" help:"The model to record." type:"string"`
}

func (c *snapshotCmd) run(o *out) int {
	add, stop := func(int64) {}, func() {}
	s, files, err := hash.Snapshot(o.ctx, c.Model, c.Output, hash.Options{Source: o.src, Progress: func(n int64) { add(n) },
		Reading: func(name string, total int64) { add, stop = o.bytesProgress("reading "+name, total) }})
	if stop(); err != nil {
		o.readFailed(err)
		return exitTrouble
	}
	if !s.Verdict.Valid && !c.Quiet {
		o.errorf("`stdiff check "+textfmt.Escape(c.Model)+"` says what is wrong", "%s: warning: the reference reader rejects this model (%s); the snapshot records it", textfmt.Escape(c.Model), s.Verdict.Kind)
	}
	if c.Output != "" {
		err = snapshot.WriteFile(o.ctx, c.Output, s, files...)
		o.readFailed(err)
	} else if err = snapshot.Write(o.w, s); err != nil {
		o.written = err
	}
	return map[bool]int{true: exitOK, false: exitTrouble}[err == nil]
}
