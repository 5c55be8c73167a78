//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package lockfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// withFlock replaces flock for one test: the first calls answer errs in turn, then the real one.
func withFlock(t *testing.T, errs ...error) {
	real := flock
	t.Cleanup(func() { flock = real })
	flock = func(fd uintptr, how int) error {
		if how == lockExclusive && len(errs) > 0 {
			err := errs[0]
			errs = errs[1:]
			return err
		}
		return real(fd, how)
	}
}

// TestLockInterrupted: an interrupted call is tried again, and the lock is taken.
func TestLockInterrupted(t *testing.T) {
	withFlock(t, syscall.EINTR, syscall.EINTR)
	unlock, err := LockPath(t.Context(), filepath.Join(t.TempDir(), "l"), time.Second)
	if err != nil {
		t.Fatalf("after EINTR: %v", err)
	}
	unlock()
}

// TestLockCannotLock: where the file system has no locks, Lock goes on without one.
func TestLockCannotLock(t *testing.T) {
	for _, e := range []error{syscall.ENOLCK, syscall.EOPNOTSUPP, syscall.ENOSYS, syscall.EINVAL, syscall.EBADF} {
		withFlock(t, e)
		f, err := os.Create(filepath.Join(t.TempDir(), "l"))
		if err != nil {
			t.Fatal(err)
		}
		l, err := Lock(t.Context(), f, time.Second)
		if err != nil || l.Held {
			t.Errorf("%v: %v, held %v", e, err, l != nil && l.Held)
		}
		l.Unlock()
		f.Close()
	}
	withFlock(t, syscall.EIO)
	if _, err := LockPath(t.Context(), filepath.Join(t.TempDir(), "l"), time.Second); !errors.Is(err, syscall.EIO) {
		t.Errorf("EIO: %v", err)
	}
}

// TestLockBounded: a second open of the file (by another path) waits at most its wait, and not once
// its context is done; it gets the lock once the first lets go.
func TestLockBounded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "l")
	unlock, err := LockPath(t.Context(), path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "link")
	if err := os.Symlink(path, other); err != nil {
		t.Fatal(err)
	}
	if _, err := LockPath(t.Context(), other, 50*time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Errorf("while held: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(30*time.Millisecond, cancel)
	start := time.Now()
	if _, err := LockPath(ctx, other, time.Minute); !errors.Is(err, context.Canceled) || time.Since(start) > 10*time.Second {
		t.Errorf("cancelled while waiting: %v", err)
	}
	unlock()
	unlock2, err := LockPath(t.Context(), other, time.Second)
	if err != nil {
		t.Fatalf("once free: %v", err)
	}
	unlock2()
}
