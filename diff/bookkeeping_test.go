package diff

import (
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
)

// TestFormatRemovedIsAChange (issue 31, item 9): "format" is writer bookkeeping until the second
// file lost it: transformers' load_state_dict refuses a safetensors file whose metadata lacks a
// known format, so its removal is a metadata change that makes the files differ; added (as every
// conversion to safetensors adds it) or changed, it stays a note.
func TestFormatRemovedIsAChange(t *testing.T) {
	model := func(meta ...stfile.KV) *canon.Model {
		return canon.ReadBytes("m", stfile.File{Seed: 1, Metadata: meta, Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{2}}}}.Build())
	}
	pt, np, none := model(stfile.KV{Key: "format", Value: "pt"}), model(stfile.KV{Key: "format", Value: "np"}), model()
	r := Compare(Side{Model: pt}, Side{Model: none}, Options{})
	if r.Identical || len(r.Metadata.Removed) != 1 || r.Metadata.Removed[0].Key != "format" {
		t.Errorf("format removed: identical %v, metadata %+v, notes %+v", r.Identical, r.Metadata, r.Notes)
	}
	for _, n := range r.Notes {
		if n.Code == NoteBookkeeping {
			t.Errorf("format removed is a note: %+v", n)
		}
	}
	if r := Compare(Side{Model: none}, Side{Model: pt}, Options{}); len(r.Metadata.Added) != 0 || !r.Identical {
		t.Errorf("format added: metadata %+v, identical %v", r.Metadata, r.Identical)
	}
	r = Compare(Side{Model: pt}, Side{Model: np}, Options{})
	if len(r.Metadata.Changed)+len(r.Metadata.Added)+len(r.Metadata.Removed) != 0 || len(r.Notes) == 0 || r.Notes[0].Code != NoteBookkeeping {
		t.Errorf("format changed: metadata %+v, notes %+v", r.Metadata, r.Notes)
	}
}
