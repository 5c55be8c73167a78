// Package delta says how two models' metadata and layout differ, key by key: the facts `stdiff diff`
// reports as changes and notes and `stdiff dupes` shows of its copies, defined once.
package delta

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon"
)

// Status says how a metadata key differs between two models.
type Status uint8

// The ways a key differs.
const (
	// Same: the same value on both sides.
	Same Status = iota
	// Reformatted: JSON objects or arrays that differ only in formatting or key order.
	Reformatted
	// Changed: another value (for GGUF, or another type).
	Changed
	// Added: only in b.
	Added
	// Removed: only in a.
	Removed
)

// Key is one metadata key of a or b and how it differs: its entries on each side (nil where absent).
type Key struct {
	Key    string
	Status Status
	A, B   *canon.MetaEntry
}

// Metadata compares the metadata of a and b key by key, leaving out the keys skip names (nil: none):
// the keys of a in a's order, then those only in b in b's order. Two GGUF models compare their values
// with their types (Typed); a JSON object or array reformatted is no change.
func Metadata(a, b *canon.Model, skip func(key string) bool) []Key {
	typed := Typed(a, b)
	inB := make(map[string]*canon.MetaEntry, len(b.Metadata))
	for i := range b.Metadata {
		inB[b.Metadata[i].Key] = &b.Metadata[i]
	}
	inA := make(map[string]bool, len(a.Metadata))
	out := make([]Key, 0, len(a.Metadata))
	for i := range a.Metadata {
		e := &a.Metadata[i]
		inA[e.Key] = true
		if skip != nil && skip(e.Key) {
			continue
		}
		k := Key{Key: e.Key, A: e, B: inB[e.Key]}
		switch n := k.B; {
		case n == nil:
			k.Status = Removed
		case typed && SameTyped(e, n):
			k.Status = Same
		case typed:
			k.Status = Changed
		case n.Value != e.Value && SameJSON(e.Value, n.Value):
			k.Status = Reformatted
		case n.Value != e.Value:
			k.Status = Changed
		}
		out = append(out, k)
	}
	for i := range b.Metadata {
		e := &b.Metadata[i]
		if !inA[e.Key] && (skip == nil || !skip(e.Key)) {
			out = append(out, Key{Key: e.Key, Status: Added, B: e})
		}
	}
	return out
}

// Keys are the keys of ks of each kind that differ, each list sorted.
func Keys(ks []Key) (added, removed, changed []string) {
	for _, k := range ks {
		switch k.Status {
		case Added:
			added = append(added, k.Key)
		case Removed:
			removed = append(removed, k.Key)
		case Changed:
			changed = append(changed, k.Key)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	sort.Strings(changed)
	return added, removed, changed
}

// Typed reports whether both models have typed metadata (GGUF: canon.Model.TypedMetadata): values
// then compare with their types, and arrays by their elements.
func Typed(a, b *canon.Model) bool { return a.TypedMetadata() && b.TypedMetadata() }

// SameTyped reports whether two typed metadata entries hold the same value as far as the header read
// tells: the same type and text (an array's text holds its element type, length and digest), and for
// strings the same length (a string longer than what the format keeps in memory has only its first
// bytes in the text).
func SameTyped(x, y *canon.MetaEntry) bool {
	return x.Type == y.Type && x.Value == y.Value && x.Len == y.Len
}

// SameJSON reports whether two values are JSON objects or arrays that differ only in formatting.
func SameJSON(a, b string) bool {
	return IsJSONContainer(a) && IsJSONContainer(b) && CanonicalJSON(a) == CanonicalJSON(b)
}

// IsJSONContainer reports whether s is a JSON object or array.
func IsJSONContainer(s string) bool {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return false
	}
	return json.Valid([]byte(t))
}

// CanonicalJSON formats a JSON value with sorted keys and two-space indents, so that reordering is no
// difference and each leaf is one line; a value that is not JSON is returned as it is.
func CanonicalJSON(s string) string {
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return s
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return s
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// Code names one way two models with the same tensors are laid out differently on disk. Codes are
// stable and safe to match in scripts (diff's layout notes carry them).
type Code string

// The layout codes.
const (
	// Sharding: one side is one file, the other a set of shards, or the shard counts differ.
	Sharding Code = "layout.sharding"
	// HeaderSize: the header lengths differ (formatting, padding or key order).
	HeaderSize Code = "layout.header-size"
	// Order: the tensors are listed in another order in the header.
	Order Code = "layout.order"
	// Offsets: the tensor data is laid out at other offsets.
	Offsets Code = "layout.offsets"
	// KeyOrder: the metadata keys are in another order.
	KeyOrder Code = "layout.key-order"
)

// Layout is one layout difference: its code and, for Sharding and HeaderSize, each side's value.
type Layout struct {
	Code     Code
	Old, New string
}

// LayoutOf lists how b is laid out differently from a, whatever else differs: matched pairs their
// tensors (indices into a's and b's Tensors, in a's order), and skip names the metadata keys whose
// order does not count (nil: none). Each difference is said only where it is one of layout: the order
// of the tensors (and keys) both hold, so that one added in front is no reordering; other offsets only
// when both hold the same tensors (names, dtypes, shapes, sizes); another header size only when the
// tensors and the metadata are the same too (otherwise the change of length follows from the edit). A
// file against a set of shards is Sharding alone: their offsets and header sizes do not compare.
func LayoutOf(a, b *canon.Model, matched [][2]int, skip func(key string) bool) []Layout {
	if len(a.Shards) != len(b.Shards) {
		files := func(m *canon.Model) string {
			if m.Shards == nil {
				return "1 file"
			}
			return strconv.Itoa(len(m.Shards)) + " shards"
		}
		return []Layout{{Code: Sharding, Old: files(a), New: files(b)}}
	}
	var out []Layout
	sameTensors := sameTensorList(a, b)
	if a.HeaderLen != b.HeaderLen && sameTensors && sameMetadata(a, b) {
		out = append(out, Layout{Code: HeaderSize, Old: strconv.FormatUint(a.HeaderLen, 10), New: strconv.FormatUint(b.HeaderLen, 10)})
	}
	reordered, moved, last := false, false, -1
	for _, p := range matched { // in a's order: b's indices rise unless the order changed
		reordered = reordered || p[1] < last
		last = p[1]
		moved = moved || a.Tensors[p[0]].Begin != b.Tensors[p[1]].Begin
	}
	if reordered {
		out = append(out, Layout{Code: Order})
	}
	if moved && sameTensors {
		out = append(out, Layout{Code: Offsets})
	}
	if keyOrder(a, b, skip) != keyOrder(b, a, skip) {
		out = append(out, Layout{Code: KeyOrder})
	}
	return out
}

// sameTensorList reports whether two models hold the same tensors (names, dtypes, shapes and sizes),
// in whatever order.
func sameTensorList(a, b *canon.Model) bool {
	if len(a.Tensors) != len(b.Tensors) {
		return false
	}
	inB := canon.NewNameIndex(b.Tensors)
	for i := range a.Tensors {
		ta := &a.Tensors[i]
		j, ok := inB.Find(ta.Name)
		if !ok || b.Tensors[j].DType != ta.DType || !slices.Equal(b.Tensors[j].Shape, ta.Shape) || b.Tensors[j].Len() != ta.Len() {
			return false
		}
	}
	return true
}

// sameMetadata reports whether two models hold the same metadata keys, values and types, in whatever
// order.
func sameMetadata(a, b *canon.Model) bool {
	if len(a.Metadata) != len(b.Metadata) {
		return false
	}
	inB := make(map[string]*canon.MetaEntry, len(b.Metadata))
	for i := range b.Metadata {
		inB[b.Metadata[i].Key] = &b.Metadata[i]
	}
	for i := range a.Metadata {
		e, ok := inB[a.Metadata[i].Key]
		if !ok || e.Value != a.Metadata[i].Value || e.Type != a.Metadata[i].Type {
			return false
		}
	}
	return true
}

// keyOrder is the metadata keys of m that other holds too, but those skip names, in m's order.
func keyOrder(m, other *canon.Model, skip func(string) bool) string {
	in := make(map[string]bool, len(other.Metadata))
	for i := range other.Metadata {
		in[other.Metadata[i].Key] = true
	}
	var b strings.Builder
	for _, e := range m.Metadata {
		if !in[e.Key] || skip != nil && skip(e.Key) {
			continue
		}
		b.WriteString(e.Key)
		b.WriteByte(0)
	}
	return b.String()
}
