package xet

// The chunker's constants (xet-core's TARGET_CHUNK_SIZE, MINIMUM_CHUNK_DIVISOR, MAXIMUM_CHUNK_MULTIPLIER
// and the mask its Chunker::new derives: target-1 shifted all the way left).
const (
	TargetChunk = 64 << 10        // the mean chunk length the chunker aims at
	MinChunk    = TargetChunk / 8 // no cut makes a chunk shorter, but the file's last
	MaxChunk    = TargetChunk * 2 // a chunk this long is cut whatever its bytes
	mask        = 0xFFFF000000000000
	window      = 64 // bytes a Gear hash depends on
)

// nextCut is where the chunk that starts at b[s] ends, and whether that is decided: the first byte at or
// past MinChunk-1 into the chunk whose Gear hash has the mask's bits zero ends it (the byte included), or
// MaxChunk bytes do, or, when final (b holds the rest of the file), the end of b does.
//
// As xet-core's Chunker::next_boundary, hashing starts MinChunk-window-1 bytes into the chunk with the
// hash zero: every hash looked at has then seen more than window bytes, so it depends on the last 64
// bytes alone and a cut depends on the chunk's start and the bytes, never on how they were read. This
// is what lets pieces of a file be chunked apart (see sum.go).
func nextCut(b []byte, s int, final bool) (int, bool) {
	end := min(len(b), s+MaxChunk)
	if from := s + MinChunk - window - 1; from < end {
		// The first 64 bytes only fill the hash: a match among them would make a chunk shorter than
		// MinChunk, which the reference skips; from the 65th on, every match is a cut.
		q := b[from:end]
		warm := min(len(q), window)
		g, m := &gear, gearMask
		var h uint64
		for _, c := range q[:warm] {
			h = h<<1 + g[c]
		}
		q = q[warm:]
		i := 0
		for ; i+4 <= len(q); i += 4 {
			r := q[i : i+4 : i+4]
			if h = h<<1 + g[r[0]]; h&m == 0 {
				return from + warm + i + 1, true
			}
			if h = h<<1 + g[r[1]]; h&m == 0 {
				return from + warm + i + 2, true
			}
			if h = h<<1 + g[r[2]]; h&m == 0 {
				return from + warm + i + 3, true
			}
			if h = h<<1 + g[r[3]]; h&m == 0 {
				return from + warm + i + 4, true
			}
		}
		for ; i < len(q); i++ {
			if h = h<<1 + g[q[i]]; h&m == 0 {
				return from + warm + i + 1, true
			}
		}
	}
	switch {
	case end == s+MaxChunk:
		return end, true
	case final && end > s:
		return end, true
	}
	return 0, false
}

// gearMask is mask in a variable, so that the compiler keeps it in a register in nextCut's loop
// rather than loading the constant again for every byte.
var gearMask uint64 = mask

// Cuts is where the chunks of data (a whole file) end, in order, the last at len(data); none for no data.
func Cuts(data []byte) []int {
	var cuts []int
	for s := 0; s < len(data); {
		c, _ := nextCut(data, s, true)
		cuts = append(cuts, c)
		s = c
	}
	return cuts
}

// Chunks is the chunks of data (a whole file) with their hashes, serially: the reference the parallel
// Sum is tested against.
func Chunks(data []byte) []Chunk {
	var out []Chunk
	s := 0
	for _, c := range Cuts(data) {
		out = append(out, Chunk{Hash: ChunkHash(data[s:c]), Len: int64(c - s)})
		s = c
	}
	return out
}
