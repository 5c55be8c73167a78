package dupes

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/torch"
	"github.com/stdiff/stdiff/hash/dupes/internal/holds"
	"github.com/zeebo/blake3"
)

// A model is more than its tensors where its format says so, and a content copy is only a model that
// is the same but for what can go without loss. The scan compares tensors only among models of one
// identity (scanned.ident):
//   - a safetensors model with tensor bytes: "safetensors" (its metadata is what content copies may
//     differ in);
//   - a GGUF model with tensor bytes: "gguf/" and a hash of every key-value pair llama.cpp reads (the
//     tokenizer, the chat template, the hyperparameters), all but ggufDescriptive's: GGUF files that
//     would run differently are never copies of each other;
//   - a model without tensor bytes (metadata alone: a vocab-only GGUF, an empty safetensors file):
//     "bytes/" and its header's hash (the whole file: its data section is empty), so that only
//     identical files group (a bytes group), never two models whose only content, their metadata,
//     differs;
//   - a PyTorch or NumPy model part of which its reader does not list (a quantized or sparse tensor, a
//     structured array, a tree too deep or too large: unlisted), or that holds anything besides a flat
//     dict of tensors (holds.OnlyTensors: an epoch, hyperparameters, optimizer settings, an
//     OrderedDict's _metadata, a refused global), a sharded PyTorch checkpoint (its shards' pickles
//     are not looked into), and every ONNX model (its graph: nodes, inputs, outputs, opsets): "whole/"
//     and the hash of its files, so that only identical files group: the tensors compared are not all
//     it holds, and a file of its tensors alone is never its copy.
// Formats never share an identity: models of two formats are never in one bytes or content group.

// ggufDescriptive reports whether a GGUF key is left out of a model's identity: general.* keys that
// describe the file for people and catalogues and that llama.cpp only prints (name, author, licence,
// links, tags, lineage), general.alignment (where the tensor bytes sit: layout, as in safetensors), and
// split.* (which file of a split model this is: the set says it, as source.ReadSet leaves them out). Every
// other key, general.architecture and general.file_type included, is part of what the model is.
func ggufDescriptive(key string) bool {
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

// identOf is the identity of a model read whole (canon.Read, a set), whose bytes r holds: see above. A
// GGUF model's long strings are read from its source, which must be open.
func identOf(m *canon.Model, r io.ReaderAt, path string) (string, error) {
	var bytes uint64
	for i := range m.Tensors {
		bytes += m.Tensors[i].Len()
	}
	if bytes == 0 {
		return identBytes, nil
	}
	if m.Torch != nil || m.ONNX != nil || m.Format == canon.FormatPyTorch || m.Format == canon.FormatNumPy { // their tensors (a sharded checkpoint's too), read as safetensors holds them
		if unlisted(m) || m.ONNX != nil || !onlyTensors(m, r, path) {
			return identWhole, nil
		}
		return string(canon.FormatSafetensors), nil
	}
	if m.Format != canon.FormatGGUF || m.GGUF == nil {
		return string(m.Format), nil
	}
	g := m.GGUF
	kvs := make([]*gguf.KV, 0, len(g.KVs))
	for i := range g.KVs {
		if !ggufDescriptive(g.KVs[i].Key) {
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
				return "", err
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
	return "gguf/" + hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// identBytes is the identity of a model without tensor bytes until its header's hash is known.
const identBytes = "bytes"

// identWhole is the identity of a model with unlisted parts until the hash of its files is known.
const identWhole = "whole"

// unlisted reports whether m's reader left part of it out of its tensors: a finding says that
// something is not listed.
func unlisted(m *canon.Model) bool {
	for i := range m.Findings {
		switch m.Findings[i].Code {
		case torch.CodeUnlistedTensor, torch.CodeNumpyDType, torch.CodeTooDeep, torch.CodeTreeTooLarge:
			return true
		}
	}
	return false
}

// tensorless reports whether the model's identity is its bytes (it has no tensor bytes).
func (f *scanned) tensorless() bool { return strings.HasPrefix(f.ident, identBytes) }

// identify works out the model's identity (f.ident) where the scan did not: for a model without
// tensor bytes its header's hash, for one with unlisted parts the hash of its files, for one the cache knew from before it kept identities its header,
// read again.
func (f *scanned) identify(ctx context.Context) error {
	if f.ident == "" {
		if err := f.readIdent(ctx); err != nil {
			return err
		}
	}
	if whole := f.ident == identWhole; f.tensorless() || whole { // the header hash tells the formats apart: a JSON header starts with '{', GGUF's with its magic
		if err := f.hashHeader(); err != nil { // a PyTorch or NumPy model's is its files'
			return err
		}
		f.ident = identBytes + "/" + hex.EncodeToString(f.headerHash[:])
		if whole {
			f.ident = identWhole + "/" + hex.EncodeToString(f.headerHash[:])
		}
	}
	return nil
}

// readIdent reads the model's header again for its identity.
func (f *scanned) readIdent(ctx context.Context) error {
	if !f.set {
		if k, ok, err := f.skimFile(); err != nil {
			return err
		} else if ok {
			f.k.sample, f.picked, f.ident = k.sample, true, skimIdent(k)
			return nil
		}
	}
	o, m, err := reopen(ctx, f)
	if err != nil {
		return err
	}
	defer o.Close()
	f.k.sample, f.picked = keysOf(m).sample, true
	f.ident, err = identOf(m, fileOf(o), f.path)
	return err
}

// skimIdent is the identity of a safetensors file the skim read.
func skimIdent(k keys) string {
	if k.dataLen == 0 { // the skim checks that the tensors cover the data section exactly
		return identBytes
	}
	return string(canon.FormatSafetensors)
}

// fileOf is the reader of o's file as it is: o.File where o.Source reads its tensors through their
// format's reader, else o.Source.
func fileOf(o *source.Opened) io.ReaderAt {
	if o.File != nil {
		return o.File
	}
	return o.Source
}

// onlyTensors reports whether the PyTorch or NumPy model m (the file r holds, or the local set whose
// index or first file is path) holds nothing but its tensors (holds.OnlyTensors): a set when each of
// its shards does.
func onlyTensors(m *canon.Model, r io.ReaderAt, path string) bool {
	if m.Torch != nil {
		return holds.OnlyTensors(m.Torch, r)
	}
	if len(m.Shards) == 0 || source.IsRemote(path) {
		return false
	}
	for _, sh := range m.Shards {
		p := filepath.Join(filepath.Dir(path), filepath.FromSlash(sh.Name))
		src, err := source.OpenFile(p)
		if err != nil {
			return false
		}
		ok := holds.OnlyTensors(torch.Read(src, src.Size(), p), src)
		src.Close()
		if !ok {
			return false
		}
	}
	return true
}
