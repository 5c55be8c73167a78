package inspect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/card"
)

// onnxRows are the rows of the card's ONNX facts: label and text (not yet escaped).
func onnxRows(o *card.ONNX) [][2]string {
	var opsets []string
	for _, s := range o.Opsets {
		d := s.Domain
		if d == "" {
			d = "ai.onnx"
		}
		opsets = append(opsets, d+" "+strconv.FormatInt(s.Version, 10))
	}
	values := func(vs []card.Value) string {
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
