package dupes

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon/stfile"
)

// TestCancelRemote: a scan ends at once when its context is cancelled, with an error wrapping
// context.Canceled, though the server it reads never sends a tensor byte.
func TestCancelRemote(t *testing.T) {
	f := stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "U8", Shape: []uint64{1 << 20}, Data: make([]byte, 1<<20)}}}
	file := f.Build()
	asked := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var first, last int64
		fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &first, &last)
		last = min(last, int64(len(file))-1)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, len(file)))
		w.Header().Set("Content-Length", fmt.Sprint(last-first+1))
		w.WriteHeader(http.StatusPartialContent)
		if first == 0 { // the first request: the header, at once
			w.Write(file[:last+1])
			return
		}
		w.(http.Flusher).Flush() // tensor bytes: never
		once.Do(func() { close(asked) })
		<-r.Context().Done()
	}))
	defer ts.Close()
	url := ts.URL + "/m.safetensors"
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { <-asked; cancel() }()
	done := make(chan error, 1)
	go func() {
		_, err := Find(ctx, []string{url, url + "?copy"}, Options{})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want one wrapping context.Canceled", err)
		}
	case <-time.After(20 * time.Second): // a hang guard, not a speed check
		t.Fatal("cancelling did not end the scan")
	}
}
