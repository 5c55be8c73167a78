//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package lockfile

import "errors"

const (
	lockExclusive = 0
	lockRelease   = 1
	nonBlock      = 0
)

var errNoFlock = errors.New("no flock on this system")

// flock: this system has none, so Lock carries on without a lock.
var flock = func(uintptr, int) error { return errNoFlock }

func interrupted(error) bool { return false }

func busy(error) bool { return false }

func cannotLock(err error) bool { return errors.Is(err, errNoFlock) }
