//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package canon

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockFile takes an exclusive advisory lock (flock) on f, waiting at most wait for another holder to
// let go, and not once ctx is done. Where the file system has no locks (some network file systems), it goes on without one:
// the checks FixNulPadding makes before and after writing still hold.
func lockFile(ctx context.Context, f *os.File, wait time.Duration) (unlock func(), err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	flock := func(how int) (err error) {
		if cerr := rc.Control(func(fd uintptr) { err = syscall.Flock(int(fd), how) }); cerr != nil {
			return cerr
		}
		return err
	}
	deadline := time.Now().Add(wait)
	for {
		err := flock(syscall.LOCK_EX | syscall.LOCK_NB)
		switch {
		case err == nil:
			return func() { _ = flock(syscall.LOCK_UN) }, nil
		case errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EINVAL):
			return func() {}, nil
		case !errors.Is(err, syscall.EWOULDBLOCK):
			return nil, err
		case time.Now().After(deadline):
			return nil, ErrLocked
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(50*time.Millisecond, wait/4+time.Millisecond)):
		}
	}
}
