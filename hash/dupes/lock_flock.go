//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package dupes

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockFile takes an exclusive advisory lock (flock) on the file at path, creating it, waiting at most
// wait for another holder, and not once ctx is done; unlock releases it. The lock file is left in place: removing it would let
// two runs lock two different files.
func lockFile(ctx context.Context, path string, wait time.Duration) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(fd, syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, &os.PathError{Op: "lock", Path: path, Err: err}
		}
		if !time.Now().Before(deadline) {
			f.Close()
			return nil, ErrCacheLocked
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
