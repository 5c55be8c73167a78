package canon

import (
	"github.com/stdiff/stdiff/canon/dduf"
	"github.com/stdiff/stdiff/canon/finding"
)

// FormatDDUF: Hugging Face's one-file diffusers pipeline, a stored zip archive with model_index.json
// at its root (package dduf).
const FormatDDUF Format = "dduf"

// readDDUF reads a DDUF file's directory and model_index.json with package dduf: a Model with no
// tensors of its own, its findings and verdict the DDUF rules' (invalid when a finding is an error,
// the kind being the first error's code). package source reads it as the pipeline it holds, each
// component's weights in place.
func readDDUF(in *Input) (*Model, error) {
	f := dduf.Read(in.R, in.Size)
	m := &Model{Name: in.Name, Format: FormatDDUF, FileSize: in.Size, Detail: f, HeaderParsed: len(f.Members) > 0,
		Archive: &Archive{Size: f.Size, Members: make([]Member, 0, len(f.Members))}}
	for _, x := range f.Members {
		m.Archive.Members = append(m.Archive.Members, Member{Name: x.Name, Offset: x.Offset, Size: x.Size})
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
	return m, nil
}
