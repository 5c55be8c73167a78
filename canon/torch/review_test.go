package torch_test

import (
	"bytes"
	"testing"

	"github.com/stdiff/stdiff/canon/torch"
)

// TestReviewEmptyZip: an empty zip archive (its 22-byte end record alone) is what numpy.load reads
// as an .npz of no arrays (checked with numpy 1.24: NpzFile, no keys), and what torch.load refuses
// (no local header first, then no pickle): its format is npz, valid by numpy's verdict. It was a
// PyTorch zip checkpoint of 0 tensors, valid, which torch would not load.
func TestReviewEmptyZip(t *testing.T) {
	b := append([]byte("PK\x05\x06"), make([]byte, 18)...)
	f := torch.Read(bytes.NewReader(b), int64(len(b)), "empty.pt")
	if f.Format != torch.FormatNPZ || !f.Valid() {
		t.Errorf("format %q, valid %v, findings %+v; want npz, valid", f.Format, f.Valid(), f.Findings)
	}
}
