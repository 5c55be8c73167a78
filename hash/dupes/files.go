package dupes

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/hash/dupes/internal/diskfile"
)

// NoteCode says what a Note is about. Codes are stable and safe to match in scripts.
type NoteCode string

// NoteSharesFiles is the code of a Note: the model shares files (shards, its index) with other
// scanned models, so deleting it would break them. Such a model is never offered as a copy to delete;
// it can only be the kept, first, member of a group.
const NoteSharesFiles NoteCode = "shares-files"

// Note is something the scan found that is no duplicate but bears on deleting: Code says what.
type Note struct {
	Code NoteCode `json:"code"`
	Path string   `json:"path"`
	// With are the other models concerned.
	With []string `json:"with"`
	// Files are the files a pipeline folder and a DDUF file do not share (NotePipelineDiffers).
	Files []FileDifference `json:"files,omitempty"`
}

// fileKey identifies a real file, links followed: its device and inode, or, where those are unknown,
// its absolute path with links resolved.
type fileKey struct {
	dev, ino uint64
	path     string
}

// fileRef is one real file a model is made of.
type fileRef struct {
	key  fileKey
	path string
	size int64
	// nlink is its number of hard links (0: unknown).
	nlink uint64
}

// refOf is the real file behind path, whose os.Stat is st.
func refOf(path string, st fs.FileInfo) fileRef {
	dev, ino, nlink := diskfile.ID(st)
	k := fileKey{dev: dev, ino: ino}
	if ino == 0 {
		k.path = resolvedPath(path)
	}
	return fileRef{key: k, path: path, size: st.Size(), nlink: nlink}
}

func resolvedPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}

// setFiles are the real files of a local shard set: its index (the file idx) and its shards, each
// once, sorted.
func setFiles(index string, idx fileRef, m *canon.Model) ([]fileRef, error) {
	files := []fileRef{idx}
	for _, sh := range m.Shards {
		p := filepath.Join(filepath.Dir(index), filepath.FromSlash(sh.Name))
		st, err := os.Stat(p)
		if err != nil {
			return nil, &canon.ReadError{Name: p, Err: err}
		}
		files = append(files, refOf(p, st))
	}
	sort.Slice(files, func(i, j int) bool { return files[i].key.less(files[j].key) })
	out := files[:1]
	for _, r := range files[1:] {
		if r.key != out[len(out)-1].key {
			out = append(out, r)
		}
	}
	return out, nil
}

func (a fileKey) less(b fileKey) bool {
	if a.dev != b.dev {
		return a.dev < b.dev
	}
	if a.ino != b.ino {
		return a.ino < b.ino
	}
	return a.path < b.path
}

// realFiles are the files a model is made of (none for a URL): its own and its folder's companions.
func (f *scanned) realFiles() []fileRef {
	if f.companions == nil {
		return f.ownFiles()
	}
	return append(slices.Clone(f.ownFiles()), f.companions...)
}

// ownFiles are the files of a model's tensors: a file, or a set's index and shards (none for a URL).
func (f *scanned) ownFiles() []fileRef {
	if f.files != nil || source.IsRemote(f.path) {
		return f.files
	}
	k := fileKey{dev: f.dev, ino: f.ino}
	if f.ino == 0 {
		k.path = resolvedPath(f.path)
	}
	return []fileRef{{key: k, path: f.path, size: f.size, nlink: f.nlink}}
}

// identity is what two paths to the same model share: its files, links followed ("" for a URL).
func (f *scanned) identity() string {
	var b strings.Builder
	for _, r := range f.realFiles() {
		fmt.Fprintf(&b, "%d:%d:%s\x00", r.key.dev, r.key.ino, r.key.path)
	}
	return b.String()
}

// onlyOnce drops the models reached twice: the same file by hard or symbolic links, or a shard set
// whose index and shards are all the same files as another's (two Hugging Face cache snapshots of
// one revision). It keeps real paths over symbolic links, then the path with the most sidecar files
// (of a hard-linked pair, the one in the library, with its records and previews, stands for the
// pair), then the first in order, and says why the others were left out (a path given twice is
// dropped without a word).
func onlyOnce(files []*scanned, skip func(path, reason string)) []*scanned {
	sidecars := map[*scanned]int{}
	count := func(f *scanned) int {
		n, ok := sidecars[f]
		if !ok && !f.set && !source.IsRemote(f.path) {
			n = len(lora.SidecarFiles(f.path))
			sidecars[f] = n
		}
		return n
	}
	best := map[string]*scanned{}
	for _, f := range files {
		if f == nil {
			continue
		}
		id := f.identity()
		if id == "" {
			continue
		}
		b, ok := best[id]
		switch {
		case !ok, b.symlink && !f.symlink:
			best[id] = f
		case b.symlink == f.symlink && filepath.Clean(b.path) != filepath.Clean(f.path) && count(f) > count(b):
			best[id] = f
		}
	}
	var live []*scanned
	for pass := 0; pass < 2; pass++ {
		for _, f := range files {
			if f == nil || f.symlink != (pass == 1) {
				continue
			}
			id := f.identity()
			b := best[id]
			switch {
			case id == "" || b == f:
				live = append(live, f)
			case filepath.Clean(b.path) == filepath.Clean(f.path):
			case f.set:
				skip(f.path, "same model as "+b.path+" (the same files, through links)")
			default:
				skip(f.path, "same file as "+b.path+" (a link)")
			}
		}
	}
	return live
}

// markShared marks the models that share a file with another (a shard of two sets, an index and a
// file named on its own) and returns a note for each. Only sets can share a file: two single files
// that are one file were already made one model.
func markShared(live []*scanned) []Note {
	owners := map[fileKey][]int{}
	for i, f := range live {
		if f.files != nil || f.companions != nil {
			for _, r := range f.realFiles() {
				owners[r.key] = append(owners[r.key], i)
			}
		}
	}
	if len(owners) == 0 {
		return nil
	}
	for i, f := range live {
		if f.files == nil && f.companions == nil {
			for _, r := range f.realFiles() {
				if _, ok := owners[r.key]; ok {
					owners[r.key] = append(owners[r.key], i)
				}
			}
		}
	}
	with := map[int]map[int]bool{}
	for _, o := range owners {
		for _, i := range o {
			for _, j := range o {
				if i != j {
					if with[i] == nil {
						with[i] = map[int]bool{}
					}
					with[i][j] = true
				}
			}
		}
	}
	notes := make([]Note, 0, len(with))
	for i, js := range with {
		live[i].shared = true
		n := Note{Code: NoteSharesFiles, Path: live[i].path}
		for j := range js {
			n.With = append(n.With, live[j].path)
		}
		sort.Strings(n.With)
		notes = append(notes, n)
	}
	sort.Slice(notes, func(i, j int) bool { return notes[i].Path < notes[j].Path })
	return notes
}

// freed is what deleting every model of g but the first would free: each real file once, and only
// files that deleting frees (not URLs, not files with hard links elsewhere, not the first's; nothing
// of a model in a program's store, never deleted, nor of a symbolic link to a file).
func freed(g []*scanned) int64 {
	kept := map[fileKey]bool{}
	for _, r := range g[0].realFiles() {
		kept[r.key] = true
	}
	var n int64
	for _, f := range g[1:] {
		if f.managed != "" || (f.symlink && f.files == nil) {
			continue
		}
		for _, r := range f.realFiles() {
			if !kept[r.key] && r.nlink <= 1 {
				kept[r.key] = true
				n += r.size
			}
		}
	}
	return n
}

// splitSet is the first file of the set that path is a file of, when that set has no index and all
// its files are there: a shard of a set without an index (prefix-0000K-of-0000N.safetensors, no
// prefix.safetensors.index.json beside it) or a file of a split GGUF model (prefix-0000K-of-0000N.gguf,
// as llama.cpp's gguf-split names them). Such a set is one model, opened by any of its files
// (source.Open), named by its first.
func splitSet(path string) (string, bool) {
	if source.IsRemote(path) {
		return "", false
	}
	dir, base := filepath.Split(path)
	var names []string
	if prefix, _, n, ok := source.ShardPattern(base); ok && n > 1 {
		if _, err := os.Stat(filepath.Join(dir, prefix+".safetensors.index.json")); err == nil {
			return "", false // the set is its index
		}
		names = source.ShardNames(prefix, n)
	} else if prefix, _, n, ok := source.GGUFSplitPattern(base); ok && n > 1 {
		names = source.GGUFSplitNames(prefix, n)
	} else {
		return "", false
	}
	for _, name := range names {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || !st.Mode().IsRegular() {
			return "", false
		}
	}
	return filepath.Join(dir, names[0]), true
}

// joinSets replaces the files of each set without an index (splitSet) among paths by the set's first
// file, once: the set is scanned as one model, never file by file.
func joinSets(paths []string) []string {
	out := paths[:0:0]
	seen := map[string]bool{}
	for _, p := range paths {
		if first, ok := splitSet(p); ok {
			if seen[first] {
				continue
			}
			seen[first] = true
			p = first
		}
		out = append(out, p)
	}
	return out
}

// partOfModel reports whether a model is one part of a model made of several: a shard of a set (named
// as shards are) or a file of a split GGUF model, found on its own, or a component of a diffusers
// pipeline, in one file or a set (its folder's parent holds model_index.json; pipelines memoises that
// per folder).
// Such a file is kept or left as it is, never deleted or linked on its own: that would break the
// model it is part of.
func partOfModel(f *scanned, pipelines map[string]bool) bool {
	path := f.path
	if source.IsRemote(path) {
		return false
	}
	if base := filepath.Base(path); !f.set {
		if _, _, n, ok := source.ShardPattern(base); ok && n > 1 {
			return true
		}
		if _, _, n, ok := source.GGUFSplitPattern(base); ok && n > 1 {
			return true
		}
		// a shard of a PyTorch checkpoint: pytorch_model-00001-of-00002.bin
		if _, _, n, ok := source.ShardPattern(strings.TrimSuffix(base, filepath.Ext(base)) + ".safetensors"); f.virtual && ok && n > 1 {
			return true
		}
	}
	parent := filepath.Dir(filepath.Dir(path))
	is, ok := pipelines[parent]
	if !ok {
		st, err := os.Stat(filepath.Join(parent, source.PipelineFile))
		is = err == nil && st.Mode().IsRegular()
		pipelines[parent] = is
	}
	return is
}
