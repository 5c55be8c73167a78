package canon

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stdiff/stdiff/canon/dduf"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/onnx"
	"github.com/stdiff/stdiff/canon/safetensors"
	"github.com/stdiff/stdiff/canon/torch"
)

// Read reads a model's header from r, a file of size bytes shown as name, choosing the format as the
// registry says (FormatReader: the first whose Sniff recognises the bytes, else the first that
// recognises the name, else safetensors, whose reader names what is wrong). For safetensors it reads the 8-byte length and the N header bytes, nothing else; for
// GGUF the key-value pairs and tensor infos through a bounded buffer (package gguf), nothing of the
// tensor data.
//
// It returns an error only when r cannot be read (the Sources of this module and their sub-packages
// return errors wrapping ErrUnreadable). A file that was read but is not valid yields a Model whose
// RefErr is the reference reader's verdict (for GGUF, llama.cpp's) and whose Findings name every defect
// found; everything that could still be read is in the Model. Read allocates the header only after
// checking N against the limit and size; the GGUF reader checks every count against the bytes left.
func Read(r io.ReaderAt, size int64, name string) (*Model, error) {
	return ReadInto(r, size, name, nil)
}

// ReadInto is Read with buf as room for a safetensors header: a header that fits in buf's capacity is
// read into buf, and the Model's RawHeader, names and values then share buf's memory. A caller that
// reads many files one after another can so reuse one buffer for their headers, once it no longer uses
// the last Model (its Tensors and Metadata may be given to the next one read into buf), nor any string
// taken from it without a copy.
func ReadInto(r io.ReaderAt, size int64, name string, buf []byte) (*Model, error) {
	if size < 0 {
		return nil, &ReadError{Name: name, Op: "read", Err: fmt.Errorf("size %d is negative", size)}
	}
	in := &Input{R: r, Size: size, Name: name, Head: make([]byte, min(size, headLen)), Buf: buf}
	if err := readFull(r, in.Head, 0); err != nil {
		return nil, err
	}
	return readerFor(in).Read(in)
}

// headLen is how many of a file's first bytes every Sniff is given: a safetensors header length and
// the byte after it, which is '{' in a safetensors file.
const headLen = 9

// The built-in formats' Sniff.

func sniffGGUF(in *Input) Match { _, ok := gguf.Sniff(in.Head); return matchIf(ok) }

func sniffDDUF(in *Input) Match {
	// a zip archive; an empty one (its end record first) only when named .dduf (dduf.Sniff)
	return matchIf((bytes.HasPrefix(in.Head, []byte("PK\x03\x04")) || bytes.HasPrefix(in.Head, []byte("PK\x05\x06"))) && dduf.Sniff(in.R, in.Size, in.Name))
}

// sniffSafetensors recognises a header length within the file followed by '{'.
func sniffSafetensors(in *Input) Match {
	if len(in.Head) < headLen {
		return NoMatch
	}
	n := binary.LittleEndian.Uint64(in.Head)
	return matchIf(n != 0 && n <= finding.MaxHeaderLen && 8+int64(n) <= in.Size && in.Head[8] == '{')
}

// sniffTorch recognises what torch.load reads by its first bytes (zip, tar, NumPy, legacy, a pickle
// of any protocol), and by its name a file named as pickles and checkpoints are: torch.load and
// pickle.load read it as a pickle (its globals named, or "not a pickle").
func sniffTorch(in *Input) Match {
	if torch.Candidate(in.Head) {
		if _, ok := torch.SniffReader(in.R, in.Size); ok {
			return ByBytes
		}
	}
	if picklish(in.Name) {
		return ByName
	}
	return NoMatch
}

func sniffONNX(in *Input) Match { return matchIf(onnx.Sniff(in.Head)) }

// matchIf is ByBytes when ok.
func matchIf(ok bool) Match {
	if ok {
		return ByBytes
	}
	return NoMatch
}

// skimSafetensors is safetensors.Skim; with whole, the header must also be UTF-8 without a control
// character, the two checks Skim leaves to its caller.
func skimSafetensors(h []byte, dataLen int64, scratch *[][2]uint64, sink SkimSink, whole bool) (int, bool) {
	n, ok := safetensors.Skim(h, dataLen, scratch, sink)
	return n, ok && (!whole || safetensors.TextOnly(h))
}

// readSafetensors reads a safetensors header: the 8-byte length and the N header bytes, nothing else.
func readSafetensors(in *Input) (*Model, error) {
	h, err := safetensors.ReadHeadInto(in.R, in.Size, in.Head[:min(len(in.Head), 8)], in.Buf)
	if err != nil {
		return nil, err
	}
	return modelOfSafetensors(h, in.Name), nil
}

// modelOfSafetensors is the Model of a safetensors header: its tensors, metadata, findings and verdict
// in canon's terms (the names and shapes shared with h).
func modelOfSafetensors(h *safetensors.Header, name string) *Model {
	m := &Model{Name: name, Format: FormatSafetensors, FileSize: h.FileSize, HeaderLen: h.HeaderLen, RawHeader: h.RawHeader,
		HeaderParsed: h.HeaderParsed, HasMetadata: h.HasMetadata, Findings: h.Findings, Omitted: h.Omitted}
	if e := h.RefErr; e != nil {
		m.RefErr = &RefError{Kind: e.Kind, Message: e.Message, Offset: e.Offset}
	}
	m.Tensors = h.Tensors
	if len(h.Metadata) > 0 {
		m.Metadata = make([]MetaEntry, 0, len(h.Metadata))
	}
	for _, e := range h.Metadata {
		m.Metadata = append(m.Metadata, MetaEntry{Key: e.Key, Value: e.Value, Offset: e.Offset, NotString: e.NotString})
	}
	return m
}

// pickleExts are the extensions of files torch.load or pickle.load are pointed at.
var pickleExts = []string{".pkl", ".pickle", ".pt", ".pth", ".bin", ".ckpt", ".joblib", ".tar"} // checkpoint.pth.tar

// picklish reports whether name ends as a pickle or PyTorch checkpoint is named.
func picklish(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return slices.Contains(pickleExts, ext)
}

// readFull reads len(p) bytes at off. As io.ReaderAt allows, r may say io.EOF along with all of them
// (at the end of its input, or for no bytes at all): that is no error.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	switch {
	case n == len(p):
		return nil
	case err == nil:
		return io.ErrUnexpectedEOF
	}
	return err
}

// ReadBytes reads a whole file held in memory; see Read.
func ReadBytes(name string, b []byte) *Model {
	m, err := Read(bytes.NewReader(b), int64(len(b)), name)
	if err != nil { // cannot happen: a bytes.Reader never fails within its size
		panic(err)
	}
	return m
}
