//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package lockfile

import (
	"errors"
	"syscall"
)

const (
	lockExclusive = syscall.LOCK_EX | syscall.LOCK_NB
	lockRelease   = syscall.LOCK_UN
	// nonBlock opens a lock file without waiting on a named pipe put in its place.
	nonBlock = syscall.O_NONBLOCK
)

// flock is syscall.Flock; tests replace it.
var flock = func(fd uintptr, how int) error { return syscall.Flock(int(fd), how) }

func interrupted(err error) bool { return errors.Is(err, syscall.EINTR) }

func busy(err error) bool { return errors.Is(err, syscall.EWOULDBLOCK) }

// cannotLock: the file system has no locks (NFS without a lock manager, some FUSE and SMB mounts), or
// none on a file open for reading only (NFS, which locks by fcntl: EBADF).
func cannotLock(err error) bool {
	return errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.EOPNOTSUPP) ||
		errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EBADF)
}
