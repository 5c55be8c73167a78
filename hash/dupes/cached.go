package dupes

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/hash/dupes/dupecache"
)

// cacheFill copies what the cache knows of an unchanged file into it, and reports whether it knew the file.
func cacheFill(c *dupecache.Cache, f *scanned) bool {
	e, ok := c.Get(f.path)
	if !ok || e.Size != f.size || e.Mtime != f.mtime || e.Ctime != f.ctime || e.Ino != f.ino {
		return false
	}
	k, ok := hexWords(e.Keys, 5)
	if !ok {
		return false
	}
	f.k = keys{structure: pair{k[0], k[1]}, shapes: pair{k[2], k[3]}, layout: k[4], metaKeys: e.MetaKeys, dataLen: e.DataLen}
	f.dataLen, f.structure, f.metaKeys, f.ident = e.DataLen, e.Structure, e.MetaKeys, e.Ident
	if b, err := hex.DecodeString(e.Header); err == nil && len(b) == 32 {
		copy(f.headerHash[:], b)
		f.hasHeaderHash = true
	}
	if w, ok := hexWords(e.Sample, 1); ok {
		f.sample, f.hasSample = w[0], true
	}
	f.cs = crcState{crcs: parseCRCs(e.CRCs), complete: e.Complete}
	if r := e.Renamed; r != nil {
		f.renamed = &renamedInfo{fromCache: true, cs: crcState{crcs: parseCRCs(r.CRCs), complete: r.Complete}}
		if w, ok := hexWords(r.Key, 2); ok {
			f.renamed.key, f.renamed.hasKey = pair{w[0], w[1]}, true
		}
		if w, ok := hexWords(r.Sample, 1); ok {
			f.renamed.sample, f.renamed.hasSample = w[0], true
		}
	}
	return true
}

// formatCRCs and parseCRCs write and read crcs as the cache keeps them: 8 hex digits each.
func formatCRCs(crcs []uint32) string {
	var b strings.Builder
	for _, c := range crcs {
		fmt.Fprintf(&b, "%08x", c)
	}
	return b.String()
}

func parseCRCs(s string) []uint32 {
	var out []uint32
	for ; len(s) >= 8; s = s[8:] {
		c, err := strconv.ParseUint(s[:8], 16, 32)
		if err != nil {
			return nil
		}
		out = append(out, uint32(c))
	}
	return out
}

// hexWords reads n 64-bit words written as 16 hex digits each.
func hexWords(s string, n int) ([]uint64, bool) {
	if len(s) != 16*n {
		return nil, false
	}
	out := make([]uint64, n)
	for i := range out {
		w, err := strconv.ParseUint(s[16*i:16*i+16], 16, 64)
		if err != nil {
			return nil, false
		}
		out[i] = w
	}
	return out, true
}

// cachePut records what is known of f in the cache, and that it was seen now.
func cachePut(c *dupecache.Cache, f *scanned) {
	e := dupecache.Entry{Size: f.size, Mtime: f.mtime, Ctime: f.ctime, Ino: f.ino, DataLen: f.dataLen, Structure: f.structure, Ident: f.ident, MetaKeys: f.metaKeys,
		Keys: fmt.Sprintf("%016x%016x%016x%016x%016x", f.k.structure[0], f.k.structure[1], f.k.shapes[0], f.k.shapes[1], f.k.layout),
		CRCs: formatCRCs(f.cs.crcs), Complete: f.cs.complete}
	if f.hasHeaderHash {
		e.Header = hex.EncodeToString(f.headerHash[:])
	}
	if f.hasSample {
		e.Sample = fmt.Sprintf("%016x", f.sample)
	}
	if r := f.renamed; r != nil {
		e.Renamed = &dupecache.Renamed{CRCs: formatCRCs(r.cs.crcs), Complete: r.cs.complete}
		if r.hasKey {
			e.Renamed.Key = fmt.Sprintf("%016x%016x", r.key[0], r.key[1])
		}
		if r.hasSample {
			e.Renamed.Sample = fmt.Sprintf("%016x", r.sample)
		}
	}
	c.Put(f.path, e)
}
