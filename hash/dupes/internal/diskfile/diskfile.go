// Package diskfile holds what dupes, its cache and its acting share about files on disk: a file's
// device, inode and change time, a byte-for-byte comparison that never blocks on a FIFO, and an
// error in the words a report carries.
package diskfile

import (
	"bytes"
	"context"
	"io"
	"os"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// Chunk is how much of a file (or a tensor) is read at a time when two are compared.
const Chunk = 1 << 20

// SameBytes reports whether the files a and b hold the same bytes (the same file does). It reads them
// side by side and stops at the first difference. Only regular files are opened, never blocking (a
// FIFO put at either path is an error, not a wait: canon.OpenRegular).
func SameBytes(ctx context.Context, a, b string) (bool, error) {
	fa, sa, err := canon.OpenRegular(a, os.O_RDONLY)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, sb, err := canon.OpenRegular(b, os.O_RDONLY)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	if os.SameFile(sa, sb) {
		return true, nil
	}
	if sa.Size() != sb.Size() {
		return false, nil
	}
	ba, bb := make([]byte, Chunk), make([]byte, Chunk)
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea == io.EOF || ea == io.ErrUnexpectedEOF {
			return eb == ea, nil
		}
		if ea != nil {
			return false, ea
		}
		if eb != nil {
			return false, eb
		}
	}
}

// Reason is err in words, without the path a *canon.ReadError names, on one line: control
// characters (the newline errors.Join puts between errors, one in a name) are escaped.
func Reason(err error) string {
	if re, ok := err.(*canon.ReadError); ok {
		return textfmt.Escape(re.Reason())
	}
	return textfmt.Escape(err.Error())
}
