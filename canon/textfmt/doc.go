// Package textfmt is the one set of helpers stdiff's writers share to put names, values and numbers on
// a line: Escape (what a hostile file name cannot get past), byte sizes, thousands separators, plurals,
// shortened values, the longest line a value may have and still be shown, the one colour helper
// (Palette), the JSON writers (WriteJSON, WriteJSONL) and the formats a report is written in (Format).
//
// It never decides anything about the terminal: whether colour is on is the caller's choice, passed in
// as a Palette; nothing here reads the environment or looks at a file descriptor.
package textfmt
