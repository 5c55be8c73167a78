package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/dduf"
	"github.com/stdiff/stdiff/canon/finding"
)

// ddufRepo is a DDUF file's members as the files of a pipeline's folder: each member a byte range
// of the archive, read in place (a component's weights are a canon.Source over its range, never
// extracted).
type ddufRepo struct {
	src canon.Source
	f   *dduf.File
}

func (r ddufRepo) list(dir string) []string {
	var out []string
	for _, m := range r.f.Members {
		if d, name := path.Split(m.Name); path.Clean("/"+d) == path.Clean("/"+dir) {
			out = append(out, name)
		}
	}
	return out
}

// section is member p's bytes, or an error wrapping fs.ErrNotExist.
func (r ddufRepo) section(p string) (*io.SectionReader, error) {
	m := r.f.Member(p)
	if m == nil {
		return nil, &canon.ReadError{Name: r.src.Name() + "/" + p, Err: fmt.Errorf("is not in the archive: %w", fs.ErrNotExist)}
	}
	return io.NewSectionReader(r.src, m.Offset, m.Size), nil
}

func (r ddufRepo) read(p string) ([]byte, error) {
	s, err := r.section(p)
	if err != nil {
		return nil, err
	}
	return readSmall(canon.SourceOf(s, s.Size(), r.src.Name()+"/"+p))
}

func (r ddufRepo) open(p string) (*Opened, error) {
	s, err := r.section(p)
	if err != nil {
		return nil, err
	}
	name := r.src.Name() + "/" + p
	if strings.HasSuffix(p, ".index.json") { // a sharded component: its shards are members beside the index
		return r.openSet(p, name)
	}
	m, err := canon.Read(s, s.Size(), name)
	if err != nil {
		return nil, err
	}
	if m.Format != canon.FormatSafetensors {
		return nil, &canon.ReadError{Name: name, Err: fmt.Errorf("is a %s file; a DDUF component's weights are safetensors", m.Format)}
	}
	return &Opened{Model: m, Source: canon.SourceOf(s, s.Size(), name)}, nil
}

// openSet opens the shard set whose index is member p, its shards the members of p's folder, as
// a local set is opened: a shard not in the archive leaves the model known in part.
func (r ddufRepo) openSet(p, name string) (*Opened, error) {
	b, err := r.read(p)
	if err != nil {
		return nil, err
	}
	idx, err := ParseIndex(name, b)
	if err != nil {
		return nil, err
	}
	dir := path.Dir(p)
	m, set, err := ReadSet(name, idx, idx.Shards, func(shard string) (canon.Source, error) {
		s, err := r.section(path.Join(dir, shard))
		if err != nil {
			return nil, missingMember{err}
		}
		return canon.SourceOf(s, s.Size(), r.src.Name()+"/"+path.Join(dir, shard)), nil
	})
	if err != nil {
		return nil, err
	}
	return &Opened{Model: m, Source: set, closers: []io.Closer{set}}, nil
}

// missingMember is the error of a shard the archive does not hold.
type missingMember struct{ error }

func (e missingMember) Unwrap() error        { return e.error }
func (e missingMember) Is(target error) bool { return target == ErrMissingShard }

// remote is true so that openPipeline treats the members as it treats a Hub revision's files (no
// local index file, no dangling links); openDDUF sets Opened.Remote from the archive itself.
func (ddufRepo) remote() bool { return true }

// openDDUF opens a DDUF file read by canon.Read (f, its Detail) as the pipeline it holds, exactly as
// the same pipeline in a folder is opened (openPipeline): its components' tensors named after their
// folders, their bytes ranges of src. The DDUF rules' findings come first and their verdict is the
// model's. A DDUF file whose pipeline cannot be read (no model_index.json, no component with
// weights) is opened as what canon.Read made of it: its findings, no tensors. A local DDUF file's
// companion files (configs, tokenizer files) are its members, as a folder's are its files, and
// Opened.Folder is the file's path.
func openDDUF(ctx context.Context, src interface {
	canon.Source
	io.Closer
}, m *canon.Model, f *dduf.File, remote bool) (*Opened, error) {
	bare := &Opened{Model: m, Source: src, Remote: remote, closers: []io.Closer{src}}
	r := ddufRepo{src: src, f: f}
	o, err := openPipeline(ctx, src.Name(), r, 1)
	var re *canon.ReadError
	if err != nil && errors.As(err, &re) {
		if m.Valid() { // the rules' findings say why when it is not
			m.AddFinding(finding.Finding{Code: canon.CodePipeline, Severity: finding.SevInfo, Offset: -1,
				Message: "a DDUF file whose pipeline is not read as one model: " + re.Err.Error(), Hint: re.Hint})
		}
		return bare, nil
	}
	if err != nil {
		src.Close()
		return nil, err
	}
	o.Remote, o.index = remote, ""
	o.closers = append(o.closers, src)
	p := o.Model
	findings := p.Findings
	p.Findings = nil
	for _, f := range m.Findings {
		p.AddFinding(f)
	}
	for _, f := range findings {
		p.AddFinding(f)
	}
	if m.RefErr != nil {
		p.RefErr = m.RefErr
	}
	p.Detail, p.Archive = m.Detail, m.Archive
	if !remote { // a DDUF file is a folder in one file: its members beside the tensors are the model's, as a folder's files are
		o.Folder, o.Companions = src.Name(), r.companions()
	}
	return o, nil
}

// companions are the members a loader reads beside the tensors (package companion), in path order.
func (r ddufRepo) companions() []companion.File {
	var out []companion.File
	for _, m := range r.f.Members {
		kind, ok := companion.KindOf(m.Name)
		if !ok || m.Size > companion.MaxSize || len(out) == companion.MaxFiles {
			continue
		}
		b := make([]byte, m.Size)
		if _, err := r.src.ReadAt(b, m.Offset); err != nil && err != io.EOF {
			continue
		}
		f := companion.File{Path: m.Name, Kind: kind}
		companion.Parse(&f, b)
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b companion.File) int { return strings.Compare(a.Path, b.Path) })
	return out
}
