package hash

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"hash/crc32"
	"sort"
	"strings"
	"sync"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/zeebo/blake3"
)

// Ecosystem holds the hashes the LoRA world looks files up by (see cmd/stdiff/docs/identities.md, "Ecosystem hashes").
// The whole-file hashes (SHA256, AutoV2, BLAKE3, CRC32) exist for any file; AutoV1 and AutoV3 only where
// the file has the bytes they cover, and are "" (JSON null) elsewhere.
type Ecosystem struct {
	// SHA256 of the whole file, 64 lower-case hex digits (CivitAI shows it upper case).
	SHA256 string `json:"sha256"`
	// AutoV1 is A1111's legacy model hash: SHA256 of file[0x100000:0x110000], first 8 hex digits. It is
	// "" for a file shorter than AutoV1MinSize, whose window is incomplete: A1111 hashes whatever it reads
	// there, which for every file up to 1 MiB is nothing (e3b0c442, the SHA256 of no bytes).
	AutoV1 Hex `json:"autov1"`
	// AutoV2 is the first 10 hex digits of SHA256.
	AutoV2 string `json:"autov2"`
	// AutoV3 is the SHA256 of everything after the header (what kohya's sshs_model_hash and
	// modelspec.hash_sha256 hold), 64 hex digits; A1111 and CivitAI match on the first 12. It is "" when
	// the file's header length does not say where the data starts: a file under 8 bytes, or a length
	// over the reference's limit or past the end of the file (see HasDataSection).
	AutoV3 Hex `json:"autov3"`
	// BLAKE3 of the whole file, 64 hex digits.
	BLAKE3 string `json:"blake3"`
	// CRC32 (IEEE) of the whole file, its bytes in little-endian order as CivitAI prints it, upper case.
	CRC32 string `json:"crc32"`
}

// Hex is a hash in hex digits, or "" where a file has none; JSON writes "" as null.
type Hex string

// MarshalJSON writes the hash as a JSON string, or null when there is none.
func (h Hex) MarshalJSON() ([]byte, error) {
	if h == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(h))
}

// AutoV3Short is AutoV3's first 12 hex digits, the form A1111 and CivitAI match on ("" when there is none).
func (e Ecosystem) AutoV3Short() string {
	return string(e.AutoV3[:min(len(e.AutoV3), 12)])
}

// AutoV1MinSize is the size a file needs for an AutoV1: its window is file bytes 0x100000 to 0x110000.
const AutoV1MinSize = autoV1End

// HasDataSection reports whether m's header length says where its data section starts within a
// source of size bytes, so that AutoV3 is defined: the file has the 8-byte length, the length is within
// the reference's limit, and 8+N bytes fit in the file. A shard set's data always starts at 0.
func HasDataSection(m *canon.Model, size int64) bool {
	if m.Format == canon.FormatGGUF {
		return false // AutoV3 hashes what follows a safetensors header; a GGUF file has none
	}
	if m.Shards != nil {
		return true
	}
	return size >= 8 && m.HeaderLen <= finding.MaxHeaderLen && 8+int64(m.HeaderLen) <= size
}

const (
	passChunk   = 4 << 20 // bytes read at a time in the single pass
	passBuffers = 4       // chunks in flight: memory is passChunk × passBuffers
	autoV1Start = 0x100000
	autoV1End   = 0x110000
)

type chunk struct {
	off  int64
	b    []byte
	refs sync.WaitGroup
}

// FileHashes reads src once, front to back, and computes every ecosystem hash from that one pass, with
// each hash in its own goroutine. With digests true it also returns the per-tensor BLAKE3 digests (as
// TensorDigests does) from the same pass. The whole-file hashes need no valid header: for a model whose
// header could not be read (m.HeaderParsed false, as for a Git LFS pointer or a download cut short) they
// are still computed, with AutoV3 "" when HasDataSection is false; ask for digests only of a model whose
// tensors are within the file (see CheckRanges).
func FileHashes(ctx context.Context, src canon.Source, m *canon.Model, digests bool, opt Options) (Ecosystem, [][32]byte, error) {
	return onePass(ctx, src, m, true, digests, opt)
}

// StreamDigests computes the per-tensor digests (as TensorDigests does) in one front-to-back pass, for
// sources where reading in order is cheaper than reading in parallel, such as HTTP.
func StreamDigests(ctx context.Context, src canon.Source, m *canon.Model, opt Options) ([][32]byte, error) {
	_, d, err := onePass(ctx, src, m, false, true, opt)
	return d, err
}

func onePass(ctx context.Context, src canon.Source, m *canon.Model, ecosystem, digests bool, opt Options) (Ecosystem, [][32]byte, error) {
	if digests {
		if err := CheckRanges(src, m); err != nil {
			return Ecosystem{}, nil, err
		}
	}
	size, dataOff := src.Size(), m.DataOffset()
	hasData := HasDataSection(m, size)
	shaAll, shaData, b3, crc := sha256.New(), sha256.New(), blake3.New(), crc32.NewIEEE()
	autoV1 := make([]byte, 0, autoV1End-autoV1Start)

	var consumers []func(c *chunk)
	if ecosystem {
		consumers = append(consumers,
			func(c *chunk) { shaAll.Write(c.b) },
			func(c *chunk) {
				if end := c.off + int64(len(c.b)); hasData && end > dataOff {
					shaData.Write(c.b[max(dataOff-c.off, 0):])
				}
			},
			func(c *chunk) { b3.Write(c.b); crc.Write(c.b) })
	}
	var finish func() [][32]byte
	if digests {
		var feed func(c *chunk)
		feed, finish = tensorFeeder(m)
		consumers = append(consumers, feed)
	}

	chans := make([]chan *chunk, len(consumers))
	var done sync.WaitGroup
	for i, consume := range consumers {
		chans[i] = make(chan *chunk, passBuffers)
		done.Add(1)
		go func(ch chan *chunk) {
			defer done.Done()
			for c := range ch {
				consume(c)
				c.refs.Done()
			}
		}(chans[i])
	}
	ring := make([]chunk, passBuffers)
	var readErr error
	start := int64(0)
	if !ecosystem {
		start = dataOff // the tensors need only the data section
	}
	for k, off := 0, start; off < size; k++ {
		if err := ctx.Err(); err != nil {
			readErr = err
			break
		}
		c := &ring[k%passBuffers]
		c.refs.Wait() // every consumer is done with what the buffer held before
		if c.b == nil {
			c.b = make([]byte, passChunk)
		}
		n := min(int64(passChunk), size-off)
		c.off, c.b = off, c.b[:cap(c.b)][:n]
		if _, err := src.ReadAt(c.b, off); err != nil {
			readErr = err
			break
		}
		if lo, hi := max(off, autoV1Start), min(off+n, autoV1End); lo < hi {
			autoV1 = append(autoV1, c.b[lo-off:hi-off]...)
		}
		c.refs.Add(len(chans))
		for _, ch := range chans {
			ch <- c
		}
		if opt.Progress != nil {
			opt.Progress(n)
		}
		off += n
	}
	for _, ch := range chans {
		close(ch)
	}
	done.Wait()
	if readErr != nil {
		return Ecosystem{}, nil, readErr
	}
	var tensorDigests [][32]byte
	if finish != nil {
		tensorDigests = finish()
	}
	var e Ecosystem
	e.SHA256 = hex.EncodeToString(shaAll.Sum(nil))
	e.AutoV2 = e.SHA256[:10]
	if hasData {
		e.AutoV3 = Hex(hex.EncodeToString(shaData.Sum(nil)))
	}
	if size >= AutoV1MinSize {
		v1 := sha256.Sum256(autoV1)
		e.AutoV1 = Hex(hex.EncodeToString(v1[:])[:8])
	}
	e.BLAKE3 = hex.EncodeToString(b3.Sum(nil))
	var le [4]byte
	binary.LittleEndian.PutUint32(le[:], crc.Sum32())
	e.CRC32 = strings.ToUpper(hex.EncodeToString(le[:]))
	return e, tensorDigests, nil
}

// tensorFeeder returns a consumer that feeds each chunk's bytes to the hashers of the tensors it
// overlaps, and a function that writes the finished digests. Hashers exist only for tensors in progress.
func tensorFeeder(m *canon.Model) (feed func(c *chunk), finish func() [][32]byte) {
	dataOff := m.DataOffset()
	order := make([]int, len(m.Tensors))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return m.Tensors[order[a]].Begin < m.Tensors[order[b]].Begin })
	active := map[int]hash.Hash{}
	sums := make([][32]byte, len(m.Tensors))
	next := 0
	flush := func(i int, h hash.Hash) {
		h.Sum(sums[i][:0])
		delete(active, i)
	}
	feed = func(c *chunk) {
		lo, hi := c.off-dataOff, c.off-dataOff+int64(len(c.b)) // the chunk in data coordinates
		for next < len(order) && int64(m.Tensors[order[next]].Begin) < hi {
			active[order[next]] = blake3.New()
			next++
		}
		for i, h := range active {
			t := &m.Tensors[i]
			s, e := max(int64(t.Begin), lo), min(int64(t.End), hi)
			if s < e {
				h.Write(c.b[s-lo : e-lo])
			}
			if int64(t.End) <= hi {
				flush(i, h)
			}
		}
	}
	finish = func() [][32]byte {
		for next < len(order) { // zero-length tensors at the very end
			active[order[next]] = blake3.New()
			next++
		}
		for i, h := range active {
			flush(i, h)
		}
		return sums
	}
	return feed, finish
}

// FileHashesOf computes a model file's whole-file hashes in one pass (see FileHashes) and returns them
// by the names lora.ModelFile uses: the hook inspect.Options.FileHashes takes.
func FileHashesOf(ctx context.Context, src canon.Source, m *canon.Model) (map[string]string, error) {
	e, _, err := FileHashes(ctx, src, m, false, Options{})
	if err != nil {
		return nil, err
	}
	return map[string]string{"SHA256": e.SHA256, "AutoV1": string(e.AutoV1), "AutoV2": e.AutoV2,
		"AutoV3": string(e.AutoV3), "BLAKE3": e.BLAKE3, "CRC32": e.CRC32}, nil
}

// VerifyEmbedded compares the hashes a trainer embedded in the metadata with the real AutoV3 (see
// lora.VerifyEmbedded).
func VerifyEmbedded(m *canon.Model, autoV3 Hex) []finding.Finding {
	return lora.VerifyEmbedded(m, string(autoV3))
}
