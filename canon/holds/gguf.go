package holds

import (
	"encoding/binary"
	"encoding/hex"
	"github.com/stdiff/stdiff/canon"
	"math"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/zeebo/blake3"
)

// Descriptive reports whether a GGUF key is left out of a model's identity: general.* keys that
// describe the file for people and catalogues and that llama.cpp only prints (name, author, licence,
// links, tags, lineage), general.alignment (where the tensor bytes sit: layout, as in safetensors), and
// split.* (which file of a split model this is: the set says it, as source.ReadSet leaves them out). Every
// other key, general.architecture and general.file_type included, is part of what the model is.
func Descriptive(key string) bool {
	if strings.HasPrefix(key, "split.") {
		return true
	}
	rest, ok := strings.CutPrefix(key, "general.")
	if !ok {
		return false
	}
	switch rest {
	case "name", "basename", "finetune", "description", "author", "organization", "version", "url", "doi",
		"uuid", "repo_url", "license", "license.name", "license.link", "tags", "languages", "datasets",
		"size_label", "quantized_by", "alignment":
		return true
	}
	for _, p := range []string{"source.", "base_model.", "dataset."} {
		if strings.HasPrefix(rest, p) {
			return true
		}
	}
	return false
}

// GGUF is the hex of a hash of every key-value pair of the GGUF model m that llama.cpp reads (all but
// the Descriptive ones), in key order: GGUF files that would run differently have other ones. Long
// strings are read from m's source, which must be open. ok is false when m is not a GGUF model.
func GGUF(m *canon.Model) (sum string, ok bool, err error) {
	g, ok := m.Detail.(*gguf.File)
	if !ok {
		return "", false, nil
	}
	kvs := make([]*gguf.KV, 0, len(g.KVs))
	for i := range g.KVs {
		if !Descriptive(g.KVs[i].Key) {
			kvs = append(kvs, &g.KVs[i])
		}
	}
	sort.SliceStable(kvs, func(i, j int) bool { return kvs[i].Key < kvs[j].Key }) // llama.cpp reads them by key
	h := blake3.New()
	var b []byte
	for _, kv := range kvs {
		v := kv.Value
		b = binary.LittleEndian.AppendUint64(b[:0], uint64(len(kv.Key)))
		b = append(b, kv.Key...)
		b = binary.LittleEndian.AppendUint32(b, uint32(v.Type))
		switch v.Type {
		case gguf.ValString:
			s, err := g.FullString(v)
			if err != nil {
				return "", true, err
			}
			b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
			b = append(b, s...)
		case gguf.ValArray:
			b = binary.LittleEndian.AppendUint32(b, uint32(v.Array.ElemType))
			b = binary.LittleEndian.AppendUint64(b, v.Array.Len)
			b = append(b, v.Array.Digest[:]...)
		case gguf.ValFloat32, gguf.ValFloat64:
			x, _ := v.Float()
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		case gguf.ValBool:
			var x byte
			if t, _ := v.Bool(); t {
				x = 1
			}
			b = append(b, x)
		default:
			if x, ok := v.Uint(); ok {
				b = binary.LittleEndian.AppendUint64(b, x)
			} else {
				x, _ := v.Int()
				b = binary.LittleEndian.AppendUint64(b, uint64(x))
			}
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), true, nil
}
