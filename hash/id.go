// Package hash computes identities of models: the structure ID (names, dtypes, shapes; canon.StructureID
// hashes the canonical form), the content ID (also every tensor's bytes, which TensorDigests digests;
// canon.ContentID), and the hashes the LoRA ecosystem uses (SHA256, AutoV1/V2/V3, BLAKE3, CRC32); it
// parses and writes the manifests `stdiff hash --check` verifies. Run and Verify are the
// reports of `stdiff hash` and `stdiff hash --check` (plain data, with codes for what changed), opening
// models through canon/source; the Write* functions render them as text, JSON, JSONL and Markdown.
// Byte work is streamed with positioned reads, in parallel, in bounded memory. It never prints (its
// writers write to the io.Writer they are given), never reads the environment, and never holds a
// file's bytes whole; finding duplicates among many models is package hash/dupes.
//
// The canonical forms the IDs hash are specified byte for byte, once, in cmd/stdiff/docs/identities.md
// (https://github.com/stdiff/stdiff/blob/main/cmd/stdiff/docs/identities.md).
package hash

import "strings"

// Short shortens an ID for display: its prefix and the first 16 hex digits.
func Short(id string) string {
	if i := strings.IndexByte(id, ':'); i >= 0 && len(id) > i+17 {
		return id[:i+17]
	}
	return id
}
