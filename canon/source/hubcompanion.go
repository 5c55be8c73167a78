package source

import (
	"context"
	"fmt"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// hubCompanionWorkers is how many companion files of a repository are downloaded at a time.
const hubCompanionWorkers = 4

// withHubCompanions makes the model of a repository on the Hub (named without a path, opened by
// openRepo) the folder model it is: its companion files are those of its listing that a folder of
// the same files has (companion.Select), each downloaded whole (hubCompanion) and read as
// companion.ReadDir reads a local one, so that the repository and its download compare equal. files is
// the listing when openRepo asked for it (listed), else it is asked for now. An endpoint without the
// tree API lists nothing: the model is then not a folder model (Opened.Folder stays ""), as a model
// named by its file is not. On failure it closes o.
func withHubCompanions(ctx context.Context, o *Opened, spec string, a hfAddr, endpoint string, opt HTTPOptions, files []hubEntry, listed bool) (*Opened, error) {
	if !listed {
		var err error
		files, err = listHub(ctx, a, endpoint, opt)
		switch {
		case err != nil && hubMissing(a, err) == "" && notFound(err):
			return o, nil
		case err != nil:
			o.Close()
			return nil, listError(ctx, spec, err, withheldToken(opt), opt)
		}
	} else if files == nil {
		return o, nil
	}
	size := map[string]int64{}
	for _, f := range files {
		size[f.Path] = f.Size
	}
	rels := companion.Select(pathsOf(files))
	if len(rels) > companion.MaxFiles {
		o.Close()
		return nil, &canon.ReadError{Name: spec, Err: fmt.Errorf("the repository holds %d companion files, over the %d stdiff reads", len(rels), companion.MaxFiles)}
	}
	out := make([]companion.File, len(rels))
	base := a.resolve(endpoint)
	err := pool.Run(ctx, hubCompanionWorkers, len(rels), func(ctx context.Context, i int) error {
		var err error
		out[i], err = hubCompanion(ctx, base, rels[i], size[rels[i]], opt)
		return err
	})
	if err != nil {
		o.Close()
		return nil, err
	}
	o.Folder, o.Companions = spec, out
	return o, nil
}

// hubCompanion downloads the companion file rel of a repository's revision (its files under base) and
// reads it as companion.ReadFile reads a local one. listed is the size the listing gives it: a file
// the server serves at another size, or over companion.MaxSize bytes (which a local folder's file
// would be hashed for, but which stdiff does not download), is an error, and nothing is read before
// its size is checked.
func hubCompanion(ctx context.Context, base, rel string, listed int64, opt HTTPOptions) (companion.File, error) {
	kind, _ := companion.KindOf(rel)
	f := companion.File{Path: rel, Kind: kind}
	fileURL := base + "/" + escapePath(rel)
	if listed > companion.MaxSize {
		return f, &canon.ReadError{Name: fileURL, Err: fmt.Errorf("the repository lists it at %s, over the %d MiB stdiff downloads of a file beside the tensors", textfmt.Bytes(uint64(listed)), companion.MaxSize>>20),
			Hint: "download the repository and compare its folder"}
	}
	opt.Prefetch = min(max(listed, 1), 256<<10) // a small file in one request
	src, err := OpenHTTP(ctx, fileURL, opt)
	if err != nil {
		return f, err
	}
	defer src.Close()
	if src.Size() != listed {
		return f, &canon.ReadError{Name: fileURL, Err: fmt.Errorf("the server serves %d bytes, the repository's listing says %d", src.Size(), listed),
			Hint: "the revision may have changed meanwhile: try again, or name a commit (hf://ORG/REPO@COMMIT)"}
	}
	b := make([]byte, listed)
	if _, err := src.ReadAt(b, 0); err != nil && listed > 0 {
		return f, err
	}
	companion.Parse(&f, b)
	return f, nil
}
