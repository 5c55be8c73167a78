package main

import "github.com/stdiff/stdiff/canon/inspect"

// runShort prints one row per model found, reading headers and sidecars only, several at a time.
func (c *inspectCmd) runShort(o *out, opt inspect.Options, wopt inspect.WriteOptions) int {
	r := inspect.Short(o.ctx, c.Files, opt)
	for _, err := range r.Errors {
		o.readFailed(err)
	}
	return write(o, r, c.Quiet, r.Outcome(), withOptions(inspect.WriteShort, wopt))
}
