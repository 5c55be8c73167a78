// Package hubtest serves a folder as a fake Hugging Face Hub, for tests of hf:// addresses: the files
// of Root/ORG/REPO/REVISION/… are downloaded from /ORG/REPO/resolve/REVISION/… (with ranges), and
// listed by the tree API, /api/models/ORG/REPO/tree/REVISION?recursive=true, a few entries a page,
// the next page named by a Link header, as the Hub pages. A repository or revision that is not there
// is a 404 with the Hub's X-Error-Code (RepoNotFound, RevisionNotFound), a missing file an
// EntryNotFound. A recorded answer of the real tree API, Root/ORG/REPO/REVISION.tree.json (a JSON array
// of its entries, with their lfs and xetHash), is served instead of the folder's listing, paged the
// same way. Only tests import it.
package hubtest

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Hub serves Root as the Hub does.
type Hub struct {
	// Root holds ORG/REPO/REVISION/… for each revision served.
	Root string
	// PageSize is how many entries a page of the tree API lists (0: 2, so that tests see pages).
	PageSize int
	// NoAPI makes the tree API answer 404 without a code, as a plain file server does.
	NoAPI bool

	mu sync.Mutex
	// asked logs "METHOD path?query Authorization" per request.
	asked []string
}

// Asked lists the requests so far: the path and query of each, a space, and its Authorization header.
func (h *Hub) Asked() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.asked...)
}

// ServeHTTP implements http.Handler.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.asked = append(h.asked, r.URL.RequestURI()+" "+r.Header.Get("Authorization"))
	h.mu.Unlock()
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	for i := range segs {
		segs[i], _ = url.PathUnescape(segs[i])
	}
	switch {
	case len(segs) >= 6 && segs[0] == "api" && segs[1] == "models" && segs[4] == "tree":
		h.tree(w, r, segs[2], segs[3], segs[5])
	case len(segs) >= 5 && segs[2] == "resolve":
		dir, ok := h.revision(w, segs[0], segs[1], segs[3])
		if !ok {
			return
		}
		p := filepath.Join(dir, filepath.FromSlash(path.Join(segs[4:]...)))
		f, err := os.Open(p)
		if err != nil {
			fail(w, "EntryNotFound")
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil || st.IsDir() {
			fail(w, "EntryNotFound")
			return
		}
		http.ServeContent(w, r, "", st.ModTime(), f)
	default:
		http.NotFound(w, r)
	}
}

// revision finds the folder of a revision, or answers as the Hub does when there is none.
func (h *Hub) revision(w http.ResponseWriter, org, repo, rev string) (string, bool) {
	if org == "" || repo == "" || strings.Contains(org+repo, "..") || strings.Contains(rev, "..") {
		http.Error(w, "not found", http.StatusNotFound)
		return "", false
	}
	repoDir := filepath.Join(h.Root, org, repo)
	if st, err := os.Stat(repoDir); err != nil || !st.IsDir() {
		fail(w, "RepoNotFound")
		return "", false
	}
	dir := filepath.Join(repoDir, filepath.FromSlash(rev))
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		fail(w, "RevisionNotFound")
		return "", false
	}
	return dir, true
}

// fail answers 404 with the Hub's error code.
func fail(w http.ResponseWriter, code string) {
	w.Header().Set("X-Error-Code", code)
	http.Error(w, code, http.StatusNotFound)
}

// entry is one entry of the tree API's answer.
type entry struct {
	Type string `json:"type"`
	OID  string `json:"oid"`
	Size int64  `json:"size"`
	Path string `json:"path"`
}

// tree answers the tree API: every file and folder of the revision, PageSize entries a page.
func (h *Hub) tree(w http.ResponseWriter, r *http.Request, org, repo, rev string) {
	if h.NoAPI {
		http.NotFound(w, r)
		return
	}
	dir, ok := h.revision(w, org, repo, rev)
	if !ok {
		return
	}
	var all []any
	if b, err := os.ReadFile(filepath.Join(h.Root, org, repo, filepath.FromSlash(rev)+".tree.json")); err == nil {
		var recorded []json.RawMessage
		if err := json.Unmarshal(b, &recorded); err != nil {
			http.Error(w, "bad recorded tree: "+err.Error(), http.StatusInternalServerError)
			return
		}
		for _, e := range recorded {
			all = append(all, e)
		}
	} else {
		all = listFolder(dir)
	}
	h.page(w, r, all)
}

// listFolder is the tree API's entries of the files and folders under dir, sorted by path.
func listFolder(dir string) []any {
	var all []entry
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		e := entry{Type: "file", Path: filepath.ToSlash(rel), OID: fmt.Sprintf("%040d", len(all))}
		if d.IsDir() {
			e.Type = "directory"
		} else if info, err := os.Stat(p); err == nil { // a link is listed as the file it leads to, as the Hub lists its files
			e.Size = info.Size()
		}
		all = append(all, e)
		return nil
	})
	sort.Slice(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	out := make([]any, len(all))
	for i := range all {
		out[i] = all[i]
	}
	return out
}

// page answers with one page of all, PageSize entries, naming the next page in a Link header.
func (h *Hub) page(w http.ResponseWriter, r *http.Request, all []any) {
	size := h.PageSize
	if size <= 0 {
		size = 2
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	from = min(max(from, 0), len(all))
	to := min(from+size, len(all))
	if to < len(all) {
		next := *r.URL
		q := next.Query()
		q.Set("cursor", strconv.Itoa(to))
		next.RawQuery = q.Encode()
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		w.Header().Set("Link", fmt.Sprintf(`<%s://%s%s>; rel="next"`, scheme, r.Host, next.RequestURI()))
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(all[from:to])
}
