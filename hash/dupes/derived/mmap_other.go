//go:build !unix

package derived

import "os"

// mapFile maps nothing here: reads go through ReadAt.
func mapFile(*os.File) ([]byte, func()) { return nil, nil }
