package inspect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/onnx"
)

// ONNX is what an ONNX model says besides its initializers: the facts people compare exports by.
type ONNX struct {
	IRVersion       int64          `json:"ir_version"`
	Producer        string         `json:"producer"`
	ProducerVersion string         `json:"producer_version"`
	Domain          string         `json:"domain,omitempty"`
	ModelVersion    int64          `json:"model_version,omitempty"`
	Opsets          []onnx.Opset   `json:"opsets"`
	Inputs          []onnx.Value   `json:"inputs"`
	Outputs         []onnx.Value   `json:"outputs"`
	Nodes           int            `json:"nodes"`
	Ops             []onnx.OpCount `json:"ops"`
	// External names the external data files the initializers are in.
	External []string `json:"external_data,omitempty"`
}

// onnxCard is the ONNX facts of a model, nil for other formats.
func onnxCard(m *canon.Model) *ONNX {
	f := m.ONNX
	if f == nil {
		return nil
	}
	o := &ONNX{IRVersion: f.IRVersion, Producer: f.ProducerName, ProducerVersion: f.ProducerVersion, Domain: f.Domain,
		ModelVersion: f.ModelVersion, Opsets: f.Opsets, Inputs: f.Inputs, Outputs: f.Outputs, Nodes: f.Nodes, Ops: f.Ops}
	seen := map[string]bool{}
	for _, t := range f.Tensors {
		if t.External != nil && !seen[t.External.Location] {
			seen[t.External.Location] = true
			o.External = append(o.External, t.External.Location)
		}
	}
	if o.Opsets == nil {
		o.Opsets = []onnx.Opset{}
	}
	if o.Inputs == nil {
		o.Inputs = []onnx.Value{}
	}
	if o.Outputs == nil {
		o.Outputs = []onnx.Value{}
	}
	if o.Ops == nil {
		o.Ops = []onnx.OpCount{}
	}
	return o
}

// onnxRows are the rows of the card's ONNX facts: label and text (not yet escaped).
func onnxRows(o *ONNX) [][2]string {
	var opsets []string
	for _, s := range o.Opsets {
		d := s.Domain
		if d == "" {
			d = "ai.onnx"
		}
		opsets = append(opsets, d+" "+strconv.FormatInt(s.Version, 10))
	}
	values := func(vs []onnx.Value) string {
		var out []string
		for _, v := range vs {
			s := v.Name + " " + v.Type
			if v.Shape != nil {
				s += " [" + strings.Join(v.Shape, ", ") + "]"
			}
			out = append(out, s)
		}
		return strings.Join(out, ", ")
	}
	var ops []string
	for i, op := range o.Ops {
		if i == 12 {
			ops = append(ops, fmt.Sprintf("… %d more", len(o.Ops)-i))
			break
		}
		ops = append(ops, fmt.Sprintf("%s %d", op.Op, op.Count))
	}
	rows := [][2]string{
		{"onnx", fmt.Sprintf("IR %d · opsets %s", o.IRVersion, strings.Join(opsets, ", "))},
		{"producer", strings.TrimSpace(o.Producer + " " + o.ProducerVersion)},
		{"inputs", values(o.Inputs)},
		{"outputs", values(o.Outputs)},
		{"nodes", fmt.Sprintf("%d (%s)", o.Nodes, strings.Join(ops, ", "))},
	}
	if len(o.External) > 0 {
		rows = append(rows, [2]string{"external", strings.Join(o.External, ", ")})
	}
	out := rows[:0]
	for _, r := range rows {
		if r[1] != "" {
			out = append(out, r)
		}
	}
	return out
}
