package check_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/check"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/canon/values"
)

// tensorOf is a tensor holding v in dtype dt (F32, F16 codes, or I32).
func tensorOf(name, dt string, shape []uint64, v ...float64) stfile.Tensor {
	var b []byte
	for _, x := range v {
		switch dt {
		case "F32":
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
		case "F16":
			b = binary.LittleEndian.AppendUint16(b, uint16(x)) // x is the code
		case "I32":
			b = binary.LittleEndian.AppendUint32(b, uint32(int32(x)))
		}
	}
	return stfile.Tensor{Name: name, DType: dt, Shape: shape, Data: b}
}

// valuesOf checks a model with --values and returns its record.
func valuesOf(t *testing.T, f stfile.File) check.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(path, f.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := check.Run(t.Context(), []string{path}, check.Options{Values: check.ScanValues(values.Options{})})
	return r.Files[0]
}

// codes lists the findings' codes and the tensor each names, as "code name".
func codes(f check.File) []string {
	var out []string
	for _, x := range f.Findings {
		name := x.Message[strings.Index(x.Message, `"`)+1:]
		out = append(out, x.Code+" "+name[:strings.Index(name, `"`)])
	}
	return out
}

// TestScanValues: each finding of check --values for what breaks models, and what it leaves alone:
// vectors of zeros or ones (biases, norms at rest), integer tensors, a single value.
func TestScanValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	f := stfile.File{Tensors: []stfile.Tensor{
		tensorOf("ok", "F32", []uint64{2, 2}, 0.1, -0.2, 0.3, 0),
		tensorOf("nan", "F32", []uint64{3}, 1, nan, nan),
		tensorOf("inf", "F32", []uint64{2}, -inf, 1),
		tensorOf("zero", "F32", []uint64{2, 3}, 0, 0, 0, 0, 0, 0),
		tensorOf("bias", "F32", []uint64{3}, 0, 0, 0),
		tensorOf("norm", "F32", []uint64{3}, 1, 1, 1),
		tensorOf("constant", "F32", []uint64{2, 2}, 0.5, 0.5, 0.5, 0.5),
		tensorOf("tiny", "F16", []uint64{4}, 0x0001, 0x83FF, 0, 0x0200), // F16 subnormals and a zero
		tensorOf("ids", "I32", []uint64{1, 3}, 0, 0, 0),
		tensorOf("scalar", "F32", []uint64{}, 0),
	}}
	r := valuesOf(t, f)
	want := []string{"values-nan nan", "values-inf inf", "values-all-zero zero", "values-constant constant", "values-subnormal tiny"}
	if got := codes(r); strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("findings %q, want %q", got, want)
	}
	for _, x := range r.Findings {
		if sev := map[bool]finding.Severity{true: finding.SevError, false: finding.SevWarning}[x.Code == check.CodeValuesNaN || x.Code == check.CodeValuesInf]; x.Severity != sev || x.Offset < 0 {
			t.Errorf("%s: severity %s, offset %v", x.Code, x.Severity, x.Offset)
		}
	}
	if r.Outcome() != canon.Found || len(r.Tensors) != len(f.Tensors) {
		t.Errorf("outcome %v, %d tensors summarised", r.Outcome(), len(r.Tensors))
	}
	s := r.Tensors[1].Values // nan: [1 NaN NaN]
	if r.Tensors[1].Name != "nan" || s.Count != 3 || s.NaN != 2 || s.Min != 1 || s.Max != 1 || s.Mean != 1 || s.Std != 0 {
		t.Errorf("statistics of nan: %+v", s)
	}
	// Warnings alone do not make the model fail.
	f.Tensors = f.Tensors[3:]
	if r := valuesOf(t, f); r.Outcome() != canon.Clean || len(r.Findings) != 3 {
		t.Errorf("warnings only: outcome %v, %d findings", r.Outcome(), len(r.Findings))
	}
}

// TestScanValuesLoRA: a LoRA saved before training has every up weight zero: each module is named,
// and the hint says what that means. One zero up weight among trained ones gets no such hint.
func TestScanValuesLoRA(t *testing.T) {
	r := check.Run(t.Context(), []string{fixture("lora-untrained.safetensors")}, check.Options{Values: check.ScanValues(values.Options{})})
	f := r.Files[0]
	if len(f.Findings) != 2 || f.Outcome() != canon.Clean {
		t.Fatalf("%+v", f.Findings)
	}
	for _, x := range f.Findings {
		if x.Code != check.CodeValuesAllZero || !strings.HasPrefix(x.Message, `LoRA module "lora_unet_`) || !strings.Contains(x.Message, "does nothing") ||
			x.Hint != "all 2 up weights of this LoRA are zero: it was saved before training and changes nothing" {
			t.Errorf("%+v", x)
		}
	}
	peft := stfile.File{Tensors: []stfile.Tensor{
		tensorOf("base_model.model.q.lora_A.weight", "F32", []uint64{1, 2}, 0.1, 0.2),
		tensorOf("base_model.model.q.lora_B.weight", "F32", []uint64{2, 1}, 0, 0),
		tensorOf("base_model.model.k.lora_A.weight", "F32", []uint64{1, 2}, 0.1, 0.2),
		tensorOf("base_model.model.k.lora_B.weight", "F32", []uint64{2, 1}, 0.3, 0),
	}}
	f = valuesOf(t, peft)
	if len(f.Findings) != 1 || !strings.Contains(f.Findings[0].Message, `LoRA module "base_model.model.q" does nothing`) || f.Findings[0].Hint != "" {
		t.Errorf("one untrained module: %+v", f.Findings)
	}
}

// TestScanValuesUnreadable: tensors past the end of a truncated file are left out (its other
// findings say why); the rest are summarised, and JSON has their values.
func TestScanValuesUnreadable(t *testing.T) {
	r := check.Run(t.Context(), []string{fixture("truncated.safetensors")}, check.Options{Values: check.ScanValues(values.Options{})})
	f := r.Files[0]
	if f.Err != nil || len(f.Tensors) != 12 || f.FindingCounts["truncated-data"] != 1 {
		t.Errorf("truncated: %v, %d tensors summarised, %v", f.Err, len(f.Tensors), f.FindingCounts)
	}
	var js bytes.Buffer
	if err := check.Write(&js, r, check.WriteOptions{Format: textfmt.JSON}); err != nil || !strings.Contains(js.String(), `"values": {`) || !strings.Contains(js.String(), `"zeros": `) {
		t.Errorf("JSON (%v) lacks the per-tensor values", err)
	}
}

// TestScanValuesBigEndian: the tensors of a big-endian GGUF file are not decoded (package values reads
// little-endian elements: 1.0 stored big-endian would read as a subnormal number and be flagged);
// the same tensor in a little-endian file is.
func TestScanValuesBigEndian(t *testing.T) {
	for _, be := range []bool{false, true} {
		var order binary.AppendByteOrder = binary.LittleEndian
		if be {
			order = binary.BigEndian
		}
		var data []byte
		for _, x := range []float32{1, 2, 3, 4} {
			data = order.AppendUint32(data, math.Float32bits(x))
		}
		f := ggufw.File{BigEndian: be, Tensors: []ggufw.Tensor{{Name: "norm.weight", Type: gguf.TypeF32, Dims: []int64{4}, Data: data}}}
		path := filepath.Join(t.TempDir(), "m.gguf")
		if err := os.WriteFile(path, f.Build(), 0o644); err != nil {
			t.Fatal(err)
		}
		r := check.Run(t.Context(), []string{path}, check.Options{Values: check.ScanValues(values.Options{})})
		got := r.Files[0]
		for _, x := range got.Findings {
			if strings.HasPrefix(x.Code, "values-") {
				t.Errorf("big-endian %v: %s %s", be, x.Code, x.Message)
			}
		}
		if want := map[bool]int{false: 1, true: 0}[be]; got.Err != nil || len(got.Tensors) != want {
			t.Errorf("big-endian %v: %v, %d tensors summarised, want %d", be, got.Err, len(got.Tensors), want)
		}
		if !be && (len(got.Tensors) != 1 || got.Tensors[0].Values.Max != 4) {
			t.Errorf("little-endian: %+v", got.Tensors)
		}
	}
}
