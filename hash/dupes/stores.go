package dupes

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
	// StoreHuggingFace: a repository folder of the Hugging Face cache (models--ORG--NAME,
	// datasets--…, spaces--…, holding blobs/ and snapshots/): its snapshots/REV/… links and its blobs.
	StoreHuggingFace Store = "huggingface-cache"
	// StoreOllama: ollama's models folder (holding blobs/ and manifests/): its blobs/sha256-HEX.
	StoreOllama Store = "ollama"
)

// ManagedBy says which program's store the local path lies in, "" for none. It goes by the store's
// layout on disk (the path's folders and their siblings), not by environment variables, so that a
// store anywhere is known; links in the path are not followed (a link elsewhere to a store's file is
// the user's own).
func ManagedBy(path string) Store {
	if source.IsRemote(path) {
		return ""
	}
	abs := absPath(path)
	parts := strings.Split(filepath.ToSlash(abs), "/")
	isDir := func(elem ...string) bool {
		st, err := os.Stat(filepath.FromSlash(strings.Join(elem, "/")))
		return err == nil && st.IsDir()
	}
	for i, p := range parts {
		if !strings.HasPrefix(p, "models--") && !strings.HasPrefix(p, "datasets--") && !strings.HasPrefix(p, "spaces--") {
			continue
		}
		rest := len(parts) - i - 1 // below the repository folder
		if (rest >= 3 && parts[i+1] == "snapshots" || rest == 2 && parts[i+1] == "blobs") &&
			isDir(append(parts[:i+1:i+1], "blobs")...) && isDir(append(parts[:i+1:i+1], "snapshots")...) {
			return StoreHuggingFace
		}
	}
	if isSharedBlob(parts) {
		return StoreHuggingFace
	}
	if n := len(parts); n >= 3 && parts[n-2] == "blobs" && isOllamaBlob(parts[n-1]) && isDir(append(parts[:n-2:n-2], "manifests")...) {
		return StoreOllama
	}
	return ""
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
	exists := func(elem ...string) bool {
		_, err := os.Lstat(filepath.FromSlash(strings.Join(elem, "/")))
		return err == nil
	}
	return exists(append(parts[:n-2:n-2], ".huggingface-shared-blobs")...) || exists(append(parts[:n-1:n-1], parts[n-1]+".refs")...)
}

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
	if len(hex) != 64 {
		return false
	}
	for _, c := range hex {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Describe is the store in words: "the Hugging Face cache", "ollama".
func (s Store) Describe() string {
	switch s {
	case StoreHuggingFace:
		return "the Hugging Face cache"
	case StoreOllama:
		return "ollama"
	}
	return string(s)
}
