package textfmt

import (
	"bufio"
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// WriteJSON writes v, then a newline, exactly as a json.Encoder with SetIndent("", "  ") and
// SetEscapeHTML(false) would, but streamed: the fields of structs and the elements of slices are written one at a time,
// so a report listing a million tensors is never held whole as text (encoding/json holds it twice,
// compact and indented). A value it does not take apart (a map, a Marshaler, a struct with embedded
// fields or tag options other than omitempty) is encoded by encoding/json.
func WriteJSON(w io.Writer, v any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	s := &jsonStream{w: bw, structs: map[reflect.Type][]jsonField{}}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	s.value(reflect.ValueOf(v), "")
	bw.WriteByte('\n')
	if err := bw.Flush(); s.err == nil {
		s.err = err
	}
	return s.err
}

// WriteJSONL writes each record as compact JSON on a line of its own (JSON Lines), encoded as
// WriteJSON encodes it (no HTML escaping), so that a record of a report reads the same in both.
func WriteJSONL(w io.Writer, records ...any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, r := range records {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteRecords writes each record as WriteJSONL does, with "schema" first: the line a report's
// JSONL output gives each record, so that it stands alone. Each record must encode as a JSON object
// (a struct, or a pointer to one), whose fields follow the schema; it has no "schema" field of its own.
func WriteRecords(w io.Writer, schema string, records ...any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(schema); err != nil {
		return err
	}
	head := append([]byte(`{"schema":`), bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
	for _, r := range records {
		buf.Reset()
		if err := enc.Encode(r); err != nil {
			return err
		}
		b := buf.Bytes()
		if len(b) < 3 || b[0] != '{' {
			return fmt.Errorf("textfmt: a record of %T is not a JSON object", r)
		}
		bw.Write(head)
		if b[1] != '}' {
			bw.WriteByte(',')
		}
		bw.Write(b[1:])
	}
	return bw.Flush()
}

type jsonStream struct {
	w        *bufio.Writer
	enc      *json.Encoder
	buf, ind bytes.Buffer
	err      error
	// structs caches the fields of struct types taken apart (nil for those encoded whole).
	structs map[reflect.Type][]jsonField
}

// jsonField is a struct field as encoding/json names it.
type jsonField struct {
	index     int
	key       string // the name, encoded as JSON
	omitEmpty bool
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

func (s *jsonStream) value(v reflect.Value, ind string) {
	if !v.IsValid() {
		s.w.WriteString("null")
		return
	}
	for (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && !custom(v.Type()) {
		if v.IsNil() {
			s.w.WriteString("null")
			return
		}
		v = v.Elem()
	}
	switch {
	case custom(v.Type()):
	case v.Kind() == reflect.Struct:
		if fields := s.fields(v.Type()); fields != nil {
			s.object(v, fields, ind)
			return
		}
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.Uint8 && !v.IsNil():
		s.array(v, ind)
		return
	}
	s.whole(v, ind)
}

// custom reports whether values of t (or pointers to them) encode themselves.
func custom(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(marshalerType) || t.Implements(textMarshalerType) || p.Implements(marshalerType) || p.Implements(textMarshalerType)
}

// fields returns the fields of a struct type to write one by one, or nil when the struct has fields
// whose rules this writer does not follow (embedded fields, options other than omitempty): it is then
// encoded whole.
func (s *jsonStream) fields(t reflect.Type) []jsonField {
	if fs, ok := s.structs[t]; ok {
		return fs
	}
	fs := []jsonField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			fs = nil
			break
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts != "" && opts != "omitempty" || strings.ContainsAny(name, "\"\\") {
			fs = nil
			break
		}
		if name == "" {
			name = f.Name
		}
		key, _ := json.Marshal(name)
		fs = append(fs, jsonField{index: i, key: string(key), omitEmpty: opts == "omitempty"})
	}
	s.structs[t] = fs
	return fs
}

func (s *jsonStream) object(v reflect.Value, fields []jsonField, ind string) {
	n := 0
	for _, f := range fields {
		fv := v.Field(f.index)
		if f.omitEmpty && empty(fv) {
			continue
		}
		if n == 0 {
			s.w.WriteByte('{')
		} else {
			s.w.WriteByte(',')
		}
		n++
		s.w.WriteString("\n" + ind + "  " + f.key + ": ")
		s.value(fv, ind+"  ")
	}
	if n == 0 {
		s.w.WriteString("{}")
		return
	}
	s.w.WriteString("\n" + ind + "}")
}

func (s *jsonStream) array(v reflect.Value, ind string) {
	if v.Len() == 0 {
		s.w.WriteString("[]")
		return
	}
	s.w.WriteByte('[')
	for i := range v.Len() {
		if i > 0 {
			s.w.WriteByte(',')
		}
		s.w.WriteString("\n" + ind + "  ")
		s.whole(v.Index(i), ind+"  ") // elements are small: encoding/json writes each
	}
	s.w.WriteString("\n" + ind + "]")
}

// whole writes v with encoding/json, indented for where it stands.
func (s *jsonStream) whole(v reflect.Value, ind string) {
	if s.err != nil {
		return
	}
	if v.CanAddr() { // as encoding/json does for addressable values: methods on the pointer count
		v = v.Addr()
	}
	s.buf.Reset()
	if s.err = s.enc.Encode(v.Interface()); s.err != nil {
		return
	}
	b := bytes.TrimSuffix(s.buf.Bytes(), []byte("\n"))
	if b[0] != '{' && b[0] != '[' {
		s.w.Write(b)
		return
	}
	s.ind.Reset()
	s.err = json.Indent(&s.ind, b, ind, "  ")
	s.w.Write(s.ind.Bytes())
}

// empty is encoding/json's idea of an empty value, for omitempty.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}
