package textfmt

// Palette paints text with ANSI colours when On, and leaves it as it is otherwise. It is the one colour
// helper: the caller decides whether colour is on (on a terminal, never with NO_COLOR) and hands the
// Palette to the writers. The zero Palette paints nothing. An empty string is never painted.
type Palette struct {
	On bool
}

// ANSI codes of the colours a Palette uses.
const (
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiReset  = "\x1b[0m"
)

func (p Palette) paint(code, s string) string {
	if !p.On || s == "" {
		return s
	}
	return code + s + ansiReset
}

// Red is for what is removed, old or wrong (errors, "INVALID").
func (p Palette) Red(s string) string { return p.paint(ansiRed, s) }

// Green is for what is added, new or fine ("OK").
func (p Palette) Green(s string) string { return p.paint(ansiGreen, s) }

// Yellow is for what changed, and for warnings.
func (p Palette) Yellow(s string) string { return p.paint(ansiYellow, s) }

// Cyan is for renames and for findings of severity info.
func (p Palette) Cyan(s string) string { return p.paint(ansiCyan, s) }

// Bold is for headings.
func (p Palette) Bold(s string) string { return p.paint(ansiBold, s) }

// Dim is for asides: where a value came from, notes, folded lines.
func (p Palette) Dim(s string) string { return p.paint(ansiDim, s) }
