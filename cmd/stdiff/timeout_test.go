package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stall answers every request with headers promising a large file, then sends nothing until the
// client goes away. asked is closed at the first request.
func stall(asked chan struct{}) http.Handler {
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1073741824")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		once.Do(func() { close(asked) })
		<-r.Context().Done()
	})
}

// TestTimeoutFlag: --timeout ends a command stuck on a server that never sends the header, with one
// message and exit 2.
func TestTimeoutFlag(t *testing.T) {
	ts := httptest.NewServer(stall(make(chan struct{})))
	defer ts.Close()
	for _, args := range [][]string{
		{"--timeout", "300ms", "inspect", ts.URL + "/m.safetensors"},
		{"check", ts.URL + "/a.safetensors", ts.URL + "/b.safetensors", "--timeout=300ms"},
		{"--timeout", "300ms", "--json", "hash", "--content", ts.URL + "/m.safetensors"},
	} {
		var stdout, stderr bytes.Buffer
		done := make(chan int, 1)
		go func() { done <- run(args, &stdout, &stderr) }()
		select {
		case code := <-done:
			want := "stdiff: timed out after 300ms\nhint: allow more time with --timeout, e.g. --timeout 10m (0: no limit)\n"
			if code != exitTrouble || stderr.String() != want {
				t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", args, code, stderr.String(), want)
			}
		case <-time.After(20 * time.Second): // a hang guard, not a speed check
			t.Fatalf("%q did not stop", args)
		}
	}
}

// TestTimeLimit: the default limit applies to header work on remote models only; --timeout overrides
// it either way.
func TestTimeLimit(t *testing.T) {
	d := func(v time.Duration) *time.Duration { return &v }
	for _, c := range []struct {
		cmd   command
		given *time.Duration
		want  time.Duration
	}{
		{&checkCmd{Files: []string{"a.safetensors"}}, nil, 0},
		{&checkCmd{Files: []string{"a.safetensors", "https://x/m.safetensors"}}, nil, defaultTimeout},
		{&inspectCmd{Files: []string{"hf://org/repo"}}, nil, defaultTimeout},
		{&inspectCmd{Files: []string{"hf://org/repo"}, Verify: true}, nil, 0},
		{&diffCmd{A: "a", B: "http://x/b"}, nil, defaultTimeout},
		{&diffCmd{A: "a", B: "http://x/b", Content: true}, nil, 0},
		{&hashCmd{Files: []string{"http://x/b"}}, nil, defaultTimeout},
		{&hashCmd{Files: []string{"http://x/b"}, All: true}, nil, 0},
		{&hashCmd{Check: true, Files: []string{"MANIFEST"}}, nil, 0},
		{&dupesCmd{Paths: []string{"http://x/b"}}, nil, 0},
		{&dupesCmd{Paths: []string{"dir"}}, d(time.Hour), time.Hour},
		{&checkCmd{Files: []string{"http://x/b"}}, d(0), 0},
		{&checkCmd{Files: []string{"http://x/b"}}, d(5 * time.Minute), 5 * time.Minute},
	} {
		if got := timeLimit(c.cmd, c.given); got != c.want {
			t.Errorf("%T %+v, --timeout %v: limit %v, want %v", c.cmd, c.cmd, c.given, got, c.want)
		}
	}
}

// TestInterrupt: SIGINT while a command waits on a server ends it with one message and exit 2.
func TestInterrupt(t *testing.T) {
	asked := make(chan struct{})
	ts := httptest.NewServer(stall(asked))
	defer ts.Close()
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run([]string{"hash", "--content", ts.URL + "/m.safetensors"}, &stdout, &stderr) }()
	<-asked // run is waiting on the server: its signal handler is in place
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != exitTrouble || stderr.String() != "stdiff: interrupted\n" || stdout.Len() > 0 {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line", code, stdout.String(), stderr.String())
		}
	case <-time.After(20 * time.Second): // a hang guard, not a speed check
		t.Fatal("SIGINT did not stop the command")
	}
}

// TestDupesFIFOSidecar: a named pipe where the keeper's sidecar would be is never opened: `dupes
// --delete --dry-run` ends, leaving the copy whose sidecar cannot be compared with it alone.
func TestDupesFIFOSidecar(t *testing.T) {
	dir := dupesCollection(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "b", "copy.civitai.info"), 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "mychar.civitai.info"), []byte(`{"id": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"dupes", "--no-cache", "--level", "bytes", "--keep", "path:" + filepath.Join(dir, "b"), "--delete", "--dry-run", dir}, &stdout, &stderr)
	}()
	select {
	case code := <-done:
		if code != exitFound || !bytes.Contains(stdout.Bytes(), []byte("differs from the keeper's")) {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
		}
	case <-time.After(20 * time.Second): // a hang guard, not a speed check
		t.Fatal("dupes --delete --dry-run waits on the named pipe")
	}
}
