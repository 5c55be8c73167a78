package canon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/stdiff/stdiff/canon/textfmt"
)

// WriteFileAtomic writes what write writes to the file at path atomically: to a temporary file in the
// same folder, renamed over path once whole, so that path is never left half-written; when ctx is done
// first, or write fails, path is not touched. It refuses to replace any of the files keep names (a
// model's own files), and anything but a regular file (a folder; a named pipe or device such as
// /dev/stdout, which a rename would replace rather than write to). what names what is written ("a
// snapshot") in errors, which are *ReadError values naming path.
func WriteFileAtomic(ctx context.Context, path, what string, write func(io.Writer) error, keep ...string) (err error) {
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			is := "is not a regular file"
			if st.IsDir() {
				is = "is a folder"
			}
			return &ReadError{Name: path, Op: "write", Err: errors.New(is + ": " + what + " is written to a file of its own"),
				Hint: "name a file to write, or leave out -o to write to standard output"}
		}
		for _, k := range keep {
			if kst, err := os.Stat(k); err == nil && os.SameFile(st, kst) {
				return &ReadError{Name: path, Op: "write", Err: errors.New("is the model itself"), Hint: "write " + what + " to another file"}
			}
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if errors.Is(err, fs.ErrNotExist) {
		return &ReadError{Name: path, Op: "write", Err: fmt.Errorf("its folder %s does not exist", textfmt.Escape(filepath.Dir(path))),
			Hint: "make the folder first, or name a file in one that exists"}
	}
	if err != nil {
		return PathError("write", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o644); err != nil { // as os.Create makes files, not CreateTemp's 0600
		return PathError("write", path, err)
	}
	if err := write(tmp); err != nil {
		return PathError("write", path, err)
	}
	if err := tmp.Close(); err != nil {
		return PathError("write", path, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return PathError("write", path, err)
	}
	return nil
}
