package hash

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/zeebo/blake3"
)

// chunkSize is how much one worker reads at a time; memory use is workers × chunkSize.
const chunkSize = 1 << 20

// Options tunes byte work, and says what Run and Verify compute and how they open models.
type Options struct {
	// Workers is the number of tensors hashed at once (default: GOMAXPROCS).
	Workers int
	// Progress, when set, is called from worker goroutines with the number of bytes just hashed.
	Progress func(n int64)
	// Reading, when set, is called by Run and Verify before a model's bytes are read, with its name and
	// how many bytes will be read; Progress then counts them. Models are read one after another.
	Reading func(name string, total int64)

	// Content: Run computes content IDs too.
	Content bool
	// All: Run computes the ecosystem hashes too, and verifies the hashes embedded in the metadata.
	// Ecosystem hashes are hashes of files: a shard named on its own (…-00001-of-00003.safetensors) is
	// then read as the one file it is, IDs included, not as its set.
	All bool
	// Canonical: Run keeps each model's canonical form (File.Canonical).
	Canonical bool
	// Xet: Run computes each file's Xet hash too (File.Xet), and how much of each file after the first
	// is made of the chunks of those before it; alone (without Content, All or Canonical) it reads any
	// regular file as bytes, a model or not. All computes it too, for local files.
	Xet bool
	// Source tunes how Run and Verify open models (the Hub's endpoint and token, HTTP limits).
	Source source.Options
	// BareKind is what Verify takes a manifest's bare hash lines (`<hex>  <path>`, as sha256sum and
	// b3sum write them) for: BareSHA256 (the default, also for "") or BareBLAKE3.
	BareKind string
}

// TensorDigests returns the BLAKE3-256 of every tensor's bytes, in m.Tensors order. Tensors are hashed
// in parallel, largest first, with positioned reads of at most 1 MiB per worker, so memory stays bounded
// whatever the file size. A tensor whose bytes lie outside the source is an error, as is a source that
// shrinks while it is read.
func TensorDigests(ctx context.Context, src canon.Source, m *canon.Model, opt Options) ([][32]byte, error) {
	if err := CheckRanges(src, m); err != nil {
		return nil, err
	}
	order := make([]int, len(m.Tensors))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return m.Tensors[order[a]].Len() > m.Tensors[order[b]].Len() })

	digests := make([][32]byte, len(m.Tensors))
	type state struct {
		buf []byte
		h   *blake3.Hasher
	}
	newState := func() state { return state{make([]byte, chunkSize), blake3.New()} }
	err := pool.RunWith(ctx, opt.Workers, len(order), newState, func(ctx context.Context, s state, k int) error {
		i := order[k]
		t := &m.Tensors[i]
		s.h.Reset()
		if err := hashRange(ctx, src, s.h, s.buf, m.DataOffset()+int64(t.Begin), int64(t.Len()), opt.Progress); err != nil {
			return err
		}
		s.h.Sum(digests[i][:0])
		return nil
	})
	if err != nil {
		return nil, err
	}
	return digests, nil
}

// hashRange writes n bytes of src from off into h, chunk by chunk.
func hashRange(ctx context.Context, src canon.Source, h *blake3.Hasher, buf []byte, off, n int64, progress func(int64)) error {
	for n > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := buf[:min(int64(len(buf)), n)]
		if _, err := src.ReadAt(c, off); err != nil {
			return err
		}
		h.Write(c)
		if progress != nil {
			progress(int64(len(c)))
		}
		off += int64(len(c))
		n -= int64(len(c))
	}
	return nil
}

// CheckRanges refuses a model whose tensors claim bytes beyond the source (a truncated file, or a
// lenient model of an invalid one), or whose shards are not all there: such a model has no content ID. TensorDigests and FileHashes (with
// digests) call it first, before reading any byte.
func CheckRanges(src canon.Source, m *canon.Model) error {
	if m.MissingShards() != nil {
		return missingShardsError(m)
	}
	data := src.Size() - m.DataOffset()
	for i := range m.Tensors {
		t := &m.Tensors[i]
		if !m.InFile(t, src.Size()) {
			return &canon.ReadError{Name: src.Name(),
				Err:  fmt.Errorf("tensor %q claims data bytes %d to %d, beyond the file's %d data bytes", t.Name, t.Begin, t.End, max(data, 0)),
				Hint: "the file is truncated or its header is wrong: `stdiff check` says more"}
		}
	}
	return nil
}

// missingShardsError is why a shard set with shards missing (see source.ReadSet) has no structure or
// content ID: some tensors are known by name only.
func missingShardsError(m *canon.Model) error {
	missing := m.MissingShards()
	list := strings.Join(missing[:min(len(missing), 3)], ", ")
	if len(missing) > 3 {
		list += ", …"
	}
	known := false // by name, from an index
	for _, sh := range m.Shards {
		known = known || sh.Missing && sh.Tensors > 0
	}
	if !known {
		return &canon.ReadError{Name: m.Name, Err: fmt.Errorf("%d of the set's %d shards are missing (%s): their tensors are unknown", len(missing), len(m.Shards), list),
			Hint: "every file of the model must be there: download the whole model"}
	}
	return &canon.ReadError{Name: m.Name, Err: fmt.Errorf("%d of the set's %d shards are missing (%s): their tensors are known by name only", len(missing), len(m.Shards), list),
		Hint: "every shard the index names must be there: download the whole set"}
}
