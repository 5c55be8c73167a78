// Package companion compares the files a loader reads beside two models' tensors (package
// canon/companion: config.json, the tokenizer's files and chat templates, adapter, pipeline, scheduler
// and preprocessor configs): JSON by key path (rope_theta 10000 → 500000), templates and other text as a
// line diff, a tokenizer.json by what changed in it (vocabulary, merges, added and special tokens,
// settings by key path), a binary file by its digest. Package diff puts its Report in its own
// (Report.Companions, category "companion"); it renders the changes as text and Markdown lines.
package companion

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/diff/linediff"
)

// Report is how two models' companion files differ.
type Report struct {
	// Compared is false when only one side is a folder model (a folder, its cache snapshot, or a
	// snapshot of one), so that there was nothing to compare its files with; Reason then says so
	// ("one-side"). The lists are then empty.
	Compared bool   `json:"compared"`
	Reason   string `json:"reason,omitempty"`
	// Added and Removed are files on one side only; Changed the files whose digests differ; each in
	// path order. Unchanged counts the others.
	Added     []File   `json:"added"`
	Removed   []File   `json:"removed"`
	Changed   []Change `json:"changed"`
	Unchanged int      `json:"unchanged"`
}

// ReasonOneSide is Report.Reason when only one side is a folder model.
const ReasonOneSide = "one-side"

// File is a companion file on one side only.
type File struct {
	Path   string         `json:"path"`
	Kind   companion.Kind `json:"kind"`
	Size   int64          `json:"size"`
	Digest string         `json:"digest"`
}

// Change is a companion file whose digest differs, and how it differs.
type Change struct {
	Path      string         `json:"path"`
	Kind      companion.Kind `json:"kind"`
	OldDigest string         `json:"old_digest"`
	NewDigest string         `json:"new_digest"`
	// Keys are the changes of a JSON file, by key path, in path order.
	Keys []KeyChange `json:"keys,omitempty"`
	// Lines is the line diff of a text file (a chat template), unfolded.
	Lines []linediff.Line `json:"lines,omitempty"`
	// Tokenizer is how a tokenizer.json changed.
	Tokenizer *TokenizerChange `json:"tokenizer,omitempty"`
	// Detail says why a change has no finer account ("a binary file: compared by its digest"; a
	// file a snapshot recorded by digest only).
	Detail string `json:"detail,omitempty"`
}

// The kinds of KeyChange.
const (
	KeyAdded   = "added"
	KeyRemoved = "removed"
	KeyChanged = "changed"
)

// KeyChange is one changed value of a JSON file.
type KeyChange struct {
	// Path is the value's key path: object keys joined by ".", array elements as [N], a key that is
	// not a plain word quoted (`rope_parameters.rope_theta`, `architectures[0]`, `["a.b"]`); "" for the
	// whole file.
	Path string `json:"path"`
	// Change is "added", "removed" or "changed".
	Change string `json:"change"`
	// Old and New are the values as compact JSON (absent on the side that has none).
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
	// Lines is the line diff of a long or multi-line string (a chat template in
	// tokenizer_config.json), or of a long array or object, one value a line.
	Lines []linediff.Line `json:"lines,omitempty"`
}

// Compare compares two models' companion files (each in path order, as companion.ReadDir gives them).
// a and b nil: not folder models on either side, and Compare gives nil; one nil and not the other:
// Report.Compared is false.
func Compare(a, b []companion.File, aFolder, bFolder bool) *Report {
	if !aFolder && !bFolder {
		return nil
	}
	r := &Report{Added: []File{}, Removed: []File{}, Changed: []Change{}}
	if aFolder != bFolder {
		r.Reason = ReasonOneSide
		return r
	}
	r.Compared = true
	byPath := map[string]*companion.File{}
	for i := range b {
		byPath[b[i].Path] = &b[i]
	}
	seen := map[string]bool{}
	for i := range a {
		x := &a[i]
		seen[x.Path] = true
		y := byPath[x.Path]
		switch {
		case y == nil:
			r.Removed = append(r.Removed, fileOf(x))
		case x.Digest == y.Digest:
			r.Unchanged++
		default:
			r.Changed = append(r.Changed, compareFile(x, y))
		}
	}
	for i := range b {
		if !seen[b[i].Path] {
			r.Added = append(r.Added, fileOf(&b[i]))
		}
	}
	slices.SortFunc(r.Added, func(x, y File) int { return strings.Compare(x.Path, y.Path) })
	return r
}

// Differs reports whether any companion file was added, removed or changed.
func (r *Report) Differs() bool {
	return r != nil && len(r.Added)+len(r.Removed)+len(r.Changed) > 0
}

func fileOf(f *companion.File) File {
	return File{Path: f.Path, Kind: f.Kind, Size: f.Size, Digest: f.Digest}
}

// compareFile says how two files of one path with other digests differ.
func compareFile(x, y *companion.File) Change {
	c := Change{Path: x.Path, Kind: y.Kind, OldDigest: x.Digest, NewDigest: y.Digest}
	switch {
	case x.Problem != "" || y.Problem != "":
		c.Detail = "compared by digest: " + firstOf(y.Problem, x.Problem)
	case x.Kind == companion.KindTokenizer && x.Tokenizer != nil && y.Tokenizer != nil:
		c.Tokenizer = compareTokenizers(x, y)
	case x.Kind == companion.KindJSON && x.Text != "" && y.Text != "":
		xv, err1 := companion.Decode(x.Text)
		yv, err2 := companion.Decode(y.Text)
		if err1 != nil || err2 != nil {
			c.Detail = "compared by digest: not valid JSON"
			break
		}
		c.Keys = compareJSON(xv, yv)
	case x.Kind == companion.KindText && x.Text != "" && y.Text != "":
		c.Lines = LineDiff(x.Text, y.Text)
		if c.Lines == nil {
			c.Detail = "compared by digest: too many lines to diff"
		}
	case x.Kind == companion.KindBinary:
		c.Detail = "a binary file: compared by its digest"
	default:
		c.Detail = fmt.Sprintf("compared by digest: over %d MiB, recorded by its digest only", companion.WholeSize>>20)
	}
	return c
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// shortValue is the longest value shown as old → new on one line; longer strings and containers get a
// line diff.
const shortValue = 80

// compareJSON lists how two JSON values differ, by key path.
func compareJSON(a, b any) []KeyChange {
	var out []KeyChange
	walk(&out, "", a, b)
	return out
}

func walk(out *[]KeyChange, path string, a, b any) {
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			keys := make([]string, 0, len(x)+len(y))
			for k := range x {
				keys = append(keys, k)
			}
			for k := range y {
				if _, ok := x[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				p := joinKey(path, k)
				xv, inX := x[k]
				yv, inY := y[k]
				switch {
				case !inY:
					*out = append(*out, KeyChange{Path: p, Change: KeyRemoved, Old: compact(xv)})
				case !inX:
					*out = append(*out, KeyChange{Path: p, Change: KeyAdded, New: compact(yv)})
				default:
					walk(out, p, xv, yv)
				}
			}
			return
		}
	case []any:
		if y, ok := b.([]any); ok && len(x) == len(y) {
			for i := range x {
				walk(out, path+"["+strconv.Itoa(i)+"]", x[i], y[i])
			}
			return
		}
	}
	old, new := compact(a), compact(b)
	if old == new {
		return
	}
	c := KeyChange{Path: path, Change: KeyChanged, Old: old, New: new}
	xs, okX := a.(string)
	ys, okY := b.(string)
	switch {
	case okX && okY && (len(xs) > shortValue || len(ys) > shortValue || strings.Contains(xs, "\n") || strings.Contains(ys, "\n")):
		c.Lines = LineDiff(xs, ys)
	case !okX && !okY && (len(old) > shortValue || len(new) > shortValue):
		c.Lines = LineDiff(indented(a), indented(b))
	}
	*out = append(*out, c)
}

// joinKey appends key k to a key path.
func joinKey(path, k string) string {
	plain := k != ""
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	switch {
	case !plain:
		return path + "[" + strconv.Quote(k) + "]"
	case path == "":
		return k
	}
	return path + "." + k
}

// compact is v as compact canonical JSON.
func compact(v any) string { return string(companion.Canonical(v)) }

// indented is v as JSON, one value a line, keys sorted.
func indented(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return compact(v)
	}
	return string(b)
}

// maxDiffLines bounds a line diff (both texts' lines together), so that diffing stays fast whatever
// the files; past it LineDiff gives nil.
const maxDiffLines = 50000

// LineDiff is a line diff of two texts (go-diff's line mode, deterministic: no time limit), or nil
// past maxDiffLines lines.
func LineDiff(old, new string) []linediff.Line {
	if strings.Count(old, "\n")+strings.Count(new, "\n") > maxDiffLines {
		return nil
	}
	out := linediff.Of(strings.TrimSuffix(old, "\n"), strings.TrimSuffix(new, "\n"))
	if out == nil {
		out = []linediff.Line{}
	}
	return out
}
