package main

import (
	"bytes"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// TestLockedHint: a repair refused because another process holds the file's lock (canon.ErrLocked,
// no hint from the library) is worded here, with the command that repairs.
func TestLockedHint(t *testing.T) {
	var stdout, stderr bytes.Buffer
	o := &out{ctx: t.Context(), w: textfmt.NewSyncWriter(&stdout), errw: &stderr, format: "text"}
	o.readFailed(&canon.ReadError{Name: "m.safetensors", Op: "lock", Err: canon.ErrLocked})
	want := "stdiff: m.safetensors: locked by another process\n" +
		"hint: another `stdiff check --fix` (or another program) is working on the file; try again when it is done\n"
	if got := stderr.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
