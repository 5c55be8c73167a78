//go:build !unix

package hash

import "io/fs"

// fileID is unknown here: links are not recognised.
func fileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }
