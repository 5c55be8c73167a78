package dupes

import (
	"context"
	"encoding/hex"
	"github.com/stdiff/stdiff/canon/finding"
	"io"
	"path/filepath"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/holds"
	"github.com/stdiff/stdiff/canon/source"
)

// A model is more than its tensors where its format says so, and a content copy is only a model that
// is the same but for what can go without loss. The scan compares tensors only among models of one
// identity (scanned.ident):
//   - a safetensors model with tensor bytes: "safetensors" (its metadata is what content copies may
//     differ in);
//   - a GGUF model with tensor bytes: "gguf/" and a hash of every key-value pair llama.cpp reads (the
//     tokenizer, the chat template, the hyperparameters), all but holds.Descriptive's: GGUF files that
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
//     it holds, and a file of its tensors alone is never its copy;
//   - a model of a format registered beside the built-in ones (canon.Register): "safetensors" when its
//     reader says it holds only tensors (canon.TensorsOnly), else "whole/" as above.
// Other formats never share an identity: their models are never in one bytes or content group.

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
	if m.Archive != nil { // a pipeline's files beside its tensors, any member a loader may read: only its bytes say it all
		return identWhole, nil
	}
	if m.Format == canon.FormatONNX || m.Format == canon.FormatPyTorch || m.Format == canon.FormatNumPy { // their tensors (a sharded checkpoint's too), read as safetensors holds them
		if unlisted(m) || m.Format == canon.FormatONNX || !onlyTensors(m, r, path) {
			return identWhole, nil
		}
		return string(canon.FormatSafetensors), nil
	}
	if m.Format != canon.FormatGGUF {
		if canon.TensorsOnly(m, r) { // a safetensors file, or a registered format's that says so
			return string(canon.FormatSafetensors), nil
		}
		return identWhole, nil
	}
	sum, ok, err := holds.GGUF(m)
	if !ok || err != nil {
		return string(m.Format), err
	}
	return "gguf/" + sum, nil
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
		case finding.CodeUnlistedTensor, finding.CodeNumpyDType, finding.CodeTooDeep, finding.CodeTreeTooLarge:
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
	if m.Shards == nil {
		return holds.OnlyTensors(m, r)
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
		sm, err := canon.Read(src, src.Size(), p)
		ok := err == nil && holds.OnlyTensors(sm, src)
		src.Close()
		if !ok {
			return false
		}
	}
	return true
}
