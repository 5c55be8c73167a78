package canon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon/stfile"
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
			o, err := OpenModel(context.Background(), ts.URL+"/m.safetensors")
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
	o, err := OpenModel(context.Background(), ts.URL+"/m.safetensors")
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
	m, err := Read(src)
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
			_, err := OpenModel(context.Background(), c.url)
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrUnreadable) {
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
	t.Setenv("HF_ENDPOINT", hubTS.URL)
	t.Setenv("HF_TOKEN", "secret-token")

	o, err := OpenModel(context.Background(), "hf://org/repo")
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

	if _, err := OpenModel(context.Background(), "hf://org/ftp/model.safetensors"); err == nil || !strings.Contains(err.Error(), "only http and https") {
		t.Errorf("redirect to ftp: %v", err)
	}
	o, err = OpenModel(context.Background(), "hf://org/indexed@v2")
	if err != nil || len(o.Model.Shards) != 1 || len(o.Model.Tensors) != 1 {
		t.Fatalf("repository with an index: %v", err)
	}
	o.Close()
	if _, err := OpenModel(context.Background(), "hf://org/none"); err == nil || !strings.Contains(err.Error(), "neither model.safetensors nor") {
		t.Errorf("empty repository: %v", err)
	}
}

func TestResolveHF(t *testing.T) {
	t.Setenv("HF_ENDPOINT", "https://hub.example/")
	for addr, want := range map[string]string{
		"hf://org/repo/model.safetensors":             "https://hub.example/org/repo/resolve/main/model.safetensors",
		"hf://org/repo@refs%2Fpr%2F1/a/b.safetensors": "https://hub.example/org/repo/resolve/refs%2Fpr%2F1/a/b.safetensors",
		"hf://org/repo@v1.0/sub dir/x.safetensors":    "https://hub.example/org/repo/resolve/v1.0/sub%20dir/x.safetensors",
	} {
		got, _, err := ResolveHF(addr)
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
		if _, _, err := ResolveHF(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
