package diff

import (
	"context"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/hash"
)

// XetShare is how much of B is made of A's chunks under the Hugging Face Hub's chunker (package
// hash/xet): what an upload of B after A would not send again (Options.Xet).
type XetShare struct {
	// A and B are the files' Xet hashes (the Hub's xetHash).
	A string `json:"a"`
	B string `json:"b"`
	// BChunks and BBytes are B's chunks and length; SharedChunks and SharedBytes those of B's chunks
	// that A has too (counted with repeats).
	BChunks      int   `json:"b_chunks"`
	BBytes       int64 `json:"b_bytes"`
	SharedChunks int   `json:"shared_chunks"`
	SharedBytes  int64 `json:"shared_bytes"`
}

// xetShare computes Report.Xet for two local files (both read whole, one after the other, each on
// every core); a side that is not one local file is an error (hash.ErrXetNotLocal).
func xetShare(ctx context.Context, a, b *source.Opened, opt Options) (*XetShare, error) {
	var xs [2]*hash.Xet
	for i, o := range []*source.Opened{a, b} {
		path, ok := localFile(o)
		if !ok || o.Remote || o.Snapshot != nil {
			return nil, &canon.ReadError{Name: o.Model.Name, Err: hash.ErrXetNotLocal, Hint: "compare two local files for what they share"}
		}
		x, err := hash.XetOfFile(ctx, path, hash.Options{Progress: opt.Progress})
		if err != nil {
			return nil, err
		}
		xs[i] = x
	}
	s := hash.SharedChunks(xs[0].XetChunks(), xs[1].XetChunks())
	share := &XetShare{A: xs[0].Hash, B: xs[1].Hash, BChunks: xs[1].Chunks, SharedChunks: s.Chunks, SharedBytes: s.Bytes}
	for _, c := range xs[1].XetChunks() {
		share.BBytes += c.Len
	}
	return share, nil
}

// localFile is the path of the one local file o was read from.
func localFile(o *source.Opened) (string, bool) {
	for _, s := range []canon.Source{o.File, o.Source} {
		if fs, ok := s.(*source.FileSource); ok {
			return fs.File().Name(), true
		}
	}
	return "", false
}

// xet writes the Xet share in words, for the text (Write).
func (t *textWriter) xet(x *XetShare) {
	pct := 100.0
	if x.BBytes > 0 {
		pct = 100 * float64(x.SharedBytes) / float64(x.BBytes)
	}
	t.printf("\n%s\n  %.1f%% of B is made of A's chunks: %d of %d chunks, %s of %s (xet %s → %s)\n", t.opt.Palette.Bold("xet"),
		pct, x.SharedChunks, x.BChunks, textfmt.Bytes(uint64(x.SharedBytes)), textfmt.Bytes(uint64(x.BBytes)), x.A[:12], x.B[:12])
}
