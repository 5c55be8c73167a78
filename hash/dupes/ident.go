package dupes

import (
	"context"
	"encoding/hex"
	"strings"

	"github.com/stdiff/stdiff/canon"
)

// A model is more than its tensors where its format says so, and a content copy is only a model that
// is the same but for what can go without loss. The scan compares tensors only among models of one
// identity (scanned.ident):
//   - a safetensors model with tensor bytes: "safetensors" (its metadata is what content copies may
//     differ in);
//   - a GGUF model with tensor bytes: "gguf";
//   - a model without tensor bytes (metadata alone: a vocab-only GGUF, an empty safetensors file):
//     "bytes/" and its header's hash (the whole file: its data section is empty), so that only
//     identical files group (a bytes group), never two models whose only content, their metadata,
//     differs.
// Formats never share an identity: models of two formats are never in one bytes or content group.

// identOf is the identity of a model read whole (canon.Read, a set): see above. A GGUF model's long
// strings are read from its source, which must be open.
func identOf(m *canon.Model) (string, error) {
	var bytes uint64
	for i := range m.Tensors {
		bytes += m.Tensors[i].Len()
	}
	if bytes == 0 {
		return identBytes, nil
	}
	return string(m.Format), nil
}

// identBytes is the identity of a model without tensor bytes until its header's hash is known.
const identBytes = "bytes"

// tensorless reports whether the model's identity is its bytes (it has no tensor bytes).
func (f *scanned) tensorless() bool { return strings.HasPrefix(f.ident, identBytes) }

// identify works out the model's identity (f.ident) where the scan did not: for a model without
// tensor bytes its header's hash, for one the cache knew from before it kept identities its header,
// read again.
func (f *scanned) identify(ctx context.Context) error {
	if f.ident == "" {
		if err := f.readIdent(ctx); err != nil {
			return err
		}
	}
	if f.tensorless() { // the header hash tells the formats apart: a JSON header starts with '{', GGUF's with its magic
		if err := f.hashHeader(); err != nil {
			return err
		}
		f.ident = identBytes + "/" + hex.EncodeToString(f.headerHash[:])
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
	f.ident, err = identOf(m)
	return err
}

// skimIdent is the identity of a safetensors file the skim read.
func skimIdent(k keys) string {
	if k.dataLen == 0 { // the skim checks that the tensors cover the data section exactly
		return identBytes
	}
	return string(canon.FormatSafetensors)
}
