package diff

import (
	"context"

	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/hash"
)

// Models compares two opened models (source.Open: a file, a shard set, a URL, hf://), as `stdiff diff`
// does. Before reading any tensor byte it refuses a model whose header could not be read at all (a
// *canon.ReadError) and patterns of opt that would filter nothing (a *PatternError, see
// Options.CheckPatterns). With opt.Content (and not MetadataOnly) it reads both models' tensor digests
// at once, so that the report compares bytes and confirms renames; a failure on one side stops the
// other. Of two GGUF models it also reads the elements of the arrays that differ (ArrayChange) and the
// whole of strings longer than gguf.MaxInline. Models leaves a and b open.
func Models(ctx context.Context, a, b *source.Opened, opt Options) (*Report, error) {
	opened := []*source.Opened{a, b}
	for _, o := range opened {
		if !o.Model.HeaderParsed {
			return nil, hash.HeaderError(o.Model)
		}
	}
	if err := opt.CheckPatterns(a.Model, b.Model); err != nil {
		return nil, err
	}
	sides := []Side{{Model: a.Model}, {Model: b.Model}}
	if opt.Content && !opt.MetadataOnly {
		err := pool.Run(ctx, 2, 2, func(ctx context.Context, i int) (err error) {
			sides[i].Digests, err = digests(ctx, opened[i], opt.Progress)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	r := Compare(sides[0], sides[1], opt)
	if err := ggufDetails(ctx, r, a.Model, b.Model, opt); err != nil {
		return nil, err
	}
	return r, nil
}

// digests reads the tensor digests of a model: in parallel from a local file, which must not change
// meanwhile; front to back from a remote one (nothing is stored).
func digests(ctx context.Context, o *source.Opened, progress func(int64)) ([][32]byte, error) {
	opt := hash.Options{Progress: progress}
	if o.Remote {
		return hash.StreamDigests(ctx, o.Source, o.Model, opt)
	}
	d, err := hash.TensorDigests(ctx, o.Source, o.Model, opt)
	if err != nil {
		return nil, err
	}
	return d, o.Unchanged()
}
