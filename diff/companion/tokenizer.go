package companion

import (
	"slices"
	"strconv"

	"github.com/stdiff/stdiff/canon/companion"
)

// MaxListed is the most tokens or merges a TokenizerChange lists of each kind; its counts are whole.
const MaxListed = 50

// TokenizerChange is how a tokenizer.json changed.
type TokenizerChange struct {
	// OldModel and NewModel are the tokenizer model's types ("BPE", "Unigram", …).
	OldModel string `json:"old_model"`
	NewModel string `json:"new_model"`
	// Vocab is how the vocabulary changed (nil when it did not).
	Vocab *ListChange `json:"vocab,omitempty"`
	// Merges is how the BPE merges changed (nil when they did not).
	Merges *ListChange `json:"merges,omitempty"`
	// AddedTokens are the added tokens that were added, removed or changed (by id), special or not;
	// SpecialChanged is true when a special token is among them.
	AddedTokens    []AddedTokenChange `json:"added_tokens,omitempty"`
	SpecialChanged bool               `json:"special_changed"`
	// Settings are the changes of everything else (normalizer, pre-tokenizer, post-processor,
	// decoder, the model's options), by key path; SettingsChanged is true when they differ, even
	// where a snapshot recorded them by digest only (Settings empty then).
	Settings        []KeyChange `json:"settings,omitempty"`
	SettingsChanged bool        `json:"settings_changed"`
}

// ListChange is how a vocabulary or a list of merges changed: its size on each side, and, when both
// sides were read whole (not a snapshot's summary), what was added, removed and changed (for a
// vocabulary: tokens whose id or score moved), counted in full and listed up to MaxListed each.
type ListChange struct {
	Old int `json:"old"`
	New int `json:"new"`
	// Listed is false when a side was known by its digest only (a snapshot): the counts and lists
	// below are then empty.
	Listed       bool          `json:"listed"`
	AddedCount   int           `json:"added_count"`
	RemovedCount int           `json:"removed_count"`
	ChangedCount int           `json:"changed_count"`
	Added        []Entry       `json:"added"`
	Removed      []Entry       `json:"removed"`
	Changed      []EntryChange `json:"changed"`
	// Reordered is true for merges that are the same set in another order (their priority changed).
	Reordered bool `json:"reordered,omitempty"`
}

// Entry is a token and its id (or position and score), or a merge ("left right") and its rank.
type Entry struct {
	Token string `json:"token"`
	Value string `json:"value,omitempty"`
}

// EntryChange is a token whose id (or score) changed.
type EntryChange struct {
	Token string `json:"token"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// AddedTokenChange is an added token that changed: Old or New is nil where it is absent.
type AddedTokenChange struct {
	ID  int64                 `json:"id"`
	Old *companion.AddedToken `json:"old"`
	New *companion.AddedToken `json:"new"`
}

// compareTokenizers says how two tokenizer.json files changed.
func compareTokenizers(x, y *companion.File) *TokenizerChange {
	a, b := x.Tokenizer, y.Tokenizer
	t := &TokenizerChange{OldModel: a.Model, NewModel: b.Model}
	if a.VocabDigest != b.VocabDigest {
		t.Vocab = &ListChange{Old: a.Vocab, New: b.Vocab, Added: []Entry{}, Removed: []Entry{}, Changed: []EntryChange{}}
		if x.Full != nil && y.Full != nil {
			vocabChange(t.Vocab, x.Full.Tokens, y.Full.Tokens)
		}
	}
	if a.MergesDigest != b.MergesDigest {
		t.Merges = &ListChange{Old: a.Merges, New: b.Merges, Added: []Entry{}, Removed: []Entry{}, Changed: []EntryChange{}}
		if x.Full != nil && y.Full != nil {
			mergesChange(t.Merges, x.Full.Merges, y.Full.Merges)
		}
	}
	old := map[int64]companion.AddedToken{}
	for _, tok := range a.AddedTokens {
		old[tok.ID] = tok
	}
	seen := map[int64]bool{}
	for _, tok := range b.AddedTokens {
		seen[tok.ID] = true
		o, ok := old[tok.ID]
		switch {
		case !ok:
			tok := tok
			t.AddedTokens = append(t.AddedTokens, AddedTokenChange{ID: tok.ID, New: &tok})
		case o != tok:
			o, tok := o, tok
			t.AddedTokens = append(t.AddedTokens, AddedTokenChange{ID: tok.ID, Old: &o, New: &tok})
		}
	}
	for _, tok := range a.AddedTokens {
		if !seen[tok.ID] {
			tok := tok
			t.AddedTokens = append(t.AddedTokens, AddedTokenChange{ID: tok.ID, Old: &tok})
		}
	}
	slices.SortStableFunc(t.AddedTokens, func(p, q AddedTokenChange) int { return int(min(max(p.ID-q.ID, -1), 1)) })
	for _, c := range t.AddedTokens {
		if c.Old != nil && c.Old.Special || c.New != nil && c.New.Special {
			t.SpecialChanged = true
		}
	}
	if a.RestDigest != b.RestDigest {
		t.SettingsChanged = true
		if a.Rest != "" && b.Rest != "" {
			xv, err1 := companion.Decode(a.Rest)
			yv, err2 := companion.Decode(b.Rest)
			if err1 == nil && err2 == nil {
				t.Settings = compareJSON(xv, yv)
			}
		}
	}
	return t
}

// vocabChange fills l with what changed between two vocabularies.
func vocabChange(l *ListChange, a, b map[string]string) {
	l.Listed = true
	var added, removed, changed []string
	for tok, v := range b {
		if o, ok := a[tok]; !ok {
			added = append(added, tok)
		} else if o != v {
			changed = append(changed, tok)
		}
	}
	for tok := range a {
		if _, ok := b[tok]; !ok {
			removed = append(removed, tok)
		}
	}
	l.AddedCount, l.RemovedCount, l.ChangedCount = len(added), len(removed), len(changed)
	byValue := func(m map[string]string) func(p, q string) int {
		return func(p, q string) int { return compareIDs(m[p], m[q], p, q) }
	}
	slices.SortFunc(added, byValue(b))
	slices.SortFunc(removed, byValue(a))
	slices.SortFunc(changed, byValue(b))
	for _, tok := range added[:min(len(added), MaxListed)] {
		l.Added = append(l.Added, Entry{Token: tok, Value: b[tok]})
	}
	for _, tok := range removed[:min(len(removed), MaxListed)] {
		l.Removed = append(l.Removed, Entry{Token: tok, Value: a[tok]})
	}
	for _, tok := range changed[:min(len(changed), MaxListed)] {
		l.Changed = append(l.Changed, EntryChange{Token: tok, Old: a[tok], New: b[tok]})
	}
}

// compareIDs orders vocabulary entries by their id (numerically when both are numbers), then token.
func compareIDs(x, y, p, q string) int {
	if len(x) != len(y) {
		return len(x) - len(y) // ids without leading zeros: shorter is smaller
	}
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	case p < q:
		return -1
	case p > q:
		return 1
	}
	return 0
}

// mergesChange fills l with what changed between two lists of merges.
func mergesChange(l *ListChange, a, b []string) {
	l.Listed = true
	count := func(s []string) map[string]int {
		m := make(map[string]int, len(s))
		for _, v := range s {
			m[v]++
		}
		return m
	}
	ca, cb := count(a), count(b)
	rank := func(s []string) map[string]int {
		m := make(map[string]int, len(s))
		for i, v := range s {
			if _, ok := m[v]; !ok {
				m[v] = i
			}
		}
		return m
	}
	for i, v := range b {
		if ca[v] == 0 {
			l.AddedCount++
			if len(l.Added) < MaxListed {
				l.Added = append(l.Added, Entry{Token: v, Value: itoa(i)})
			}
		}
	}
	for i, v := range a {
		if cb[v] == 0 {
			l.RemovedCount++
			if len(l.Removed) < MaxListed {
				l.Removed = append(l.Removed, Entry{Token: v, Value: itoa(i)})
			}
		}
	}
	if l.AddedCount == 0 && l.RemovedCount == 0 {
		ra, rb := rank(a), rank(b)
		for _, v := range b {
			if ra[v] != rb[v] {
				l.Reordered = true
				l.ChangedCount++
				if len(l.Changed) < MaxListed {
					l.Changed = append(l.Changed, EntryChange{Token: v, Old: itoa(ra[v]), New: itoa(rb[v])})
				}
			}
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
