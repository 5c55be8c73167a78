package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// HTTPOptions configure remote sources.
type HTTPOptions struct {
	// Prefetch is how much the first request asks for: enough for most headers, so that one request
	// usually does (default 256 KiB).
	Prefetch int64
	// Token is sent as a bearer token to TokenOrigin only: to a request whose scheme, host and port are
	// TokenOrigin's ("https://huggingface.co"), and never after a redirect that changed any of them. It
	// is never sent over plain http, except to a loopback address (localhost, 127.0.0.0/8, ::1).
	Token, TokenOrigin string
	// Timeout bounds connecting, the TLS handshake, waiting for response headers, and each silence
	// while a body arrives (default 30 s).
	Timeout time.Duration
	// ReadTimeout bounds one request, or one read from an open response, from start to last byte,
	// however slowly the data trickles in: ReadTimeout plus one second per 64 KiB asked for
	// (default 2 min).
	ReadTimeout time.Duration
	// Retries is how many times a request that failed for a transient reason (HTTP 429 or 5xx, a
	// connection that ended early) is tried again (default 3). A timeout is not retried: a server silent
	// for Timeout seldom answers the next try at once.
	Retries int
	// Transport, when set, replaces the default transport (tests, proxies); the redirect and token rules
	// still apply.
	Transport http.RoundTripper
}

func (o *HTTPOptions) defaults() {
	if o.Prefetch <= 0 {
		o.Prefetch = 256 << 10
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 2 * time.Minute
	}
	if o.Retries < 0 {
		o.Retries = 0
	} else if o.Retries == 0 {
		o.Retries = 3
	}
}

// readLimit is how long a read of n bytes may take.
func (o *HTTPOptions) readLimit(n int64) time.Duration {
	return o.ReadTimeout + time.Duration(n>>16)*time.Second
}

// HTTPError is a response stdiff could not use.
type HTTPError struct {
	URL    string
	Status int
	Text   string
	// Code is the Hub's X-Error-Code header, when the server sent one: HubRepoNotFound,
	// HubRevisionNotFound, HubEntryNotFound, HubGatedRepo.
	Code string
}

// The Hub's error codes (its X-Error-Code header), as its clients read them.
const (
	HubRepoNotFound     = "RepoNotFound"
	HubRevisionNotFound = "RevisionNotFound"
	HubEntryNotFound    = "EntryNotFound"
	HubGatedRepo        = "GatedRepo"
)

// statusError is the HTTPError of a response with a status stdiff cannot use.
func statusError(resp *http.Response) *HTTPError {
	return &HTTPError{Status: resp.StatusCode, Code: resp.Header.Get("X-Error-Code")}
}

// Error is the status ("HTTP 404 Not Found"), what the Hub's code says ("no such revision") and what
// more there is to say, or Text alone.
func (e *HTTPError) Error() string {
	if e.Status == 0 {
		return e.Text
	}
	said := map[string]string{HubRepoNotFound: ": no such repository (or it is private)", HubRevisionNotFound: ": no such revision",
		HubEntryNotFound: ": no such file in the repository", HubGatedRepo: ": the repository is gated"}[e.Code]
	return fmt.Sprintf("HTTP %d %s%s%s", e.Status, http.StatusText(e.Status), said, e.Text)
}

// HTTPSource reads a remote file with HTTP range requests. The first request fetches a prefix that
// usually holds the whole header; later reads fetch exactly the ranges asked for. Against a server that
// ignores ranges it reads the one response front to back and never further than asked, so reading a
// header never downloads the file.
//
// The context given to OpenHTTP governs every later read too: once it is cancelled or past its
// deadline, reads fail with an error wrapping its error.
type HTTPSource struct {
	url    string
	ctx    context.Context
	opt    HTTPOptions
	client *http.Client
	size   int64
	ranges bool
	// withheld is set when a token was given but not sent: its origin is plain http to another machine.
	withheld bool

	mu     sync.Mutex
	prefix []byte
	body   *body // the open response of a server without ranges, at position bodyAt
	bodyAt int64

	// Fetched counts the body bytes received.
	Fetched atomic.Int64
}

// OpenHTTP opens a remote file: one request, for the first Prefetch bytes. ctx bounds this request and
// every later read of the source.
func OpenHTTP(ctx context.Context, rawURL string, opt HTTPOptions) (*HTTPSource, error) {
	opt.defaults()
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &canon.ReadError{Name: rawURL, Err: errors.New("not an http(s) URL")}
	}
	s := &HTTPSource{url: rawURL, ctx: ctx, opt: opt}
	s.client, s.withheld = newClient(opt)
	if err := s.retry(s.open); err != nil {
		s.client.CloseIdleConnections()
		return nil, s.fail(err)
	}
	return s, nil
}

// newClient is the client every request of opt's goes through: opt's time limits, the token for its
// origin only (withheld is true when a token was given but may not be sent: its origin is plain http
// to another machine), redirects to http(s) only.
func newClient(opt HTTPOptions) (c *http.Client, withheld bool) {
	base := opt.Transport
	if base == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DialContext = (&net.Dialer{Timeout: opt.Timeout, KeepAlive: 30 * time.Second}).DialContext
		tr.TLSHandshakeTimeout = opt.Timeout
		tr.ResponseHeaderTimeout = opt.Timeout
		base = tr
	}
	tt := &tokenTransport{base: base}
	if t, ok := tokenOrigin(opt); ok && opt.Token != "" {
		tt.header, tt.origin = "Bearer "+opt.Token, t
	}
	return &http.Client{Transport: tt, CheckRedirect: checkRedirect}, withheldToken(opt)
}

// withheldToken reports whether opt has a token that may not be sent: its origin is plain http to
// another machine.
func withheldToken(opt HTTPOptions) bool {
	t, ok := tokenOrigin(opt)
	return opt.Token != "" && t != "" && !ok
}

// origin is a URL's scheme, host and port, lower case, with the port spelled out.
func origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// loopback reports whether host names this machine: localhost, 127.0.0.0/8 or ::1.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tokenOrigin is the origin the token may go to, and whether it may go there at all: over https, or
// over http to a loopback address.
func tokenOrigin(opt HTTPOptions) (string, bool) {
	u, err := url.Parse(opt.TokenOrigin)
	if err != nil || u.Host == "" {
		return "", false
	}
	secure := u.Scheme == "https" || (u.Scheme == "http" && loopback(u.Hostname()))
	return origin(u), secure
}

// tokenTransport adds the token to requests for its origin. The token is never in the request the
// client holds, so the client cannot carry it along a redirect: each request, the first and every
// redirected one, earns it here or goes without.
type tokenTransport struct {
	base   http.RoundTripper
	header string // "Bearer …", or "" for no token
	origin string
}

// RoundTrip implements http.RoundTripper.
func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.header != "" && t.allowed(req) {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", t.header)
	}
	return t.base.RoundTrip(req)
}

// allowed reports whether req, and every request that redirected to it, went to the token's origin.
func (t *tokenTransport) allowed(req *http.Request) bool {
	for r := req; r != nil; {
		if origin(r.URL) != t.origin {
			return false
		}
		if r.Response == nil {
			return true
		}
		r = r.Response.Request
	}
	return true
}

// checkRedirect follows at most 10 redirects, only to http(s).
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return &NetError{Kind: NetOther, Msg: "more than 10 redirects"}
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return &NetError{Kind: NetOther, Msg: fmt.Sprintf("redirect to %s refused: only http and https are followed", textfmt.Escape(req.URL.Redacted()))}
	}
	return nil
}

// fail turns an error into the *canon.ReadError callers see: named by the URL, in plain words, with a hint.
func (s *HTTPSource) fail(err error) error {
	var re *canon.ReadError
	if errors.As(err, &re) {
		return err
	}
	err = netError(s.ctx, err, s.opt.Timeout)
	hint := ""
	var he *HTTPError
	var ne *NetError
	switch {
	case errors.As(err, &he):
		hint = httpHint(he, s.withheld)
	case errors.As(err, &ne):
		hint = ne.Hint
	}
	return &canon.ReadError{Name: s.url, Err: err, Hint: hint}
}

// httpHint says what to do about a response stdiff could not use; withheld: a token was given but not
// sent (see newClient).
func httpHint(he *HTTPError, withheld bool) string {
	switch {
	case withheld && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden || he.Code == HubRepoNotFound):
		return "the token was not sent: it goes over https only, or plain http to this machine; use an https endpoint"
	case he.Code == HubRepoNotFound:
		return "check ORG/REPO; a private or gated repository needs HF_TOKEN, and access to it"
	case he.Code == HubRevisionNotFound:
		return "check the revision (@REV): a branch, a tag or a commit of the repository"
	case he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden:
		return "the file is private or gated: set HF_TOKEN (for the Hub) and check you have access"
	case he.Status == http.StatusNotFound:
		return "check the URL, and the revision and path of an hf:// address"
	}
	return ""
}

// transient reports whether trying again may help.
func transient(err error) bool {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Status == http.StatusTooManyRequests || he.Status >= 500
	}
	var ne *NetError
	return errors.As(err, &ne) && ne.again
}

// retry runs f until it succeeds, fails for good, or has been tried 1+Retries times; its error is in
// plain words.
func (s *HTTPSource) retry(f func() error) error { return retry(s.ctx, s.opt, f) }

// retry runs f until it succeeds, fails for good, or has been tried 1+opt.Retries times (waiting
// longer each time, and no longer once ctx is done); its error is in plain words.
func retry(ctx context.Context, opt HTTPOptions, f func() error) error {
	var err error
	for try := 0; try <= opt.Retries; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return netError(ctx, ctx.Err(), opt.Timeout)
			case <-time.After(time.Duration(100<<try) * time.Millisecond):
			}
		}
		if err = netError(ctx, f(), opt.Timeout); err == nil || !transient(err) {
			return err
		}
	}
	return err
}

// get sends a GET for the bytes [from, to] (to < 0: to the end). The read of n bytes it starts must
// end within the read limit (the response body's limit, until lifted); its body fails when no data
// arrives within the timeout.
func (s *HTTPSource) get(from, to, n int64) (*http.Response, *body, error) {
	ctx, cancel := context.WithCancelCause(s.ctx)
	b := &body{ctx: ctx, cancel: cancel, idle: s.opt.Timeout, counter: &s.Fetched}
	b.limit(n, s.opt.readLimit(n))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		b.Close()
		return nil, nil, err
	}
	if to >= 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", from, to))
	} else if from > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", from))
	}
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", "stdiff")
	resp, err := s.client.Do(req)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && s.ctx.Err() == nil {
			err = cause // our own time limit
		}
		b.Close()
		return nil, nil, err
	}
	b.r = resp.Body
	resp.Body = b
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") &&
		(resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusPartialContent) {
		b.Close()
		return nil, nil, &NetError{Kind: NetEncoding,
			Msg:  fmt.Sprintf("the server compressed the response (Content-Encoding: %s), though stdiff asked for the file as it is", textfmt.Escape(enc)),
			Hint: "stdiff reads byte ranges of the file itself: use a server or URL that serves it uncompressed"}
	}
	return resp, b, nil
}

// body is a response body that fails when the server sends nothing for the idle timeout, or when the
// read in progress runs past its limit; either ends the request.
type body struct {
	r       io.ReadCloser
	ctx     context.Context // the request's
	cancel  context.CancelCauseFunc
	idle    time.Duration
	counter *atomic.Int64

	mu    sync.Mutex
	timer *time.Timer // the limit of the read in progress
}

// limit ends the request unless the read of n bytes in progress is over within d.
func (b *body) limit(n int64, d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer != nil {
		b.timer.Stop()
	}
	b.timer = time.AfterFunc(d, func() {
		b.cancel(&NetError{Kind: NetTimeout, Hint: hintSlow,
			Msg: fmt.Sprintf("timed out: reading %s took longer than %s", textfmt.Bytes(uint64(n)), d)})
	})
}

// done lifts the limit: the read is over.
func (b *body) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
}

// dead reports whether the request has ended (a limit ran out, or the caller cancelled).
func (b *body) dead() bool { return b.ctx.Err() != nil }

func (b *body) Read(p []byte) (int, error) {
	t := time.AfterFunc(b.idle, func() {
		b.cancel(&NetError{Kind: NetTimeout, Hint: hintSlow,
			Msg: fmt.Sprintf("timed out: no data for %s", b.idle)})
	})
	n, err := b.r.Read(p)
	t.Stop()
	b.counter.Add(int64(n))
	if err != nil && err != io.EOF {
		if cause := context.Cause(b.ctx); cause != nil {
			err = cause
		}
	}
	return n, err
}

// Close ends the request.
func (b *body) Close() error {
	b.done()
	b.cancel(context.Canceled)
	if b.r == nil {
		return nil
	}
	return b.r.Close()
}

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
func (s *HTTPSource) open() error {
	resp, b, err := s.get(0, s.opt.Prefetch-1, s.opt.Prefetch)
	if err != nil {
		return err
	}
	switch resp.StatusCode {
	case http.StatusPartialContent:
		defer b.Close()
		first, last, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || first != 0 || last >= s.opt.Prefetch {
			return &HTTPError{Text: fmt.Sprintf("the server answered a range request with Content-Range %q", resp.Header.Get("Content-Range"))}
		}
		buf := make([]byte, last+1)
		if err := s.fill(b, buf); err != nil {
			return err
		}
		s.size, s.ranges, s.prefix = total, true, buf
		return nil
	case http.StatusOK:
		// No ranges: keep the response open and read only as far as asked.
		if resp.ContentLength < 0 {
			b.Close()
			return &HTTPError{Status: resp.StatusCode, Text: ": the server gives neither ranges nor a length"}
		}
		buf := make([]byte, min(s.opt.Prefetch, resp.ContentLength))
		if err := s.fill(b, buf); err != nil {
			b.Close()
			return err
		}
		b.done()
		s.size, s.body, s.prefix, s.bodyAt = resp.ContentLength, b, buf, int64(len(buf))
		return nil
	case http.StatusRequestedRangeNotSatisfiable: // an empty file: "bytes */0"
		b.Close()
		if resp.Header.Get("Content-Range") == "bytes */0" {
			s.size, s.ranges = 0, true
			return nil
		}
		return statusError(resp)
	default:
		b.Close()
		return statusError(resp)
	}
}

// fill reads len(p) bytes of a response; a response that ends or stalls first is an error saying how
// much came.
func (s *HTTPSource) fill(r io.Reader, p []byte) error {
	got, err := io.ReadFull(r, p)
	return s.short(int64(got), int64(len(p)), err)
}

// short words the error of a response that ended or stalled after got of the want bytes it announced.
func (s *HTTPSource) short(got, want int64, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &NetError{Kind: NetClosed, Hint: "try again", Err: io.ErrUnexpectedEOF, again: true,
			Msg: fmt.Sprintf("the server sent %d of the %d bytes it announced, then ended the response", got, want)}
	default:
		return fmt.Errorf("the server sent %d of the %d bytes it announced, then %w", got, want, netError(s.ctx, err, s.opt.Timeout))
	}
}

// ReadAt reads len(p) bytes at off: from the prefix, with a range request for what the prefix does not
// hold, or (server without ranges) from the one response, forward only.
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
		if off < int64(len(s.prefix)) && s.body != nil && !s.body.dead() && s.bodyAt == int64(len(s.prefix)) {
			more := make([]byte, off+int64(len(p))-s.bodyAt)
			s.body.limit(int64(len(more)), s.opt.readLimit(int64(len(more))))
			err := s.fill(s.body, more)
			s.body.done()
			if err != nil {
				s.dropBody()
				return 0, s.fail(err)
			}
			s.prefix = append(s.prefix, more...)
			s.bodyAt += int64(len(more))
			return copy(p, s.prefix[off:]), nil
		}
		if err := s.readStream(p, off); err != nil {
			s.dropBody()
			return 0, s.fail(err)
		}
		return len(p), nil
	}
	// A read that starts in the prefix takes that part from it and asks for the rest only.
	k := 0
	if off < int64(len(s.prefix)) {
		k = copy(p, s.prefix[off:])
	}
	s.mu.Unlock()
	if err := s.retry(func() error { return s.readRange(p[k:], off+int64(k)) }); err != nil {
		return 0, s.fail(err)
	}
	return len(p), nil
}

func (s *HTTPSource) readRange(p []byte, off int64) error {
	resp, b, err := s.get(off, off+int64(len(p))-1, int64(len(p)))
	if err != nil {
		return err
	}
	defer b.Close()
	if resp.StatusCode != http.StatusPartialContent {
		return &HTTPError{Status: resp.StatusCode, Text: " (to a range request)"}
	}
	first, last, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
	if !ok || first != off || last != off+int64(len(p))-1 {
		return &HTTPError{Text: fmt.Sprintf("asked for bytes %d-%d, the server sent Content-Range %q", off, off+int64(len(p))-1, resp.Header.Get("Content-Range"))}
	}
	if total != s.size {
		return &canon.ReadError{Name: s.url, Err: canon.ErrChanged, Hint: fmt.Sprintf("the file was %d bytes and is now %d", s.size, total)}
	}
	return s.fill(b, p)
}

// readStream serves a read from the open response of a server without ranges. Reads that go forward
// are served (skipping what lies between); a read behind the current position, or after the response
// ended, starts a new response.
func (s *HTTPSource) readStream(p []byte, off int64) error {
	n := off + int64(len(p)) // what this read may have to receive
	if s.body == nil || s.body.dead() || off < s.bodyAt {
		s.dropBody()
		resp, b, err := s.get(0, -1, n)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			b.Close()
			return &HTTPError{Status: resp.StatusCode}
		}
		if resp.ContentLength != s.size {
			b.Close()
			return &canon.ReadError{Name: s.url, Err: canon.ErrChanged}
		}
		s.body, s.bodyAt = b, 0
	} else {
		n -= s.bodyAt
		s.body.limit(n, s.opt.readLimit(n))
	}
	defer s.body.done()
	if skip := off - s.bodyAt; skip > 0 {
		k, err := io.CopyN(io.Discard, s.body, skip)
		s.bodyAt += k
		if err != nil {
			return s.short(k, skip+int64(len(p)), err)
		}
	}
	if err := s.fill(s.body, p); err != nil {
		return err
	}
	s.bodyAt += int64(len(p))
	return nil
}

// dropBody ends the open response, if any.
func (s *HTTPSource) dropBody() {
	if s.body != nil {
		s.body.Close()
		s.body = nil
	}
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
	s.dropBody()
	s.client.CloseIdleConnections()
	return nil
}

// ResolveHF turns hf://ORG/REPO[@REVISION][/PATH] into the download URL on the Hub at endpoint (such
// as DefaultEndpoint), and reports the repository's base URL when no PATH is given (the caller then
// looks for the model file the way the Hub's clients do).
func ResolveHF(endpoint, addr string) (fileURL, repoBase string, err error) {
	a, err := parseHF(addr)
	if err != nil {
		return "", "", err
	}
	base := a.resolve(endpoint)
	if a.path == "" {
		return "", base, nil
	}
	return base + "/" + escapePath(a.path), base, nil
}

// hfAddr is an hf:// address taken apart: hf://ORG/REPO[@REV][/PATH].
type hfAddr struct {
	org, repo, rev, path string
}

// parseHF takes an hf:// address apart, refusing parts that could climb out of the repository.
func parseHF(addr string) (hfAddr, error) {
	rest, ok := strings.CutPrefix(addr, "hf://")
	if !ok {
		return hfAddr{}, fmt.Errorf("not an hf:// address")
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return hfAddr{}, fmt.Errorf("an hf:// address is hf://ORG/REPO[@REVISION][/PATH]")
	}
	repo, rev, _ := strings.Cut(parts[1], "@")
	if rev == "" {
		rev = "main"
	}
	rev, err := url.PathUnescape(rev) // refs%2Fpr%2F1 names refs/pr/1
	if err != nil {
		return hfAddr{}, fmt.Errorf("bad revision: %v", err)
	}
	for _, seg := range strings.Split(rev, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsRune(seg, '\\') {
			return hfAddr{}, fmt.Errorf("bad revision %q: no part of it may be empty, \".\" or \"..\"", rev)
		}
	}
	for _, p := range []string{parts[0], repo} {
		if p == "." || p == ".." || strings.ContainsAny(p, "?#%\\") {
			return hfAddr{}, fmt.Errorf("bad repository name %q", p)
		}
	}
	a := hfAddr{org: parts[0], repo: repo, rev: rev}
	if len(parts) == 3 {
		a.path = parts[2]
	}
	for _, seg := range strings.Split(a.path, "/") {
		if seg == ".." || seg == "." {
			return hfAddr{}, fmt.Errorf("bad path %q", a.path)
		}
	}
	return a, nil
}

// id is ORG/REPO.
func (a hfAddr) id() string { return a.org + "/" + a.repo }

// resolve is the URL files of the revision are downloaded under: {endpoint}/ORG/REPO/resolve/REV.
func (a hfAddr) resolve(endpoint string) string {
	return strings.TrimRight(endpoint, "/") + "/" + url.PathEscape(a.org) + "/" + url.PathEscape(a.repo) + "/resolve/" + url.PathEscape(a.rev)
}

// tree is the URL of the Hub's tree API for the revision, listing every file: as huggingface_hub's
// list_repo_tree asks, {endpoint}/api/models/ORG/REPO/tree/REV (the revision escaped whole,
// refs/pr/1 as refs%2Fpr%2F1), recursive.
func (a hfAddr) tree(endpoint string) string {
	return strings.TrimRight(endpoint, "/") + "/api/models/" + url.PathEscape(a.org) + "/" + url.PathEscape(a.repo) + "/tree/" + url.PathEscape(a.rev) + "?recursive=true"
}

// escapePath escapes each segment of a slash-separated path for a URL.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i := range segs {
		segs[i] = url.PathEscape(segs[i])
	}
	return strings.Join(segs, "/")
}
