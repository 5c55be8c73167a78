//go:build unix

package diskfile

import (
	"io/fs"
	"syscall"
)

// ID is a file's device and inode, which links share, and its number of hard links.
func ID(st fs.FileInfo) (dev, ino, nlink uint64) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Dev), sys.Ino, uint64(sys.Nlink)
	}
	return 0, 0, 0
}
