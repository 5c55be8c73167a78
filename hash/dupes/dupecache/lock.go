package dupecache

import (
	"context"
	"errors"
	"time"

	"github.com/stdiff/stdiff/canon/lockfile"
)

// lockFile takes an exclusive advisory lock on the file at path, creating it (lockfile.LockPath),
// waiting at most wait for another holder (then ErrCacheLocked), and not once ctx is done; unlock
// releases it. Where the file system or the system cannot lock (a cache on NFS), it goes on without
// one: each save still writes a whole cache and renames it, but one run's new entries may be lost.
func lockFile(ctx context.Context, path string, wait time.Duration) (unlock func(), err error) {
	unlock, err = lockfile.LockPath(ctx, path, wait)
	if errors.Is(err, lockfile.ErrBusy) {
		return nil, ErrCacheLocked
	}
	return unlock, err
}
