// Package xet computes the Hugging Face Hub's Xet hash of a file: the identity the Hub shows for every
// file it stores with Xet (the tree API's xetHash, the X-Xet-Hash header), exactly as xet-core computes
// it, so that a local file can be matched with a Hub file without a download, and two files' chunk
// lists say how much of one an upload after the other would not send.
//
// The hash is of bytes: the file is cut into content-defined chunks (a Gear rolling hash, 64 KiB target,
// 8 KiB minimum, 128 KiB maximum: xet-core's xet_data deduplication/chunking.rs), each chunk is hashed
// with BLAKE3 keyed with DATA_KEY, the chunk hashes are folded into a Merkle tree whose internal nodes
// hash "{hash} : {len}\n" lines with BLAKE3 keyed with INTERNAL_NODE_KEY (the cut rule of
// merklehash/aggregated_hashes.rs), and the root is hashed once more keyed with 32 zero bytes. An empty
// file's hash is 32 zero bytes. Strings are the Hub's form (hub-docs docs/xet/api.md): each 8-byte word
// of the hash printed as a little-endian integer. The package prints nothing.
package xet

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strconv"

	"github.com/zeebo/blake3"
)

// Hash is a Xet hash (of a chunk, a Merkle node or a file) as its 32 bytes.
type Hash [32]byte

// String is the Hub's string form of h: for each 8-byte word, its bytes reversed, in hexadecimal.
func (h Hash) String() string {
	var b [32]byte
	for w := 0; w < 4; w++ {
		for i := 0; i < 8; i++ {
			b[w*8+i] = h[w*8+7-i]
		}
	}
	return hex.EncodeToString(b[:])
}

// ErrSyntax: a string is not a Xet hash (64 hexadecimal digits).
var ErrSyntax = errors.New("xet: not a Xet hash (64 hexadecimal digits)")

// Parse reads the Hub's string form of a hash (as String writes it; upper-case digits are accepted).
func Parse(s string) (Hash, error) {
	var h Hash
	if len(s) != 64 {
		return h, ErrSyntax
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return h, ErrSyntax
	}
	for w := 0; w < 4; w++ {
		for i := 0; i < 8; i++ {
			h[w*8+i] = b[w*8+7-i]
		}
	}
	return h, nil
}

// The BLAKE3 keys of xet-core's merklehash/data_hash.rs.
var (
	dataKey = [32]byte{102, 151, 245, 119, 91, 149, 80, 222, 49, 53, 203, 172, 165, 151, 24, 28, 157, 228, 33, 16,
		155, 235, 43, 88, 180, 208, 176, 75, 147, 173, 242, 41}
	internalNodeKey = [32]byte{1, 126, 197, 199, 165, 71, 41, 150, 253, 148, 102, 102, 180, 138, 2, 230, 93, 221, 83,
		111, 55, 199, 109, 210, 248, 99, 82, 230, 74, 83, 113, 63}
)

// ChunkHash is the hash of one chunk's bytes (BLAKE3 keyed with DATA_KEY).
func ChunkHash(data []byte) Hash {
	h, _ := blake3.NewKeyed(dataKey[:])
	_, _ = h.Write(data)
	var out Hash
	h.Sum(out[:0])
	return out
}

// keyed is BLAKE3 of msg keyed with key.
func keyed(key *[32]byte, msg []byte) Hash {
	h, _ := blake3.NewKeyed(key[:])
	_, _ = h.Write(msg)
	var out Hash
	h.Sum(out[:0])
	return out
}

// Chunk is one chunk of a file: its hash and its length in bytes.
type Chunk struct {
	Hash Hash
	Len  int64
}

// mergeCut is the number of nodes at the head of nodes that the next parent takes (aggregated_hashes.rs's
// next_merge_cut): at least 2, at most 9, ending after the first node from the third on whose hash's last
// word is 0 modulo 4.
func mergeCut(nodes []Chunk) int {
	if len(nodes) <= 2 {
		return len(nodes)
	}
	end := min(9, len(nodes))
	for i := 2; i < end; i++ {
		if binary.LittleEndian.Uint64(nodes[i].Hash[24:])%4 == 0 {
			return i + 1
		}
	}
	return end
}

// mergeNodes is the parent of nodes: the INTERNAL_NODE_KEY hash of their "{hash} : {len}\n" lines, and
// their total length.
func mergeNodes(nodes []Chunk) Chunk {
	buf := make([]byte, 0, 9*88)
	var total int64
	for _, n := range nodes {
		buf = append(buf, n.Hash.String()...)
		buf = append(buf, " : "...)
		buf = strconv.AppendInt(buf, n.Len, 10)
		buf = append(buf, '\n')
		total += n.Len
	}
	return Chunk{Hash: keyed(&internalNodeKey, buf), Len: total}
}

// Root is the root of the Merkle tree over chunks (xet-core's aggregated_node_hash, which is also a
// xorb's hash): chunks merged level by level until one is left; zero for none.
func Root(chunks []Chunk) Hash {
	if len(chunks) == 0 {
		return Hash{}
	}
	level := append([]Chunk(nil), chunks...)
	for len(level) > 1 {
		next := level[:0]
		for read := 0; read < len(level); {
			cut := read + mergeCut(level[read:])
			next = append(next, mergeNodes(level[read:cut]))
			read = cut
		}
		level = next
	}
	return level[0].Hash
}

// FileHash is the Xet hash of a file whose chunks are chunks: the tree's root keyed with 32 zero bytes
// (32 zero bytes for no chunks, an empty file).
func FileHash(chunks []Chunk) Hash {
	return fileHashSalted(chunks, &Hash{})
}

// fileHashSalted is xet-core's file_hash_with_salt.
func fileHashSalted(chunks []Chunk, salt *Hash) Hash {
	if len(chunks) == 0 {
		return Hash{}
	}
	root := Root(chunks)
	return keyed((*[32]byte)(salt), root[:])
}
