package source

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon/stfile"

	"github.com/stdiff/stdiff/canon"
)

// server serves files with or without range support and counts the body bytes it manages to send.
type server struct {
	files   map[string][]byte
	ranges  bool
	sent    atomic.Int64
	reqs    atomic.Int64
	headers []http.Header
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.reqs.Add(1)
	s.headers = append(s.headers, r.Header.Clone())
	b, ok := s.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	cw := &countingWriter{ResponseWriter: w, n: &s.sent}
	if s.ranges {
		http.ServeContent(cw, r, "", time.Time{}, bytes.NewReader(b))
		return
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	for off := 0; off < len(b); off += 32 << 10 { // in pieces, stopping when the client hangs up
		if _, err := cw.Write(b[off:min(off+32<<10, len(b))]); err != nil {
			return
		}
	}
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// bigHeaderModel has a header of about size bytes (long metadata) and 2 MiB of tensors.
func bigHeaderModel(size int) []byte {
	f := stfile.File{Metadata: []stfile.KV{{Key: "notes", Value: strings.Repeat("x", size)}},
		Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{512, 1024}}}}
	return f.Build()
}

// TestRemoteHeaderBytes: a remote header costs one request when it fits the first 256 KiB, two when
// it does not, and never more than the header plus 1 MiB of transfer.
func TestRemoteHeaderBytes(t *testing.T) {
	for _, c := range []struct {
		name   string
		header int
		reqs   int64
	}{{"small header", 1000, 1}, {"large header", 600 << 10, 2}, {"huge header", 3 << 20, 2}} {
		t.Run(c.name, func(t *testing.T) {
			file := bigHeaderModel(c.header)
			s := &server{files: map[string][]byte{"/m.safetensors": file}, ranges: true}
			ts := httptest.NewServer(s)
			defer ts.Close()
			o, err := Open(context.Background(), ts.URL+"/m.safetensors", Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if !o.Model.Valid() || len(o.Model.Tensors) != 1 || !o.Remote {
				t.Fatalf("model: %v %d", o.Model.RefErr, len(o.Model.Tensors))
			}
			header := int64(8 + o.Model.HeaderLen)
			if got := s.reqs.Load(); got != c.reqs {
				t.Errorf("%d requests, want %d", got, c.reqs)
			}
			if sent := s.sent.Load(); sent > header+1<<20 {
				t.Errorf("%d bytes sent for a %d-byte header", sent, header)
			}
		})
	}
}

// TestRemoteNoRanges: a server that ignores ranges must not make stdiff download the file.
func TestRemoteNoRanges(t *testing.T) {
	// 256 MiB of tensor data: far more than a header read may cost.
	f := stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "U8", Shape: []uint64{256 << 20}, Data: make([]byte, 256<<20)}}}
	big := f.Build()
	s := &server{files: map[string][]byte{"/m.safetensors": big}}
	ts := httptest.NewServer(s)
	defer ts.Close()
	start := time.Now()
	o, err := Open(context.Background(), ts.URL+"/m.safetensors", Options{})
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	if !o.Model.Valid() {
		t.Fatalf("verdict %v", o.Model.RefErr)
	}
	time.Sleep(100 * time.Millisecond) // let the server notice the hang-up
	if sent := s.sent.Load(); sent > 32<<20 {
		t.Errorf("the server sent %d MiB of a 256 MiB file for a header", sent>>20)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestRemoteStreamNoRanges reads a whole file front to back from a server without ranges.
func TestRemoteStreamNoRanges(t *testing.T) {
	file := bigHeaderModel(300 << 10) // the header needs the response beyond the first 256 KiB
	s := &server{files: map[string][]byte{"/m.safetensors": file}}
	ts := httptest.NewServer(s)
	defer ts.Close()
	src, err := OpenHTTP(context.Background(), ts.URL+"/m.safetensors", HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	m, err := canon.Read(src, src.Size(), src.Name())
	if err != nil || !m.Valid() {
		t.Fatalf("%v %v", err, m.RefErr)
	}
	got := make([]byte, m.DataLen())
	for off := int64(0); off < m.DataLen(); off += 1 << 20 {
		n := min(1<<20, m.DataLen()-off)
		if _, err := src.ReadAt(got[off:off+n], m.DataOffset()+off); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, file[m.DataOffset():]) {
		t.Fatal("streamed data differs")
	}
	if s.reqs.Load() != 1 {
		t.Errorf("%d requests, want 1 (one response, read front to back)", s.reqs.Load())
	}
}

func TestRemoteFailures(t *testing.T) {
	file := bigHeaderModel(1000)
	lying := func(h http.HandlerFunc) string {
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		return ts.URL + "/m.safetensors"
	}
	cases := map[string]struct {
		url  string
		want string
	}{
		"404": {lying(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }), "HTTP 404 Not Found"},
		"401": {lying(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) }), "HTTP 401"},
		"short body": {lying(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-%d/%d", 256<<10-1, len(file)))
			w.Header().Set("Content-Length", fmt.Sprint(256<<10))
			w.WriteHeader(206)
			w.Write(file[:100])
		}), "the server sent"},
		"wrong range": {lying(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 5-%d/%d", len(file)-1, len(file)))
			w.WriteHeader(206)
			w.Write(file[5:])
		}), "Content-Range"},
		"no length": {lying(func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush() // chunked: no Content-Length
			w.Write(file)
		}), "neither ranges nor a length"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Open(context.Background(), c.url, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, canon.ErrUnreadable) {
				t.Errorf("error %v, want %q", err, c.want)
			}
			if err != nil && !strings.Contains(err.Error(), c.url) {
				t.Errorf("error %v does not name the URL", err)
			}
		})
	}
}

func TestRemoteSlowAndRetry(t *testing.T) {
	file := bigHeaderModel(1000)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Second)
	}))
	defer slow.Close()
	start := time.Now()
	_, err := OpenHTTP(context.Background(), slow.URL+"/m", HTTPOptions{Timeout: 200 * time.Millisecond, Retries: -1})
	if err == nil || time.Since(start) > 1500*time.Millisecond {
		t.Errorf("slow server: %v after %v", err, time.Since(start))
	}

	var calls atomic.Int64
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(503)
			return
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(file))
	}))
	defer flaky.Close()
	src, err := OpenHTTP(context.Background(), flaky.URL+"/m", HTTPOptions{})
	if err != nil || src.Size() != int64(len(file)) || calls.Load() != 2 {
		t.Errorf("503 then 200: %v, %d calls", err, calls.Load())
	}
}

func TestRemoteRedirects(t *testing.T) {
	file := bigHeaderModel(1000)
	other := &server{files: map[string][]byte{"/m.safetensors": file}, ranges: true}
	otherTS := httptest.NewServer(other)
	defer otherTS.Close()
	hub := &server{files: map[string][]byte{"/org/repo/resolve/main/model.safetensors": file}, ranges: true}
	var hubHeaders []http.Header
	hubTS := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hubHeaders = append(hubHeaders, r.Header.Clone())
		switch r.URL.Path {
		case "/org/repo/resolve/main/model.safetensors":
			http.Redirect(w, r, otherTS.URL+"/m.safetensors", http.StatusFound) // like the Hub's CDN
		case "/org/ftp/resolve/main/model.safetensors":
			http.Redirect(w, r, "ftp://example.com/m.safetensors", http.StatusFound)
		case "/org/indexed/resolve/v2/model.safetensors.index.json":
			w.Write([]byte(`{"metadata":{"total_size":2097152},"weight_map":{"w":"model-00001-of-00001.safetensors"}}`))
		case "/org/indexed/resolve/v2/model-00001-of-00001.safetensors":
			hub.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	defer hubTS.Close()
	hub.files["/org/indexed/resolve/v2/model-00001-of-00001.safetensors"] = file
	hf := Options{Endpoint: hubTS.URL, Token: "secret-token"}

	o, err := Open(context.Background(), "hf://org/repo", hf)
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	if len(o.Model.Tensors) != 1 {
		t.Fatal("hf://org/repo did not find model.safetensors")
	}
	if hubHeaders[0].Get("Authorization") != "Bearer secret-token" {
		t.Error("the token was not sent to the Hub")
	}
	for _, h := range other.headers {
		if h.Get("Authorization") != "" {
			t.Error("the token was sent to another host after a redirect")
		}
	}

	if _, err := Open(context.Background(), "hf://org/ftp/model.safetensors", hf); err == nil || !strings.Contains(err.Error(), "only http and https") || strings.Contains(err.Error(), `Get "`) {
		t.Errorf("redirect to ftp: %v", err)
	}
	o, err = Open(context.Background(), "hf://org/indexed@v2", hf)
	if err != nil || len(o.Model.Shards) != 1 || len(o.Model.Tensors) != 1 {
		t.Fatalf("repository with an index: %v", err)
	}
	o.Close()
	if _, err := Open(context.Background(), "hf://org/none", hf); err == nil || !strings.Contains(err.Error(), "neither model.safetensors nor") {
		t.Errorf("empty repository: %v", err)
	}
}

func TestResolveHF(t *testing.T) {
	const hub = "https://hub.example/"
	for addr, want := range map[string]string{
		"hf://org/repo/model.safetensors":             "https://hub.example/org/repo/resolve/main/model.safetensors",
		"hf://org/repo@refs%2Fpr%2F1/a/b.safetensors": "https://hub.example/org/repo/resolve/refs%2Fpr%2F1/a/b.safetensors",
		"hf://org/repo@v1.0/sub dir/x.safetensors":    "https://hub.example/org/repo/resolve/v1.0/sub%20dir/x.safetensors",
	} {
		got, _, err := ResolveHF(hub, addr)
		if want == "" {
			if err == nil {
				t.Errorf("%s: accepted", addr)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%s: %s %v, want %s", addr, got, err, want)
		}
	}
	for _, bad := range []string{"hf://org", "hf://org/../x", "hf://org/repo/../../etc/passwd",
		"hf://org/repo@../x.safetensors", "hf://org/repo@.", "hf://org/repo@%2E%2E/x.safetensors", "hf://org/repo@%2e",
		"hf://org/repo@refs%2F..%2F..%2Fmain/x.safetensors", "hf://org/repo@a%2F%2Fb", "hf://org/repo@a%5Cb"} {
		if _, _, err := ResolveHF(hub, bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// hangGuard fails the test, instead of letting it hang, when f does not return within a generous
// bound (it is not a speed check: every case here ends in well under a second when it works).
func hangGuard(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("hung")
		return nil
	}
}

// routed is a transport that sends https requests to tlsAddr and http requests to plainAddr, whatever
// their host: the two schemes of one host name, served by two test servers. Host example.com is one
// the test certificate names.
func routed(tlsTS *httptest.Server, plainAddr string) http.RoundTripper {
	tr := tlsTS.Client().Transport.(*http.Transport).Clone()
	dialer := &net.Dialer{}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasSuffix(addr, ":443") {
			return dialer.DialContext(ctx, network, tlsTS.Listener.Addr().String())
		}
		return dialer.DialContext(ctx, network, plainAddr)
	}
	return tr
}

// authLog records the Authorization header of every request a handler sees.
type authLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *authLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.seen = append(l.seen, r.URL.Path+" "+r.Header.Get("Authorization"))
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *authLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// TestTokenRules: the token goes to its origin only (scheme, host and port), never over plain http
// except to a loopback address, and never after a redirect that changed scheme, host or port.
func TestTokenRules(t *testing.T) {
	file := bigHeaderModel(1000)
	files := &server{files: map[string][]byte{"/m.safetensors": file}, ranges: true}
	redirect := func(to string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/m.safetensors" {
				files.ServeHTTP(w, r)
				return
			}
			http.Redirect(w, r, to+"/m.safetensors", http.StatusFound)
		})
	}
	const bearer = "Bearer secret-token"

	t.Run("https to http on the same host", func(t *testing.T) {
		var hub, plain authLog
		plainTS := httptest.NewServer(plain.wrap(files))
		defer plainTS.Close()
		hubTS := httptest.NewTLSServer(hub.wrap(redirect("http://example.com")))
		defer hubTS.Close()
		src, err := OpenHTTP(context.Background(), "https://example.com/r", HTTPOptions{Token: "secret-token",
			TokenOrigin: "https://example.com", Transport: routed(hubTS, plainTS.Listener.Addr().String())})
		if err != nil {
			t.Fatal(err)
		}
		src.Close()
		if got := hub.get(); len(got) != 1 || got[0] != "/r "+bearer {
			t.Errorf("the https endpoint saw %q, want the token", got)
		}
		if got := plain.get(); len(got) != 1 || got[0] != "/m.safetensors " {
			t.Errorf("the same host over http saw %q, want no token", got)
		}
	})

	t.Run("https to another port", func(t *testing.T) {
		var hub, other authLog
		otherTS := httptest.NewTLSServer(other.wrap(files))
		defer otherTS.Close()
		hubTS := httptest.NewTLSServer(hub.wrap(redirect(otherTS.URL)))
		defer hubTS.Close()
		src, err := OpenHTTP(context.Background(), hubTS.URL+"/r", HTTPOptions{Token: "secret-token",
			TokenOrigin: hubTS.URL, Transport: hubTS.Client().Transport})
		if err != nil {
			t.Fatal(err)
		}
		src.Close()
		if got := hub.get(); len(got) != 1 || got[0] != "/r "+bearer {
			t.Errorf("the endpoint saw %q, want the token", got)
		}
		if got := other.get(); len(got) != 1 || got[0] != "/m.safetensors " {
			t.Errorf("another port saw %q, want no token", got)
		}
	})

	t.Run("away and back", func(t *testing.T) {
		var hub, other authLog
		var otherURL atomic.Value
		hubTS := httptest.NewServer(hub.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/r" {
				http.Redirect(w, r, otherURL.Load().(string)+"/away", http.StatusFound)
				return
			}
			files.ServeHTTP(w, r)
		})))
		defer hubTS.Close()
		otherTS := httptest.NewServer(other.wrap(redirect(hubTS.URL)))
		defer otherTS.Close()
		otherURL.Store(otherTS.URL)
		src, err := OpenHTTP(context.Background(), hubTS.URL+"/r", HTTPOptions{Token: "secret-token", TokenOrigin: hubTS.URL})
		if err != nil {
			t.Fatal(err)
		}
		src.Close()
		if got := hub.get(); len(got) != 2 || got[0] != "/r "+bearer || got[1] != "/m.safetensors " {
			t.Errorf("the endpoint saw %q, want the token on the first request only", got)
		}
		if got := other.get(); len(got) != 1 || got[0] != "/away " {
			t.Errorf("another host saw %q, want no token", got)
		}
	})

	t.Run("plain http to a loopback address", func(t *testing.T) {
		var hub authLog
		hubTS := httptest.NewServer(hub.wrap(files))
		defer hubTS.Close()
		for _, origin := range []string{hubTS.URL, strings.Replace(hubTS.URL, "127.0.0.1", "localhost", 1)} {
			src, err := OpenHTTP(context.Background(), origin+"/m.safetensors", HTTPOptions{Token: "secret-token", TokenOrigin: origin})
			if err != nil {
				t.Fatal(err)
			}
			src.Close()
		}
		if got := hub.get(); len(got) != 2 || got[0] != "/m.safetensors "+bearer || got[1] != got[0] {
			t.Errorf("a loopback endpoint over http saw %q, want the token", got)
		}
	})

	t.Run("plain http to another machine", func(t *testing.T) {
		var hub authLog
		hubTS := httptest.NewServer(hub.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "" {
				w.WriteHeader(http.StatusUnauthorized)
			}
		})))
		defer hubTS.Close()
		tlsTS := httptest.NewTLSServer(http.NotFoundHandler()) // unused: only http is asked for
		defer tlsTS.Close()
		_, err := OpenHTTP(context.Background(), "http://example.com/m.safetensors", HTTPOptions{Token: "secret-token",
			TokenOrigin: "http://example.com", Transport: routed(tlsTS, hubTS.Listener.Addr().String())})
		if got := hub.get(); len(got) != 1 || got[0] != "/m.safetensors " {
			t.Errorf("an http endpoint on another machine saw %q, want no token", got)
		}
		var re *canon.ReadError
		if !errors.As(err, &re) {
			t.Fatalf("401 without the token: %v", err)
		}
		if !strings.Contains(re.Hint, "token was not sent") {
			t.Errorf("401 without the token: %v (hint %q), want a hint saying the token was withheld", err, re.Hint)
		}
	})
}

// netErrorOf returns the *NetError in err, failing the test when there is none or when its words
// look like a raw Go error.
func netErrorOf(t *testing.T, err error, kind NetKind) *NetError {
	t.Helper()
	var ne *NetError
	if !errors.As(err, &ne) {
		t.Fatalf("error %v (%T) is not a NetError", err, err)
	}
	if ne.Kind != kind {
		t.Errorf("error %q is a %s, want %s", err, ne.Kind, kind)
	}
	for _, raw := range []string{"dial tcp", "Get \"", "x509:", "tls:", "lookup ", "read tcp", "context "} {
		if strings.Contains(err.Error(), raw) {
			t.Errorf("error %q has a raw Go error in it", err)
		}
	}
	return ne
}

// TestRemoteDribble: a server that sends a byte at a time, never pausing long enough for the idle
// timeout, is stopped by the read limit: when opening, and when reading from an open response.
func TestRemoteDribble(t *testing.T) {
	file := bigHeaderModel(1000)
	dribble := func(w http.ResponseWriter, r *http.Request, b []byte) {
		for _, c := range b {
			if _, err := w.Write([]byte{c}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	opt := HTTPOptions{Prefetch: 1024, Timeout: 5 * time.Second, ReadTimeout: time.Second, Retries: -1}

	ranged := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-1023/%d", len(file)))
		w.Header().Set("Content-Length", "1024")
		w.WriteHeader(http.StatusPartialContent)
		dribble(w, r, file[:1024])
	}))
	defer ranged.Close()
	err := hangGuard(t, func() error { _, err := OpenHTTP(context.Background(), ranged.URL+"/m", opt); return err })
	ne := netErrorOf(t, err, NetTimeout)
	if !strings.Contains(err.Error(), "took longer than") || ne.Hint == "" {
		t.Errorf("error %q (hint %q), want a read that took too long", err, ne.Hint)
	}

	// No ranges: the first 1 KiB comes at once, the rest a byte at a time.
	whole := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(file)))
		w.Write(file[:1024])
		dribble(w, r, file[1024:])
	}))
	defer whole.Close()
	src, err := OpenHTTP(context.Background(), whole.URL+"/m", opt)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	err = hangGuard(t, func() error { _, err := src.ReadAt(make([]byte, 4096), 2048); return err })
	netErrorOf(t, err, NetTimeout)
	if !errors.Is(err, canon.ErrUnreadable) || !strings.Contains(err.Error(), whole.URL) {
		t.Errorf("error %q does not name the URL", err)
	}
}

// TestRemoteShortStalled: a 206 response one byte short, its connection kept open, ends with an error
// saying so, after one idle timeout (not one per retry).
func TestRemoteShortStalled(t *testing.T) {
	file := bigHeaderModel(1000)
	var reqs atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs.Add(1)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-1023/%d", len(file)))
		w.Header().Set("Content-Length", "1024")
		w.WriteHeader(http.StatusPartialContent)
		w.Write(file[:1023])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer ts.Close()
	err := hangGuard(t, func() error {
		_, err := OpenHTTP(context.Background(), ts.URL+"/m", HTTPOptions{Prefetch: 1024, Timeout: 500 * time.Millisecond})
		return err
	})
	netErrorOf(t, err, NetTimeout)
	if want := "the server sent 1023 of the 1024 bytes it announced, then timed out: no data for 500ms"; !strings.Contains(fmt.Sprint(err), want) {
		t.Errorf("error %q, want %q", err, want)
	}
	if reqs.Load() != 1 {
		t.Errorf("%d requests: a stall is not retried", reqs.Load())
	}
}

// TestRemoteCancel: cancelling the context given to OpenHTTP ends a read in progress at once, with an
// error wrapping context.Canceled.
func TestRemoteCancel(t *testing.T) {
	file := bigHeaderModel(300 << 10)
	asked := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") == fmt.Sprintf("bytes=0-%d", 256<<10-1) {
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(file))
			return
		}
		w.Header().Set("Content-Range", fmt.Sprintf("bytes 262144-262144/%d", len(file)))
		w.WriteHeader(http.StatusPartialContent)
		w.(http.Flusher).Flush()
		once.Do(func() { close(asked) })
		<-r.Context().Done() // stalls: only the cancellation can end the read
	}))
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src, err := OpenHTTP(ctx, ts.URL+"/m", HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	go func() { <-asked; cancel() }()
	err = hangGuard(t, func() error { _, err := src.ReadAt(make([]byte, 1), 256<<10); return err })
	if !errors.Is(err, context.Canceled) || !errors.Is(err, canon.ErrUnreadable) {
		t.Fatalf("error %v, want one wrapping context.Canceled", err)
	}
	netErrorOf(t, err, NetCanceled)
	if _, err := src.ReadAt(make([]byte, 1), 300<<10); !errors.Is(err, context.Canceled) {
		t.Errorf("a read after the cancellation: %v", err)
	}
	if _, err := Open(ctx, "../../testdata/base.safetensors", Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("opening a local file after the cancellation: %v", err)
	}
}

// expiredServer is a TLS server whose certificate expired yesterday; its client trusts the certificate.
func expiredServer(t *testing.T) *httptest.Server {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stdiff test"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(http.NotFoundHandler())
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs = pool
	return ts
}

// TestNetErrors: network failures in plain words with a hint, their cause still wrapped.
func TestNetErrors(t *testing.T) {
	tlsTS := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsTS.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshakes are the point
	tlsTS.StartTLS()
	defer tlsTS.Close()
	expiredTS := expiredServer(t)
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer silent.Close()
	gzipped := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00"))
	}))
	defer gzipped.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0") // a port nothing listens on, after every server has one
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/m.safetensors"
	l.Close()

	for _, c := range []struct {
		name, url string
		kind      NetKind
		want      string
		cause     func(error) bool
	}{
		{"refused", closed, NetRefused, "connection refused by " + l.Addr().String(),
			func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }},
		{"dns", "http://stdiff-test.invalid/m.safetensors", NetDNS, "cannot resolve host stdiff-test.invalid",
			func(err error) bool { var d *net.DNSError; return errors.As(err, &d) }},
		{"untrusted certificate", tlsTS.URL + "/m.safetensors", NetTLS, "not signed by an authority this system trusts",
			func(err error) bool { var u x509.UnknownAuthorityError; return errors.As(err, &u) }},
		{"certificate for another host", "https://stdiff.test/m.safetensors", NetTLS, "the server's certificate is for another host",
			func(err error) bool { var h x509.HostnameError; return errors.As(err, &h) }},
		{"expired certificate", expiredTS.URL + "/m.safetensors", NetTLS, "the server's certificate is expired",
			func(err error) bool {
				var c x509.CertificateInvalidError
				return errors.As(err, &c) && c.Reason == x509.Expired
			}},
		{"no answer", silent.URL + "/m.safetensors", NetTimeout, "timed out after 200ms waiting for the server",
			func(err error) bool { var n net.Error; return errors.As(err, &n) && n.Timeout() }},
		{"compressed", gzipped.URL + "/m.safetensors", NetEncoding, "the server compressed the response (Content-Encoding: gzip)",
			func(error) bool { return true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := HTTPOptions{Timeout: 10 * time.Second, Retries: -1}
			switch c.name {
			case "no answer":
				opt.Timeout = 200 * time.Millisecond
			case "certificate for another host":
				opt.Transport = routed(tlsTS, "")
			case "expired certificate":
				opt.Transport = expiredTS.Client().Transport
			case "dns":
				opt.Transport = noDNS()
			}
			_, err := OpenHTTP(context.Background(), c.url, opt)
			ne := netErrorOf(t, err, c.kind)
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.url) || !errors.Is(err, canon.ErrUnreadable) {
				t.Errorf("error %q, want %q naming the URL", err, c.want)
			}
			if !c.cause(err) {
				t.Errorf("error %q does not wrap its cause", err)
			}
			var re *canon.ReadError
			if c.kind != NetEncoding && (!errors.As(err, &re) || re.Hint == "" || re.Hint != ne.Hint) {
				t.Errorf("error %q has no hint", err)
			}
		})
	}
}

// noDNS is a transport whose resolver never leaves the machine: every look-up fails as an unreachable
// name server would, so the test sees a *net.DNSError without sending a query anywhere.
func noDNS() http.RoundTripper {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
	}}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Resolver: r}).DialContext
	return tr
}

// FuzzContentRange: a server's Content-Range header is untrusted.
func FuzzContentRange(f *testing.F) {
	f.Add("bytes 0-99/1000")
	f.Add("bytes */0")
	f.Fuzz(func(t *testing.T, v string) {
		first, last, total, ok := parseContentRange(v)
		if ok && (first < 0 || first > last || last >= total) {
			t.Fatalf("%q accepted as %d-%d/%d", v, first, last, total)
		}
	})
}

// TestNoEnvironment: the library takes the Hub's endpoint and token from Options only; HF_ENDPOINT and
// HF_TOKEN are the CLI's to read.
func TestNoEnvironment(t *testing.T) {
	var asked []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path+" "+r.Header.Get("Authorization"))
		http.NotFound(w, r)
	}))
	defer ts.Close()
	t.Setenv("HF_ENDPOINT", ts.URL)
	t.Setenv("HF_TOKEN", "from-the-environment")
	_, err := Open(t.Context(), "hf://org/repo/m.safetensors", Options{HTTP: HTTPOptions{Transport: noDNS(), Retries: -1}})
	var ne *NetError
	if !errors.As(err, &ne) || ne.Kind != NetDNS || !strings.Contains(err.Error(), "huggingface.co") || len(asked) != 0 {
		t.Errorf("with empty Options: %v; the environment's endpoint was asked %q", err, asked)
	}
	if _, err := Open(t.Context(), "hf://org/repo/m.safetensors", Options{Endpoint: ts.URL, Token: "given"}); err == nil || len(asked) != 1 || asked[0] != "/org/repo/resolve/main/m.safetensors Bearer given" {
		t.Errorf("with an endpoint and a token: %v, asked %q", err, asked)
	}
}
