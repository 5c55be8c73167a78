package diff

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/delta"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// Metadata change kinds of GGUF files, besides value, text, json and large (see MetaChange.Kind).
const (
	// KindArray: an array value changed; MetaChange.Array says how.
	KindArray = "array"
)

// Requantized: a tensor on both sides under the same name and shape, stored in another ggml type, one
// of them block-quantised (a GGUF file quantised again: Q4_K → Q6_K, F16 → Q8_0). Its bytes differ
// by nature; its byte size changes with the type.
const Requantized ChangeKind = "requantized"

// Requantization reports whether c is a requantisation: the dtype changed, the shape did not, and
// one of the two dtypes is one of ggml's block-quantised types (tensor.DType.Quantized).
func (c *Change) Requantization() bool {
	dtype, shape := false, false
	for _, f := range c.Fields {
		dtype = dtype || f == "dtype"
		shape = shape || f == "shape"
	}
	return dtype && !shape && (tensor.DType(c.Old.DType).Quantized() || tensor.DType(c.New.DType).Quantized())
}

// kindOf is the group kind of a changed tensor: Requantized or Changed.
func kindOf(c *Change) ChangeKind {
	if c.Requantization() {
		return Requantized
	}
	return Changed
}

// ArrayChange is how two GGUF array values differ: each side's element type, length and digest, and,
// when Models could read the elements (same element type, at most MaxArrayCompare bytes a side), how
// many elements were added (the new array is longer), removed (it is shorter) and changed (another
// value at the same index) with the first few of each as examples. Elements are compared index by
// index: for a tokenizer's arrays, token id by token id.
type ArrayChange struct {
	Old ArraySummary `json:"old"`
	New ArraySummary `json:"new"`
	// Compared is true when the elements were compared (Models, not Compare, reads them).
	Compared bool   `json:"compared"`
	Added    uint64 `json:"added"`
	Removed  uint64 `json:"removed"`
	Changed  uint64 `json:"changed"`
	// Examples are the first MaxArrayExamples added, removed and changed elements, in that order.
	Examples []ElementChange `json:"examples"`
}

// ArraySummary describes one side's array: element type, length and the first 16 hex digits of the
// BLAKE3 of its elements' bytes in the file.
type ArraySummary struct {
	Type   string `json:"type"`
	Length uint64 `json:"length"`
	BLAKE3 string `json:"blake3"`
}

// ElementChange is one element of an array that was added, removed or changed: its index and its
// old and new values (a string as it is, a number in decimal; absent on the side that lacks it).
type ElementChange struct {
	Kind  ChangeKind `json:"kind"`
	Index uint64     `json:"index"`
	Old   *string    `json:"old,omitempty"`
	New   *string    `json:"new,omitempty"`
}

// Bounds of the element comparison of arrays.
const (
	// MaxArrayCompare is the most bytes an array may have, a side, for Models to compare its elements
	// (a 256,000-token vocabulary takes about 4 MB).
	MaxArrayCompare = 64 << 20
	// MaxArrayExamples is how many examples of each kind an ArrayChange keeps.
	MaxArrayExamples = 3
)

// typedChange is how a GGUF metadata value changed: strings as changeOf shows them, arrays as
// summaries (Models adds how their elements differ), and the types on both sides.
func typedChange(x, y *canon.MetaEntry) MetaChange {
	c := changeOf(x.Key, x.Value, y.Value)
	c.OldType, c.NewType = x.Type, y.Type
	if x.Array != nil && y.Array != nil {
		c.Kind, c.Lines = KindArray, nil
		c.Array = &ArrayChange{Old: summaryOf(x.Array), New: summaryOf(y.Array), Examples: []ElementChange{}}
	} else if x.Type != y.Type && x.Type != "string" && y.Type != "string" {
		c.Kind, c.Lines = "value", nil // a number, bool or array summary of another type: one line
	}
	return c
}

func summaryOf(a canon.MetaArray) ArraySummary {
	d := a.Digest()
	return ArraySummary{Type: a.Elem(), Length: a.Len(), BLAKE3: hex.EncodeToString(d[:8])}
}

// ggufDetails completes a report of two GGUF models from their files, which must still be open: how
// the elements of changed arrays differ, and the strings longer than the header read keeps (GGUF's
// gguf.MaxInline), of which Compare saw the first bytes only.
func ggufDetails(ctx context.Context, r *Report, a, b *canon.Model, opt Options) error {
	if !delta.Typed(a, b) || !r.MetadataCompared {
		return nil
	}
	inA, inB := metaIndex(a), metaIndex(b)
	for i := range r.Metadata.Changed {
		c := &r.Metadata.Changed[i]
		if c.Array == nil {
			continue
		}
		if err := compareElements(ctx, c.Array, a, b, inA[c.Key].Array, inB[c.Key].Array); err != nil {
			return err
		}
	}
	return longStrings(r, a, b, inA, inB, opt)
}

// metaIndex maps each metadata key of m to its entry.
func metaIndex(m *canon.Model) map[string]*canon.MetaEntry {
	idx := make(map[string]*canon.MetaEntry, len(m.Metadata))
	for i := range m.Metadata {
		idx[m.Metadata[i].Key] = &m.Metadata[i]
	}
	return idx
}

// compareElements counts how the elements of two arrays differ, index by index: x of model a, y of b.
func compareElements(ctx context.Context, c *ArrayChange, a, b *canon.Model, x, y canon.MetaArray) error {
	if x.Elem() != y.Elem() || x.Size() > MaxArrayCompare || y.Size() > MaxArrayCompare {
		return nil
	}
	old := make([]string, 0, x.Len())
	if err := x.Each(func(i uint64, v string) error {
		old = append(old, v)
		return checkEvery(ctx, i)
	}); err != nil {
		return readErr(a, err)
	}
	example := func(kind ChangeKind, n *uint64, e ElementChange) {
		*n++
		if *n <= MaxArrayExamples {
			e.Kind = kind
			c.Examples = append(c.Examples, e)
		}
	}
	var changed []ElementChange // after added and removed, as Examples lists them
	err := y.Each(func(i uint64, nv string) error {
		switch {
		case i >= uint64(len(old)):
			example(Added, &c.Added, ElementChange{Index: i, New: &nv})
		case old[i] != nv:
			c.Changed++
			if c.Changed <= MaxArrayExamples {
				changed = append(changed, ElementChange{Kind: Changed, Index: i, Old: &old[i], New: &nv})
			}
		}
		return checkEvery(ctx, i)
	})
	if err != nil {
		return readErr(b, err)
	}
	for i := y.Len(); i < uint64(len(old)); i++ {
		example(Removed, &c.Removed, ElementChange{Index: i, Old: &old[i]})
	}
	c.Examples, c.Compared = append(c.Examples, changed...), true
	return nil
}

// checkEvery is ctx's error, looked at every 4,096 elements.
func checkEvery(ctx context.Context, i uint64) error {
	if i%4096 == 0 {
		return ctx.Err()
	}
	return nil
}

// longStrings compares whole the string values longer than the header read keeps that Compare took for
// equal (their first bytes and their lengths are), and shows changed ones whole.
func longStrings(r *Report, a, b *canon.Model, inA, inB map[string]*canon.MetaEntry, opt Options) error {
	changed := map[string]int{}
	for i, c := range r.Metadata.Changed {
		changed[c.Key] = i
	}
	flipped := false
	for key, ex := range inA {
		ey := inB[key]
		if ey == nil || opt.skipsKey(key) || ex.Type != "string" || ey.Type != "string" || !ex.Truncated() && !ey.Truncated() {
			continue
		}
		x, err := ex.Full()
		if err != nil {
			return readErr(a, err)
		}
		y, err := ey.Full()
		if err != nil {
			return readErr(b, err)
		}
		c := typedChange(&canon.MetaEntry{Key: key, Value: x, Type: "string"}, &canon.MetaEntry{Key: key, Value: y, Type: "string"})
		if k, ok := changed[key]; ok {
			r.Metadata.Changed[k] = c
		} else if x != y {
			r.Metadata.Unchanged--
			r.Metadata.Changed = append(r.Metadata.Changed, c)
			flipped = true
		}
	}
	if flipped {
		sortChanges(r.Metadata.Changed)
		r.settle()
		kept := r.Notes[:0]
		for _, n := range r.Notes {
			if !n.Code.IsLayout() { // layout notes are for models that are otherwise the same
				kept = append(kept, n)
			}
		}
		r.Notes = kept
	}
	return nil
}

// readErr is a failure to read model m's metadata for the comparison, as a *canon.ReadError (the
// context's own error stays as it is).
func readErr(m *canon.Model, err error) error {
	var re *canon.ReadError
	if errors.As(err, &re) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &canon.ReadError{Name: m.Name, Op: "read", Err: err}
}

// typedValues are a changed value's two sides as one line each, with their types when the type
// changed (uint32 4096 → uint64 4096).
func typedValues(c MetaChange) (old, new string) {
	old, new = shortValueText(c.Old), shortValueText(c.New)
	if c.OldType != c.NewType {
		old, new = c.OldType+" "+old, c.NewType+" "+new
	}
	return old, new
}

// arrayText is an array's summary: "string × 32,000, blake3 4f1c…".
func arrayText(a ArraySummary) string {
	return fmt.Sprintf("%s × %s, blake3 %s…", a.Type, textfmt.Thousands(a.Length), a.BLAKE3)
}

// elementLines say how the elements of two arrays differ, a line per kind with its examples
// (unescaped); none when they were not compared.
func elementLines(c *ArrayChange) []string {
	if !c.Compared {
		return nil
	}
	var lines []string
	for _, k := range []struct {
		kind ChangeKind
		n    uint64
	}{{Added, c.Added}, {Removed, c.Removed}, {Changed, c.Changed}} {
		if k.n == 0 {
			continue
		}
		var shown []string
		for _, e := range c.Examples {
			if e.Kind != k.kind {
				continue
			}
			ex := "[" + strconv.FormatUint(e.Index, 10) + "] "
			switch {
			case e.Old != nil && e.New != nil:
				ex += elementQuote(c.Old.Type, e.Old) + " → " + elementQuote(c.New.Type, e.New)
			case e.Old != nil:
				ex += elementQuote(c.Old.Type, e.Old)
			default:
				ex += elementQuote(c.New.Type, e.New)
			}
			shown = append(shown, ex)
		}
		if k.n > uint64(len(shown)) {
			shown = append(shown, "…")
		}
		lines = append(lines, fmt.Sprintf("%s %s: %s", textfmt.Thousands(k.n), k.kind, strings.Join(shown, ", ")))
	}
	if len(lines) == 0 {
		lines = append(lines, "every element has the same value (their bytes differ)")
	}
	return lines
}

// elementQuote shows an element of an array of type typ: strings quoted, numbers as they are.
func elementQuote(typ string, s *string) string {
	if typ == "string" {
		return strconv.Quote(*s)
	}
	return *s
}
