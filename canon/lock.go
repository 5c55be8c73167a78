package canon

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/stdiff/stdiff/canon/lockfile"
)

// lockFile takes an exclusive advisory lock on f (lockfile.Lock), waiting at most wait for another
// holder to let go (then an error wrapping ErrLocked), and not once ctx is done. Where the file system
// or the system cannot lock, it goes on without one: the checks FixNulPadding makes before and after
// writing still hold.
func lockFile(ctx context.Context, f *os.File, wait time.Duration) (unlock func(), err error) {
	l, err := lockfile.Lock(ctx, f, wait)
	if errors.Is(err, lockfile.ErrBusy) {
		return nil, ErrLocked
	}
	if err != nil {
		return nil, err
	}
	return l.Unlock, nil
}
