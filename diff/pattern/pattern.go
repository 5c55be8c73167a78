// Package pattern checks the glob patterns that filter a comparison (package diff's Options.Tensors
// and IgnoreKeys): a pattern that is malformed or matches nothing is refused, so that a typo in a
// filter never passes for "identical, 0 tensors compared".
package pattern

import (
	"errors"
	"fmt"
	"path"

	"github.com/stdiff/stdiff/canon"
)

// ErrNoMatch is the error of a pattern that matches no name on either side.
var ErrNoMatch = errors.New("matches nothing")

// Error is a pattern of diff.Options that filters nothing: it is malformed (Err is
// path.ErrBadPattern) or matches no name on either side (Err is ErrNoMatch). A typo in a filter must not
// pass for "identical, 0 tensors compared".
type Error struct {
	// Option is the Options field holding the pattern: "Tensors" or "IgnoreKeys".
	Option  string
	Pattern string
	Err     error
}

// Error names the pattern and what is wrong with it.
func (e *Error) Error() string {
	what := map[string]string{"Tensors": "tensor", "IgnoreKeys": "metadata key"}[e.Option]
	if errors.Is(e.Err, ErrNoMatch) {
		return fmt.Sprintf("%s pattern %q matches no %s in either model", what, e.Pattern, what)
	}
	return fmt.Sprintf("%s pattern %q: %v", what, e.Pattern, e.Err)
}

// Unwrap gives ErrNoMatch or path.ErrBadPattern.
func (e *Error) Unwrap() error { return e.Err }

// Problem is what is wrong with the pattern, without the pattern: "matches no tensor in either
// model", "is not a valid pattern: syntax error in pattern".
func (e *Error) Problem() string {
	if errors.Is(e.Err, ErrNoMatch) {
		return "matches no " + map[string]string{"Tensors": "tensor", "IgnoreKeys": "metadata key"}[e.Option] + " in either model"
	}
	return fmt.Sprintf("is not a valid pattern: %v", e.Err)
}

// Hint says how to write a pattern that matches. lists, when set, says how the caller's users list the
// names a pattern is matched against (stdiff's: "`stdiff inspect --full old.safetensors` lists them"):
// it ends the hint for a pattern that matches nothing.
func (e *Error) Hint(lists string) string {
	if !errors.Is(e.Err, ErrNoMatch) {
		return `patterns are globs: * any run of characters, ? one character, [abc] or [a-z] one of them; \ quotes the next character`
	}
	if lists == "" {
		return "a pattern matches whole names (* any run of characters, ? one character)"
	}
	return "a pattern matches whole names (* any run of characters, ? one character); " + lists
}

// Check refuses the patterns that would filter nothing: a malformed one, or one that matches no name
// in a or b (tensor names for tensors, metadata keys for keys). It returns an *Error for the first,
// tensors' first. Patterns of a part left out (tensorsUsed, keysUsed false) are checked for syntax only.
func Check(a, b *canon.Model, tensors, keys []string, tensorsUsed, keysUsed bool) error {
	tensorNames := func(yield func(string) bool) {
		for _, m := range []*canon.Model{a, b} {
			for i := range m.Tensors {
				if !yield(m.Tensors[i].Name) {
					return
				}
			}
		}
	}
	metaKeys := func(yield func(string) bool) {
		for _, m := range []*canon.Model{a, b} {
			for i := range m.Metadata {
				if !yield(m.Metadata[i].Key) {
					return
				}
			}
		}
	}
	for _, set := range []struct {
		option   string
		patterns []string
		used     bool
		names    func(yield func(string) bool)
	}{
		{"Tensors", tensors, tensorsUsed, tensorNames},
		{"IgnoreKeys", keys, keysUsed, metaKeys},
	} {
		for _, p := range set.patterns {
			if _, err := path.Match(p, ""); err != nil {
				return &Error{Option: set.option, Pattern: p, Err: err}
			}
			if !set.used {
				continue
			}
			found := false
			for name := range set.names {
				if ok, _ := path.Match(p, name); ok {
					found = true
					break
				}
			}
			if !found {
				return &Error{Option: set.option, Pattern: p, Err: ErrNoMatch}
			}
		}
	}
	return nil
}
