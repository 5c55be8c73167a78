package main

import (
	"time"

	"github.com/stdiff/stdiff/canon/source"
)

// defaultTimeout bounds, unless --timeout says otherwise, a command that reads only the headers of
// remote models: a header arrives in well under a second, so two minutes means something is wrong.
// Byte work has no overall default (a large model over a slow link takes what it takes); a stalled
// transfer still ends, by the per-read limits of source.HTTPOptions.
const defaultTimeout = 2 * time.Minute

// workload is implemented by commands that can say what they read: the models they name, and
// whether they read their bytes (rather than headers only).
type workload interface {
	work() (models []string, bytes bool)
}

func (c *diffCmd) work() ([]string, bool)    { return []string{c.A, c.B}, c.Content }
func (c *hashCmd) work() ([]string, bool)    { return c.Files, c.Content || c.All || c.Check }
func (c *inspectCmd) work() ([]string, bool) { return c.Files, c.Verify }
func (c *checkCmd) work() ([]string, bool)   { return c.Files, c.Values }
func (c *dupesCmd) work() ([]string, bool)   { return c.Paths, true }

// timeLimit is a command's overall time limit: --timeout when given (0: none), else defaultTimeout
// for a command that reads only headers and names a remote model, else none.
func timeLimit(cmd command, given *time.Duration) time.Duration {
	if given != nil {
		return max(*given, 0)
	}
	w, ok := cmd.(workload)
	if !ok {
		return 0
	}
	models, bytes := w.work()
	if bytes {
		return 0
	}
	for _, m := range models {
		if source.IsRemote(m) {
			return defaultTimeout
		}
	}
	return 0
}
