package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/canon/values"
)

// decodeAsWritten decodes b when it is laid out exactly as Write writes it (a line for the model, a
// line per metadata entry and per tensor), tensor lines by hand: reading the snapshot of a
// 50,000-tensor model then takes a fraction of what encoding/json takes. ok is false for anything
// else, which Read then decodes with encoding/json (a snapshot written otherwise is still read, as
// strictly).
func decodeAsWritten(b []byte) (s *Snapshot, ok bool) {
	const metaStart, tensorsStart, end = `,"metadata":[`, "\n],\"tensors\":[", "\n]}\n"
	head, rest, found := bytes.Cut(b, []byte("\n"))
	head, cut := bytes.CutSuffix(head, []byte(metaStart))
	if !found || !cut || !bytes.HasPrefix(head, []byte(`{"schema":`)) { // so that head's fields and the lists join
		return nil, false
	}
	s = new(Snapshot)
	if decodeStrict(append(head[:len(head):len(head)], '}'), s) != nil || s.Metadata != nil || s.Tensors != nil { // a copy: b stays
		return nil, false
	}
	meta, tensors, found := bytes.Cut(append([]byte("\n"), rest...), []byte(tensorsStart))
	tensors, cut = bytes.CutSuffix(tensors, []byte(end))
	if !found || !cut {
		return nil, false
	}
	s.Metadata, s.Tensors = []Meta{}, []Tensor{}
	for _, line := range lines(meta) {
		var e Meta
		if decodeStrict(line, &e) != nil {
			return nil, false
		}
		s.Metadata = append(s.Metadata, e)
	}
	for _, line := range lines(tensors) {
		p := parser{b: line}
		t, ok := p.tensor()
		if !ok || p.i != len(p.b) {
			return nil, false
		}
		s.Tensors = append(s.Tensors, t)
	}
	return s, true
}

// decodeStrict decodes the one JSON value b holds into v, refusing fields v does not have and
// anything after the value.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the snapshot")
	}
	return nil
}

// problem says what is wrong with b, JSON that decodeStrict refused, and where (a byte offset), in
// stdiff's words rather than encoding/json's.
func problem(err error, b []byte) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Sprintf("cut short after byte %d (the file is incomplete)", len(b))
	case errors.As(err, &se):
		at := min(max(se.Offset-1, 0), int64(len(b)))
		return fmt.Sprintf("not JSON at byte %d, near `%s`", at, textfmt.Escape(string(b[max(at-20, 0):min(at+20, int64(len(b)))])))
	case errors.As(err, &te):
		return fmt.Sprintf("field %q, before byte %d: a JSON %s where a snapshot has %s", strings.TrimPrefix(te.Field, "Snapshot."), te.Offset, te.Value, jsonKind(te.Type))
	}
	return strings.TrimPrefix(err.Error(), "json: ") // an unknown field, data after the snapshot
}

// jsonKind names the JSON values a Go value of type t is read from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "an object"
	}
	return "a number"
}

// lines are the elements of a list as Write writes it: "\n" before the first, ",\n" before the
// others (a raw newline is never inside a JSON string); a list that is not so gives an element that
// does not decode.
func lines(b []byte) [][]byte {
	switch {
	case len(b) == 0:
		return nil
	case b[0] != '\n':
		return [][]byte{nil}
	}
	return bytes.Split(b[1:], []byte(",\n"))
}

// parser reads one tensor line.
type parser struct {
	b []byte
	i int
}

func (p *parser) lit(s string) bool {
	if bytes.HasPrefix(p.b[p.i:], []byte(s)) {
		p.i += len(s)
		return true
	}
	return false
}

// str reads a string without escapes (one with escapes is left to encoding/json).
func (p *parser) str() (string, bool) {
	if !p.lit(`"`) {
		return "", false
	}
	j := bytes.IndexByte(p.b[p.i:], '"')
	if j < 0 {
		return "", false
	}
	s := p.b[p.i : p.i+j]
	for _, c := range s {
		if c < 0x20 || c == '\\' || c >= 0x80 {
			return "", false
		}
	}
	p.i += j + 1
	return string(s), true
}

// number is the text of the number (or null) at the cursor.
func (p *parser) number() []byte {
	j := p.i
	for j < len(p.b) && p.b[j] != ',' && p.b[j] != '}' && p.b[j] != ']' {
		j++
	}
	n := p.b[p.i:j]
	p.i = j
	return n
}

func (p *parser) uint() (uint64, bool) {
	n := p.number()
	v, err := strconv.ParseUint(string(n), 10, 64)
	return v, err == nil && jsonNumber(n)
}

func (p *parser) int() (int64, bool) {
	n := p.number()
	v, err := strconv.ParseInt(string(n), 10, 64)
	return v, err == nil && jsonNumber(n)
}

// float reads a number or null (NaN).
func (p *parser) float() (float64, bool) {
	n := p.number()
	if string(n) == "null" {
		return math.NaN(), true
	}
	v, err := strconv.ParseFloat(string(n), 64)
	return v, err == nil && !math.IsInf(v, 0) && jsonNumber(n)
}

// jsonNumber reports whether n is a number as JSON writes them: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// (strconv also takes "Inf", "0x1p-2", "1_000", "+1", ".5").
func jsonNumber(n []byte) bool {
	digits := func(i int) int { // the end of the run of digits at i
		for i < len(n) && n[i] >= '0' && n[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < len(n) && n[i] == '-' {
		i++
	}
	switch j := digits(i); {
	case j == i, n[i] == '0' && j > i+1:
		return false
	default:
		i = j
	}
	if i < len(n) && n[i] == '.' {
		if j := digits(i + 1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(n) && (n[i] == 'e' || n[i] == 'E') {
		i++
		if i < len(n) && (n[i] == '+' || n[i] == '-') {
			i++
		}
		if j := digits(i); j > i {
			i = j
		} else {
			return false
		}
	}
	return i == len(n)
}

func (p *parser) tensor() (t Tensor, ok bool) {
	var dtype string
	if !p.lit(`{"name":`) {
		return t, false
	}
	if t.Name, ok = p.str(); !ok || !p.lit(`,"dtype":`) {
		return t, false
	}
	if dtype, ok = p.str(); !ok || !p.lit(`,"shape":[`) {
		return t, false
	}
	t.DType, t.Shape = tensor.DType(dtype), []uint64{}
	for !p.lit("]") {
		if len(t.Shape) > 0 && !p.lit(",") {
			return t, false
		}
		d, ok := p.uint()
		if !ok {
			return t, false
		}
		t.Shape = append(t.Shape, d)
	}
	if !p.lit(`,"bytes":`) {
		return t, false
	}
	if t.Bytes, ok = p.uint(); !ok || !p.lit(`,"blake3":`) {
		return t, false
	}
	if t.BLAKE3, ok = p.str(); !ok {
		return t, false
	}
	if p.lit("}") {
		return t, true
	}
	v := new(values.Stats)
	ok = p.lit(`,"values":{"count":`)
	ok = ok && p.intTo(&v.Count) && p.lit(`,"min":`) && p.floatTo(&v.Min) && p.lit(`,"max":`) && p.floatTo(&v.Max) &&
		p.lit(`,"mean":`) && p.floatTo(&v.Mean) && p.lit(`,"std":`) && p.floatTo(&v.Std) &&
		p.lit(`,"nan":`) && p.intTo(&v.NaN) && p.lit(`,"inf":`) && p.intTo(&v.Inf)
	if ok && p.lit(`,"zeros":`) {
		ok = p.intTo(&v.Zeros)
	}
	if ok && p.lit(`,"subnormal":`) {
		ok = p.intTo(&v.Subnormal)
	}
	ok = ok && p.lit(`,"l2":`) && p.floatTo(&v.L2) && p.lit("}}")
	t.Values = v
	return t, ok
}

func (p *parser) intTo(v *int64) (ok bool) {
	*v, ok = p.int()
	return ok
}

func (p *parser) floatTo(v *float64) (ok bool) {
	*v, ok = p.float()
	return ok
}
