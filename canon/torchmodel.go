package canon

import (
	"io"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/tensor"
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
func readTorch(in *Input) (*Model, error) {
	f := torch.Read(in.R, in.Size, in.Name)
	if f.ReadErr != nil {
		return nil, &ReadError{Name: in.Name, Op: "read", Err: f.ReadErr}
	}
	return modelOfTorch(f), nil
}

// openTorch is a checkpoint's Space: its tensors in row-major order, strided views gathered and .npz
// entries inflated.
func openTorch(m *Model, r io.ReaderAt, _ Where) Space { return m.Detail.(*torch.File).Data(r) }

// modelOfTorch is the Model of a file package torch read: its tensors with Begin and End in the
// space of the file's torch.Data (row-major bytes, one tensor after another from 0: strided views
// gathered, .npz entries inflated; a tensor whose storage is missing claims none), its other values
// as metadata, and its findings. Its verdict is torch.load(weights_only=
// True)'s (numpy.load(allow_pickle=False)'s for NumPy): invalid when a finding is an error, the kind
// being the first error's code.
func modelOfTorch(f *torch.File) *Model {
	m := &Model{Name: f.Name, Format: FormatPyTorch, FileSize: f.Size, Detail: f, InSpace: true, HeaderParsed: len(f.Pickles) > 0 || len(f.Tensors) > 0}
	if f.Format == torch.FormatNPY || f.Format == torch.FormatNPZ {
		m.Format = FormatNumPy
	}
	for _, kv := range f.Metadata {
		m.Metadata = append(m.Metadata, MetaEntry{Key: kv.Key, Value: kv.Value, Offset: -1})
	}
	m.HasMetadata = len(m.Metadata) > 0
	data := f.Data(nil) // the places of the tensors' bytes; source.Open reads them through f.Data
	for i, t := range f.Tensors {
		shape := make([]uint64, len(t.Shape))
		for i, d := range t.Shape {
			shape[i] = uint64(max(d, 0))
		}
		b, e := data.DataRange(i)
		ct := tensor.Tensor{Name: t.Name, DType: tensor.DType(t.DType), Shape: shape, HeaderOffset: -1, Begin: uint64(b), End: uint64(e)}
		m.Tensors = append(m.Tensors, ct)
	}
	for _, fd := range f.Findings {
		if fd.Severity == finding.SevError {
			fd.RefKind = finding.RefKind(fd.Code)
			if m.RefErr == nil {
				m.RefErr = &RefError{Kind: fd.RefKind, Message: fd.Message, Offset: fd.Offset}
			}
		}
		m.add(fd)
	}
	return m
}
