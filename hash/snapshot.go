package hash

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/snapshot"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/values"
	"github.com/zeebo/blake3"
)

// DigestsAndStats reads every tensor's bytes once and returns, in m.Tensors order, their BLAKE3-256
// digests (as TensorDigests) and the summaries of their values (the Stats values.SummarizeAll gives, to
// the bit; nil for a tensor package values does not decode: ggml's block-quantised types, every tensor
// of a big-endian GGUF file, bytes that are not whole elements). Tensors are read in parallel, largest
// first, chunk by chunk, in bounded memory (a few MiB per worker).
func DigestsAndStats(ctx context.Context, src canon.Source, m *canon.Model, opt Options) ([][32]byte, []*values.Stats, error) {
	if err := CheckRanges(src, m); err != nil {
		return nil, nil, err
	}
	order := make([]int, len(m.Tensors))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return m.Tensors[order[a]].Len() > m.Tensors[order[b]].Len() })
	digests, stats := make([][32]byte, len(m.Tensors)), make([]*values.Stats, len(m.Tensors))
	type state struct {
		buf []byte
		h   *blake3.Hasher
		sum values.Chunked
	}
	newState := func() *state { return &state{h: blake3.New()} }
	err := pool.RunWith(ctx, opt.Workers, len(order), newState, func(ctx context.Context, s *state, k int) error {
		i := order[k]
		t := &m.Tensors[i]
		chunk, summarise := chunkSize, false
		if n, err := values.ChunkBytes(t.DType); err == nil && !t.DType.Quantized() && !m.BigEndian() {
			_, err = values.Elements(t.DType, int64(t.Len()))
			chunk, summarise = n, err == nil
		}
		if len(s.buf) < chunk {
			s.buf = make([]byte, chunk)
		}
		if summarise {
			s.sum.Reset(t.DType) // ChunkBytes knew the dtype
		}
		s.h.Reset()
		for off, n := m.DataOffset()+int64(t.Begin), int64(t.Len()); n > 0; {
			if err := ctx.Err(); err != nil {
				return err
			}
			c := s.buf[:min(int64(chunk), n)]
			if _, err := src.ReadAt(c, off); err != nil {
				return err
			}
			s.h.Write(c)
			if summarise {
				if err := s.sum.Add(c); err != nil {
					return err
				}
			}
			if opt.Progress != nil {
				opt.Progress(int64(len(c)))
			}
			off += int64(len(c))
			n -= int64(len(c))
		}
		s.h.Sum(digests[i][:0])
		if summarise {
			st := s.sum.Result()
			stats[i] = &st
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return digests, stats, nil
}

// Snapshot opens the model spec names (source.Open with opt.Source; opt.Reading and opt.Progress
// as for Run) and makes its snapshot: its header, its IDs, and every tensor's digest and value
// summary, read in one pass (DigestsAndStats). out is where the snapshot will be written ("" for
// standard output): the snapshot names the model relative to its folder (snapshot.Rel). A model
// whose header cannot be read, whose tensors are not all there, or with text a snapshot cannot
// record (snapshot.Recordable) has no snapshot: the error says why (a *canon.ReadError). files, when not nil, receives the model's local files (which the
// snapshot must not replace).
func Snapshot(ctx context.Context, spec, out string, opt Options) (s *snapshot.Snapshot, files []string, err error) {
	o, err := source.Open(ctx, spec, opt.Source)
	if err != nil {
		return nil, nil, err
	}
	defer o.Close()
	m := o.Model
	if !m.HeaderParsed {
		return nil, nil, HeaderError(m)
	}
	name := snapshot.Rel(spec, out)
	if err := snapshot.Recordable(m, name); err != nil {
		return nil, nil, &canon.ReadError{Name: m.Name, Err: err, Hint: "compare with the model itself: `stdiff diff MODEL OTHER`"}
	}
	if opt.Reading != nil {
		opt.Reading(spec, max(m.DataLen(), 0))
	}
	digests, stats, err := DigestsAndStats(ctx, o.Source, m, opt)
	if re := (*canon.ReadError)(nil); err != nil && !errors.As(err, &re) {
		err = &canon.ReadError{Name: m.Name, Op: "read", Err: err}
	}
	if err != nil {
		return nil, nil, err
	}
	if err := o.Unchanged(); err != nil {
		return nil, nil, err
	}
	if !o.Remote {
		files = append([]string{spec}, o.Files()...)
	}
	s = snapshot.New(m, name, digests, stats)
	if o.Folder != "" { // a folder model: the files a loader reads beside its tensors are part of it
		for _, f := range o.Companions {
			if !utf8.ValidString(f.Path) {
				return nil, nil, &canon.ReadError{Name: m.Name, Err: fmt.Errorf("companion file %q: its name is not valid UTF-8, which a snapshot (JSON) cannot record", f.Path)}
			}
		}
		s.Companions = append([]companion.File{}, o.Companions...)
		s.Seal()
	}
	return s, files, nil
}
