package diff

import (
	"slices"

	"github.com/stdiff/stdiff/canon/source"
	companiondiff "github.com/stdiff/stdiff/diff/companion"
)

// addCompanions compares the files beside the tensors of two folder models (a snapshot of one stands
// for it) and puts what it found in r: Companions, and CategoryCompanion when a file differs.
func addCompanions(r *Report, a, b *source.Opened) {
	folder := func(o *source.Opened) bool {
		return o.Folder != "" || o.Snapshot != nil && o.Snapshot.Companions != nil
	}
	r.Companions = companiondiff.Compare(a.Companions, b.Companions, folder(a), folder(b))
	if !r.Companions.Differs() {
		return
	}
	r.Identical = false
	cats := make([]Category, 0, len(r.Categories)+1)
	for _, c := range Categories { // report order
		if c == CategoryCompanion || slices.Contains(r.Categories, c) {
			cats = append(cats, c)
		}
	}
	r.Categories = cats
}
