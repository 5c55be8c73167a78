package main

import (
	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
)

// What hash.go and dupes.go still use from the old check.go and short.go. Issue 11 moves both
// commands into their library packages; delete this file once nothing uses it.

type refErrJSON struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Offset  int64  `json:"offset"`
}

// refErrorJSON is the reference's error as scripts see it (nil for a valid file).
func refErrorJSON(e *canon.RefError) *refErrJSON {
	if e == nil {
		return nil
	}
	return &refErrJSON{Kind: string(e.Kind), Message: e.Message, Offset: e.Offset}
}

// walk expands folders into the models under them (see source.Walk), reporting what it cannot read.
func (o *out) walk(roots []string) ([]string, int) {
	paths, errs := source.Walk(o.ctx, roots, source.WalkOptions{})
	status := exitOK
	for _, err := range errs {
		o.readFailed(err)
		status = exitTrouble
	}
	return paths, status
}
