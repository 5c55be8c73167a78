// Package lockfile takes exclusive advisory locks on files, the one way stdiff does: flock where the
// system has it (Linux, macOS, the BSDs), retrying an interrupted call, waiting a bounded time for
// another holder and not once the caller's context is done. Where the file system cannot lock (some
// network file systems answer ENOLCK, EOPNOTSUPP, ENOSYS or EINVAL, or EBADF for a file open for
// reading only), and on systems without flock,
// Lock carries on without a lock and says so (Locked.Held is false): callers keep the checks they make
// anyway, which a lock only makes certain.
//
// A lock does not stop programs that do not ask for it. Locks are held by an open file: two opens of
// one file (by any path that leads to it) exclude each other, in one process or two.
package lockfile

import (
	"context"
	"errors"
	"os"
	"time"
)

// ErrBusy is returned when another holder kept the lock for the whole wait.
var ErrBusy = errors.New("locked by another process")

// Locked is a lock taken (or, where the file system cannot lock, not taken) on an open file.
type Locked struct {
	// Held is false when the file system (or the system) cannot lock and Lock went on without.
	Held   bool
	unlock func()
}

// Unlock releases the lock; it does not close the file. It may be called more than once.
func (l *Locked) Unlock() {
	if l != nil && l.unlock != nil {
		l.unlock()
		l.unlock = nil
	}
}

// poll is how long Lock sleeps between tries while another holds the lock.
const poll = 20 * time.Millisecond

// Lock takes an exclusive advisory lock on f, waiting at most wait for another holder to let go
// (then ErrBusy), and not once ctx is done (then ctx's error). An interrupted call is retried.
// Where the file system cannot lock, it returns a Locked that is not Held, and no error.
func Lock(ctx context.Context, f *os.File, wait time.Duration) (*Locked, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	try := func(how int) (err error) {
		if cerr := rc.Control(func(fd uintptr) { err = flock(fd, how) }); cerr != nil {
			return cerr
		}
		return err
	}
	deadline := time.Now().Add(wait)
	for {
		err := try(lockExclusive)
		switch {
		case err == nil:
			return &Locked{Held: true, unlock: func() { _ = try(lockRelease) }}, nil
		case interrupted(err):
			continue
		case cannotLock(err):
			return &Locked{}, nil
		case !busy(err):
			return nil, &os.PathError{Op: "lock", Path: f.Name(), Err: err}
		case !time.Now().Before(deadline):
			return nil, &os.PathError{Op: "lock", Path: f.Name(), Err: ErrBusy}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(poll, wait/4+time.Millisecond)):
		}
	}
}

// LockPath opens (creating it, mode 0644) the file at path and locks it as Lock does. The returned
// function unlocks and closes it. The lock file is meant to be left in place: removing it would let
// two runs lock two different files.
func LockPath(ctx context.Context, path string, wait time.Duration) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|nonBlock, 0o644)
	if err != nil {
		return nil, err
	}
	l, err := Lock(ctx, f, wait)
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { l.Unlock(); f.Close() }, nil
}
