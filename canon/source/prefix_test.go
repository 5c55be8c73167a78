package source

import (
	"bytes"
	"net/http/httptest"
	"testing"
)

// TestRemoteReadAcrossPrefix: a read that starts inside the first request's bytes asks the server only
// for what follows them.
func TestRemoteReadAcrossPrefix(t *testing.T) {
	file := make([]byte, 10000)
	for i := range file {
		file[i] = byte(i * 7)
	}
	s := &server{files: map[string][]byte{"/m": file}, ranges: true}
	ts := httptest.NewServer(s)
	defer ts.Close()
	src, err := OpenHTTP(t.Context(), ts.URL+"/m", HTTPOptions{Prefetch: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	p := make([]byte, 2000)
	if _, err := src.ReadAt(p, 500); err != nil || !bytes.Equal(p, file[500:2500]) {
		t.Fatalf("read: %v", err)
	}
	if got := src.Fetched.Load(); got != 1000+1500 {
		t.Errorf("fetched %d bytes, want the 1000 of the first request and the 1500 past them", got)
	}
}
