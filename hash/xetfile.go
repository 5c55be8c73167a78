package hash

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/hash/xet"
)

// Xet is a file's Xet hash (the Hugging Face Hub's identity of its bytes, see package xet) and, for a
// file after the first of a Run, how much of it is made of the chunks of the files before it.
type Xet struct {
	// Hash is the Xet hash in the Hub's string form (the tree API's xetHash).
	Hash string `json:"hash"`
	// Chunks is how many chunks the Hub's chunker cuts the file into.
	Chunks int `json:"chunks"`
	// Shared is what of this file the files before it in the Run hold (nil for the first file).
	Shared *XetShared `json:"shared,omitempty"`

	chunks []xet.Chunk
}

// XetShared is how much of a file is made of chunks that other files hold: what an upload of the file
// after them would not send again (chunk for chunk, under the Hub's chunker; the Hub may dedupe more,
// against what others uploaded).
type XetShared struct {
	// Chunks and Bytes are the file's chunks found among the others', counted with repeats, and their
	// bytes.
	Chunks int   `json:"chunks"`
	Bytes  int64 `json:"bytes"`
}

// XetChunks is the file's chunks (nil unless the Xet hash was computed).
func (x *Xet) XetChunks() []xet.Chunk {
	if x == nil {
		return nil
	}
	return x.chunks
}

// ErrXetNotLocal is the cause of File.Err when a Xet hash (Options.Xet) is asked of something that is
// not a local regular file (a URL, hf://, a folder, a shard set): the hash is of one file's bytes.
var ErrXetNotLocal = errors.New("the Xet hash is of a local file's bytes, and this is not a local regular file")

// XetOfFile computes the Xet hash of the local regular file at path, reading it in parallel (see
// xet.Sum); opt's Workers and Progress apply.
func XetOfFile(ctx context.Context, path string, opt Options) (*Xet, error) {
	if source.IsRemote(path) {
		return nil, &canon.ReadError{Name: path, Err: ErrXetNotLocal, Hint: "hash a downloaded copy; the Hub lists its files' Xet hashes (xetHash in its tree API)"}
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, &canon.ReadError{Name: path, Err: ErrXetNotLocal, Hint: "name the files one by one"}
	}
	f, st, err := canon.OpenRegular(path, os.O_RDONLY) // a FIFO or device is refused, never waited on
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if opt.Reading != nil {
		opt.Reading(path, st.Size())
	}
	res, err := xet.SumFile(ctx, f, st.Size(), xet.Options{Workers: opt.Workers, Progress: opt.Progress})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, canon.PathError("read", path, err)
	}
	if st2, err := f.Stat(); err == nil && (st2.Size() != st.Size() || !st2.ModTime().Equal(st.ModTime())) {
		return nil, &canon.ReadError{Name: path, Err: errors.New("the file changed while it was read"), Hint: "hash it again once it is written"}
	}
	return &Xet{Hash: res.Hash.String(), Chunks: len(res.Chunks), chunks: res.Chunks}, nil
}

// xetOnly: Run hashes bytes alone (Options.Xet without Content, All or Canonical), so any regular file
// is welcome, a model or not.
func (o Options) xetOnly() bool { return o.Xet && !o.Content && !o.All && !o.Canonical }

// xetFile is a File of spec with its Xet hash alone (see Options.Xet).
func xetFile(ctx context.Context, spec string, opt Options) File {
	f := File{Path: spec, Size: -1, Valid: true, bytesOnly: true}
	x, err := XetOfFile(ctx, spec, opt)
	if err != nil {
		return File{Path: spec, Err: err}
	}
	if st, err := os.Stat(spec); err == nil {
		f.Size, f.MTime = st.Size(), st.ModTime().UTC()
	}
	f.Xet = x
	return f
}

// addXet computes f's Xet hash after its other hashes (Options.Xet with a model's IDs).
func addXet(ctx context.Context, f *File, opt Options) {
	if f.Err != nil {
		return
	}
	x, err := XetOfFile(ctx, f.Path, opt)
	if err != nil {
		*f = File{Path: f.Path, Err: err}
		return
	}
	f.Xet = x
}

// shareXet fills each file's Xet.Shared: its chunks found among those of the files before it.
func shareXet(files []File) {
	seen := map[xet.Hash]bool{}
	first := true
	for i := range files {
		x := files[i].Xet
		if x == nil {
			continue
		}
		if !first {
			s := &XetShared{}
			for _, c := range x.chunks {
				if seen[c.Hash] {
					s.Chunks++
					s.Bytes += c.Len
				}
			}
			x.Shared = s
		}
		first = false
		for _, c := range x.chunks {
			seen[c.Hash] = true
		}
	}
}

// SharedChunks is how much of b is made of a's chunks (see XetShared).
func SharedChunks(a, b []xet.Chunk) XetShared {
	seen := make(map[xet.Hash]bool, len(a))
	for _, c := range a {
		seen[c.Hash] = true
	}
	var s XetShared
	for _, c := range b {
		if seen[c.Hash] {
			s.Chunks++
			s.Bytes += c.Len
		}
	}
	return s
}

// xetRecord is the JSON record of a file read as bytes alone (see Options.Xet): no IDs, no verdict.
func (f *File) xetRecord() any {
	type record struct {
		Path    string  `json:"path"`
		Size    *int64  `json:"size"`
		MTime   *string `json:"mtime"`
		XetHash string  `json:"xet_hash"`
		Xet     *Xet    `json:"xet"`
	}
	r := record{Path: f.Path, XetHash: f.Xet.Hash, Xet: f.Xet}
	if f.Size >= 0 {
		size, mtime := f.Size, f.MTime.Format(time.RFC3339Nano)
		r.Size, r.MTime = &size, &mtime
	}
	return r
}

// isLocalFile reports whether spec names a local regular file (links followed).
func isLocalFile(spec string) bool {
	if source.IsRemote(spec) {
		return false
	}
	st, err := os.Stat(spec)
	return err == nil && st.Mode().IsRegular()
}
