package xet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/zeebo/blake3"
)

// Options tune Sum; the zero value is fine.
type Options struct {
	// Workers is how many pieces of the file are chunked and hashed at once (0: GOMAXPROCS).
	Workers int
	// Piece is the length of the pieces a file is cut into for the workers (0: a few per worker, at
	// least 16 MiB). A file no longer than a piece is chunked serially.
	Piece int64
	// Progress, when set, is told how many more bytes were read (from several goroutines at once).
	Progress func(n int64)
}

// Result is what Sum finds: the file's Xet hash and its chunks.
type Result struct {
	Hash   Hash
	Size   int64
	Chunks []Chunk
}

// overrun is how far past its piece's end a worker goes on chunking, so that its cuts meet those of
// the worker that began at that end: two chains of cuts that share one share all after it (a cut
// depends on the chunk's start and the bytes alone, see nextCut), and they nearly always meet within
// a few chunks. When they do not within overrun (long runs of bytes that never trigger a cut, where
// every chunk is MaxChunk long), the cuts go on serially from the last sure one: the result is the
// same, only slower.
const overrun = 1 << 20

// errEOF is io.EOF, for sliceReader.
var errEOF = io.EOF

// bufLen is each worker's read buffer.
const bufLen = 8 << 20

// bufSize is the read buffer for a file of size bytes: bufLen, or less for a small file (it must hold
// a chunk and what follows it).
func bufSize(size int64) int {
	return int(min(bufLen, max(size+1, 2*MaxChunk)))
}

// span is a run of chunks worker produced from a start it was given.
type span struct {
	start  int64 // where the first chunk starts
	chunks []Chunk
}

// Sum is the Xet hash of the size bytes of r, and its chunks: the file is cut into pieces chunked and
// hashed at once on opt.Workers goroutines, with the cuts (and so the hash) of one serial pass.
func Sum(ctx context.Context, r io.ReaderAt, size int64, opt Options) (*Result, error) {
	if size < 0 {
		return nil, errors.New("xet: negative size")
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	piece := opt.Piece
	if piece <= 0 {
		piece = max(16<<20, (size+int64(workers)*4-1)/(int64(workers)*4))
	}
	piece = max(piece, 2*MaxChunk)
	var starts []int64
	for p := int64(0); p < size; p += piece {
		starts = append(starts, p)
	}
	spans := make([]span, len(starts))
	errs := make([]error, len(starts))
	next := make(chan int)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for w := 0; w < min(workers, len(starts)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			if _, inMemory := r.(sliceReader); !inMemory {
				buf = make([]byte, bufSize(size))
			}
			for k := range next {
				limit := size
				if k+1 < len(starts) {
					limit = starts[k+1] + overrun
				}
				spans[k].start = starts[k]
				own := size // the bytes this piece counts in progress: its own, not the overrun
				if k+1 < len(starts) {
					own = starts[k+1]
				}
				spans[k].chunks, errs[k] = chunkRangeSafe(ctx, r, size, starts[k], limit, own, buf, opt.Progress)
				if errs[k] != nil {
					cancel()
				}
			}
		}()
	}
feed:
	for k := range starts {
		select {
		case next <- k:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	chunks, err := join(ctx, r, size, spans, nil)
	if err != nil {
		return nil, err
	}
	return &Result{Hash: FileHash(chunks), Size: size, Chunks: chunks}, nil
}

// join splices the spans into the file's one chain of chunks: span 0 is sure (it starts at 0); each
// next span's chunks count from the first cut the sure chain shares with it. Where none is shared, the
// chain is extended serially until it meets the span.
func join(ctx context.Context, r io.ReaderAt, size int64, spans []span, buf []byte) ([]Chunk, error) {
	if len(spans) == 0 {
		return nil, nil
	}
	chain := spans[0].chunks
	end := int64(0) // where chain's last chunk ends
	for _, c := range chain {
		end += c.Len
	}
	for k := 1; k < len(spans); k++ {
		sp := spans[k]
		// the cuts of span k, as their ends, with the index of the chunk that follows each
		at := map[int64]int{sp.start: 0}
		e := sp.start
		for i, c := range sp.chunks {
			e += c.Len
			at[e] = i + 1
		}
		// the first cut of chain at or past span k's start that span k shares
		joined := false
		for {
			// walk back to the earliest chain cut ≥ sp.start (chain may run past it by overrun)
			cut, n := end, len(chain)
			for n > 0 && cut-chain[n-1].Len >= sp.start {
				cut -= chain[n-1].Len
				n--
			}
			for ; n <= len(chain); n++ {
				if i, ok := at[cut]; ok {
					chain = append(chain[:n:n], sp.chunks[i:]...)
					end = e
					joined = true
					break
				}
				if n < len(chain) {
					cut += chain[n].Len
				}
			}
			if joined {
				break
			}
			// not met within the overrun: go on serially from the chain's end, one span's worth
			if end >= e {
				// span k ended (the file's end or its limit) without meeting: the chain covers it
				break
			}
			if buf == nil {
				buf = make([]byte, bufSize(size))
			}
			more, err := chunkRangeSafe(ctx, r, size, end, min(e, end+overrun), 0, buf, nil)
			if err != nil {
				return nil, err
			}
			if len(more) == 0 {
				return nil, fmt.Errorf("xet: no chunk at %d of %d", end, size)
			}
			for _, c := range more {
				end += c.Len
			}
			chain = append(chain, more...)
		}
	}
	return chain, nil
}

// ErrChanged: a mapped file was cut short while it was read (its bytes faulted).
var ErrChanged = errors.New("xet: the file changed while it was read")

// chunkRangeSafe is chunkRange, a mapped file that faults (cut short meanwhile) an ErrChanged rather
// than a crash.
func chunkRangeSafe(ctx context.Context, r io.ReaderAt, size, from, limit, own int64, buf []byte, progress func(int64)) (out []Chunk, err error) {
	if _, inMemory := r.(sliceReader); inMemory {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if p := recover(); p != nil {
				if _, fault := p.(interface{ Addr() uintptr }); !fault {
					panic(p)
				}
				out, err = nil, ErrChanged
			}
		}()
	}
	return chunkRange(ctx, r, size, from, limit, own, buf, progress)
}

// chunkRange chunks r from from (a chunk's start) as long as chunks start before limit, hashing each,
// and reports the bytes read before own; a chunk that cannot be decided before the data ends is
// left out unless the data ends at size.
func chunkRange(ctx context.Context, r io.ReaderAt, size, from, limit, own int64, buf []byte, progress func(int64)) ([]Chunk, error) {
	h, _ := blake3.NewKeyed(dataKey[:])
	var out []Chunk
	readTo := min(size, limit+MaxChunk) // bytes past limit finish the chunks that start before it
	base, n, s := from, 0, 0            // buf[0] is at base; buf[:n] is read; the chunk starts at buf[s]
	if mem, ok := r.(sliceReader); ok { // in memory: chunk it in place
		buf, n = mem[from:readTo], int(readTo-from)
		if progress != nil && from < own {
			progress(min(readTo, own) - from)
		}
	}
	for base+int64(s) < limit {
		final := base+int64(n) == readTo && readTo == size
		c, ok := nextCut(buf[:n], s, final)
		if !ok {
			if base+int64(n) == readTo {
				break // the data ends before the chunk can be decided
			}
			// move the undecided chunk to the front and read more
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			copy(buf, buf[s:n])
			base += int64(s)
			n -= s
			s = 0
			want := min(int64(len(buf)-n), readTo-base-int64(n))
			got, err := r.ReadAt(buf[n:n+int(want)], base+int64(n))
			if int64(got) < want {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return nil, err
			}
			if progress != nil {
				if pos := base + int64(n); pos < own {
					progress(min(int64(got), own-pos))
				}
			}
			n += got
			continue
		}
		h.Reset()
		_, _ = h.Write(buf[s:c])
		var sum Hash
		h.Sum(sum[:0])
		out = append(out, Chunk{Hash: sum, Len: int64(c - s)})
		s = c
	}
	return out, nil
}
