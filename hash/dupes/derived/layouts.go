package derived

import (
	"bytes"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/tensor"
)

// layouts keeps the tensors of safetensors headers whose tensor entries other models repeat byte for
// byte (a collection's LoRAs of one trainer and rank; a folder's F8 copies), so that load reads such
// a header's tensors without skimming it again. A header is split at its metadata: the bytes before
// and after it hold every entry, so two headers that agree on both hold the same tensors, whatever
// their metadata (and the spaces that pad the header, which follow the last entry). A layout is kept
// split where the skim that read its tensors found the metadata; a header is looked up split at the
// span its scan reported (info.meta), and takes a layout only when the bytes there are one metadata
// object exactly (isMetadata): then a skim of it reads what the layout's did, the same entries around
// another metadata object, even where its file was rewritten since the scan (at the same size:
// inspect's models are not checked for a change at all, dupes' by size and time).
type layouts struct {
	mu sync.Mutex
	// missed counts the headers skimmed for want of a layout, by the lengths of their two parts and
	// data section: a layout is kept from the second such header on, so that a header of a layout
	// of its own costs no copy.
	missed map[[3]int64]int
	list   []*layout // the oldest first
	bytes  int       // of the headers in list
}

// layout is one header's tensor entries and its tensors, held in memory of its own.
type layout struct {
	pre, post []byte
	dataLen   int64
	ts        []tensor.Tensor // read only: shared by every model of the layout
	sorted    bool
}

// layoutBytes bounds the bytes of the headers kept: the oldest go first.
const layoutBytes = 16 << 20

// find is the kept layout of the header h (mapped: a file cut short faults, and finds none), split at
// meta, with a data section of dataLen bytes; nil when none is kept, or h[meta[0]:meta[1]] is not
// one metadata object (meta is the scan's: the file may hold another header now).
func (ls *layouts) find(h []byte, meta [2]int, dataLen int64) (found *layout) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			found = nil
		}
	}()
	pre, post := split(h, meta)
	ls.mu.Lock()
	var cands []*layout
	for _, l := range ls.list {
		if len(l.pre) == len(pre) && len(l.post) == len(post) && l.dataLen == dataLen {
			cands = append(cands, l)
		}
	}
	ls.mu.Unlock()
	for _, l := range cands {
		if bytes.Equal(l.post, post) && bytes.Equal(l.pre, pre) {
			if meta != [2]int{} && !isMetadata(h[meta[0]:meta[1]]) {
				return nil
			}
			return l
		}
	}
	return nil
}

// metaKey is what comes before the metadata object isMetadata skims.
const metaKey = `{"__metadata__":`

// isMetadata reports whether m is one `__metadata__` value exactly, as a skim reads it: {"__metadata__":m}
// skims, its metadata from m's first byte to its last (so no entry follows it). (A header that splits
// around it into a kept layout's bytes is read by a skim as that layout's was.)
func isMetadata(m []byte) bool {
	b := metaBufs.Get().(*[]byte)
	defer func() {
		if cap(*b) <= 1<<20 { // a huge metadata's buffer is not kept
			metaBufs.Put(b)
		}
	}()
	*b = append(append(append((*b)[:0], metaKey...), m...), '}')
	var s metaCheck
	_, ok := canon.Skim(canon.FormatSafetensors, *b, 0, &s.spans, &s, false)
	return ok && s.meta == [2]int{len(metaKey), len(metaKey) + len(m)}
}

// metaBufs are isMetadata's buffers.
var metaBufs = sync.Pool{New: func() any { return new([]byte) }}

// metaCheck is the canon.SkimSink isMetadata skims with.
type metaCheck struct {
	spans [][2]uint64
	meta  [2]int
}

// Entry is a tensor entry: none is kept.
func (s *metaCheck) Entry(name, dtype []byte, shape []uint64, begin, end uint64) {}

// Reset forgets the span.
func (s *metaCheck) Reset() { s.meta = [2]int{} }

// MetadataSpan notes where the metadata is.
func (s *metaCheck) MetadataSpan(begin, end int) { s.meta = [2]int{begin, end} }

// missedHeader notes that the header h, split at meta (where the skim of h that read ts found its
// metadata, [0 0] for none), was skimmed into ts (names parts of h, sorted or not), and keeps its
// layout when one of the same lengths was skimmed before. h is read under the caller's guard
// (skimMapped's).
func (ls *layouts) missedHeader(h []byte, meta [2]int, dataLen int64, ts []tensor.Tensor, sorted bool) {
	pre, post := split(h, meta)
	size := len(pre) + len(post)
	if size > layoutBytes/4 {
		return
	}
	key := [3]int64{int64(len(pre)), int64(len(post)), dataLen}
	ls.mu.Lock()
	if ls.missed == nil {
		ls.missed = map[[3]int64]int{}
	}
	ls.missed[key]++
	keep := ls.missed[key] >= 2
	ls.mu.Unlock()
	if !keep {
		return
	}
	l := &layout{pre: bytes.Clone(pre), post: bytes.Clone(post), dataLen: dataLen, sorted: sorted,
		ts: make([]tensor.Tensor, len(ts))}
	dims := 0
	for i := range ts {
		dims += len(ts[i].Shape)
	}
	shapes := make([]uint64, 0, dims)
	for i, t := range ts {
		k := len(shapes)
		shapes = append(shapes, t.Shape...)
		l.ts[i] = tensor.Tensor{Name: strings.Clone(t.Name), DType: t.DType, Shape: shapes[k:len(shapes):len(shapes)], Begin: t.Begin, End: t.End}
	}
	ls.mu.Lock()
	for len(ls.list) > 0 && ls.bytes+size > layoutBytes {
		ls.bytes -= len(ls.list[0].pre) + len(ls.list[0].post)
		ls.list = ls.list[1:]
	}
	ls.list, ls.bytes = append(ls.list, l), ls.bytes+size
	ls.mu.Unlock()
}

// split is the header h without its metadata span meta: the bytes before it, and those after it up to
// the spaces that pad the header.
func split(h []byte, meta [2]int) (pre, post []byte) {
	return h[:meta[0]], bytes.TrimRight(h[meta[1]:], " \t\r\n")
}
