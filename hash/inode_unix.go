//go:build unix

package hash

import (
	"io/fs"
	"syscall"
)

// fileID is a file's device and inode, which links share.
func fileID(st fs.FileInfo) (dev, ino uint64) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Dev), sys.Ino
	}
	return 0, 0
}
