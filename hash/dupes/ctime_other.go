//go:build !(linux || openbsd || dragonfly || darwin || freebsd || netbsd)

package dupes

import "io/fs"

// changeTime is unknown here: 0 (the other checks still hold).
func changeTime(fs.FileInfo) int64 { return 0 }
