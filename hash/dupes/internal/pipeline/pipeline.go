// Package pipeline tells whether a DDUF file (Hugging Face's one-file diffusers pipeline: a stored
// zip archive) and a diffusers pipeline folder (model_index.json at its root, each component in its
// folder) hold the same pipeline so that deleting either loses nothing: every entry under the folder
// is a regular file or a folder, and the folder's files are the archive's members, name for name and
// byte for byte (its weights too: a safetensors header's metadata is part of what a loader reads). A
// DDUF file the DDUF rules reject (duplicate names, "..", an encrypted or compressed member…) is never
// such a copy. Package dupes groups such a pair (Find), package act checks it again before deleting
// one of them whole.
package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/hash/dupes/internal/diskfile"
)

// Change says how a file of the folder and the archive's member of its name differ.
type Change string

// Changes.
const (
	FolderOnly  Change = "folder-only"  // a file of the folder that the archive lacks
	ArchiveOnly Change = "archive-only" // a member of the archive that the folder lacks
	OtherBytes  Change = "other-bytes"  // both have it, with other bytes
	NotAFile    Change = "not-a-file"   // an entry of the folder that is neither a regular file nor a folder (a link)
)

// Difference is a file that one side has and the other lacks or holds with other bytes.
type Difference struct {
	// Name is the file's path in the folder, slash-separated: the member's name in the archive.
	Name string `json:"name"`
	// Change is how the two sides differ: folder-only, archive-only, other-bytes or not-a-file.
	Change Change `json:"change"`
}

// File is a regular file under a folder: its name relative to the folder (slash-separated) and what
// os.Lstat said of it.
type File struct {
	Name string
	Info fs.FileInfo
}

// IsWeights reports whether name is a weights file (.safetensors): the bytes compared last.
func IsWeights(name string) bool { return strings.HasSuffix(name, ".safetensors") }

// List lists the regular files under dir (links not followed), sorted by name, and as differences
// the entries that are neither regular files nor folders (NotAFile): a folder holding a link is no
// copy of an archive, whose members are files.
func List(dir string) ([]File, []Difference, error) {
	var files []File
	var odd []Difference
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			odd = append(odd, Difference{Name: name, Change: NotAFile})
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, File{Name: name, Info: st})
		return nil
	})
	if err != nil {
		return nil, nil, canon.PathError("read", dir, err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, odd, nil
}

// member is a member of an archive: Size bytes at Offset.
type member struct{ offset, size int64 }

// Archive is a DDUF file the DDUF rules accept, open to read its members in place.
type Archive struct {
	src     *source.FileSource
	members map[string]member
	names   []string // sorted
}

// ErrNotValid is wrapped by the error of Open for a file that is no DDUF file the DDUF rules accept.
var ErrNotValid = errors.New("not a DDUF file the DDUF rules accept")

// Open opens the DDUF file at path and reads its directory (canon.Read: the DDUF rules and the zip
// hardening). A file that is not one, or that the rules reject, is an error wrapping ErrNotValid.
func Open(path string) (*Archive, error) {
	src, err := source.OpenFile(path)
	if err != nil {
		return nil, err
	}
	m, err := canon.Read(src, src.Size(), path)
	if err == nil && (m.Archive == nil || !m.Valid() || m.HasErrors() || len(m.Archive.Members) == 0) {
		err = &canon.ReadError{Name: path, Op: "read", Err: ErrNotValid}
	}
	if err != nil {
		src.Close()
		return nil, err
	}
	a := &Archive{src: src, members: map[string]member{}}
	for _, x := range m.Archive.Members {
		if _, dup := a.members[x.Name]; dup { // the rules say so already; never read one of two
			src.Close()
			return nil, &canon.ReadError{Name: path, Op: "read", Err: ErrNotValid}
		}
		a.members[x.Name] = member{x.Offset, x.Size}
		a.names = append(a.names, x.Name)
	}
	sort.Strings(a.names)
	return a, nil
}

// Close closes the archive's file.
func (a *Archive) Close() error { return a.src.Close() }

// Key is the names and sizes of the archive's weights members: a folder whose weights files have
// the same Key may hold the same pipeline (FolderKey).
func (a *Archive) Key() string {
	var b strings.Builder
	for _, n := range a.names {
		if IsWeights(n) {
			fmt.Fprintf(&b, "%s\x00%d\x00", n, a.members[n].size)
		}
	}
	return b.String()
}

// FolderKey is Key for a folder's files.
func FolderKey(files []File) string {
	var b strings.Builder
	for _, f := range files {
		if IsWeights(f.Name) {
			fmt.Fprintf(&b, "%s\x00%d\x00", f.Name, f.Info.Size())
		}
	}
	return b.String()
}

// Compare compares the archive with the folder dir, whose files (List) are files and odd entries
// odd. It returns the differences, in name order (every one among the files but the weights;
// of the weights, the first found), and whether the weights files are the same, name for name and
// byte for byte: when they are and there is no difference, deleting either side loses nothing.
// Files that changed while read are an error (canon.ErrChanged).
func (a *Archive) Compare(ctx context.Context, dir string, files []File, odd []Difference) ([]Difference, bool, error) {
	diffs := append([]Difference(nil), odd...)
	inFolder := map[string]File{}
	for _, f := range files {
		inFolder[f.Name] = f
	}
	weightsSame := true
	odds := map[string]bool{}
	for _, d := range odd {
		odds[d.Name], weightsSame = true, weightsSame && !IsWeights(d.Name)
	}
	for _, n := range a.names {
		if _, ok := inFolder[n]; !ok && !odds[n] { // a link of a member's name is said once, not-a-file
			diffs = append(diffs, Difference{Name: n, Change: ArchiveOnly})
			weightsSame = weightsSame && !IsWeights(n)
		}
	}
	var weights []File
	for _, f := range files {
		m, ok := a.members[f.Name]
		switch {
		case !ok:
			diffs = append(diffs, Difference{Name: f.Name, Change: FolderOnly})
			weightsSame = weightsSame && !IsWeights(f.Name)
		case IsWeights(f.Name):
			weights = append(weights, f)
		default:
			same, err := a.same(ctx, dir, f, m)
			if err != nil {
				return nil, false, err
			}
			if !same {
				diffs = append(diffs, Difference{Name: f.Name, Change: OtherBytes})
			}
		}
	}
	for _, f := range weights { // the large files last, and only while the others leave a reason to
		if !weightsSame {
			break
		}
		same, err := a.same(ctx, dir, f, a.members[f.Name])
		if err != nil {
			return nil, false, err
		}
		if !same {
			diffs, weightsSame = append(diffs, Difference{Name: f.Name, Change: OtherBytes}), false
		}
	}
	sort.SliceStable(diffs, func(i, j int) bool { return diffs[i].Name < diffs[j].Name })
	return diffs, weightsSame, nil
}

// same reports whether the folder's file f holds member m's bytes, reading both side by side.
func (a *Archive) same(ctx context.Context, dir string, f File, m member) (bool, error) {
	if f.Info.Size() != m.size {
		return false, nil
	}
	src, err := source.OpenFile(filepath.Join(dir, filepath.FromSlash(f.Name)))
	if err != nil {
		return false, err
	}
	defer src.Close()
	if src.Size() != m.size {
		return false, nil
	}
	ba, bb := make([]byte, min(m.size, diskfile.Chunk)), make([]byte, min(m.size, diskfile.Chunk))
	for off := int64(0); off < m.size; {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		n := min(m.size-off, diskfile.Chunk)
		if _, err := a.src.ReadAt(ba[:n], m.offset+off); err != nil && err != io.EOF {
			return false, err
		}
		if _, err := src.ReadAt(bb[:n], off); err != nil && err != io.EOF {
			return false, err
		}
		if !bytes.Equal(ba[:n], bb[:n]) {
			return false, nil
		}
		off += n
	}
	return true, errors.Join(src.Unchanged(), a.src.Unchanged())
}

// Match is a pipeline folder (Dir, its files Files) and the DDUF files (Same) that hold its very
// files: deleting any of them loses nothing.
type Match struct {
	Dir   string
	Files []File
	Same  []string
}

// Differs is a pipeline folder (Dir) and a DDUF file with the same weights files, name for name and
// byte for byte, and other files beside them: the files they do not share.
type Differs struct {
	Dir   string
	DDUF  string
	Diffs []Difference
}

// Find compares the DDUF files ddufs with the pipeline folders of pipelines (folder → whether it is
// one) whose weights files have their names and sizes (Key): a folder whose files are an archive's
// members, name for name and byte for byte, is a Match with it; one with the same weights and other
// files beside them Differs. A DDUF file joins one folder's Match at most, the first in path order.
// Nothing is read when there are no DDUF files or no folders; an archive or folder that cannot be
// read is left out.
func Find(ctx context.Context, ddufs []string, pipelines map[string]bool) ([]Match, []Differs) {
	var dirs []string
	for d, is := range pipelines {
		if is && len(ddufs) > 0 {
			dirs = append(dirs, d)
		}
	}
	byKey := map[string][]string{}
	archives := map[string]*Archive{}
	for _, p := range ddufs {
		if len(dirs) == 0 {
			break
		}
		a, err := Open(p)
		if err != nil {
			continue // changed since the scan read it: no copy
		}
		defer a.Close()
		if k := a.Key(); k != "" {
			archives[p], byKey[k] = a, append(byKey[k], p)
		}
	}
	if len(archives) == 0 {
		return nil, nil
	}
	sort.Strings(dirs)
	var matches []Match
	var differs []Differs
	joined := map[string]bool{}
	for _, dir := range dirs {
		files, odd, err := List(dir)
		if err != nil || ctx.Err() != nil {
			continue
		}
		m := Match{Dir: dir, Files: files}
		for _, p := range byKey[FolderKey(files)] {
			diffs, weights, err := archives[p].Compare(ctx, dir, files, odd)
			switch {
			case err != nil || !weights:
			case len(diffs) > 0:
				differs = append(differs, Differs{Dir: dir, DDUF: p, Diffs: diffs})
			case !joined[p]:
				m.Same, joined[p] = append(m.Same, p), true
			}
		}
		if m.Same != nil {
			matches = append(matches, m)
		}
	}
	return matches, differs
}
