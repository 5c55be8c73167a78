package companion

import (
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/zeebo/blake3"
)

// MaxHashed is the largest companion file read from a server to be hashed (one over MaxSize, which is
// not parsed, is still hashed as a local one is): a larger one is an error rather than an unbounded
// download.
const MaxHashed = 1 << 30

// Select picks the companion files among a repository's files (slash-separated paths relative to its
// top, as a listing of a repository on the Hub gives them), by the rules ReadDir follows in a folder:
// those at the top, in its additional_chat_templates folder, and when the top holds model_index.json,
// in each folder directly under it (and its additional_chat_templates folder). Hidden files and folders
// are left out. The paths are in order; more than MaxFiles is an error.
func Select(files []string) ([]string, error) {
	pipeline := slices.Contains(files, "model_index.json")
	var out []string
	for _, p := range files {
		parts := strings.Split(p, "/")
		if slices.ContainsFunc(parts, func(s string) bool { return s == "" || strings.HasPrefix(s, ".") }) || !Is(p) {
			continue
		}
		switch {
		case len(parts) == 1,
			len(parts) == 2 && parts[0] == TemplateDir,
			pipeline && len(parts) == 2,
			pipeline && len(parts) == 3 && parts[0] != TemplateDir && parts[1] == TemplateDir:
			out = append(out, p)
		}
	}
	if len(out) > MaxFiles {
		return nil, fmt.Errorf("the repository holds %d companion files, over the %d stdiff reads", len(out), MaxFiles)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ReadAt reads the companion file recorded as rel (see File.Path) from r, which holds size bytes (a
// file on a server, whose size its answer announced): as ReadFile reads a local one. A file of at most
// MaxSize bytes is read whole and parsed; a larger one, up to MaxHashed bytes, is hashed a piece at a
// time and compared by its digest (File.Problem); a larger one still is an error. r's errors (a server
// that sends fewer or other bytes than it announced) are returned.
func ReadAt(r io.ReaderAt, size int64, rel string) (File, error) {
	kind, _ := KindOf(rel)
	f := File{Path: rel, Kind: kind, Size: size}
	switch {
	case size < 0:
		return f, fmt.Errorf("%s: a size of %d bytes", rel, size)
	case size > MaxHashed:
		return f, fmt.Errorf("%s is %d bytes, over the %d MiB stdiff reads of a file beside the tensors", rel, size, MaxHashed>>20)
	case size > MaxSize:
		h := blake3.New()
		buf := make([]byte, 8<<20)
		for off := int64(0); off < size; {
			n := min(int64(len(buf)), size-off)
			if err := readFull(r, buf[:n], off); err != nil {
				return f, err
			}
			h.Write(buf[:n])
			off += n
		}
		f.Digest = "b3:" + hex.EncodeToString(h.Sum(nil))
		f.Problem = fmt.Sprintf("%d bytes, over the %d MiB stdiff parses: compared by its digest", size, MaxSize>>20)
		return f, nil
	}
	b := make([]byte, size)
	if err := readFull(r, b, 0); err != nil {
		return f, err
	}
	Parse(&f, b)
	return f, nil
}

// readFull reads len(p) bytes at off: an io.EOF with all of them is no error, fewer is one.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}
