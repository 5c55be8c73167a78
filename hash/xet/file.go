package xet

import (
	"context"
	"os"
)

// SumFile is Sum of the first size bytes of f. Where the system maps files into memory, the chunks are
// hashed where the page cache holds them (no copy into buffers, as b3sum reads); elsewhere, or when
// mapping fails, f is read with ReadAt.
func SumFile(ctx context.Context, f *os.File, size int64, opt Options) (*Result, error) {
	if data, unmap, ok := mapFile(f, size); ok {
		defer unmap()
		return Sum(ctx, sliceReader(data), size, opt)
	}
	return Sum(ctx, f, size, opt)
}

// sliceReader is bytes held in memory: chunkRange hashes them in place instead of copying them.
type sliceReader []byte

// ReadAt implements io.ReaderAt (for the serial fallback in join).
func (s sliceReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(s)) {
		return 0, errEOF
	}
	n := copy(p, s[off:])
	if n < len(p) {
		return n, errEOF
	}
	return n, nil
}
