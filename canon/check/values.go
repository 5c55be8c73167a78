package check

import (
	"context"
	"fmt"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/values"
)

// The codes of the findings ScanValues makes (`stdiff check --values`): NaN and Inf are errors (the
// model computes NaN), the others warnings.
const (
	// CodeValuesNaN: a tensor holds NaN.
	CodeValuesNaN = "values-nan"
	// CodeValuesInf: a tensor holds ±Inf.
	CodeValuesInf = "values-inf"
	// CodeValuesAllZero: a weight matrix (two dimensions or more), or a LoRA's up weight, is all zeros.
	CodeValuesAllZero = "values-all-zero"
	// CodeValuesConstant: a weight matrix holds one value, not zero, in every element.
	CodeValuesConstant = "values-constant"
	// CodeValuesSubnormal: every non-zero value of a float tensor is subnormal (smaller than the
	// dtype's smallest normal number), as when a conversion lost the range.
	CodeValuesSubnormal = "values-subnormal"
)

// ScanValues returns the Options.Values hook of `stdiff check --values`: it reads every tensor of a
// model whose dtype package values decodes (values.SummarizeAll with opt, the model's tensors in
// order) and returns each one's statistics, and findings (CodeValues*) for what breaks models in the
// wild: NaN or Inf, weight matrices that are all zeros (every up weight of a LoRA saved before training
// is: it changes nothing) or hold one value, float tensors whose values are all subnormal. Tensors
// that lie past the end of their file are left out (check's other findings say so), and so is every
// tensor of a big-endian GGUF file (canon.Model.BigEndian: its verdict says what to do).
func ScanValues(opt values.Options) func(ctx context.Context, o *source.Opened) ([]TensorValues, []finding.Finding, error) {
	return func(ctx context.Context, o *source.Opened) ([]TensorValues, []finding.Finding, error) {
		m := o.Model
		if m.BigEndian() { // package values decodes little-endian elements only
			return nil, nil, nil
		}
		size := o.Source.Size()
		var tensors []values.Tensor
		var index []int
		for i := range m.Tensors {
			t := &m.Tensors[i]
			if !values.Supported(t.DType) || !m.InFile(t, size) {
				continue
			}
			if m.Unreadable(i) {
				continue // its external data is refused or missing: a finding says so, and it is not read
			}
			if _, err := values.Elements(t.DType, int64(t.Len())); err != nil {
				continue // not whole elements: a size-mismatch finding says so
			}
			tensors = append(tensors, values.TensorOf(o.Source, m, t))
			index = append(index, i)
		}
		out := make([]TensorValues, 0, len(tensors))
		var found []finding.Finding
		ups, zeroUps := 0, 0
		err := values.SummarizeAll(ctx, tensors, opt, func(k int, s values.Stats) bool {
			t := &m.Tensors[index[k]]
			out = append(out, TensorValues{Name: t.Name, Values: s})
			at := m.DataOffset() + int64(t.Begin)
			if m.Shards != nil {
				at = -1 // offsets of a set are not offsets in one file
			}
			module, up := loraUp(t.Name)
			if up {
				ups++
				zeroUps += b2i(s.AllZero())
			}
			found = append(found, valueFindings(t, s, at, module, up)...)
			return true
		})
		if err != nil {
			return nil, nil, &canon.ReadError{Name: m.Name, Op: "read", Err: err}
		}
		if ups > 1 && zeroUps == ups {
			for i := range found {
				if found[i].Code == CodeValuesAllZero {
					found[i].Hint = fmt.Sprintf("all %d up weights of this LoRA are zero: it was saved before training and changes nothing", ups)
				}
			}
		}
		return out, found, o.Unchanged()
	}
}

// valueFindings are the findings about one tensor's values: at is the offset of its first byte (-1 in
// a shard set); module and up say whether it is a LoRA module's up weight.
func valueFindings(t *tensor.Tensor, s values.Stats, at int64, module string, up bool) []finding.Finding {
	var out []finding.Finding
	add := func(code string, sev finding.Severity, msg, hint string) {
		out = append(out, finding.Finding{Code: code, Severity: sev, Offset: at, Message: msg, Hint: hint})
	}
	if s.NaN > 0 {
		add(CodeValuesNaN, finding.SevError, fmt.Sprintf("tensor %q holds %d NaN of %d values", t.Name, s.NaN, s.Count),
			"NaN spreads to every output it touches: take the weights from a checkpoint before the NaN appeared")
	}
	if s.Inf > 0 {
		add(CodeValuesInf, finding.SevError, fmt.Sprintf("tensor %q holds %d infinite of %d values", t.Name, s.Inf, s.Count),
			"an overflow, often from converting to a narrower dtype (F16's largest value is 65504): convert from the original weights to BF16 or F32")
	}
	matrix := len(t.Shape) >= 2 && s.Count > 1 // a vector of zeros or ones is a bias or a norm at rest
	switch float := values.IsFloat(t.DType); {
	case !float:
	case s.AllZero() && up:
		add(CodeValuesAllZero, finding.SevWarning, fmt.Sprintf("LoRA module %q does nothing: its up weight %q is all zeros", module, t.Name), "")
	case s.AllZero() && matrix:
		add(CodeValuesAllZero, finding.SevWarning, fmt.Sprintf("tensor %q is all zeros (%d values)", t.Name, s.Count), "")
	case s.Constant() && matrix:
		add(CodeValuesConstant, finding.SevWarning, fmt.Sprintf("tensor %q holds one value, %g, in all %d elements", t.Name, s.Min, s.Count), "")
	case s.SubnormalOnly():
		add(CodeValuesSubnormal, finding.SevWarning, fmt.Sprintf("every non-zero value of tensor %q is subnormal (below %s's smallest normal number)", t.Name, t.DType),
			"weights this small usually mean a conversion lost their range")
	}
	return out
}

// loraUp reports whether a tensor is the up (B) weight of a LoRA module, as kohya (lora_up.weight,
// lora.up.weight) and PEFT (lora_B.weight, lora_B.default.weight) name it, and the module's name.
func loraUp(name string) (module string, ok bool) {
	for _, suffix := range []string{".lora_up.weight", ".lora.up.weight", ".lora_B.weight", ".lora_B.default.weight"} {
		if m, found := strings.CutSuffix(name, suffix); found {
			return m, true
		}
	}
	return "", false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
