package diff

import (
	"fmt"
	"strings"

	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
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
		if c == CategoryCompanion || containsCategory(r.Categories, c) {
			cats = append(cats, c)
		}
	}
	r.Categories = cats
}

func containsCategory(cs []Category, c Category) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// companionMarkdown writes the changed companion files as a table, and their changes in a diff block
// each.
func companionMarkdown(p func(string, ...any), r *Report) {
	c := r.Companions
	if !c.Differs() {
		return
	}
	p("\n| | %s | change |\n|---|---|---|\n", companiondiff.Heading)
	for _, f := range c.Removed {
		p("| − | %s | removed |\n", markdown.Code(f.Path))
	}
	for _, f := range c.Added {
		p("| + | %s | added |\n", markdown.Code(f.Path))
	}
	for _, f := range c.Changed {
		what := "changed"
		if len(f.Keys) > 0 {
			what = fmt.Sprintf("%d keys changed", len(f.Keys))
		}
		p("| ~ | %s | %s |\n", markdown.Code(f.Path), markdown.Text(what))
	}
	one := &companiondiff.Report{Compared: true}
	for _, f := range c.Changed {
		one.Changed = append(one.Changed[:0], f)
		body := strings.Join(one.Text(textfmt.Palette{}, 2), "\n") + "\n"
		fence := markdown.Fence(body)
		p("\n<details><summary><code>%s</code></summary>\n\n%sdiff\n%s%s\n\n</details>\n", markdown.HTML(f.Path), fence, body, fence)
	}
}
