package source

import (
	"context"
	"errors"
	"fmt"

	"github.com/stdiff/stdiff/canon"
)

// HubFile is a file of a repository on the Hub as its tree API lists it (huggingface_hub's RepoFile):
// the identities the Hub keeps of its bytes, so a local file can be matched without a download.
type HubFile struct {
	// Path is the file's path in the repository (slash-separated, checked to stay inside it).
	Path string `json:"path"`
	// Size is its length in bytes.
	Size int64 `json:"size"`
	// OID is git's object ID of what the repository holds: the file's git blob SHA-1 when the file is
	// in git itself, the pointer's when it is in LFS or Xet storage.
	OID string `json:"oid"`
	// LFS is set for a file in LFS (or Xet) storage: OID is the SHA-256 of its bytes.
	LFS *struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	} `json:"lfs,omitempty"`
	// XetHash is the file's Xet hash (package hash/xet), for a file stored with Xet.
	XetHash string `json:"xetHash,omitempty"`
}

// ListHubFiles lists the files of a revision of a repository on the Hub (spec is hf://ORG/REPO[@REV];
// a path in it keeps the files under that folder), as the tree API gives them page by page, with their
// sizes and hashes. Its errors are *canon.ReadError values naming spec.
func ListHubFiles(ctx context.Context, spec string, opt Options) ([]HubFile, error) {
	a, err := parseHF(spec)
	if err != nil {
		return nil, &canon.ReadError{Name: spec, Err: err}
	}
	httpOpt := opt.HTTP
	httpOpt.Token, httpOpt.TokenOrigin = opt.Token, opt.endpoint()
	httpOpt.defaults()
	client, _ := newClient(httpOpt)
	defer client.CloseIdleConnections()
	var files []HubFile
	next := a.tree(opt.endpoint())
	for page := 0; next != ""; page++ {
		if page == maxListPages || len(files) > maxListEntries {
			return nil, &canon.ReadError{Name: spec, Err: fmt.Errorf("the listing has over %d pages or %d files", maxListPages, maxListEntries)}
		}
		type entry struct {
			Type string `json:"type"`
			HubFile
		}
		var entries []entry
		var link string
		err := retry(ctx, httpOpt, func() error {
			var err error
			entries, link, err = listPage[entry](ctx, client, next, httpOpt)
			return err
		})
		if err != nil {
			if hubMissing(a, err) != "" {
				return nil, hubError(spec, a, err, withheldToken(httpOpt))
			}
			var he *HTTPError
			hint := ""
			if errors.As(err, &he) {
				hint = httpHint(he, withheldToken(httpOpt))
			}
			return nil, &canon.ReadError{Name: spec, Err: fmt.Errorf("listing its files: %w", netError(ctx, err, httpOpt.Timeout)), Hint: hint}
		}
		for _, e := range entries {
			if e.Type != "file" || !safePath(e.Path) || e.Size < 0 {
				continue
			}
			if a.path != "" && !underFolder(e.Path, a.path) {
				continue
			}
			files = append(files, e.HubFile)
		}
		if next, err = nextPage(next, link); err != nil {
			return nil, &canon.ReadError{Name: spec, Err: err}
		}
	}
	return files, nil
}

// underFolder reports whether the repository path p lies under the folder dir (or is it).
func underFolder(p, dir string) bool {
	for len(dir) > 0 && dir[len(dir)-1] == '/' {
		dir = dir[:len(dir)-1]
	}
	return p == dir || len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == '/'
}
