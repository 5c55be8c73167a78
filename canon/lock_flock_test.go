//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package canon

import (
	"bytes"
	"context"
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
	unlock, err := lockFile(t.Context(), other, 0)
	if err != nil {
		t.Fatal(err)
	}

	lockWait = 20 * time.Millisecond
	defer func() { lockWait = FixLockWait }()
	var re *ReadError
	if _, err := FixNulPadding(t.Context(), path); !errors.Is(err, ErrLocked) || !errors.As(err, &re) || re.Op != "lock" || errors.Is(err, ErrUnreadable) {
		t.Fatalf("fix of a locked file: %v", err)
	}
	if re.Hint != "" { // ErrLocked says it; the command line words the hint with its own flags
		t.Errorf("the library's hint %q: the caller words it", re.Hint)
	}
	// Waiting for the lock ends with the caller's context.
	lockWait = FixLockWait
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(30*time.Millisecond, cancel)
	if _, err := FixNulPadding(ctx, path); !errors.Is(err, context.Canceled) {
		t.Fatalf("fix cancelled while waiting for the lock: %v", err)
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
	res, err := FixNulPadding(t.Context(), path)
	<-released
	if err != nil || res.Changed != 6 {
		t.Fatalf("fix after the lock was let go: %+v, %v", res, err)
	}
}
