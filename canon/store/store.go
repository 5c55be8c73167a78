// Package store knows the layouts programs keep model files in: the Hugging Face cache (a repository
// folder's blobs/ and snapshots/, and the cache-wide shared blob store keyed by Xet hash) and ollama's
// models folder. ManagedBy says whether a path lies in one (dupes leaves such files alone); Locate
// says, of a file in one, which store, what hash its name claims and what refers to it (inspect).
// It goes by the layout on disk, never by environment variables, and reads only names, links and the
// shared store's small .refs lists: no file's bytes.
package store

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/stdiff/stdiff/canon/source"
)

// Store names a program whose files a path lies among: it keeps them in a layout of its own (the Hugging
// Face cache's snapshots are links to its blobs; ollama's manifests name its blobs), so deleting,
// replacing or moving one breaks that program. Codes are stable and safe to match in scripts.
type Store string

// Stores.
const (
	// HuggingFace: a repository folder of the Hugging Face cache (models--ORG--NAME,
	// datasets--…, spaces--…, holding blobs/ and snapshots/): its snapshots/REV/… links and its blobs;
	// and the cache's shared blob store (CACHE/blobs/<2 hex>/<Xet hash>).
	HuggingFace Store = "huggingface-cache"
	// Ollama: ollama's models folder (holding blobs/ and manifests/): its blobs/sha256-HEX.
	Ollama Store = "ollama"
)

// ManagedBy says which program's store the local path lies in, "" for none. It goes by the store's
// layout on disk (the path's folders and their siblings), not by environment variables, so that a
// store anywhere is known; links in the path are not followed (a link elsewhere to a store's file is
// the user's own).
func ManagedBy(path string) Store {
	if source.IsRemote(path) {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(absPath(path)), "/")
	if i := repoFolder(parts); i >= 0 {
		return HuggingFace
	}
	if isSharedBlob(parts) {
		return HuggingFace
	}
	if n := len(parts); n >= 3 && parts[n-2] == "blobs" && isOllamaBlob(parts[n-1]) && isDir(append(parts[:n-2:n-2], "manifests")...) {
		return Ollama
	}
	return ""
}

// repoFolder is the index among parts (an absolute path's) of the Hugging Face cache repository folder
// the path lies in, as one of its snapshots' files or one of its blobs; -1 for none.
func repoFolder(parts []string) int {
	for i, p := range parts {
		if !isRepoName(p) {
			continue
		}
		rest := len(parts) - i - 1 // below the repository folder
		if (rest >= 3 && parts[i+1] == "snapshots" || rest == 2 && parts[i+1] == "blobs") &&
			isDir(append(parts[:i+1:i+1], "blobs")...) && isDir(append(parts[:i+1:i+1], "snapshots")...) {
			return i
		}
	}
	return -1
}

// isRepoName reports whether a folder's name is a cache repository folder's: models--…, datasets--…,
// spaces--….
func isRepoName(p string) bool {
	return strings.HasPrefix(p, "models--") || strings.HasPrefix(p, "datasets--") || strings.HasPrefix(p, "spaces--")
}

// isDir reports whether the path joined from elem (slash-separated) is a folder.
func isDir(elem ...string) bool {
	st, err := os.Stat(filepath.FromSlash(strings.Join(elem, "/")))
	return err == nil && st.IsDir()
}

// exists reports whether the path joined from elem names anything (a link is not followed).
func exists(elem ...string) bool {
	_, err := os.Lstat(filepath.FromSlash(strings.Join(elem, "/")))
	return err == nil
}

// isSharedBlob reports whether parts (an absolute path's) name a file of the Hugging Face cache's shared
// blob store (huggingface_hub's _shared_blobs.py): CACHE/blobs/<first 2 hex digits>/<Xet hash>, with
// the store's marker (blobs/.huggingface-shared-blobs) or the file's reference list (<hash>.refs)
// beside it. Its snapshots link there; deleting one breaks every repository that links to it.
func isSharedBlob(parts []string) bool {
	n := len(parts)
	if n < 4 || parts[n-3] != "blobs" || len(parts[n-1]) != 64 || len(parts[n-2]) != 2 || parts[n-1][:2] != parts[n-2] || !isLowerHex(parts[n-1]) {
		return false
	}
	return exists(append(parts[:n-2:n-2], sharedMarker)...) || exists(append(parts[:n-1:n-1], parts[n-1]+refsSuffix)...)
}

// The shared blob store's marker file (in CACHE/blobs) and the suffix of a blob's reference list.
const (
	sharedMarker = ".huggingface-shared-blobs"
	refsSuffix   = ".refs"
)

// isLowerHex reports whether s is lower-case hexadecimal digits.
func isLowerHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// isOllamaBlob reports whether name is an ollama blob's: sha256-HEX (sha256:HEX in older versions),
// 64 hex digits.
func isOllamaBlob(name string) bool {
	hex, ok := strings.CutPrefix(name, "sha256-")
	if !ok {
		if hex, ok = strings.CutPrefix(name, "sha256:"); !ok {
			return false
		}
	}
	return len(hex) == 64 && isLowerHex(hex)
}

// Describe is the store in words: "the Hugging Face cache", "ollama".
func (s Store) Describe() string {
	switch s {
	case HuggingFace:
		return "the Hugging Face cache"
	case Ollama:
		return "ollama"
	}
	return string(s)
}

// absPath is p made absolute (cleaned when it cannot be).
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}
