//go:build unix

package canon

import "syscall"

// openNonblock is added to open flags so that opening a FIFO swapped in after a Stat never blocks.
const openNonblock = syscall.O_NONBLOCK
