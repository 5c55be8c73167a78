//go:build unix

package derived

import (
	"os"
	"syscall"
)

// mapFile maps the file f for reading, sparing a copy of each byte a verification reads; nil when it
// cannot be (reads then go through ReadAt). unmap undoes it.
func mapFile(f *os.File) (data []byte, unmap func()) {
	st, err := f.Stat()
	if err != nil || st.Size() <= 0 || int64(int(st.Size())) != st.Size() {
		return nil, nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil
	}
	return b, func() { syscall.Munmap(b) }
}
