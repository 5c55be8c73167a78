package diff

import "github.com/stdiff/stdiff/canon"

// aliasDrops takes out of removed (side a) and added (side b) the tied aliases of tensors on both
// sides (canon.Model.Untie), and returns what is left and a note for each one taken out: a
// conversion drops aliases, which is no difference.
func aliasDrops(a, b *canon.Model, matched [][2]int, removed, added []int) ([]int, []int, []Note) {
	var notes []Note
	untie := func(side int, m *canon.Model, list []int, code NoteCode) []int {
		if len(list) == 0 { // only PyTorch files alias (m.Untie leaves others as they are)
			return list
		}
		kept := make([]int, len(matched))
		for k, p := range matched {
			kept[k] = p[side]
		}
		left, tied := m.Untie(list, kept)
		for _, t := range tied {
			notes = append(notes, Note{Code: code, Key: m.Tensors[t[0]].Name, Old: m.Tensors[t[1]].Name})
		}
		return left
	}
	return untie(0, a, removed, NoteAliasDropped), untie(1, b, added, NoteAliasAdded), notes
}
