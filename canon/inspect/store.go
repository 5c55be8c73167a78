package inspect

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/store"
)

// foldedRefs is how many of a blob's refs the text lists unless asked for all.
const foldedRefs = 10

// storeRows are the rows that say where a store's blob lies (label, text): the store, the hash its
// name claims, what it links to, and the snapshot files that refer to it (the first foldedRefs unless
// full). None for a file in no store.
func storeRows(s *store.Blob, full bool) [][2]string {
	if s == nil {
		return nil
	}
	layout := map[string]string{store.LayoutRepoBlobs: "a repository's blob", store.LayoutSharedBlobs: "shared blob store",
		store.LayoutOllamaBlobs: "blob"}[s.Layout]
	where := s.Store.Describe()
	if layout != "" {
		where += ", " + layout
	}
	if s.HashKind != "" {
		hash := s.Hash
		if !full && len(hash) > 14 {
			hash = hash[:12] + "…"
		}
		where += fmt.Sprintf(" · %s %s (by its name)", hashWords[s.HashKind], hash)
	}
	rows := [][2]string{{"store", where}}
	if s.Shared != "" {
		rows = append(rows, [2]string{"", "links to the shared blob store: " + s.Shared})
	}
	if s.Store != store.HuggingFace {
		return rows
	}
	label := "used by"
	for i, r := range s.Refs {
		if i == foldedRefs && !full {
			rows = append(rows, [2]string{"", fmt.Sprintf("… and %d more", len(s.Refs)-i)})
			break
		}
		rev := r.Revision
		if !full && len(rev) > 12 {
			rev = rev[:12]
		}
		if len(r.Names) > 0 {
			rev += " (" + strings.Join(r.Names, ", ") + ")"
		}
		rows = append(rows, [2]string{label, fmt.Sprintf("%s %s @ %s: %s", r.RepoType, r.Repo, rev, r.Path)})
		label = ""
	}
	if len(s.Refs) == 0 {
		rows = append(rows, [2]string{label, "no snapshot links to it"})
	}
	if s.StaleRefs > 0 {
		rows = append(rows, [2]string{"", fmt.Sprintf("%d stale entries in its .refs (no longer links to it)", s.StaleRefs)})
	}
	return rows
}

// hashWords name a store.Blob's HashKind in the text.
var hashWords = map[string]string{store.HashXet: "Xet hash", store.HashSHA256: "sha256", store.HashGitSHA1: "git blob id"}

// oncePerModel keeps one of the paths (a walk's, in path order) that are the same file of the Hugging
// Face cache: its blob (a GGUF blob is found by its magic) and its snapshots' links to it, from every
// revision that has it. The one kept is a snapshot's file rather than the blob, one that a ref (main)
// names rather than another, else the first. Paths in no store, and links elsewhere, are kept as they
// are: two of the user's own names for one file are the user's to see.
func oncePerModel(paths []string) []string {
	type kept struct {
		at   int // index in out
		rank int
	}
	rank := func(p string) int {
		switch r := store.SnapshotFile(p); {
		case r == nil:
			return 0
		case slices.Contains(r.Names, "main"):
			return 3
		case len(r.Names) > 0:
			return 2
		}
		return 1
	}
	seen := map[string]kept{}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if store.ManagedBy(p) != store.HuggingFace {
			out = append(out, p)
			continue
		}
		file, err := setFiles(p)
		if err != nil {
			out = append(out, p)
			continue
		}
		r := rank(p)
		if k, ok := seen[file]; ok {
			if r > k.rank {
				out[k.at] = p
				seen[file] = kept{k.at, r}
			}
			continue
		}
		seen[file] = kept{len(out), r}
		out = append(out, p)
	}
	slices.Sort(out) // a later link may stand for an earlier one
	return out
}

// setFiles is the file the cache's path p stands for, links followed; for a shard set's index, with
// every shard's (two revisions may share an index and not a shard: two models).
func setFiles(p string) (string, error) {
	file, err := filepath.EvalSymlinks(p)
	if err != nil || !strings.HasSuffix(strings.ToLower(p), ".index.json") {
		return file, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	idx, err := source.ParseIndex(p, b)
	if err != nil {
		return "", err
	}
	key := file
	for _, sh := range idx.Shards {
		f, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(p), filepath.FromSlash(sh)))
		if err != nil {
			return "", err
		}
		key += "\x00" + f
	}
	return key, nil
}
