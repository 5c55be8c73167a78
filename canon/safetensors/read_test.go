package safetensors_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/safetensors"
	"github.com/stdiff/stdiff/canon/stfile"
)

func read(t *testing.T, b []byte) *safetensors.Header {
	t.Helper()
	h, err := safetensors.Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestRead: a valid file's header is its tensors (file offsets of their names), metadata and nothing
// wrong; Read needs no more than the header.
func TestRead(t *testing.T) {
	f := stfile.File{Tensors: []stfile.Tensor{{Name: "b", DType: "F16", Shape: []uint64{3, 5}}, {Name: "a", DType: "BF16", Shape: []uint64{2}}},
		Metadata: []stfile.KV{{Key: "format", Value: "pt"}}}
	b := f.Build()
	h := read(t, b)
	if !h.Valid() || !h.HeaderParsed || !h.HasMetadata || len(h.Findings) != 0 || h.DataOffset()+h.DataLen() != int64(len(b)) {
		t.Fatalf("%+v", h)
	}
	if len(h.Tensors) != 2 || h.Tensors[0].Name != "b" || h.Tensors[0].DType != "F16" || h.Tensors[0].End-h.Tensors[0].Begin != 30 ||
		!bytes.HasPrefix(b[h.Tensors[0].HeaderOffset:], []byte(`"b"`)) {
		t.Errorf("tensors %+v", h.Tensors)
	}
	if len(h.Metadata) != 1 || h.Metadata[0].Key != "format" || h.Metadata[0].Value != "pt" || !bytes.HasPrefix(b[h.Metadata[0].Offset:], []byte(`"format"`)) {
		t.Errorf("metadata %+v", h.Metadata)
	}
	if n, ok := h.Tensors[0].Elements(); !ok || n != 15 {
		t.Errorf("elements %d %v", n, ok)
	}
}

// TestNulPadding: a header padded with NUL bytes is rejected with a fixable nul-padding finding;
// ObjectEnd is where the padding starts, and FixPadding turns it into spaces, nothing else, which Read
// accepts.
func TestNulPadding(t *testing.T) {
	f := stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{2}}}}
	b := f.NulPadded()
	h := read(t, b)
	if h.Valid() || h.RefErr.Kind != finding.InvalidHeaderDeserialization || len(h.Findings) != 1 {
		t.Fatalf("verdict %+v, findings %+v", h.RefErr, h.Findings)
	}
	if fd := h.Findings[0]; fd.Code != finding.CodeNulPadding || !fd.Fixable || fd.Severity != finding.SevError || fd.Offset < 8 {
		t.Errorf("finding %+v", fd)
	}
	end := safetensors.ObjectEnd(h.RawHeader)
	if end < 0 || h.RawHeader[end-1] != '}' || h.RawHeader[end] != 0 {
		t.Fatalf("object end %d in %q", end, h.RawHeader)
	}
	first, last, fixed := safetensors.FixPadding(h.RawHeader, h.FileSize)
	if fixed == nil || !fixed.Valid() || len(fixed.Findings) != 0 || len(fixed.Tensors) != 1 || first != end || last != len(h.RawHeader)-1 ||
		!bytes.Equal(fixed.RawHeader[:end], h.RawHeader[:end]) || bytes.IndexByte(fixed.RawHeader, 0) >= 0 || h.RawHeader[end] != 0 {
		t.Errorf("repaired [%d, %d] of %q: %+v", first, last, h.RawHeader, fixed)
	}
	// Nothing to repair that way: no NUL after the object; or a header that stays invalid once repaired.
	if _, _, fixed := safetensors.FixPadding([]byte(`{}   `), 13); fixed != nil {
		t.Errorf("a header without NUL repaired: %+v", fixed)
	}
	if _, _, fixed := safetensors.FixPadding(h.RawHeader, h.FileSize+4); fixed == nil || fixed.Valid() {
		t.Errorf("trailing bytes: %+v", fixed)
	}
}

// TestShortFiles: a file too short for its length, or whose length is past the file, is a verdict and
// a finding, not an error.
func TestShortFiles(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		kind finding.RefKind
		code string
	}{
		{nil, finding.HeaderTooSmall, finding.CodeEmptyFile},
		{[]byte{1, 2, 3}, finding.HeaderTooSmall, finding.CodeFileTooSmall},
		{binary.LittleEndian.AppendUint64(nil, 100), finding.InvalidHeaderLength, finding.CodeHeaderBeyondFile},
		{[]byte("version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 12\n"), finding.HeaderTooLarge, finding.CodeLFSPointer},
	} {
		h := read(t, c.b)
		if h.Valid() || h.RefErr.Kind != c.kind || len(h.Findings) != 1 || h.Findings[0].Code != c.code {
			t.Errorf("%q: verdict %+v, findings %+v", c.b, h.RefErr, h.Findings)
		}
	}
}

// TestFindingsCapped: past finding.MaxPerCode findings of one code are counted, not kept.
func TestFindingsCapped(t *testing.T) {
	n := finding.MaxPerCode + 5
	var header strings.Builder
	header.WriteString("{")
	for i := range n {
		fmt.Fprintf(&header, `"t%d":{"dtype":"X","shape":[1],"data_offsets":[0,1]},`, i)
	}
	header.WriteString(`"__metadata__":{}}`)
	b := binary.LittleEndian.AppendUint64(nil, uint64(header.Len()))
	b = append(append(b, header.String()...), 0)
	h := read(t, b)
	kept := 0
	for _, f := range h.Findings {
		if f.Code == finding.CodeUnknownDType {
			kept++
		}
	}
	if kept != finding.MaxPerCode || h.Omitted[finding.CodeUnknownDType] != 5 {
		t.Errorf("kept %d, omitted %v", kept, h.Omitted)
	}
}
