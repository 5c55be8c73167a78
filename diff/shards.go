package diff

import (
	"slices"
	"strings"

	"github.com/stdiff/stdiff/canon"
)

// Move is a tensor present on both sides that is in another file of its shard set: From on the old
// side, To on the new (their names as the sets name their files).
type Move struct {
	Name string `json:"name"`
	From string `json:"from"`
	To   string `json:"to"`
}

// shardNotes says what the shard sets of a and b add to the comparison of the tensors matched by
// name (matched pairs their indices): the tensors in other shard files (Tensors.Moved, with a
// layout.shard-moves note), and how many were compared by name only (a scope.name-only note).
func shardNotes(r *Report, a, b *canon.Model, matched [][2]int) {
	nameOnly := 0
	for _, p := range matched {
		if a.Tensors[p[0]].NameOnly() || b.Tensors[p[1]].NameOnly() {
			nameOnly++
		}
	}
	if sa, sb := a.TensorShards(), b.TensorShards(); sa != nil && sb != nil {
		for _, p := range matched {
			if from, to := sa[p[0]], sb[p[1]]; from != to {
				r.Tensors.Moved = push(r.Tensors.Moved, Move{Name: a.Tensors[p[0]].Name, From: from, To: to})
			}
		}
		slices.SortFunc(r.Tensors.Moved, func(x, y Move) int { return strings.Compare(x.Name, y.Name) })
		if m := r.Tensors.Moved; len(m) > 0 {
			r.Notes = append(r.Notes, Note{Code: NoteShardMoves, Count: len(m), Key: m[0].Name, Old: m[0].From, New: m[0].To})
		}
	}
	if nameOnly > 0 {
		r.Notes = append(r.Notes, Note{Code: NoteNameOnly, Count: nameOnly})
	}
}
