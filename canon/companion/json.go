package companion

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"
)

// decode parses b as one JSON value, numbers kept as they are written (json.Number), refusing anything
// after the value.
func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

// Decode parses a JSON companion file's Text (or any JSON) as Canonical reads it: numbers as
// json.Number, objects as map[string]any.
func Decode(text string) (any, error) { return decode([]byte(text)) }

// Canonical is the canonical JSON form of v (a value decode gives): compact, object keys sorted by
// their bytes, numbers as written, strings escaped as encoding/json escapes them but for <, > and &,
// which are left as they are.
func Canonical(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // a value decode gave always encodes
		return nil
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// isText reports whether b is UTF-8 text without NUL bytes.
func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }
