//go:build !unix

package canon

// openNonblock: elsewhere there are no FIFOs to block on.
const openNonblock = 0
