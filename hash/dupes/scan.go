package dupes

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/hash/dupes/derived"
)

// headBytes is how much of a file the first read takes: the 8-byte length and, for most files, the
// whole header.
const headBytes = 64 << 10

// scratchPool holds each worker's buffers: for the header and for the skim's spans.
var scratchPool = sync.Pool{New: func() any { return &scratch{} }}

type scratch struct {
	head  []byte
	spans [][2]uint64
}

// skimFile reads a local file's header and skims it (skim) for its keys. It returns false, and no
// error, when the file is not plain safetensors: canon.Read is to read it then.
func (f *scanned) skimFile() (keys, bool, error) {
	if f.size < 8 {
		return keys{}, false, nil
	}
	file, _, err := canon.OpenRegular(f.path, os.O_RDONLY)
	if err != nil {
		return keys{}, false, err
	}
	defer file.Close()
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	first := min(f.size, headBytes)
	if cap(sc.head) < int(first) {
		sc.head = make([]byte, first)
	}
	b := sc.head[:first]
	if _, err := file.ReadAt(b, 0); err != nil {
		return keys{}, false, canon.PathError("read", f.path, err)
	}
	n := binary.LittleEndian.Uint64(b)
	if n < 2 || n > finding.MaxHeaderLen || n > uint64(f.size-8) || b[8] != '{' {
		return keys{}, false, nil // not plain safetensors (GGUF, say), or an error canon.Read names
	}
	if 8+n > uint64(len(b)) {
		if cap(sc.head) < int(8+n) {
			grown := make([]byte, 8+n)
			copy(grown, b)
			sc.head = grown
		}
		b = sc.head[:8+n]
		if _, err := file.ReadAt(b[first:], first); err != nil {
			return keys{}, false, canon.PathError("read", f.path, err)
		}
	}
	k, ok := skim(b[8:8+n], f.size-8-int64(n), &sc.spans, nil, f.summary)
	return k, ok, nil
}

// crc32c is the CRC-32C table: hardware-accelerated on most processors.
var crc32c = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// takeSample hashes the model's sample: a few KiB of each of its picks. Models whose samples differ
// hold other tensors; models whose samples agree are compared (resolve).
func (f *scanned) takeSample(ctx context.Context, read *atomic.Int64) error {
	if !f.picked { // keys from the cache: the picks need the header
		if err := f.rescan(ctx); err != nil {
			return err
		}
	}
	err := f.sampleRanges(ctx, f.k.sample.ranges(), &f.sample, read, f.summary)
	f.hasSample = err == nil
	return err
}

// rescan reads the model's header again for its sample's picks (the other keys are the cache's).
func (f *scanned) rescan(ctx context.Context) error {
	if !f.set {
		if k, ok, err := f.skimFile(); ok || err != nil {
			if ok {
				f.k.sample, f.picked = k.sample, true
			}
			return err
		}
	}
	o, m, err := reopen(ctx, f)
	if err != nil {
		return err
	}
	defer o.Close()
	f.k.sample, f.picked = keysOf(m).sample, true
	return nil
}

// dataSource is where the model's tensor bytes are, and the offset of its data section: the file
// itself for one file (no header read again), the set's source for a set or a URL, its format's
// reader's for a PyTorch, NumPy or ONNX model (virtual).
func (f *scanned) dataSource(ctx context.Context) (io.ReaderAt, int64, func(), error) {
	if !f.set && !f.virtual {
		file, st, err := canon.OpenRegular(f.path, os.O_RDONLY)
		if err != nil {
			return nil, 0, nil, err
		}
		if st.Size() != f.size || st.ModTime().UnixNano() != f.mtime {
			file.Close()
			return nil, 0, nil, &canon.ReadError{Name: f.path, Op: "read", Err: canon.ErrChanged}
		}
		return file, f.size - f.dataLen, func() { file.Close() }, nil
	}
	o, m, err := reopen(ctx, f)
	if err != nil {
		return nil, 0, nil, err
	}
	return o.Source, m.DataOffset(), func() { o.Close() }, nil
}

// reopen opens a scanned model again, reading its header with canon.Read, and checks that it is
// valid and the model that was scanned.
func reopen(ctx context.Context, f *scanned) (*source.Opened, *canon.Model, error) {
	o, err := f.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	m := o.Model
	if err := usable(m); err != nil {
		o.Close()
		return nil, nil, &canon.ReadError{Name: f.path, Op: "read", Err: err}
	}
	if (!f.set && fileSizeOf(m) != f.size) || dataLenOf(m) != f.dataLen {
		o.Close()
		return nil, nil, &canon.ReadError{Name: f.path, Op: "read", Err: canon.ErrChanged}
	}
	return o, m, nil
}

// structureID fills in the model's structure ID (from the model a comparison kept, or reading its
// header again) when it is not known.
func (f *scanned) structureID(ctx context.Context) error {
	if f.structure != "" {
		return nil
	}
	m, err := f.tensors(ctx)
	if err != nil {
		return err
	}
	f.structure = canon.StructureID(m)
	return nil
}

// tensors is the model's header for what its tensors are (names, dtypes, shapes, offsets): the model
// a comparison kept, else lightModel's, else canon.Read's (reading the header again).
func (f *scanned) tensors(ctx context.Context) (*canon.Model, error) {
	if f.model != nil {
		return f.model, nil
	}
	return f.readTensors(ctx)
}

// readTensors reads the model's header again for what its tensors are: lightModel's, else
// canon.Read's. It reads no field a comparison writes.
func (f *scanned) readTensors(ctx context.Context) (*canon.Model, error) {
	m, src, err := f.lightModel()
	if err != nil {
		return nil, err
	}
	if m != nil {
		src.Close()
		return m, nil
	}
	o, m, err := reopen(ctx, f)
	if err != nil {
		return nil, err
	}
	o.Close()
	return m, nil
}

// crcUnit is how much of a model's tensor bytes each of its crcs covers.
const crcUnit = 1 << 20

// crcState is what comparing a model's stream learnt: the CRC-32C of each MiB (crcUnit) of it, as far
// as it was read, to the end when complete (read beside another model that held the same bytes). It is
// the cache's proof of which models are the same and which are not, without reading them again.
type crcState struct {
	crcs     []uint32
	complete bool
}

// knownSame and knownOther tell from two models' crcs, without reading them, that they hold the same
// bytes (both read to the end, equal) or not (they differ in a MiB both were read to).
func knownSame(a, b *crcState) bool {
	return a.complete && b.complete && len(a.crcs) == len(b.crcs) && equalCRCs(a.crcs, b.crcs)
}

func knownOther(a, b *crcState) bool {
	n := min(len(a.crcs), len(b.crcs))
	return !equalCRCs(a.crcs[:n], b.crcs[:n])
}

func equalCRCs(a, b []uint32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// resolve splits a group of models with the same structure key and sample into classes of models
// that hold the same tensors, numbering each class of two or more (f.class) from next. What earlier
// scans learnt (the cache's crcs) decides without reading when it can; otherwise the models are read
// side by side (comparer). A model that cannot be read keeps the error (f.err).
func resolve(ctx context.Context, g []*scanned, crcs bool, next, read *atomic.Int64) {
	content := func(f *scanned) *crcState { return &f.cs }
	set := func(f *scanned, c int) { f.class = c }
	if decided(g, content) {
		numberClasses(g, func(a, b *scanned) bool { return knownSame(&a.cs, &b.cs) }, set, next)
		return
	}
	c := comparer{ctx: ctx, order: canonicalStream, state: content, crcs: crcs, read: read}
	for _, cl := range c.compare(g) {
		n := int(next.Add(1))
		for _, f := range cl {
			set(f, n)
		}
	}
}

// decided reports whether the crcs (state) of the models of g tell every two apart or the same.
func decided(g []*scanned, state func(*scanned) *crcState) bool {
	for i, a := range g {
		for _, b := range g[i+1:] {
			if !knownSame(state(a), state(b)) && !knownOther(state(a), state(b)) {
				return false
			}
		}
	}
	return true
}

// numberClasses gives each class of two or more models of g (same tells) a number from next.
func numberClasses(g []*scanned, same func(a, b *scanned) bool, set func(*scanned, int), next *atomic.Int64) {
	assigned := make([]bool, len(g))
	for i, a := range g {
		if assigned[i] || a.err != nil {
			continue
		}
		members := []int{i}
		for j := i + 1; j < len(g); j++ {
			if !assigned[j] && g[j].err == nil && same(a, g[j]) {
				members = append(members, j)
			}
		}
		if len(members) < 2 {
			continue
		}
		c := int(next.Add(1))
		for _, j := range members {
			assigned[j] = true
			set(g[j], c)
		}
	}
}

// stream is a model's tensor bytes in an order (name order, for content), read through the fewest
// reads: tensors next to each other in the file are read together; a local file is mapped into
// memory, and its bytes compared where they are.
type stream struct {
	f *scanned
	// m, order and names are the model, the tensors the stream covers and their names (orderFunc).
	m      *canon.Model
	order  []int
	names  []string
	src    io.ReaderAt
	data   []byte     // the mapped file, or nil
	ranges [][2]int64 // file offset and length, in stream order, neighbours merged
	total  int64
	ri     int
	roff   int64
	// crcs is the CRC-32C of each whole crcUnit read so far; crc and in the unit being read.
	crcs []uint32
	crc  uint32
	in   int64
	done func()
	// pieces holds what next returns (reused).
	pieces [][]byte
}

// next returns the stream's next n bytes as pieces: where they are mapped (a piece per range they
// span, none copied), else copied into buf (one piece). The pieces are valid until the next call.
func (s *stream) next(n int64, buf []byte) ([][]byte, error) {
	s.pieces = s.pieces[:0]
	if s.data == nil {
		if err := s.read(buf[:n]); err != nil {
			return nil, err
		}
		s.pieces = append(s.pieces, buf[:n])
		return s.pieces, nil
	}
	for n > 0 {
		r := s.ranges[s.ri]
		k := min(n, r[1]-s.roff)
		s.pieces = append(s.pieces, s.data[r[0]+s.roff:r[0]+s.roff+k])
		n, s.roff = n-k, s.roff+k
		if s.roff == r[1] {
			s.ri, s.roff = s.ri+1, 0
		}
	}
	return s.pieces, nil
}

// equalPieces reports whether two lists of pieces hold the same bytes (their lengths are equal).
func equalPieces(a, b [][]byte) bool {
	if len(a) == 1 && len(b) == 1 {
		return bytes.Equal(a[0], b[0])
	}
	var x, y []byte
	for {
		for len(x) == 0 && len(a) > 0 {
			x, a = a[0], a[1:]
		}
		for len(y) == 0 && len(b) > 0 {
			y, b = b[0], b[1:]
		}
		if len(x) == 0 || len(y) == 0 {
			return len(x) == len(y)
		}
		k := min(len(x), len(y))
		if !bytes.Equal(x[:k], y[:k]) {
			return false
		}
		x, y = x[k:], y[k:]
	}
}

// read fills b from the stream's next bytes.
func (s *stream) read(b []byte) error {
	for len(b) > 0 {
		r := s.ranges[s.ri]
		n := min(int64(len(b)), r[1]-s.roff)
		if s.data != nil {
			copy(b[:n], s.data[r[0]+s.roff:])
		} else if _, err := s.src.ReadAt(b[:n], r[0]+s.roff); err != nil {
			return canon.PathError("read", s.f.path, err)
		}
		b, s.roff = b[n:], s.roff+n
		if s.roff == r[1] {
			s.ri, s.roff = s.ri+1, 0
		}
	}
	return nil
}

// account adds b, the stream's next bytes, to its crcs.
func (s *stream) account(b []byte) {
	for len(b) > 0 {
		n := min(int64(len(b)), crcUnit-s.in)
		s.crc = crc32.Update(s.crc, crc32c(), b[:n])
		b, s.in = b[n:], s.in+n
		if s.in == crcUnit {
			s.crcs, s.crc, s.in = append(s.crcs, s.crc), 0, 0
		}
	}
}

// finish ends the crcs where the stream stopped: a partial unit counts.
func (s *stream) finish() {
	if s.in > 0 {
		s.crcs, s.crc, s.in = append(s.crcs, s.crc), 0, 0
	}
}

// orderFunc says which of a model's tensors a stream covers, in order, and the name each is matched
// by (two streams can be equal only when their tensors have the same such names, dtypes and shapes in
// order). It returns false when the model has no such stream.
type orderFunc func(f *scanned, m *canon.Model) (tensors []int, names []string, ok bool)

// canonicalStream is every tensor in name order: the content.
func canonicalStream(f *scanned, m *canon.Model) ([]int, []string, bool) {
	order := canon.CanonicalOrder(m)
	names := make([]string, len(order))
	for k, i := range order {
		names[k] = m.Tensors[i].Name
	}
	return order, names, true
}

// sameShape reports whether two streams cover tensors of the same names, dtypes and shapes, in order.
func sameShape(a, b *stream) bool {
	if len(a.order) != len(b.order) || a.total != b.total {
		return false
	}
	for k := range a.order {
		ta, tb := &a.m.Tensors[a.order[k]], &b.m.Tensors[b.order[k]]
		if a.names[k] != b.names[k] || ta.DType != tb.DType || !equalShape(ta.Shape, tb.Shape) {
			return false
		}
	}
	return true
}

// lightModel reads a local file's header again, as skim reads it, into a canon.Model of its tensors
// alone (no metadata): enough to compare its tensors and work out its structure ID, in a fraction of
// canon.Read's time. It returns nil when skim does not read the header or the file names a tensor
// twice (canon.Read is to read it then), and the header's BLAKE3.
func (f *scanned) lightModel() (*canon.Model, *source.FileSource, error) {
	if f.set || f.virtual {
		return nil, nil, nil
	}
	src, err := source.OpenFile(f.path)
	if err != nil {
		return nil, nil, err
	}
	var n [8]byte
	if _, err := src.ReadAt(n[:], 0); err != nil || src.Size() != f.size {
		src.Close()
		return nil, nil, err
	}
	hl := binary.LittleEndian.Uint64(n[:])
	if hl > uint64(f.size-8) || hl > finding.MaxHeaderLen {
		src.Close()
		return nil, nil, nil
	}
	h := make([]byte, hl)
	if _, err := src.ReadAt(h, 8); err != nil {
		src.Close()
		return nil, nil, canon.PathError("read", f.path, err)
	}
	ts := make([]tensor.Tensor, 0, len(h)/96+1)
	var spans [][2]uint64
	if _, ok := skim(h, f.size-8-int64(hl), &spans, &ts, nil); !ok {
		src.Close()
		return nil, nil, nil
	}
	m := &canon.Model{Name: f.path, Format: canon.FormatSafetensors, FileSize: f.size, HeaderLen: hl, Tensors: ts, HeaderParsed: true, RawHeader: h}
	order := canon.CanonicalOrder(m)
	for i := 1; i < len(order); i++ {
		if ts[order[i]].Name == ts[order[i-1]].Name { // the reference rejects it: canon.Read says
			src.Close()
			return nil, nil, nil
		}
	}
	return m, src, nil
}

// openStream opens a model's stream: its tensors (order) merged into the fewest ranges. It returns nil
// and no error for a model without one. The model keeps its canon.Model (f.model; fullModel when
// canon.Read read it, not lightModel).
func openStream(ctx context.Context, f *scanned, order orderFunc) (*stream, error) {
	var o interface {
		Close() error
		Unchanged() error
	}
	var src canon.Source
	m, light, err := f.lightModel()
	switch {
	case err != nil:
		return nil, err
	case m != nil:
		o, src = light, light
		f.fullModel = false
	default:
		opened, full, err := reopen(ctx, f)
		if err != nil {
			return nil, err
		}
		o, src, m = opened, opened.Source, full
		f.fullModel = true
	}
	f.model = m
	ts, names, ok := order(f, m)
	if !ok {
		o.Close()
		return nil, nil
	}
	s := &stream{f: f, m: m, order: ts, names: names, src: src}
	unmap := func() {}
	if fs, ok := src.(*source.FileSource); ok {
		if s.data, unmap = mapFile(fs.File(), fs.Size()); s.data == nil {
			unmap = func() {}
		}
	}
	for _, i := range ts {
		t := &m.Tensors[i]
		off, n := m.DataOffset()+int64(t.Begin), int64(t.Len())
		if n == 0 {
			continue
		}
		s.total += n
		if k := len(s.ranges) - 1; k >= 0 && s.ranges[k][0]+s.ranges[k][1] == off {
			s.ranges[k][1] += n
		} else {
			s.ranges = append(s.ranges, [2]int64{off, n})
		}
	}
	s.done = func() {
		unmap()
		if err := o.Unchanged(); err != nil && f.err == nil {
			f.err = err
		}
		o.Close()
	}
	return s, nil
}

// compareBatch is how many models a comparer reads side by side at most: memory and open files
// stay bounded however large the group.
const compareBatch = 16

// comparer reads models side by side along their streams (order), each once and only as long as
// another model holds the same bytes so far.
type comparer struct {
	ctx   context.Context
	order orderFunc
	// state is where a model's crcs go; crcs says whether to work them out (for the cache): then a
	// model that differs from the others is read on to the end of its MiB, so that its crcs say where.
	state func(*scanned) *crcState
	crcs  bool
	read  *atomic.Int64
}

// compare returns the classes of g of two or more models that hold the same bytes. A model that
// cannot be read keeps the error (f.err). In a group larger than compareBatch the first model of each
// class found so far is read again beside the next batch. The models of the classes keep their
// canon.Model (f.model) for what comes after.
func (c *comparer) compare(g []*scanned) [][]*scanned {
	var pending []*scanned
	for _, f := range g {
		if f.err == nil {
			*c.state(f) = crcState{}
			pending = append(pending, f)
		}
	}
	classOf := map[*scanned]int{}
	var leads []*scanned
	ids := 0
	for len(pending) > 0 && c.ctx.Err() == nil {
		take := min(len(pending), max(compareBatch-len(leads), 2))
		batch := append(append([]*scanned(nil), leads...), pending[:take]...)
		pending = pending[take:]
		var ss []*stream
		for _, f := range batch {
			s, err := openStream(c.ctx, f, c.order)
			if err != nil {
				f.err = err
			}
			if s != nil {
				ss = append(ss, s)
			}
		}
		classes, again := c.lockstep(ss)
		if again { // a file was cut short while it was read (its error says so): the others again
			for _, s := range ss {
				s.done()
			}
			pending = append(readable(batch[len(leads):]), pending...)
			leads = otherLeads(leads, g, classOf)
			continue
		}
		leads = leads[:0]
		for _, cl := range classes {
			id, ok := 0, false
			for _, s := range cl {
				if id, ok = classOf[s.f]; ok {
					break
				}
			}
			if !ok {
				ids++
				id = ids
			}
			for _, s := range cl {
				classOf[s.f] = id
			}
			leads = append(leads, cl[0].f)
		}
		for _, s := range ss {
			s.done()
		}
	}
	byID := map[int][]*scanned{}
	for _, f := range g {
		if id, ok := classOf[f]; ok && f.err == nil && c.ctx.Err() == nil {
			byID[id] = append(byID[id], f)
		}
	}
	var out [][]*scanned
	for _, f := range g {
		if cl := byID[classOf[f]]; len(cl) > 1 && cl[0] == f {
			out = append(out, cl)
		}
	}
	for _, f := range g {
		if f.err != nil {
			*c.state(f) = crcState{}
		}
		if len(byID[classOf[f]]) < 2 {
			f.model, f.fullModel, f.names = nil, false, nil
		}
	}
	return out
}

// readable is the models of g that have no error.
func readable(g []*scanned) []*scanned {
	var out []*scanned
	for _, f := range g {
		if f.err == nil {
			out = append(out, f)
		}
	}
	return out
}

// otherLeads is leads with each model that has an error replaced by another readable model of its
// class (classOf) among g, or dropped when there is none.
func otherLeads(leads, g []*scanned, classOf map[*scanned]int) []*scanned {
	var out []*scanned
	for _, l := range leads {
		if l.err == nil {
			out = append(out, l)
			continue
		}
		for _, f := range g {
			if id, ok := classOf[f]; ok && id == classOf[l] && f.err == nil {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// lockstep reads the streams side by side in chunks, splitting them into classes of equal bytes
// (streams of other shapes apart from the start), and returns the classes, in the order of their
// first stream (classes of one included). A stream stops being read once it is alone. When a mapped
// file turns out cut short while it is read (the read faults), that model gets the error, no classes
// are returned and again is true: the others are to be compared again.
func (c *comparer) lockstep(ss []*stream) (classes [][]*stream, again bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			fault, ok := r.(interface{ Addr() uintptr })
			if !ok {
				panic(r)
			}
			changed := func(s *stream) {
				s.f.err, *c.state(s.f) = &canon.ReadError{Name: s.f.path, Op: "read", Err: canon.ErrChanged}, crcState{}
			}
			classes = nil
			for _, s := range ss {
				if len(s.data) > 0 && fault.Addr()-uintptr(unsafe.Pointer(unsafe.SliceData(s.data))) < uintptr(len(s.data)) {
					changed(s)
					again = true
				}
			}
			if !again { // a fault outside every mapping: no model can be trusted
				for _, s := range ss {
					changed(s)
				}
			}
		}
	}()
	chunk := int64(crcUnit)
	for chunk > 64<<10 && int64(len(ss))*chunk > 16<<20 {
		chunk /= 2
	}
	index := map[*stream]int{}
	bufs := make([][]byte, len(ss))
	var open, closed [][]*stream
	for i, s := range ss {
		index[s] = i
		k := 0
		for k < len(open) && !sameShape(open[k][0], s) {
			k++
		}
		if k == len(open) {
			open = append(open, nil)
		}
		open[k] = append(open[k], s)
	}
	stop := func(cl []*stream, complete bool) {
		for _, s := range cl {
			s.finish()
			*c.state(s.f) = crcState{crcs: s.crcs, complete: c.crcs && complete && len(cl) > 1 && s.f.err == nil}
		}
		closed = append(closed, cl)
	}
	for pos := int64(0); len(open) > 0 && c.ctx.Err() == nil; pos += chunk {
		var next [][]*stream
		for _, cl := range open {
			total := cl[0].total
			if pos >= total || len(cl) < 2 {
				stop(cl, pos >= total)
				continue
			}
			n := min(chunk, total-pos)
			var parts [][]*stream
			views := map[*stream][][]byte{}
			for _, s := range cl {
				if s.data == nil { // bytes to copy: a buffer, once
					if bufs[index[s]] == nil {
						bufs[index[s]] = make([]byte, chunk)
					}
				}
				b, err := s.next(n, bufs[index[s]])
				if err != nil {
					s.f.err = err
					stop([]*stream{s}, false)
					continue
				}
				views[s] = b
				c.read.Add(n)
				k := 0
				for k < len(parts) && !equalPieces(views[parts[k][0]], b) {
					k++
				}
				if k == len(parts) {
					parts = append(parts, nil)
				}
				parts[k] = append(parts[k], s)
			}
			for _, p := range parts {
				if c.crcs { // once for the part: its streams hold the same bytes
					for _, b := range views[p[0]] {
						p[0].account(b)
					}
					for _, s := range p[1:] {
						s.crcs, s.crc, s.in = p[0].crcs[:len(p[0].crcs):len(p[0].crcs)], p[0].crc, p[0].in
					}
				}
				if len(p) > 1 {
					next = append(next, p)
					continue
				}
				s := p[0] // alone: with crcs, on to the end of its unit; then it stops
				if rest := min(crcUnit-s.in, total-pos-n); c.crcs && s.in > 0 && rest > 0 {
					b := make([]byte, rest)
					if err := s.read(b); err != nil {
						s.f.err = err
					}
					c.read.Add(rest)
					s.account(b)
				}
				stop(p, false)
			}
		}
		open = next
	}
	for _, cl := range open { // interrupted
		stop(cl, false)
	}
	sort.SliceStable(closed, func(i, j int) bool { return index[closed[i][0]] < index[closed[j][0]] })
	return closed, false
}

// skim reads the keys of a safetensors header with its format's Skim (canon.Skim), or, when collect is
// not nil, its tensors into collect (then the keys are not worked out: lightModel needs the tensors
// alone); each entry also to also, when not nil (derivedGroups). It skims the header whole (UTF-8,
// no control character in a string): a header the reference rejects is read by canon.Read and
// skipped, so that no file the reference rejects is grouped, whatever stage it would otherwise have
// been found invalid at (a comparison a cached run does not redo).
func skim(h []byte, dataLen int64, scratch *[][2]uint64, collect *[]tensor.Tensor, also *derived.Sink) (keys, bool) {
	s := &keySink{k: keys{dataLen: dataLen, collect: collect}, also: also}
	n, ok := canon.Skim(canon.FormatSafetensors, h, dataLen, scratch, s, true)
	if !ok {
		if also != nil {
			also.Reset()
		}
		return s.k, false
	}
	s.k.metaKeys = n
	s.k.finish()
	s.k.collect, s.k.arena = nil, arena{}
	return s.k, true
}

// keySink turns the entries canon.Skim reads into keys, or collects them as tensors.
type keySink struct {
	k    keys
	also *derived.Sink
}

// Entry adds one tensor entry.
func (s *keySink) Entry(name, dtype []byte, shape []uint64, begin, end uint64) {
	if s.k.collect == nil {
		nh := hashBytes(name)
		if s.also != nil {
			s.also.EntryHashed(nh, dtype, shape, begin, end)
		}
		s.k.add(nh, hashBytes(dtype), shape, begin, end)
		return
	}
	if s.also != nil {
		s.also.Entry(name, dtype, shape, begin, end)
	}
	// names and dtypes share the header's memory, as canon.Read's do
	*s.k.collect = append(*s.k.collect, tensor.Tensor{Name: unsafe.String(unsafe.SliceData(name), len(name)),
		DType: tensor.DType(unsafe.String(unsafe.SliceData(dtype), len(dtype))), Shape: s.k.arena.clone(shape), Begin: begin, End: end})
}

// MetadataSpan passes where the header's metadata is on to also (canon.SkimSink).
func (s *keySink) MetadataSpan(begin, end int) {
	if s.also != nil {
		s.also.MetadataSpan(begin, end)
	}
}

// Reset starts the keys again: Skim reads the header another way.
func (s *keySink) Reset() {
	if s.also != nil {
		s.also.Reset()
	}
	s.k = keys{dataLen: s.k.dataLen, collect: s.k.collect}
	if s.k.collect != nil {
		*s.k.collect = (*s.k.collect)[:0]
	}
}

// equalShape reports whether two shapes are the same.
func equalShape(a, b []uint64) bool { return slices.Equal(a, b) }
