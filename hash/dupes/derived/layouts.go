package derived

import (
	"bytes"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/stdiff/stdiff/canon/tensor"
)

// layouts keeps the tensors of safetensors headers whose tensor entries other models repeat byte for
// byte (a collection's LoRAs of one trainer and rank; a folder's F8 copies), so that load reads such
// a header's tensors without skimming it again. A header is split at its metadata (the span the first
// skim reported, info.meta): the bytes before and after it hold every entry, so two headers that
// agree on both hold the same tensors, whatever their metadata (and the spaces that pad the header,
// which follow the last entry). The span is the first skim's of the same file, unchanged since (its
// size and time, as dataSource checks); a file changed without either could be read by another
// header's tensors, as every stage of a scan trusts them, and act proves a relation again, reading
// every header in full, before it deletes.
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
// meta, with a data section of dataLen bytes; nil when none is kept.
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
			return l
		}
	}
	return nil
}

// missedHeader notes that the header h, split at meta, was skimmed into ts (names parts of h, sorted or
// not), and keeps its layout when one of the same lengths was skimmed before. h is read under the
// caller's guard (skimMapped's).
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
