package canon

import "io"

// Input is a file as a format's Sniff and Read see it.
type Input struct {
	// R holds the file's bytes; Size is its length and Name what it is shown as (a path or URL).
	R    io.ReaderAt
	Size int64
	Name string
	// Head is the file's first min(Size, 8) bytes, read once for every format's Sniff.
	Head []byte
	// Buf is room a format may read its header into (see ReadInto); nil when the caller gave none.
	Buf []byte
}

// Match is how surely a format's Sniff recognises a file.
type Match int

// Read takes the first format, in registration order, whose Sniff says ByBytes, else the first that
// says ByName, else reads the file as safetensors (which names what is wrong with it).
const (
	// NoMatch: the file is not of the format.
	NoMatch Match = iota
	// ByName: the file's bytes do not say, but its name does (a .pt file is what torch.load is
	// pointed at): the format is taken when no other format recognises the bytes.
	ByName
	// ByBytes: the file's bytes are the format's (a magic, a structure).
	ByBytes
)

// Where says where a model file lies, for formats whose tensor bytes lie beside it.
type Where struct {
	// Dir is the folder of a local file ("" for a remote one).
	Dir string
	// Remote is true for a file read over HTTP: files beside it are not read.
	Remote bool
}

// Space holds a model's tensor bytes where their Begin and End point (from 0), when they are not
// the file's bytes after its header: an ONNX model's inline and external data, a checkpoint's
// storages gathered in row-major order. Close releases what it opened.
type Space interface {
	io.ReaderAt
	io.Closer
	// Size is the number of bytes in the space.
	Size() int64
}

// A FormatReader is one format as Read knows it: how it is recognised, how a file of it becomes a
// Model, and where its tensor bytes are.
type FormatReader struct {
	// Format names the format (a reader may return a Model of a kindred Format: PyTorch's names
	// NumPy files FormatNumPy).
	Format Format
	// Sniff says whether in is a file of the format. It may read past in.Head.
	Sniff func(in *Input) Match
	// Read reads the file's header. Like canon.Read, it fails only when the file cannot be read; a
	// file read but invalid is a Model with findings and a verdict.
	Read func(in *Input) (*Model, error)
	// Open, when not nil, gives the Space a Model this reader made keeps its tensor bytes in, reading
	// the file through r; it may add findings that need to know where the file is (ONNX external data
	// that does not exist). Nil: the tensor bytes are the file's, from the Model's DataOffset.
	Open func(m *Model, r io.ReaderAt, where Where) Space
	// TensorsOnly, when not nil, reports whether a file of the format (read through r) holds nothing a
	// loader reads besides its tensors and metadata, so that a file of the same tensors in another
	// format loses nothing of it (dupes may delete it as a content copy). Nil: it may hold more (a
	// graph, code, training state), and only a byte-identical file is its copy.
	TensorsOnly func(m *Model, r io.ReaderAt) bool
	// Card, when not nil, is what a Model this reader made says besides its tensors and metadata, for
	// inspect's card (Model.Card): a pointer to one of package card's sections, or nil. Nil: nothing.
	Card func(m *Model) any
	// Skim, when not nil, reads the tensor entries of a header h of the format (for safetensors the N
	// bytes after its length) whose data section is dataLen bytes into sink without building a Model:
	// what grouping files needs, several times faster than Read, for the plain headers writers make.
	// ok false: read the file with Read, which says what is wrong. With whole, ok also means that Read
	// finds the file valid with the same tensors (but for a name written twice). scratch is reused
	// between calls.
	Skim func(h []byte, dataLen int64, scratch *[][2]uint64, sink SkimSink, whole bool) (metaKeys int, ok bool)
}

// SkimSink receives the tensor entries a format's Skim reads (FormatReader.Skim). A sink that also
// has a method MetadataSpan(begin, end int) is told where the header's metadata lies in it, h[begin:end],
// by a format whose Skim knows (safetensors: `__metadata__`'s value); not for a header without.
type SkimSink interface {
	// Entry is one tensor entry, in header order. name and dtype share the header's memory; shape is
	// valid only during the call.
	Entry(name, dtype []byte, shape []uint64, begin, end uint64)
	// Reset forgets the entries received so far: Skim reads the header again, another way.
	Reset()
}

// Skim reads the header h of a file of format f with its reader's Skim (see FormatReader.Skim); ok is
// false when the format has none.
func Skim(f Format, h []byte, dataLen int64, scratch *[][2]uint64, sink SkimSink, whole bool) (metaKeys int, ok bool) {
	for i := range registry {
		if registry[i].Format == f && registry[i].Skim != nil {
			return registry[i].Skim(h, dataLen, scratch, sink, whole)
		}
	}
	return 0, false
}

// fallback reads what no format recognised: as safetensors, whose reader names what is wrong.
var fallback = FormatReader{Format: FormatSafetensors, Sniff: sniffSafetensors, Read: readSafetensors, TensorsOnly: safetensorsHoldsTensors}

// registry is every format Read reads, in the order their Sniff is asked: the built-in formats
// first, then those added by Register.
var registry = []FormatReader{
	// A GGUF magic read as the low half of a safetensors header length makes it at least 0x46554747
	// bytes, far over the reference's limit: no safetensors file starts as a GGUF one.
	{Format: FormatGGUF, Sniff: sniffGGUF, Read: readGGUF, Card: func(m *Model) any { return orNil(ggufCard(m)) }},
	// A zip archive named .dduf or with model_index.json at its root, before PyTorch's zips and
	// before a safetensors file whose header length starts "PK\x03\x04".
	{Format: FormatDDUF, Sniff: sniffDDUF, Read: readDDUF, Card: func(m *Model) any { return orNil(ddufCard(m)) }},
	// A safetensors file whose header length begins as a pickle, a zip, NumPy or ONNX does is
	// safetensors: a length within the file, then '{'.
	{Format: FormatSafetensors, Sniff: sniffSafetensors, Read: readSafetensors, TensorsOnly: safetensorsHoldsTensors, Skim: skimSafetensors},
	// PyTorch by its bytes (zip, tar, NumPy, legacy, a pickle), and by its name when nothing else
	// recognised the bytes: torch.load and pickle.load read such a file as a pickle.
	{Format: FormatPyTorch, Sniff: sniffTorch, Read: readTorch, Open: openTorch, Card: func(m *Model) any { return orNil(torchCard(m)) }},
	// ONNX has no magic: a file that starts as a ModelProto does.
	{Format: FormatONNX, Sniff: sniffONNX, Read: readONNX, Open: openONNX, Card: func(m *Model) any { return orNil(onnxCard(m)) }},
}

// Register adds a format to those Read reads. Its Sniff is asked after every format registered before
// it (the built-in ones first); a file no format recognises is still read as safetensors. Register is
// meant for a package's init function: it is not safe to call while models are read.
func Register(f FormatReader) {
	registry = append(registry, f)
	formats = append(formats, f.Format)
}

// readerFor is the reader of the format in recognises.
func readerFor(in *Input) *FormatReader {
	var byName *FormatReader
	for i := range registry {
		switch registry[i].Sniff(in) {
		case ByBytes:
			return &registry[i]
		case ByName:
			if byName == nil {
				byName = &registry[i]
			}
		}
	}
	if byName != nil {
		return byName
	}
	return &fallback
}

// readerOf is the reader of the format a Model read by Read is in (its Format, or the one whose
// reader gives that Format: NumPy's is PyTorch's).
func readerOf(m *Model) *FormatReader {
	f := m.Format
	if f == FormatNumPy {
		f = FormatPyTorch
	}
	for i := range registry {
		if registry[i].Format == f {
			return &registry[i]
		}
	}
	return nil
}

// safetensorsHoldsTensors: a safetensors file is its header and its tensors' bytes.
func safetensorsHoldsTensors(*Model, io.ReaderAt) bool { return true }

// TensorsOnly reports whether m, read through r, holds nothing besides its tensors and metadata, as
// its format's reader says (FormatReader.TensorsOnly); false when the reader does not say (GGUF's
// key-value pairs, an ONNX graph, a checkpoint's pickle: their packages' readers say more).
func TensorsOnly(m *Model, r io.ReaderAt) bool {
	f := readerOf(m)
	return f != nil && f.TensorsOnly != nil && f.TensorsOnly(m, r)
}

// OpenSpace is the Space m's tensor bytes are in when they are not r's bytes after m's header (see
// FormatReader.Open), reading the file through r; nil when they are r's. m must be a Model Read
// made of r (not a shard set's).
func OpenSpace(m *Model, r io.ReaderAt, where Where) Space {
	if m.Shards != nil {
		return nil
	}
	if f := readerOf(m); f != nil && f.Open != nil {
		return f.Open(m, r, where)
	}
	return nil
}
