package textfmt

// Flags names a library option, by the name of its field ("Full", "HeaderOnly"), as the users of the
// program that calls the library ask for it (stdiff's are "--full", "--header-only"). Libraries word
// the notes, hints and folded output that point to an option with it, so that they name no program's
// flags themselves. A nil Flags, or one that gives "" for an option, names none: the words then leave
// the option out.
type Flags func(option string) string

// Of is f's name for option: "" when f is nil.
func (f Flags) Of(option string) string {
	if f == nil {
		return ""
	}
	return f(option)
}
