package source

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon"
)

// WalkOptions tune Walk. The zero value walks as stdiff does.
type WalkOptions struct {
	// Progress, when set, is called with the number of models found so far, every so often.
	Progress func(found int)
	// AllFormats also lists the other files stdiff reads: PyTorch checkpoints (.bin, .pt, .pth,
	// .ckpt; a sharded one as its *.bin.index.json, its shards then not on their own), NumPy arrays
	// (.npy, .npz) and ONNX models (.onnx).
	AllFormats bool
}

// otherFormats are the extensions WalkOptions.AllFormats adds.
var otherFormats = map[string]bool{".dduf": true, ".bin": true, ".pt": true, ".pth": true, ".ckpt": true, ".npy": true, ".npz": true, ".onnx": true}

// Walk expands the folders among roots into the models under them, recursively, in path order:
// .safetensors and .gguf files (the name only picks the candidates; reading them tells their format),
// files without an extension that start with the GGUF magic (ollama's model blobs, named
// sha256-<hex> under ~/.ollama/models/blobs: one 4-byte read per extensionless file tells), and shard
// sets as their *.safetensors.index.json (their shards then not on their own). The files of a
// split GGUF model, like the shards of a set without an index, are listed one by one. It follows links to files but not to folders, so that a link loop cannot trap it, and skips what
// is not a regular file. Roots that are not folders (files, URLs, paths that do not exist) are kept as
// they are, for the caller to open and report. A folder or file it cannot read is an error (a
// *canon.ReadError naming it) and the walk goes on; once ctx is done it stops, with ctx.Err() last
// among the errors.
func Walk(ctx context.Context, roots []string, opt WalkOptions) ([]string, []error) {
	var paths []string
	var errs []error
	inSet := map[string]bool{}
	for _, root := range roots {
		st, err := os.Stat(root)
		if IsRemote(root) || err != nil || !st.IsDir() {
			paths = append(paths, root)
			continue
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if err != nil {
				errs = append(errs, &canon.ReadError{Name: p, Op: "read", Err: err})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 { // a link to a file counts (once: dupes knows links); to a folder, not
				if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
					return nil
				}
			} else if !d.Type().IsRegular() {
				return nil
			}
			switch name := strings.ToLower(d.Name()); {
			case strings.HasSuffix(name, ".safetensors.index.json"), opt.AllFormats && strings.HasSuffix(name, ".bin.index.json"):
				paths = append(paths, p)
				if b, err := os.ReadFile(p); err == nil {
					if idx, err := ParseIndex(p, b); err == nil {
						for _, sh := range idx.Shards {
							inSet[filepath.Join(filepath.Dir(p), filepath.FromSlash(sh))] = true
						}
					}
				}
			case strings.HasSuffix(name, ".safetensors"), strings.HasSuffix(name, ".gguf"),
				filepath.Ext(name) == "" && startsGGUF(p), opt.AllFormats && otherFormats[filepath.Ext(name)]:
				paths = append(paths, p)
			default:
				return nil
			}
			if opt.Progress != nil && len(paths)%256 == 0 {
				opt.Progress(len(paths))
			}
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				errs = append(errs, ctx.Err())
				break
			}
			errs = append(errs, &canon.ReadError{Name: root, Op: "read", Err: err})
		}
	}
	kept := paths[:0]
	for _, p := range paths {
		if !inSet[filepath.Clean(p)] {
			kept = append(kept, p)
		}
	}
	sort.Strings(kept)
	return kept, errs
}

// startsGGUF reports whether the file at p starts with the GGUF magic (false when it cannot be read:
// a file that is not named as a model is no model unless its bytes say so).
func startsGGUF(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == "GGUF"
}
