package source

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// withCompanions adds the companion files of the folder dir (see Opened.Companions) to a model opened
// from it; links out of within (when not "") are not followed.
func withCompanions(o *Opened, err error, dir, within string) (*Opened, error) {
	if err != nil {
		return nil, err
	}
	files, err := companion.ReadDir(dir, companion.Options{Within: within})
	if err != nil {
		o.Close()
		name := dir
		var pe *fs.PathError
		if errors.As(err, &pe) {
			name = pe.Path
		}
		return nil, canon.PathError("read", name, err)
	}
	o.Folder, o.Companions = dir, files
	return o, nil
}

// IsCache reports whether dir is a model's folder in the Hugging Face cache (models--ORG--NAME): it
// holds snapshots/ and refs/ or blobs/, and no model_index.json.
func IsCache(dir string) bool {
	isDir := func(p string) bool { st, err := os.Stat(filepath.Join(dir, p)); return err == nil && st.IsDir() }
	return isDir("snapshots") && (isDir("refs") || isDir("blobs")) && !fileExists(filepath.Join(dir, PipelineFile))
}

// CacheRev splits spec, a path that is not there, into a Hugging Face cache folder and a revision
// named after its last "@" (…/models--org--name@v1.0, …@3f1c2ab…): ok is false when spec has no
// "@", the revision is empty or climbs out of refs/, or what comes before is not a cache folder. A
// file or folder whose own name holds "@" is never split: Open opens what is there first.
func CacheRev(spec string) (dir, rev string, ok bool) {
	i := strings.LastIndexByte(spec, '@')
	if i <= 0 {
		return "", "", false
	}
	dir, rev = spec[:i], spec[i+1:]
	if rev == "" || strings.HasPrefix(rev, "/") || slices.Contains(strings.Split(rev, "/"), "..") || strings.ContainsRune(rev, filepath.Separator) && filepath.Separator != '/' {
		return "", "", false
	}
	return dir, rev, IsCache(dir)
}

// openCache opens the model of a Hugging Face cache folder at a revision ("" for main): the snapshot
// that refs/REV names (a branch or tag), or snapshots/REV (a commit hash, in full or a prefix of at
// least 7 hex digits); without a revision and without refs/main, the only snapshot there is. The
// snapshot is read as the folder it is, its links into the cache's blobs followed; a link that leads
// out of the cache folder is an error, not followed.
func openCache(ctx context.Context, dir, rev string, opt Options) (*Opened, error) {
	commit, err := cacheCommit(dir, rev)
	if err != nil {
		return nil, err
	}
	snap := filepath.Join(dir, "snapshots", commit)
	if err := linksWithin(snap, dir); err != nil {
		return nil, err
	}
	var o *Opened
	if fileExists(filepath.Join(snap, PipelineFile)) {
		o, err = openPipeline(ctx, snap, localRepo{ctx, snap}, 1)
	} else {
		o, err = openFolder(ctx, snap, opt)
	}
	return withCompanions(o, err, snap, dir)
}

// cacheCommit is the commit of a cache folder's revision rev (see openCache).
func cacheCommit(dir, rev string) (string, error) {
	snaps, _ := os.ReadDir(filepath.Join(dir, "snapshots"))
	var commits []string
	for _, e := range snaps {
		if e.IsDir() {
			commits = append(commits, e.Name())
		}
	}
	named := rev
	if rev == "" {
		named = "main"
	}
	if b, err := os.ReadFile(filepath.Join(dir, "refs", filepath.FromSlash(named))); err == nil {
		c := strings.TrimSpace(string(b))
		if !isCommit(c) {
			return "", &canon.ReadError{Name: dir, Err: fmt.Errorf("refs/%s holds %q, not a commit hash", textfmt.Escape(named), textfmt.Escape(c))}
		}
		if !slices.Contains(commits, c) {
			return "", &canon.ReadError{Name: dir, Err: fmt.Errorf("refs/%s names commit %s, whose snapshot is not in the cache", textfmt.Escape(named), c),
				Hint: "download the revision again (huggingface-cli download)"}
		}
		return c, nil
	}
	if rev == "" && len(commits) == 1 {
		return commits[0], nil
	}
	if len(rev) >= 7 && isHex(rev) {
		var found []string
		for _, c := range commits {
			if strings.HasPrefix(c, strings.ToLower(rev)) {
				found = append(found, c)
			}
		}
		if len(found) == 1 {
			return found[0], nil
		}
		if len(found) > 1 {
			return "", &canon.ReadError{Name: dir, Err: fmt.Errorf("revision %s is the prefix of %d snapshots (%s)", rev, len(found), listSome(found, 3, "more")),
				Hint: "name more of the commit hash"}
		}
	}
	refs := cacheRefs(dir)
	return "", &canon.ReadError{Name: dir, Err: fmt.Errorf("the cache has no revision %s (refs: %s; snapshots: %s)", textfmt.Escape(named), listSome(refs, 5, "ref"), listSome(commits, 3, "snapshot")),
		Hint: "name a revision the cache holds: " + filepath.Base(dir) + "@REV, REV a branch, tag or commit hash"}
}

// cacheRefs lists a cache folder's refs, slash-separated ("main", "pr/1").
func cacheRefs(dir string) []string {
	var out []string
	root := filepath.Join(dir, "refs")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func isHex(s string) bool {
	_, err := hex.DecodeString(strings.ToLower(s) + strings.Repeat("0", len(s)%2))
	return err == nil
}

// isCommit reports whether s is a git commit hash (40 hex digits, or 64 for SHA-256).
func isCommit(s string) bool { return (len(s) == 40 || len(s) == 64) && isHex(s) }

// ErrLinkOut is wrapped by the error of a cache snapshot holding a link that leads out of the cache
// folder: stdiff does not follow it.
var ErrLinkOut = errors.New("a link out of the cache folder")

// linksWithin checks that every link under snap (the snapshot and the folders under it) leads into
// root (the cache folder), or nowhere (a blob not downloaded, which opening says).
func linksWithin(snap, root string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return canon.PathError("read", root, err)
	}
	return filepath.WalkDir(snap, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return canon.PathError("read", p, err)
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		real, err := filepath.EvalSymlinks(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return canon.PathError("read", p, err)
		}
		if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			target, _ := os.Readlink(p)
			return &canon.ReadError{Name: p, Err: fmt.Errorf("%w: it leads to %s", ErrLinkOut, textfmt.Escape(target)),
				Hint: "a cache's snapshot links into its blobs/ only: download the model again"}
		}
		return nil
	})
}
