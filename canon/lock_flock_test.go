//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package canon

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"
)

// TestFixWaitsForLock: while another process (here another open file, which flock treats alike) holds
// the lock, a fix waits; if the lock is not let go in time it fails, file untouched; once it is let
// go, the fix goes ahead.
func TestFixWaitsForLock(t *testing.T) {
	path, b, _, _ := nulPadded(t)
	other, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	unlock, err := lockFile(other, 0)
	if err != nil {
		t.Fatal(err)
	}

	lockWait = 20 * time.Millisecond
	defer func() { lockWait = FixLockWait }()
	if _, err := FixNulPadding(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("fix of a locked file: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, b) {
		t.Fatal("a fix that did not get the lock changed the file")
	}

	lockWait = FixLockWait
	released := make(chan struct{})
	go func() {
		time.Sleep(50 * time.Millisecond)
		unlock()
		close(released)
	}()
	res, err := FixNulPadding(path)
	<-released
	if err != nil || res.Changed != 6 {
		t.Fatalf("fix after the lock was let go: %+v, %v", res, err)
	}
}
