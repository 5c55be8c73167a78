// Package diskfile holds what dupes, its cache and its acting share about files on disk: a file's
// device, inode and change time, a byte-for-byte comparison that never blocks on a FIFO, and an
// error in the words a report carries.
package diskfile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/zeebo/blake3"
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

// ReadHead reads the first n bytes of the file at path (all of it when it is shorter).
func ReadHead(path string, n int64) ([]byte, error) {
	src, err := source.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	b := make([]byte, min(n, src.Size()))
	if _, err := src.ReadAt(b, 0); err != nil {
		return nil, canon.PathError("read", path, err)
	}
	return b, nil
}

// Hash is the BLAKE3 of the file at path, which must still be size bytes long and unchanged once read
// (else an error wrapping canon.ErrChanged).
func Hash(path string, size int64) ([32]byte, error) {
	var sum [32]byte
	src, err := source.OpenFile(path)
	if err != nil {
		return sum, err
	}
	defer src.Close()
	if src.Size() != size {
		return sum, &canon.ReadError{Name: path, Op: "read", Err: canon.ErrChanged}
	}
	h := blake3.New()
	if _, err := io.Copy(h, io.NewSectionReader(src, 0, size)); err != nil {
		return sum, canon.PathError("read", path, err)
	}
	h.Sum(sum[:0])
	return sum, src.Unchanged()
}

// Walk expands roots into the models to scan (source.Walk, every format), with the errors of the
// roots that do not exist (a *canon.ReadError wrapping missing) or cannot be read, and of what cannot
// be read under the others.
func Walk(ctx context.Context, roots []string, missing error) ([]string, []error) {
	var found []string
	var errs []error
	for _, r := range roots {
		if !source.IsRemote(r) {
			if _, err := os.Stat(r); errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, &canon.ReadError{Name: r, Op: "stat", Err: missing})
				continue
			} else if err != nil {
				errs = append(errs, canon.PathError("stat", r, err))
				continue
			}
		}
		found = append(found, r)
	}
	paths, werrs := source.Walk(ctx, found, source.WalkOptions{AllFormats: true})
	if ctx.Err() == nil {
		errs = append(errs, werrs...)
	}
	return paths, errs
}

// Under reports whether path is root or lies under it, both made absolute (a URL is compared as it is).
func Under(path, root string) bool {
	p, r := abs(path), abs(root)
	return p == r || strings.HasPrefix(p, strings.TrimSuffix(r, string(filepath.Separator))+string(filepath.Separator))
}

// abs is p made absolute (cleaned where it cannot be), a URL as it is.
func abs(p string) string {
	if source.IsRemote(p) {
		return p
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
