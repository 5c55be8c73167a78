package canon

import "strconv"

// Outcome is what a command's report comes to, for scripts: nothing found, something found, or
// trouble. Outcomes are ordered from best to worst, so the outcome of several reports is their max.
// The CLI maps them to its exit statuses 0, 1 and 2.
type Outcome int

// Outcomes, from best to worst.
const (
	// Clean: identical, valid, verified, no duplicates.
	Clean Outcome = iota
	// Found: differences, defects, mismatches or duplicates found; every input was read.
	Found
	// Trouble: an input could not be read (missing, unreadable, an I/O or network error); what the
	// report says of the others still holds.
	Trouble
)

// String is "clean", "found" or "trouble".
func (o Outcome) String() string {
	switch o {
	case Clean:
		return "clean"
	case Found:
		return "found"
	case Trouble:
		return "trouble"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}
