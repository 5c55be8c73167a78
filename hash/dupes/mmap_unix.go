//go:build unix

package dupes

import (
	"os"
	"syscall"
)

// mapFile maps a file's size bytes for reading, sparing a copy of each byte a comparison reads; nil
// when it cannot be (reads then go through ReadAt). unmap undoes it.
func mapFile(f *os.File, size int64) (data []byte, unmap func()) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil
	}
	return b, func() { syscall.Munmap(b) }
}
