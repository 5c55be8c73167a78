package canon

import (
	"io"

	"github.com/stdiff/stdiff/canon/torch"
)

// The formats package torch reads.
const (
	// FormatPyTorch: a torch.save checkpoint (zip or legacy), a bare pickle, or an archive package
	// torch names without parsing (TorchScript).
	FormatPyTorch Format = "pytorch"
	// FormatNumPy: a NumPy .npy array or .npz archive.
	FormatNumPy Format = "numpy"
)

// readTorch reads a PyTorch, pickle or NumPy file with package torch and makes a Model of it. Read has
// read its first bytes; what cannot be read after them is a finding.
func readTorch(r io.ReaderAt, size int64, name string) (*Model, error) {
	return modelOfTorch(torch.Read(r, size, name)), nil
}

// modelOfTorch is the Model of a file package torch read: its tensors with Begin and End in the
// file's own space (DataOffset is 0; a tensor whose bytes are compressed or not one contiguous run
// claims none), its other values as metadata, and its findings. Its verdict is torch.load(weights_only=
// True)'s (numpy.load(allow_pickle=False)'s for NumPy): invalid when a finding is an error, the kind
// being the first error's code.
func modelOfTorch(f *torch.File) *Model {
	m := &Model{Name: f.Name, Format: FormatPyTorch, FileSize: f.Size, Torch: f, HeaderParsed: len(f.Pickles) > 0 || len(f.Tensors) > 0}
	if f.Format == torch.FormatNPY || f.Format == torch.FormatNPZ {
		m.Format = FormatNumPy
	}
	for _, kv := range f.Metadata {
		m.Metadata = append(m.Metadata, MetaEntry{Key: kv.Key, Value: kv.Value, Offset: -1})
	}
	m.HasMetadata = len(m.Metadata) > 0
	for _, t := range f.Tensors {
		shape := make([]uint64, len(t.Shape))
		for i, d := range t.Shape {
			shape[i] = uint64(max(d, 0))
		}
		ct := Tensor{Name: t.Name, DType: DType(t.DType), Shape: shape, HeaderOffset: -1}
		if t.Offset >= 0 && t.Contiguous {
			ct.Begin, ct.End = uint64(t.Offset), uint64(t.Offset+t.Size)
		}
		m.Tensors = append(m.Tensors, ct)
	}
	for _, fd := range f.Findings {
		kind := RefKind("")
		if fd.Severity == torch.SevError {
			kind = RefKind(fd.Code)
			if m.RefErr == nil {
				m.RefErr = &RefError{Kind: kind, Message: fd.Message, Offset: fd.Offset}
			}
		}
		m.add(Finding{Code: fd.Code, Severity: Severity(fd.Severity), Offset: fd.Offset, Message: fd.Message, Hint: fd.Hint, RefKind: kind, Global: fd.Global})
	}
	return m
}
