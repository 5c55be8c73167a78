package main

import (
	"github.com/stdiff/stdiff/canon"
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
