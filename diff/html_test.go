package diff

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/values"
)

// TestHTMLShowsNaNAndRounding: a tensor with five new NaNs (rel L2 0 over its finite values) stands
// out, says so and sorts first, and a comparison across dtypes says whether it is the exact rounding
// (before: "rel L2 0", an empty bar, no NaN count unless the counts differ, no rounding verdict).
func TestHTMLShowsNaNAndRounding(t *testing.T) {
	yes, no := true, false
	r := &Report{Schema: Schema, A: "a.safetensors", B: "b.safetensors", Categories: []Category{CategoryValues, CategoryNaN},
		Tensors: TensorReport{Changed: []Change{
			{Name: "bf16.weight", Fields: []string{"dtype"}, Old: Tensor{DType: "F32"}, New: Tensor{DType: "BF16"},
				Values: &values.Diff{Count: 8, Differing: 8, RelL2: 0.001, ExactRounding: &yes, Rounding: &values.Rounding{From: "F32", To: "BF16", Narrow: "b"}}},
			{Name: "half.weight", Fields: []string{"dtype"}, Old: Tensor{DType: "F32"}, New: Tensor{DType: "F16"},
				Values: &values.Diff{Count: 8, Differing: 8, RelL2: 0.01, ExactRounding: &no, Rounding: &values.Rounding{From: "F32", To: "F16", Narrow: "b", Mismatches: 3}}},
			{Name: "nan.weight", Fields: []string{"data"}, Values: &values.Diff{Count: 100, Differing: 5, NaNB: 5, RelL2: 0}},
			{Name: "other.weight", Fields: []string{"data"}, Values: &values.Diff{Count: 100, Differing: 1, RelL2: 0.5}},
		}}}
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<tr data-name="nan.weight" data-rel="1e300" class="alarm" data-new-nan="5 new NaN">`,
		`<strong class="bad">5 new NaN</strong>`, `NaN 0 → 5`,
		`<span class="good">exact BF16 rounding of the F32 values</span>`,
		`<span class="bad">not F16 rounding of the F32 values (3 elements off)</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Count(page, `class="alarm"`) != 1 {
		t.Errorf("%d rows stand out, want the one with new NaNs", strings.Count(page, `class="alarm"`))
	}
}
