package canon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// HTTPOptions configure remote sources.
type HTTPOptions struct {
	// Prefetch is how much the first request asks for: enough for most headers, so that one request
	// usually does (default 256 KiB).
	Prefetch int64
	// Token is sent as a bearer token, and only to TokenHost.
	Token, TokenHost string
	// Timeout bounds connecting, waiting for response headers, and each pause while a body arrives
	// (default 30 s).
	Timeout time.Duration
	// Retries is how many times a request that failed for a transient reason is tried again (default 3).
	Retries int
	// Client, when set, replaces the default client (tests).
	Client *http.Client
}

func (o *HTTPOptions) defaults() {
	if o.Prefetch <= 0 {
		o.Prefetch = 256 << 10
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Retries < 0 {
		o.Retries = 0
	} else if o.Retries == 0 {
		o.Retries = 3
	}
}

// HTTPError is a response stdiff could not use.
type HTTPError struct {
	URL    string
	Status int
	Text   string
}

func (e *HTTPError) Error() string {
	if e.Status == 0 {
		return e.Text
	}
	return fmt.Sprintf("HTTP %d %s%s", e.Status, http.StatusText(e.Status), e.Text)
}

// HTTPSource reads a remote file with HTTP range requests. The first request fetches a prefix that
// usually holds the whole header; later reads fetch exactly the ranges asked for. Against a server that
// ignores ranges it reads the one response front to back and never further than asked, so reading a
// header never downloads the file.
type HTTPSource struct {
	url    string
	opt    HTTPOptions
	client *http.Client
	size   int64
	ranges bool

	mu     sync.Mutex
	prefix []byte
	body   io.ReadCloser // the open response of a server without ranges, at position bodyAt
	bodyAt int64
	cancel context.CancelFunc

	// Fetched counts the body bytes received.
	Fetched atomic.Int64
}

// OpenHTTP opens a remote file: one request, for the first Prefetch bytes.
func OpenHTTP(ctx context.Context, rawURL string, opt HTTPOptions) (*HTTPSource, error) {
	opt.defaults()
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &ReadError{Name: rawURL, Err: errors.New("not an http(s) URL")}
	}
	s := &HTTPSource{url: rawURL, opt: opt, client: opt.Client}
	if s.client == nil {
		s.client = newHTTPClient(opt)
	}
	err = s.retry(ctx, func() error { return s.open(ctx) })
	if err != nil {
		return nil, s.fail(err)
	}
	return s, nil
}

func newHTTPClient(opt HTTPOptions) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: opt.Timeout, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = opt.Timeout
	tr.ResponseHeaderTimeout = opt.Timeout
	return &http.Client{Transport: tr, CheckRedirect: checkRedirect(opt)}
}

// checkRedirect follows at most 10 redirects, only to http(s), and never carries the token to another
// host.
func checkRedirect(opt HTTPOptions) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("more than 10 redirects")
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect to %s refused: only http and https are followed", Escape(req.URL.Redacted()))
		}
		if opt.Token == "" || req.URL.Host != opt.TokenHost {
			req.Header.Del("Authorization")
		}
		return nil
	}
}

func (s *HTTPSource) fail(err error) error {
	var re *ReadError
	if errors.As(err, &re) {
		return err
	}
	hint := ""
	var he *HTTPError
	if errors.As(err, &he) {
		switch he.Status {
		case http.StatusUnauthorized, http.StatusForbidden:
			hint = "the file is private or gated: set HF_TOKEN (for the Hub) and check you have access"
		case http.StatusNotFound:
			hint = "check the URL, and the revision and path of an hf:// address"
		}
	}
	return &ReadError{Name: s.url, Err: err, Hint: hint}
}

// transient reports whether trying again may help.
func transient(err error) bool {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Status == http.StatusTooManyRequests || he.Status >= 500
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errIdle)
}

func (s *HTTPSource) retry(ctx context.Context, f func() error) error {
	var err error
	for try := 0; try <= s.opt.Retries; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(100<<try) * time.Millisecond):
			}
		}
		if err = f(); err == nil || !transient(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

var errIdle = errors.New("no data for too long")

// get sends a GET for the bytes [from, to] (to < 0: to the end) and returns the response with a body
// that fails if no data arrives within the timeout.
func (s *HTTPSource) get(ctx context.Context, from, to int64) (*http.Response, context.CancelFunc, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	if to >= 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", from, to))
	} else if from > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", from))
	}
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", "stdiff")
	if s.opt.Token != "" && req.URL.Host == s.opt.TokenHost {
		req.Header.Set("Authorization", "Bearer "+s.opt.Token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	resp.Body = &idleBody{r: resp.Body, cancel: cancel, timeout: s.opt.Timeout, counter: &s.Fetched}
	return resp, cancel, nil
}

// idleBody cancels its request when no data arrives for timeout.
type idleBody struct {
	r       io.ReadCloser
	cancel  context.CancelFunc
	timeout time.Duration
	counter *atomic.Int64
	idle    atomic.Bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	t := time.AfterFunc(b.timeout, func() { b.idle.Store(true); b.cancel() })
	n, err := b.r.Read(p)
	t.Stop()
	b.counter.Add(int64(n))
	if err != nil && b.idle.Load() {
		err = errIdle
	}
	return n, err
}

func (b *idleBody) Close() error { b.cancel(); return b.r.Close() }

// parseContentRange parses "bytes FIRST-LAST/TOTAL".
func parseContentRange(v string) (first, last, total int64, ok bool) {
	rest, found := strings.CutPrefix(v, "bytes ")
	if !found {
		return 0, 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, 0, false
	}
	a, b, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, 0, false
	}
	var e1, e2, e3 error
	first, e1 = strconv.ParseInt(a, 10, 64)
	last, e2 = strconv.ParseInt(b, 10, 64)
	total, e3 = strconv.ParseInt(tot, 10, 64)
	return first, last, total, e1 == nil && e2 == nil && e3 == nil && first >= 0 && first <= last && last < total
}

// open sends the first request and learns the size and whether the server serves ranges.
func (s *HTTPSource) open(ctx context.Context) error {
	resp, cancel, err := s.get(ctx, 0, s.opt.Prefetch-1)
	if err != nil {
		return err
	}
	switch resp.StatusCode {
	case http.StatusPartialContent:
		defer resp.Body.Close()
		first, last, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || first != 0 || last >= s.opt.Prefetch {
			return &HTTPError{Text: fmt.Sprintf("the server answered a range request with Content-Range %q", resp.Header.Get("Content-Range"))}
		}
		buf, err := readExactly(resp.Body, last+1)
		if err != nil {
			return err
		}
		s.size, s.ranges, s.prefix = total, true, buf
		return nil
	case http.StatusOK:
		// No ranges: keep the response open and read only as far as asked.
		if resp.ContentLength < 0 {
			resp.Body.Close()
			return &HTTPError{Status: resp.StatusCode, Text: ": the server gives neither ranges nor a length"}
		}
		s.size = resp.ContentLength
		s.body, s.cancel = resp.Body, cancel
		n := min(s.opt.Prefetch, s.size)
		buf, err := readExactly(resp.Body, n)
		if err != nil {
			resp.Body.Close()
			return err
		}
		s.prefix, s.bodyAt = buf, n
		return nil
	case http.StatusRequestedRangeNotSatisfiable: // an empty file: "bytes */0"
		resp.Body.Close()
		if resp.Header.Get("Content-Range") == "bytes */0" {
			s.size, s.ranges = 0, true
			return nil
		}
		return &HTTPError{Status: resp.StatusCode}
	default:
		resp.Body.Close()
		return &HTTPError{Status: resp.StatusCode}
	}
}

func readExactly(r io.Reader, n int64) ([]byte, error) {
	buf := make([]byte, n)
	got, err := io.ReadFull(r, buf)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("the server sent %d bytes of the %d it announced: %w", got, n, io.ErrUnexpectedEOF)
		}
		return nil, err
	}
	return buf, nil
}

// ReadAt reads len(p) bytes at off: from the prefix, with a range request, or (server without ranges)
// from the one response, forward only.
func (s *HTTPSource) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > s.size {
		if off >= s.size {
			return 0, io.EOF
		}
		n, err := s.ReadAt(p[:s.size-off], off)
		if err == nil {
			err = io.EOF
		}
		return n, err
	}
	s.mu.Lock()
	if off+int64(len(p)) <= int64(len(s.prefix)) {
		n := copy(p, s.prefix[off:])
		s.mu.Unlock()
		return n, nil
	}
	if !s.ranges {
		defer s.mu.Unlock()
		// A read that starts in the prefix (the header, in two steps) grows the prefix from the response.
		if off < int64(len(s.prefix)) && s.body != nil && s.bodyAt == int64(len(s.prefix)) {
			more, err := readExactly(s.body, off+int64(len(p))-s.bodyAt)
			if err != nil {
				return 0, s.fail(err)
			}
			s.prefix = append(s.prefix, more...)
			s.bodyAt += int64(len(more))
			return copy(p, s.prefix[off:]), nil
		}
		return s.readStream(p, off)
	}
	s.mu.Unlock()
	err := s.retry(context.Background(), func() error { return s.readRange(p, off) })
	if err != nil {
		return 0, s.fail(err)
	}
	return len(p), nil
}

func (s *HTTPSource) readRange(p []byte, off int64) error {
	resp, _, err := s.get(context.Background(), off, off+int64(len(p))-1)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent {
		return &HTTPError{Status: resp.StatusCode, Text: " (to a range request)"}
	}
	first, last, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
	if !ok || first != off || last != off+int64(len(p))-1 {
		return &HTTPError{Text: fmt.Sprintf("asked for bytes %d-%d, the server sent Content-Range %q", off, off+int64(len(p))-1, resp.Header.Get("Content-Range"))}
	}
	if total != s.size {
		return &ReadError{Name: s.url, Err: ErrChanged, Hint: fmt.Sprintf("the file was %d bytes and is now %d", s.size, total)}
	}
	if _, err := io.ReadFull(resp.Body, p); err != nil {
		return fmt.Errorf("the server sent less than the %d bytes it announced: %w", len(p), io.ErrUnexpectedEOF)
	}
	return nil
}

// readStream serves a read from the open response of a server without ranges. Reads that go forward
// are served (skipping what lies between); a read behind the current position starts a new response.
func (s *HTTPSource) readStream(p []byte, off int64) (int, error) {
	if s.body == nil || off < s.bodyAt {
		if s.body != nil {
			s.body.Close()
		}
		resp, cancel, err := s.get(context.Background(), 0, -1)
		if err != nil {
			return 0, s.fail(err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return 0, s.fail(&HTTPError{Status: resp.StatusCode})
		}
		if resp.ContentLength != s.size {
			resp.Body.Close()
			return 0, &ReadError{Name: s.url, Err: ErrChanged}
		}
		s.body, s.cancel, s.bodyAt = resp.Body, cancel, 0
	}
	if s.bodyAt < off {
		n, err := io.CopyN(io.Discard, s.body, off-s.bodyAt)
		s.bodyAt += n
		if err != nil {
			return 0, s.fail(err)
		}
	}
	if _, err := io.ReadFull(s.body, p); err != nil {
		return 0, s.fail(fmt.Errorf("the response ended early: %w", io.ErrUnexpectedEOF))
	}
	s.bodyAt += int64(len(p))
	return len(p), nil
}

// Size is the remote file's size.
func (s *HTTPSource) Size() int64 { return s.size }

// Name is the URL.
func (s *HTTPSource) Name() string { return s.url }

// Ranges reports whether the server serves range requests.
func (s *HTTPSource) Ranges() bool { return s.ranges }

// Close ends any open response: a server without ranges stops sending.
func (s *HTTPSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.body != nil {
		s.body.Close()
		s.body = nil
	}
	return nil
}

// Hub is where hf:// addresses point: HF_ENDPOINT, else the public Hub.
func Hub() string {
	if e := strings.TrimRight(os.Getenv("HF_ENDPOINT"), "/"); e != "" {
		return e
	}
	return "https://huggingface.co"
}

// ResolveHF turns hf://ORG/REPO[@REVISION][/PATH] into the Hub's download URL, and reports the
// repository's base URL when no PATH is given (the caller then looks for the model file the way the
// Hub's clients do).
func ResolveHF(addr string) (fileURL, repoBase string, err error) {
	rest, ok := strings.CutPrefix(addr, "hf://")
	if !ok {
		return "", "", fmt.Errorf("not an hf:// address")
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return "", "", fmt.Errorf("an hf:// address is hf://ORG/REPO[@REVISION][/PATH]")
	}
	repo, rev, _ := strings.Cut(parts[1], "@")
	if rev == "" {
		rev = "main"
	}
	if rev, err = url.PathUnescape(rev); err != nil { // refs%2Fpr%2F1 names refs/pr/1
		return "", "", fmt.Errorf("bad revision: %v", err)
	}
	for _, seg := range strings.Split(rev, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsRune(seg, '\\') {
			return "", "", fmt.Errorf("bad revision %q: no part of it may be empty, . or ..", rev)
		}
	}
	for _, p := range []string{parts[0], repo} {
		if p == "." || p == ".." || strings.ContainsAny(p, "?#%\\") {
			return "", "", fmt.Errorf("bad repository name %q", p)
		}
	}
	base := Hub() + "/" + url.PathEscape(parts[0]) + "/" + url.PathEscape(repo) + "/resolve/" + url.PathEscape(rev)
	if len(parts) < 3 || parts[2] == "" {
		return "", base, nil
	}
	for _, seg := range strings.Split(parts[2], "/") {
		if seg == ".." || seg == "." {
			return "", "", fmt.Errorf("bad path %q", parts[2])
		}
	}
	segs := strings.Split(parts[2], "/")
	for i := range segs {
		segs[i] = url.PathEscape(segs[i])
	}
	return base + "/" + strings.Join(segs, "/"), base, nil
}

// HubOptions are the HTTP options for the Hub: HF_TOKEN, sent only to the Hub's host.
func HubOptions() HTTPOptions {
	opt := HTTPOptions{Token: os.Getenv("HF_TOKEN")}
	if u, err := url.Parse(Hub()); err == nil {
		opt.TokenHost = u.Host
	}
	return opt
}
