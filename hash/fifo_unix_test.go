//go:build unix

package hash

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestXetRefusesAFIFO: the Xet hash, hub matching's sums and a manifest are read only from regular
// files: a FIFO is refused at once (os.Open of one waited for a writer forever, and SIGTERM could not
// end it).
func TestXetRefusesAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	for name, call := range map[string]func() error{
		"XetOfFile": func() error { _, err := XetOfFile(context.Background(), path, Options{}); return err },
		"VerifyManifest": func() error {
			_, err := VerifyManifest(context.Background(), path, Options{})
			return err
		},
	} {
		done := make(chan error, 1)
		go func() { done <- call() }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s of a FIFO: no error", name)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s of a FIFO still waits after 5 s", name)
		}
	}
}
