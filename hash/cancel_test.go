package hash

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/stfile"
)

// stallingServer serves a model whose header arrives at once and whose tensor bytes never do: every
// request for them stalls until the client goes away. asked is closed when the first such request
// arrives.
func stallingServer(t *testing.T) (url string, asked <-chan struct{}) {
	f := stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "U8", Shape: []uint64{1 << 20}, Data: make([]byte, 1<<20)}}}
	file := f.Build()
	ch := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") == fmt.Sprintf("bytes=0-%d", 256<<10-1) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-%d/%d", 256<<10-1, len(file)))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(file[:256<<10])
			return
		}
		var first, last int64
		fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &first, &last)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, len(file)))
		w.Header().Set("Content-Length", fmt.Sprint(last-first+1))
		w.WriteHeader(http.StatusPartialContent)
		w.(http.Flusher).Flush()
		once.Do(func() { close(ch) })
		<-r.Context().Done()
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/m.safetensors", ch
}

// TestCancelRemote: byte work over a remote source ends at once when its context is cancelled, with an error wrapping context.Canceled, though the server never answers.
func TestCancelRemote(t *testing.T) {
	work := map[string]func(ctx context.Context, url string) error{
		"StreamDigests": func(ctx context.Context, url string) error {
			o, err := source.Open(ctx, url, source.Options{})
			if err != nil {
				return err
			}
			defer o.Close()
			_, err = StreamDigests(ctx, o.Source, o.Model, Options{})
			return err
		},
		"TensorDigests": func(ctx context.Context, url string) error {
			o, err := source.Open(ctx, url, source.Options{})
			if err != nil {
				return err
			}
			defer o.Close()
			_, err = TensorDigests(ctx, o.Source, o.Model, Options{})
			return err
		},
	}
	for name, f := range work {
		t.Run(name, func(t *testing.T) {
			url, asked := stallingServer(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { <-asked; cancel() }()
			done := make(chan error, 1)
			go func() { done <- f(ctx, url) }()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("error %v, want one wrapping context.Canceled", err)
				}
			case <-time.After(20 * time.Second): // a hang guard, not a speed check
				t.Fatal("cancelling did not end the work")
			}
		})
	}
}
