// Package template reads chat templates, the Jinja programs that models ship to turn a conversation
// into a prompt (GGUF's tokenizer.chat_template, tokenizer_config.json's chat_template,
// chat_template.jinja), as transformers' sandboxed environment reads them: Parse gives the syntax tree
// (package canon/template/scan analyses it without running it), and Render runs a template on given
// data with no way out of it, bounded in steps and output.
//
// It never runs code named by a template, never prints, and imports only the standard library.
//
// The parser is this package's own: github.com/ardanlabs/jinja, the Go engine considered, keeps its
// syntax tree unexported (there is nothing to walk) and needs a newer Go than this module.
package template
