package snapshot

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/stdiff/stdiff/canon/values"
)

// encode appends the snapshot's JSON to b, by hand: a 50,000-tensor snapshot is written (and, for
// its digest, encoded again when read) in a few tens of milliseconds. Values are encoded as
// encoding/json reads them back: strings escaped as encoding/json escapes them (HTML characters
// left as they are), numbers in their shortest form, undefined floats as null.
func (s *Snapshot) encode(b []byte) []byte {
	b = slices.Grow(b, 1024+400*len(s.Tensors))
	b = append(b, `{"schema":`...)
	b = appendString(b, s.Schema)
	b = appendString(append(b, `,"model":`...), s.Of)
	b = appendString(append(b, `,"format":`...), string(s.Format))
	b = strconv.AppendInt(append(b, `,"size":`...), s.Size, 10)
	b = appendString(append(b, `,"structure_id":`...), s.StructureID)
	b = appendString(append(b, `,"content_id":`...), s.ContentID)
	b = appendString(append(b, `,"digest":`...), s.Digest)
	b = appendJSON(append(b, `,"verdict":`...), s.Verdict)
	b = appendJSON(append(b, `,"findings":`...), s.Findings)
	if s.Companions != nil {
		b = appendJSON(append(b, `,"companions":`...), s.Companions)
	}
	b = append(b, `,"metadata":[`...)
	for i := range s.Metadata {
		b = appendJSON(append(b, ",\n"[1-min(i, 1):]...), &s.Metadata[i])
	}
	b = append(b, "\n],\"tensors\":["...)
	for i := range s.Tensors {
		b = appendTensor(append(b, ",\n"[1-min(i, 1):]...), &s.Tensors[i])
	}
	return append(b, "\n]}\n"...)
}

func appendTensor(b []byte, t *Tensor) []byte {
	b = appendString(append(b, `{"name":`...), t.Name)
	b = appendString(append(b, `,"dtype":`...), string(t.DType))
	b = append(b, `,"shape":[`...)
	for k, d := range t.Shape {
		if k > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, d, 10)
	}
	b = strconv.AppendUint(append(b, `],"bytes":`...), t.Bytes, 10)
	b = appendString(append(b, `,"blake3":`...), t.BLAKE3)
	if v := t.Values; v != nil {
		b = appendStats(append(b, `,"values":`...), v)
	}
	return append(b, '}')
}

// appendStats appends a summary as values.Stats's JSON, with zeros and subnormal left out when they
// are 0 (they read back as 0).
func appendStats(b []byte, v *values.Stats) []byte {
	b = strconv.AppendInt(append(b, `{"count":`...), v.Count, 10)
	b = appendFloat(append(b, `,"min":`...), v.Min)
	b = appendFloat(append(b, `,"max":`...), v.Max)
	b = appendFloat(append(b, `,"mean":`...), v.Mean)
	b = appendFloat(append(b, `,"std":`...), v.Std)
	b = strconv.AppendInt(append(b, `,"nan":`...), v.NaN, 10)
	b = strconv.AppendInt(append(b, `,"inf":`...), v.Inf, 10)
	if v.Zeros != 0 {
		b = strconv.AppendInt(append(b, `,"zeros":`...), v.Zeros, 10)
	}
	if v.Subnormal != 0 {
		b = strconv.AppendInt(append(b, `,"subnormal":`...), v.Subnormal, 10)
	}
	b = appendFloat(append(b, `,"l2":`...), v.L2)
	return append(b, '}')
}

// appendFloat appends x in its shortest form that reads back as x, or null when it is not finite.
func appendFloat(b []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, x, 'g', -1, 64)
}

// appendString appends s as a JSON string: plain ASCII as it is, anything else as encoding/json
// writes it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return appendJSON(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSON appends v as encoding/json writes it, compact, without escaping HTML characters.
func appendJSON(b []byte, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // plain data: it cannot fail
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
