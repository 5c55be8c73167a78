package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// Limits on what a listing of the Hub may hold.
const (
	maxListPages   = 10_000
	maxListEntries = 1_000_000
	maxListPage    = 64 << 20 // bytes of one page
)

// listHub lists the files of a revision of a repository on the Hub, as its tree API gives them (see
// hfAddr.tree): a JSON array of {"type": "file" | "directory", "path", "size", …} per page, the next
// page named by the response's Link header (rel="next"), as huggingface_hub's paginate follows it.
// The token goes as opt says, to the endpoint only. Its error is an *HTTPError (within the error
// chain) when the API answered with an error status.
func listHub(ctx context.Context, a hfAddr, endpoint string, opt HTTPOptions) ([]string, error) {
	opt.defaults()
	client, _ := newClient(opt)
	defer client.CloseIdleConnections()
	var files []string
	next := a.tree(endpoint)
	for page := 0; next != ""; page++ {
		if page == maxListPages || len(files) > maxListEntries {
			return nil, fmt.Errorf("the listing has over %d pages or %d files", maxListPages, maxListEntries)
		}
		var entries []struct{ Type, Path string }
		var link string
		err := retry(ctx, opt, func() error {
			var err error
			entries, link, err = listPage[struct{ Type, Path string }](ctx, client, next, opt)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Type == "file" && safePath(e.Path) {
				files = append(files, e.Path)
			}
		}
		if next, err = nextPage(next, link); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// listPage fetches one page of a listing: its entries and its Link header.
func listPage[E any](ctx context.Context, client *http.Client, pageURL string, opt HTTPOptions) (entries []E, link string, err error) {
	ctx, cancel := context.WithTimeout(ctx, opt.readLimit(1<<20)) // a page is a few hundred KiB
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pageURL, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "stdiff")
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", statusError(resp)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxListPage+1))
	if err != nil {
		return nil, "", err
	}
	if len(b) > maxListPage {
		return nil, "", fmt.Errorf("a page of the listing is over %s", textfmt.Bytes(maxListPage))
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, "", fmt.Errorf("the listing is not the Hub's tree API answer: %v", err)
	}
	return entries, resp.Header.Get("Link"), nil
}

// nextPage is the URL a Link header names rel="next" (relative to the page it came with), or "" when
// there is none. A next page elsewhere than http(s) is refused.
func nextPage(pageURL, link string) (string, error) {
	for _, part := range strings.Split(link, ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		target = strings.TrimSpace(target)
		if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
			continue
		}
		next := false
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "rel") && strings.Contains(" "+strings.Trim(v, `"`)+" ", " next ") {
				next = true
			}
		}
		if !next {
			continue
		}
		base, err := url.Parse(pageURL)
		if err != nil {
			return "", err
		}
		u, err := base.Parse(target[1 : len(target)-1])
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return "", fmt.Errorf("the listing's next page %q is not an http(s) URL", textfmt.Escape(target))
		}
		return u.String(), nil
	}
	return "", nil
}

// safePath reports whether p, a path from a listing or a file, stays within the repository: relative,
// slash-separated, no empty, . or .. part, no backslash or control character.
func safePath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\") {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// hubMissing says which part of an hf:// address the Hub does not have, from the code of its answer:
// the repository or the revision; "" for another error.
func hubMissing(a hfAddr, err error) string {
	var he *HTTPError
	if !errors.As(err, &he) {
		return ""
	}
	switch he.Code {
	case HubRepoNotFound:
		return "the Hub has no repository " + a.id() + " (or it is private or gated, and the token, if any, gives no access)"
	case HubRevisionNotFound:
		return "the repository " + a.id() + " has no revision " + a.rev
	}
	return ""
}

// notFound reports whether err is the server's 404 (or the Hub's EntryNotFound).
func notFound(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && (he.Status == http.StatusNotFound || he.Code == HubEntryNotFound)
}

// hubError is the error of an hf:// address the Hub cannot serve: a repository or revision it does
// not have, with the hint for its answer.
func hubError(spec string, a hfAddr, err error, withheld bool) error {
	var he *HTTPError
	errors.As(err, &he)
	return &canon.ReadError{Name: spec, Err: &wrapped{msg: hubMissing(a, err), err: err}, Hint: httpHint(he, withheld)}
}

// wrapped is an error in other words that keeps its cause.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }
