package diff

import "github.com/stdiff/stdiff/canon"

// Tied weights: a tensor that views the very bytes of another tensor of its file (canon.RoleAlias) is
// that tensor under a second name. A conversion drops the alias (transformers' save_model, convert.py),
// so a tensor missing on the other side that aliases one found on both sides is a note, not a
// difference.

// aliasDrops takes out of removed (side a) and added (side b) the tensors that alias a tensor of their
// model that is matched, and returns what is left and a note for each one taken out.
func aliasDrops(a, b *canon.Model, matched [][2]int, removed, added []int) ([]int, []int, []Note) {
	var notes []Note
	left := func(side int, m *canon.Model, list []int) []int {
		if len(list) == 0 || m.Torch == nil {
			return list
		}
		_, aliasOf := m.Roles()
		group := func(i int) int {
			if aliasOf[i] >= 0 {
				return aliasOf[i]
			}
			return i
		}
		kept := map[int]int{} // group → a tensor of it on both sides
		for _, p := range matched {
			kept[group(p[side])] = p[side]
		}
		out := list[:0:0]
		for _, i := range list {
			k, ok := kept[group(i)] // a removed tensor is matched to none: k is another
			if !ok {
				out = append(out, i)
				continue
			}
			code := NoteAliasDropped
			if side == 1 {
				code = NoteAliasAdded
			}
			notes = append(notes, newNote(Note{Code: code, Key: m.Tensors[i].Name, Old: m.Tensors[k].Name}))
		}
		return out
	}
	return left(0, a, removed), left(1, b, added), notes
}
