package source

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/pool"
)

// hubCompanionWorkers is how many companion files of a repository on the Hub are fetched at once.
const hubCompanionWorkers = 4

// withHubCompanions adds the companion files of a repository on the Hub (see Opened.Companions) to the
// model o opened from it, spec its hf:// address and files its listing (the tree API's): the files
// companion.Select picks, each fetched from base (the revision's resolve URL) through the same HTTP
// code and options as the model (companion.ReadAt: a small file whole, a large one hashed, one over
// companion.MaxHashed or that does not hold the bytes its answer announced an error), small ones a few
// at a time, large ones one at a time. Folder is set to
// spec: the repository is a folder model, as its clone would be.
func withHubCompanions(ctx context.Context, o *Opened, spec, base string, files []string, opt HTTPOptions) (*Opened, error) {
	rels, err := companion.Select(files)
	if err != nil {
		o.Close()
		return nil, &canon.ReadError{Name: spec, Err: err}
	}
	out := make([]companion.File, len(rels))
	var large sync.Mutex // one file over companion.WholeSize read at a time: at most one MaxSize buffer, as a local folder's
	err = pool.Run(ctx, hubCompanionWorkers, len(rels), func(ctx context.Context, i int) error {
		u := base + "/" + escapePath(rels[i])
		src, err := OpenHTTP(ctx, u, opt)
		if err != nil {
			return err
		}
		defer src.Close()
		if src.Size() > companion.WholeSize {
			large.Lock()
			defer large.Unlock()
		}
		if out[i], err = companion.ReadAt(src, src.Size(), rels[i]); err != nil {
			var re *canon.ReadError
			if errors.As(err, &re) {
				return err
			}
			return &canon.ReadError{Name: u, Err: fmt.Errorf("a file beside the tensors: %w", err)}
		}
		return nil
	})
	if err != nil {
		o.Close()
		return nil, err
	}
	o.Folder, o.Companions = spec, out
	return o, nil
}
