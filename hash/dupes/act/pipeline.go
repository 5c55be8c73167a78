package act

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/stdiff/stdiff/hash/dupes"
	"github.com/stdiff/stdiff/hash/dupes/internal/diskfile"
	"github.com/stdiff/stdiff/hash/dupes/internal/pipeline"
)

// samePipeline is verify for a content group of a diffusers pipeline folder and a DDUF file
// (dupes.Member.Pipeline): one of k and m is the folder, named by its model_index.json, the other a
// DDUF file the DDUF rules accept, and the folder's files, listed again, are the archive's members,
// name for name and byte for byte (package internal/pipeline). It returns the files deleting m removes:
// the DDUF file, or every file under the folder (a.listed, as listed). Two folders, or two archives,
// are never such a copy.
func (a *actor) samePipeline(g *dupes.Group, k, m *dupes.Member) (bool, []string, []string, error) {
	a.listed = nil
	folder, archive := k, m
	if m.Pipeline {
		folder, archive = m, k
	}
	if g.Level != dupes.LevelContent || archive.Pipeline || filepath.Base(folder.Path) != "model_index.json" {
		return false, nil, nil, nil
	}
	ar, err := pipeline.Open(archive.Path)
	if errors.Is(err, pipeline.ErrNotValid) {
		return false, nil, nil, nil
	} else if err != nil {
		return false, nil, nil, err
	}
	defer ar.Close()
	dir := filepath.Dir(folder.Path)
	files, odd, err := pipeline.List(dir)
	if err != nil {
		return false, nil, nil, err
	}
	diffs, weights, err := ar.Compare(a.ctx, dir, files, odd)
	if err != nil || !weights || len(diffs) > 0 {
		return false, nil, nil, err
	}
	a.listed = files
	if !m.Pipeline {
		return true, []string{m.Path}, nil, nil
	}
	out := []string{m.Path}
	for _, f := range files {
		if p := filepath.Join(dir, filepath.FromSlash(f.Name)); p != filepath.Clean(m.Path) {
			out = append(out, p)
		}
	}
	return true, out, nil, nil
}

// errFolderChanged is removeFolder's error for a folder whose files changed since they were compared:
// it is back where it was, whole.
var errFolderChanged = errors.New("the folder changed since it was compared")

// removeFolder deletes the pipeline folder dir, whose files verify compared (listed), whole or not at
// all: it moves the folder aside under a temporary name in its parent (one rename: from then on no
// loader finds a part of it), lists it again, and moves it back (errFolderChanged) unless its files are
// those compared, the same files with the same sizes and modification times, none of them a file of
// the keeper k; then it deletes it. Only a file that refuses to go after that leaves the rest under
// the temporary name, which the error names.
func removeFolder(dir string, listed []pipeline.File, k *dupes.Member) error {
	if len(listed) == 0 {
		return errFolderChanged
	}
	kept := keeperOwn(k)
	tmp := tempName(filepath.Dir(dir), "delete")
	if err := os.Rename(dir, tmp); err != nil {
		return err
	}
	if !folderStill(tmp, listed, kept) {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("the folder changed since it was compared, and moving it back failed: it is whole at %s: %w", tmp, err)
		}
		return errFolderChanged
	}
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("deleting the folder moved aside to %s (what is left of it is there): %w", tmp, err)
	}
	return nil
}

// folderStill reports whether the files under dir are those listed (pipeline.List): the same names,
// files, sizes, modification and change times, nothing else beside them, none of them one of kept.
func folderStill(dir string, listed []pipeline.File, kept realFiles) bool {
	files, odd, err := pipeline.List(dir)
	return err == nil && len(odd) == 0 && len(listed) > 0 && slices.EqualFunc(files, listed, func(a, b pipeline.File) bool {
		return a.Name == b.Name && os.SameFile(a.Info, b.Info) && a.Info.Size() == b.Info.Size() &&
			a.Info.ModTime().Equal(b.Info.ModTime()) && diskfile.ChangeTime(a.Info) == diskfile.ChangeTime(b.Info) && !kept.has(a.Info)
	})
}
