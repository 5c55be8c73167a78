package canon

import (
	"errors"
	"io"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/onnx"
	"github.com/stdiff/stdiff/canon/tensor"
)

// FormatONNX: an ONNX model (a protobuf ModelProto), its initializers the tensors.
const FormatONNX Format = "onnx"

// readONNX reads an ONNX model with package onnx and makes a Model of it. Like Read, it fails only
// when r cannot be read, with r's own error.
func readONNX(in *Input) (*Model, error) {
	f, err := onnx.Read(in.R, in.Size, in.Name)
	if err != nil {
		return nil, err
	}
	return modelOfONNX(f), nil
}

// modelOfONNX is the Model of an ONNX file: its metadata_props as metadata (its facts, IR version,
// producer, opsets, are in m.Detail), its initializers
// as tensors whose bytes are in the space of the file's onnx.Data (one after another, from 0), and its
// findings. Its verdict is invalid when a finding is an error (the kind is the first error's code).
// Findings about external data need the model's folder: openONNX adds them.
func modelOfONNX(f *onnx.File) *Model {
	m := &Model{Name: f.Name, Format: FormatONNX, FileSize: f.Size, Detail: f, InSpace: true, HeaderParsed: true}
	for _, kv := range f.Metadata {
		m.Metadata = append(m.Metadata, MetaEntry{Key: kv.Key, Value: kv.Value, Offset: -1})
	}
	m.HasMetadata = len(m.Metadata) > 0
	var off uint64
	for i := range f.Tensors {
		t := &f.Tensors[i]
		n, ok := t.Len()
		if !ok || t.DataType == onnx.String {
			n = 0
		}
		shape := make([]uint64, 0, len(t.Dims))
		for _, d := range t.Dims {
			shape = append(shape, uint64(max(d, 0)))
		}
		if t.Where == onnx.InExternal {
			loc := ""
			if t.External != nil {
				loc = t.External.Location
			}
			m.External = append(m.External, loc)
		}
		m.Tensors = append(m.Tensors, tensor.Tensor{Name: t.Name, DType: tensor.DType(t.DataType.Name()), Shape: shape, Begin: off, End: off + n, HeaderOffset: t.Offset})
		off += n
	}
	m.addONNXFindings(f.Findings)
	return m
}

// addONNXFindings adds package onnx's findings; the first error is the verdict.
func (m *Model) addONNXFindings(fs []finding.Finding) {
	for _, fd := range fs {
		if fd.Severity == finding.SevError {
			fd.RefKind = finding.RefKind(fd.Code)
			if m.RefErr == nil {
				m.RefErr = &RefError{Kind: fd.RefKind, Message: fd.Message, Offset: fd.Offset}
			}
		}
		m.add(fd)
	}
}

// openONNX is an ONNX model's Space: its initializers' inline bytes and the external data files beside
// a local model (a remote model's are not read). For a local model it first checks what the file alone
// cannot say (external data beside it, typed fields; see onnx.File.Check) and adds the findings.
func openONNX(m *Model, r io.ReaderAt, where Where) Space {
	f := m.Detail.(*onnx.File)
	open := onnx.Opener(nil) // external data beside a local model
	if where.Remote {
		open = func(string) (io.ReaderAt, func() error, error) {
			return nil, nil, errors.New("the external data of a remote ONNX model is not read")
		}
	} else {
		n := len(f.Findings)
		f.Check(r, where.Dir)
		m.addONNXFindings(f.Findings[n:])
	}
	return f.Data(r, where.Dir, open)
}
