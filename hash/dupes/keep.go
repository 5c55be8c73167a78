package dupes

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/hash/dupes/internal/diskfile"
)

// KeepKind is a rule for choosing the model of a group to keep.
type KeepKind string

// Rules for choosing the model to keep. Whatever the rule, a model that shares files with other
// models is kept first (it must stay), then one file of a model made of several (a shard, a
// pipeline's component: it must stay too), a local model before a URL, a model that is safe to load
// before one whose pickle names globals torch.load(weights_only=True) refuses (Member.Unsafe), and
// a safetensors file (or a DDUF file, whose weights are safetensors files) before another format
// holding the same content. Then the rule's own order, its own criterion first (none for KeepMostInfo)
// and then a diffusers pipeline folder before a DDUF file of its very files (ReasonPipeline), and
// last, where nothing but the path tells the copies apart, the path: a model under an earlier root
// given to Find (the folder named first is the library), then the deeper path inside its root (the
// organised copy, Loras/characters/x, over downloads/x), then the first path in byte order.
const (
	// KeepMostInfo keeps the copy that carries the most information: the most metadata keys (an
	// embedded cover is one) and sidecar files, none for a model that is not safe to load; then the
	// oldest; then by path. The default.
	KeepMostInfo KeepKind = "most-info"
	// KeepNewest keeps the most recently modified copy, then as KeepMostInfo.
	KeepNewest KeepKind = "newest"
	// KeepOldest keeps the least recently modified copy, then as KeepMostInfo.
	KeepOldest KeepKind = "oldest"
	// KeepPath keeps a copy under KeepRule.Prefix (a library folder), then as KeepMostInfo.
	KeepPath KeepKind = "path"
)

// KeepRule says which model of a group to keep. The zero KeepRule is KeepMostInfo.
type KeepRule struct {
	Kind KeepKind
	// Prefix is the path prefix of KeepPath: a model at that path or under it wins.
	Prefix string
}

// ParseKeepRule reads a rule written as a word: most-info, newest, oldest or path:PREFIX.
func ParseKeepRule(s string) (KeepRule, error) {
	if p, ok := strings.CutPrefix(s, "path:"); ok {
		if p == "" {
			return KeepRule{}, fmt.Errorf("keep rule %q names no folder (path:PREFIX)", s)
		}
		return KeepRule{Kind: KeepPath, Prefix: p}, nil
	}
	switch k := KeepKind(s); k {
	case KeepMostInfo, KeepNewest, KeepOldest:
		return KeepRule{Kind: k}, nil
	}
	return KeepRule{}, fmt.Errorf("no keep rule %q: most-info, newest, oldest or path:PREFIX", s)
}

// String is the rule as ParseKeepRule reads it.
func (r KeepRule) String() string {
	switch r.Kind {
	case "":
		return string(KeepMostInfo)
	case KeepPath:
		return "path:" + r.Prefix
	}
	return string(r.Kind)
}

// KeepReason says why a group's keeper was chosen: the first thing, in the rule's order, in which it
// beats the next best model. Codes are stable and safe to match in scripts.
type KeepReason string

// Reasons for keeping a model.
const (
	ReasonSharesFiles KeepReason = "shares-files"    // it shares files with other models: it must stay
	ReasonPartOfModel KeepReason = "part-of-model"   // it is one file of a model made of several: it must stay
	ReasonLocal       KeepReason = "local"           // the others are URLs
	ReasonSafe        KeepReason = "safe"            // the others' pickles name globals torch refuses
	ReasonSafetensors KeepReason = "safetensors"     // a safetensors file, the others another format
	ReasonPathPrefix  KeepReason = "path-prefix"     // it is under the KeepPath rule's prefix
	ReasonMostInfo    KeepReason = "most-info"       // it carries the most metadata keys and sidecars
	ReasonNewest      KeepReason = "newest"          // it was modified last
	ReasonOldest      KeepReason = "oldest"          // it was modified first
	ReasonPipeline    KeepReason = "pipeline-folder" // a diffusers pipeline folder, the others DDUF files of its very files
	ReasonFirstRoot   KeepReason = "first-root"      // it lies under the earliest of the roots given
	ReasonDeeperPath  KeepReason = "deeper-path"     // its path lies deeper inside its root
	ReasonFirstPath   KeepReason = "first-path"      // nothing else tells the models apart: the first path
	// ReasonShortestPath was given when the shortest path decided.
	//
	// Deprecated: the path decides by root, then depth (ReasonFirstRoot, ReasonDeeperPath): the
	// shortest path was the copy in downloads/, not the one in the library.
	ReasonShortestPath KeepReason = "shortest-path"
)

// criterion compares two models for keeping: above 0 when a should rather be kept, below 0 when b.
type criterion struct {
	reason KeepReason
	cmp    func(a, b *scanned) int
}

func sign[T int | int64](a, b T) int {
	switch {
	case a > b:
		return 1
	case a < b:
		return -1
	}
	return 0
}

func boolRank(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// info is how much a model carries besides its tensors: metadata keys and sidecar files; nothing for
// a model that is not safe to load (its metadata is no reason to keep it).
func (f *scanned) info() int {
	if f.unsafe {
		return 0
	}
	return f.metaKeys + len(f.sidecars)
}

// isSafetensors reports whether the model is a safetensors file or set.
func (f *scanned) isSafetensors() bool {
	return f.format == "" || f.format == canon.FormatSafetensors || f.format == canon.FormatDDUF // a DDUF file's weights are safetensors files
}

// depth is how many folders deep the model's path lies.
func (f *scanned) depth() int {
	return strings.Count(filepath.ToSlash(filepath.Clean(f.path)), "/")
}

// criteria are the rule's comparisons, in order.
func (r KeepRule) criteria() []criterion {
	out := []criterion{
		{ReasonSharesFiles, func(a, b *scanned) int { return boolRank(a.shared, b.shared) }},
		{ReasonPartOfModel, func(a, b *scanned) int { return boolRank(a.part, b.part) }},
		{ReasonLocal, func(a, b *scanned) int { return boolRank(!source.IsRemote(a.path), !source.IsRemote(b.path)) }},
		{ReasonSafe, func(a, b *scanned) int { return boolRank(!a.unsafe, !b.unsafe) }},
		{ReasonSafetensors, func(a, b *scanned) int { return boolRank(a.isSafetensors(), b.isSafetensors()) }},
	}
	mostInfo := criterion{ReasonMostInfo, func(a, b *scanned) int { return sign(a.info(), b.info()) }}
	oldest := criterion{ReasonOldest, func(a, b *scanned) int { return sign(b.mtime, a.mtime) }}
	// A pipeline's folder over a DDUF file of it (only they are ever grouped together): every
	// diffusers version and the tools built on its layout load the folder, and deleting the DDUF
	// file is one unlink. After the rule's own criterion, so that a rule that names one wins.
	folder := criterion{ReasonPipeline, func(a, b *scanned) int { return boolRank(a.pipeline, b.pipeline) }}
	switch r.Kind {
	case KeepNewest:
		out = append(out, criterion{ReasonNewest, func(a, b *scanned) int { return sign(a.mtime, b.mtime) }}, folder, mostInfo)
	case KeepOldest:
		out = append(out, oldest, folder, mostInfo)
	case KeepPath:
		under := func(f *scanned) bool { return diskfile.Under(f.path, r.Prefix) }
		out = append(out, criterion{ReasonPathPrefix, func(a, b *scanned) int { return boolRank(under(a), under(b)) }}, folder, mostInfo, oldest)
	default:
		// The copies' information first, then where the user keeps them: a copy made by cp into the
		// library is newer than the download it came from, and the library's is the one to keep.
		out = append(out, folder, mostInfo)
	}
	out = append(out,
		criterion{ReasonFirstRoot, func(a, b *scanned) int { return sign(b.root, a.root) }},
		criterion{ReasonDeeperPath, func(a, b *scanned) int { return sign(a.depth(), b.depth()) }})
	if r.Kind == KeepMostInfo || r.Kind == "" {
		out = append(out, oldest)
	}
	return append(out, criterion{ReasonFirstPath, func(a, b *scanned) int { return strings.Compare(b.path, a.path) }})
}

// decide compares a and b by the rule: above 0 when a should rather be kept, and the reason.
func (r KeepRule) decide(cs []criterion, a, b *scanned) (int, KeepReason) {
	for _, c := range cs {
		if d := c.cmp(a, b); d != 0 {
			return d, c.reason
		}
	}
	return 0, ReasonFirstPath
}

// keepSafe orders models with the same content for deleting all but the first, the keeper, chosen by
// rule (a model that shares files with others first: it must stay), and says why it beats the best of
// the others, which follow in path order. Models that share files, and files that are parts of a model
// made of several, are never among those to delete: the others are left out. The result has fewer than two models when nothing could safely go.
func keepSafe(g []*scanned, rule KeepRule) ([]*scanned, KeepReason) {
	cs := rule.criteria()
	ranked := append([]*scanned(nil), g...)
	sort.SliceStable(ranked, func(i, j int) bool { d, _ := rule.decide(cs, ranked[i], ranked[j]); return d > 0 })
	out := []*scanned{ranked[0]}
	for _, f := range ranked[1:] {
		if !f.shared && !f.part {
			out = append(out, f)
		}
	}
	why := ReasonFirstPath
	if len(out) > 1 {
		_, why = rule.decide(cs, out[0], out[1])
	}
	sort.Slice(out[1:], func(i, j int) bool { return out[1+i].path < out[1+j].path })
	return out, why
}
