package main

import "github.com/stdiff/stdiff/canon/inspect"

// runShort prints one row per model found, reading headers and sidecars only, several at a time.
func (c *inspectCmd) runShort(o *out, opt inspect.Options, text inspect.TextOptions, page inspect.HTMLOptions) int {
	r := inspect.Short(o.ctx, c.Files, opt)
	for _, err := range r.Errors {
		o.readFailed(err)
	}
	return write(o, r, c.Quiet, r.Outcome(), writers[*inspect.ShortReport]{
		text: withOptions(inspect.WriteShortText, text),
		json: inspect.WriteShortJSON, jsonl: inspect.WriteShortJSONL, markdown: inspect.WriteShortMarkdown,
		html: withOptions(inspect.WriteShortHTML, page)}.pick(o.format))
}
