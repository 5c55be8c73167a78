package store

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon/source"
)

// Layouts of a store's blob (Blob.Layout). Codes are stable and safe to match in scripts.
const (
	// LayoutRepoBlobs: a Hugging Face cache repository folder's blobs/<etag> (a regular file, or a link
	// to the shared store).
	LayoutRepoBlobs = "repo-blobs"
	// LayoutSharedBlobs: the Hugging Face cache's shared blob store, CACHE/blobs/<2 hex>/<Xet hash>.
	LayoutSharedBlobs = "shared-blobs"
	// LayoutOllamaBlobs: ollama's blobs/sha256-HEX.
	LayoutOllamaBlobs = "ollama-blobs"
)

// Kinds of hash a blob's name claims (Blob.HashKind).
const (
	// HashXet: the Hub's Xet hash of the file's bytes (stdiff hash --xet computes it).
	HashXet = "xet"
	// HashSHA256: the SHA-256 of the file's bytes (a Git LFS file's oid).
	HashSHA256 = "sha256"
	// HashGitSHA1: the Git blob id, SHA-1 of "blob <size>\x00" and the bytes (a file Git stores itself).
	HashGitSHA1 = "git-sha1"
)

// Blob is where a file of a store lies and what the store says of it. Nothing is verified against
// the file's bytes: Hash is what its name claims.
type Blob struct {
	Store  Store  `json:"store"`
	Layout string `json:"layout"`
	// Hash is the hash the file's name claims, of kind HashKind ("" when the name is no hash stdiff
	// knows: then HashKind is "" too).
	Hash     string `json:"hash"`
	HashKind string `json:"hash_kind"`
	// Shared is, for a repository blob that links into the shared store, that store's file; "".
	Shared string `json:"shared,omitempty"`
	// Refs are the snapshot files that refer to the blob, by repository, revision and path, as the
	// store says: for a repository blob its snapshots' links to it; for a shared blob, through the
	// repository blobs its .refs list names (each checked to be a link to it). Empty for ollama's.
	Refs []Ref `json:"refs"`
	// StaleRefs counts the .refs entries of a shared blob that are no longer links to it (the list
	// is a hint: huggingface_hub appends to it and checks it when it collects garbage).
	StaleRefs int `json:"stale_refs,omitempty"`
}

// Ref is one snapshot file of the Hugging Face cache that refers to a blob.
type Ref struct {
	// Repo is the repository's id (org/name) and RepoType its type (model, dataset, space).
	Repo     string `json:"repo"`
	RepoType string `json:"repo_type"`
	// Revision is the snapshot's commit (its folder's name); Names the refs (main, pr/1) the
	// cache's refs/ says point at it.
	Revision string   `json:"revision"`
	Names    []string `json:"names"`
	// Path is the file's path in the repository.
	Path string `json:"path"`
	// Local is the snapshot file's path on this machine.
	Local string `json:"-"`
}

// Snapshot is the local path of the snapshot file that best stands for the blob: the one in the
// revision refs/main names, else in one another ref names, else the first; "" when none refers to it.
func (b *Blob) Snapshot() string {
	if b == nil {
		return ""
	}
	best, rank := "", 0
	for _, r := range b.Refs {
		k := 1
		if len(r.Names) > 0 {
			k = 2
		}
		for _, name := range r.Names {
			if name == "main" {
				k = 3
			}
		}
		if k > rank {
			best, rank = r.Local, k
		}
	}
	return best
}

// maxRefsList bounds how much of a .refs list is read.
const maxRefsList = 1 << 20

// Locate says where the local file at path lies when it is a store's blob: a Hugging Face cache
// repository folder's blobs/<etag>, a file of the cache's shared blob store, ollama's
// blobs/sha256-HEX; nil for any other path (a snapshot's file, a file outside a store). Links in
// path are not followed (as ManagedBy).
func Locate(path string) *Blob {
	if source.IsRemote(path) {
		return nil
	}
	abs := filepath.Clean(absPath(path))
	parts := strings.Split(filepath.ToSlash(abs), "/")
	n := len(parts)
	switch {
	case isSharedBlob(parts):
		b := &Blob{Store: HuggingFace, Layout: LayoutSharedBlobs, Hash: parts[n-1], HashKind: HashXet, Refs: []Ref{}}
		b.Refs, b.StaleRefs = sharedRefs(abs, filepath.FromSlash(strings.Join(parts[:n-3], "/")))
		return b
	case n >= 3 && parts[n-2] == "blobs" && repoFolder(parts) == n-3:
		b := &Blob{Store: HuggingFace, Layout: LayoutRepoBlobs, Hash: parts[n-1], HashKind: hashKind(parts[n-1])}
		if b.HashKind == "" {
			b.Hash = ""
		}
		if t, ok := linkTarget(abs); ok && isSharedBlob(strings.Split(filepath.ToSlash(t), "/")) {
			b.Shared = t
		}
		b.Refs = snapshotRefs(filepath.Dir(filepath.Dir(abs)), abs)
		return b
	case n >= 3 && parts[n-2] == "blobs" && isOllamaBlob(parts[n-1]) && isDir(append(parts[:n-2:n-2], "manifests")...):
		return &Blob{Store: Ollama, Layout: LayoutOllamaBlobs, Hash: parts[n-1][len("sha256-"):], HashKind: HashSHA256, Refs: []Ref{}}
	}
	return nil
}

// hashKind is the kind of hash a repository blob's name is: 64 hex digits an LFS file's SHA-256, 40
// a Git blob id; "" for another name.
func hashKind(name string) string {
	switch {
	case !isLowerHex(name):
		return ""
	case len(name) == 64:
		return HashSHA256
	case len(name) == 40:
		return HashGitSHA1
	}
	return ""
}

// linkTarget is where the link at p points, made absolute against p's folder and cleaned (not
// followed further); false when p is not a link.
func linkTarget(p string) (string, bool) {
	t, err := os.Readlink(p)
	if err != nil {
		return "", false
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(filepath.Dir(p), t)
	}
	return filepath.Clean(t), true
}

// sharedRefs reads the .refs list beside the shared blob at blob (in the cache folder cache): each
// line a repository blob, CACHE-relative (models--ORG--NAME/blobs/ETAG), that links to it. An entry
// that is not such a link any more counts as stale; the snapshot files linking to each live one are
// the blob's refs.
func sharedRefs(blob, cache string) ([]Ref, int) {
	refs, stale := []Ref{}, 0
	f, err := os.Open(blob + refsSuffix)
	if err != nil {
		return refs, 0
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(io.LimitReader(f, maxRefsList))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || seen[line] {
			continue
		}
		seen[line] = true
		repo, etag, ok := refsEntry(line)
		if !ok {
			stale++
			continue
		}
		repoBlob := filepath.Join(cache, repo, "blobs", etag)
		if t, ok := linkTarget(repoBlob); !ok || t != blob {
			stale++
			continue
		}
		refs = append(refs, snapshotRefs(filepath.Join(cache, repo), repoBlob)...)
	}
	sortRefs(refs)
	return refs, stale
}

// refsEntry splits a line of a .refs list, REPO/blobs/ETAG (REPO a cache repository folder's name),
// into its repository folder and blob names; false for any other line (one that would name a file
// elsewhere: "..", a separator, a NUL, an absolute path).
func refsEntry(line string) (repo, etag string, ok bool) {
	el := strings.Split(line, "/")
	if len(el) != 3 || !isRepoName(el[0]) || el[1] != "blobs" || strings.ContainsAny(line, "\\\x00:") {
		return "", "", false
	}
	for _, e := range []string{el[0], el[2]} {
		if e == "" || e == "." || e == ".." {
			return "", "", false
		}
	}
	return el[0], el[2], true
}

// snapshotRefs are the files of the snapshots of the repository folder repo that are links to its
// blob at blob, with the refs/ that name each snapshot.
func snapshotRefs(repo, blob string) []Ref {
	refs := []Ref{}
	typ, id := repoID(filepath.Base(repo))
	names := refNames(repo)
	snaps := filepath.Join(repo, "snapshots")
	revs, err := os.ReadDir(snaps)
	if err != nil {
		return refs
	}
	for _, rev := range revs {
		if !rev.IsDir() {
			continue
		}
		root := filepath.Join(snaps, rev.Name())
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			if t, ok := linkTarget(p); ok && t == blob {
				rel, _ := filepath.Rel(root, p)
				refs = append(refs, Ref{Repo: id, RepoType: typ, Revision: rev.Name(), Names: append([]string{}, names[rev.Name()]...), Path: filepath.ToSlash(rel), Local: p})
			}
			return nil
		})
	}
	sortRefs(refs)
	return refs
}

// repoID is a cache repository folder's type and id: models--org--name is a model, org/name.
func repoID(folder string) (typ, id string) {
	kind, rest, _ := strings.Cut(folder, "--")
	return strings.TrimSuffix(kind, "s"), strings.ReplaceAll(rest, "--", "/")
}

// refNames reads the repository folder's refs/ (refs/main, refs/pr/1: each file a commit): the ref
// names by the commit they point at.
func refNames(repo string) map[string][]string {
	names := map[string][]string{}
	root := filepath.Join(repo, "refs")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		b, _ := io.ReadAll(io.LimitReader(f, 256))
		if rel, err := filepath.Rel(root, p); err == nil {
			rev := strings.TrimSpace(string(b))
			names[rev] = append(names[rev], filepath.ToSlash(rel))
		}
		return nil
	})
	return names
}

// sortRefs orders refs by repository, revision and path.
func sortRefs(refs []Ref) {
	sort.Slice(refs, func(i, j int) bool {
		a, b := refs[i], refs[j]
		if a.RepoType+a.Repo != b.RepoType+b.Repo {
			return a.RepoType+"/"+a.Repo < b.RepoType+"/"+b.Repo
		}
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		return a.Path < b.Path
	})
}

// SnapshotFile is, for a file in a Hugging Face cache repository's snapshots (REPO/snapshots/REV/…),
// its repository, revision, the refs naming that revision and its path there; nil for any other path.
// Links in path are not followed.
func SnapshotFile(path string) *Ref {
	if source.IsRemote(path) {
		return nil
	}
	parts := strings.Split(filepath.ToSlash(filepath.Clean(absPath(path))), "/")
	i := repoFolder(parts)
	if i < 0 || parts[i+1] != "snapshots" {
		return nil
	}
	typ, id := repoID(parts[i])
	names := refNames(filepath.FromSlash(strings.Join(parts[:i+1], "/")))[parts[i+2]]
	return &Ref{Repo: id, RepoType: typ, Revision: parts[i+2], Names: append([]string{}, names...), Path: strings.Join(parts[i+3:], "/")}
}
