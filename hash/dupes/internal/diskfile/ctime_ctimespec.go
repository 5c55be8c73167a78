//go:build darwin || freebsd || netbsd

package diskfile

import (
	"io/fs"
	"syscall"
)

// ChangeTime is when the file's inode last changed (ctime), in nanoseconds; 0 where unknown.
func ChangeTime(st fs.FileInfo) int64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return sys.Ctimespec.Nano()
	}
	return 0
}
