package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stdiff/stdiff/canon"
)

type inspectCmd struct {
	Tensors bool     `help:"List every tensor (text output lists the first 10)."`
	Files   []string `arg:"" name:"FILE" help:"Model files to inspect." type:"string"`
}

// metaJSON is metadata as a JSON object in file order.
type metaJSON []canon.MetaEntry

func (m metaJSON) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.Key)
		v, _ := json.Marshal(e.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// paramsJSON is element counts per dtype, in order of first appearance.
type paramsJSON []canon.ParamCount

func (p paramsJSON) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(string(c.DType))
		fmt.Fprintf(&b, "%s:%d", k, c.Elements)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type tensorJSON struct {
	Name        string    `json:"name"`
	DType       string    `json:"dtype"`
	Shape       []uint64  `json:"shape"`
	DataOffsets [2]uint64 `json:"data_offsets"`
	Bytes       uint64    `json:"bytes"`
}

type inspectJSON struct {
	Schema      string        `json:"schema"`
	Path        string        `json:"path"`
	Valid       bool          `json:"valid"`
	FileSize    int64         `json:"file_size"`
	HeaderLen   uint64        `json:"header_len"`
	DataLen     int64         `json:"data_len"`
	TensorCount int           `json:"tensor_count"`
	Params      paramsJSON    `json:"params"`
	ParamsTotal uint64        `json:"params_total"`
	Metadata    metaJSON      `json:"metadata"`
	Tensors     []tensorJSON  `json:"tensors"`
	Findings    []findingJSON `json:"findings"`
}

func (c *inspectCmd) run(o *out) int {
	status := exitOK
	for i, path := range c.Files {
		m, err := readModel(path)
		if err != nil {
			o.readFailed(err)
			status = exitTrouble
			continue
		}
		if m.HasErrors() && status == exitOK {
			status = exitFound
		}
		switch o.format {
		case "json":
			o.writeJSON(c.toJSON(m))
		default:
			if i > 0 {
				o.printf("\n")
			}
			c.printText(o, m)
		}
	}
	return status
}

func (c *inspectCmd) toJSON(m *canon.Model) inspectJSON {
	per, total := m.Params()
	j := inspectJSON{Schema: "stdiff.inspect/v1", Path: m.Name, Valid: m.Valid(), FileSize: m.FileSize,
		HeaderLen: m.HeaderLen, DataLen: max(m.DataLen(), 0), TensorCount: len(m.Tensors), Params: per,
		ParamsTotal: total.Elements, Metadata: m.Metadata, Findings: findingsJSON(m.Findings),
		Tensors: make([]tensorJSON, 0, len(m.Tensors))}
	if j.Params == nil {
		j.Params = paramsJSON{}
	}
	for _, t := range m.Tensors {
		shape := t.Shape
		if shape == nil {
			shape = []uint64{}
		}
		j.Tensors = append(j.Tensors, tensorJSON{Name: t.Name, DType: string(t.DType), Shape: shape,
			DataOffsets: [2]uint64{t.Begin, t.End}, Bytes: t.Len()})
	}
	return j
}

// printText prints the card: what the file is, in a few aligned lines.
func (c *inspectCmd) printText(o *out, m *canon.Model) {
	o.printf("%s\n", o.paint(bold, esc(m.Name)))
	row := func(label, format string, args ...any) {
		o.printf("  %-11s %s\n", label, fmt.Sprintf(format, args...))
	}
	if m.Valid() {
		row("verdict", "%s", o.paint(green, "valid"))
	} else {
		row("verdict", "%s (%s)", o.paint(red, "invalid"), m.RefErr.Kind)
	}
	data := max(m.DataLen(), 0)
	row("size", "%s (header %s B, data %s B)", humanBytes(uint64(m.FileSize)), thousands(m.HeaderLen), thousands(uint64(data)))
	per, total := m.Params()
	parts := make([]string, 0, len(per))
	for _, p := range per {
		parts = append(parts, fmt.Sprintf("%s %s", esc(string(p.DType)), thousands(p.Elements)))
	}
	row("tensors", "%d", len(m.Tensors))
	if len(per) > 0 {
		row("parameters", "%s (%s)", thousands(total.Elements), strings.Join(parts, " · "))
	}
	if len(m.Metadata) == 0 {
		if m.HasMetadata {
			row("metadata", "empty")
		} else {
			row("metadata", "none")
		}
	} else {
		row("metadata", "%d keys", len(m.Metadata))
		width := 0
		for _, e := range m.Metadata {
			width = max(width, min(len(e.Key), 32))
		}
		for _, e := range m.Metadata {
			o.printf("    %-*s  %s\n", width, esc(e.Key), shorten(e.Value, 100))
		}
	}
	if len(m.Tensors) > 0 {
		limit := len(m.Tensors)
		if !c.Tensors && limit > 10 {
			limit = 10
		}
		o.printf("  %s\n", o.paint(dim, "tensors (header order)"))
		nameW := 0
		for _, t := range m.Tensors[:limit] {
			nameW = max(nameW, min(len(t.Name), 60))
		}
		for _, t := range m.Tensors[:limit] {
			o.printf("    %-*s  %-7s %-20s %s\n", nameW, esc(t.Name), esc(string(t.DType)), shapeString(t.Shape), humanBytes(t.Len()))
		}
		if limit < len(m.Tensors) {
			o.printf("    … %d more (--tensors lists all)\n", len(m.Tensors)-limit)
		}
	}
	if len(m.Findings) == 0 {
		row("findings", "none")
	} else {
		row("findings", "%d", len(m.Findings))
		o.printFindings(m.Findings, "    ")
	}
}

func shapeString(s []uint64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
