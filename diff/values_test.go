package diff

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/canon/values"
)

// f32t is an F32 tensor holding v.
func f32t(name string, shape []uint64, v ...float32) stfile.Tensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return stfile.Tensor{Name: name, DType: "F32", Shape: shape, Data: b}
}

// rawt is a tensor of dtype dt holding the codes c (of 8 or 16 bits).
func rawt(name, dt string, shape []uint64, c ...uint16) stfile.Tensor {
	var b []byte
	for _, x := range c {
		if stfile.ByteLen(dt, []uint64{1}) == 1 {
			b = append(b, byte(x))
		} else {
			b = binary.LittleEndian.AppendUint16(b, x)
		}
	}
	return stfile.Tensor{Name: name, DType: dt, Shape: shape, Data: b}
}

// openPair writes two models and opens them, their reads counted in n (when not nil).
func openPair(t *testing.T, a, b []byte, n *atomic.Int64) (*source.Opened, *source.Opened) {
	t.Helper()
	dir := t.TempDir()
	var out [2]*source.Opened
	for i, data := range [][]byte{a, b} {
		p := filepath.Join(dir, []string{"a.safetensors", "b.safetensors"}[i])
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		o, err := source.Open(t.Context(), p, source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { o.Close() })
		if n != nil {
			o.Source = counted{o.Source, n}
		}
		out[i] = o
	}
	return out[0], out[1]
}

func byValue(t *testing.T, a, b stfile.File, opt Options) *Report {
	t.Helper()
	oa, ob := openPair(t, a.Build(), b.Build(), nil)
	r, err := Models(t.Context(), oa, ob, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func tensorChange(t *testing.T, r *Report, name string) *Change {
	t.Helper()
	for i := range r.Tensors.Changed {
		if r.Tensors.Changed[i].Name == name {
			return &r.Tensors.Changed[i]
		}
	}
	t.Fatalf("%s is not among the changes %+v", name, r.Tensors.Changed)
	return nil
}

// TestValuesKnownAnswers: the statistics of a changed tensor, worked out by hand: a = [1 2 3 4],
// b = [1 2 3 6] at shape [2, 2]; and across dtypes, F32 values against their BF16 rounding.
func TestValuesKnownAnswers(t *testing.T) {
	a := stfile.File{Tensors: []stfile.Tensor{f32t("w", []uint64{2, 2}, 1, 2, 3, 4)}}
	b := stfile.File{Tensors: []stfile.Tensor{f32t("w", []uint64{2, 2}, 1, 2, 3, 6)}}
	r := byValue(t, a, b, Options{})
	d := tensorChange(t, r, "w").Values
	want := values.Diff{Count: 4, Differing: 1, DiffFraction: 0.25, MaxAbsDiff: 2, MaxAbsDiffIndex: 3, MeanAbsDiff: 0.5,
		RelL2: 2 / math.Sqrt(30), Cosine: 38 / math.Sqrt(30) / math.Sqrt(50), OutsideTolerance: 1}
	if d == nil || d.Count != want.Count || d.Differing != want.Differing || d.DiffFraction != want.DiffFraction ||
		d.MaxAbsDiff != want.MaxAbsDiff || d.MaxAbsDiffIndex != want.MaxAbsDiffIndex || d.MeanAbsDiff != want.MeanAbsDiff ||
		math.Abs(d.RelL2-want.RelL2) > 1e-15 || math.Abs(d.Cosine-want.Cosine) > 1e-15 || d.WithinTolerance || d.ExactRounding != nil {
		t.Errorf("values %+v\nwant   %+v", d, want)
	}
	if !slices.Equal(r.Categories, []Category{CategoryData, CategoryValues}) || coords([]uint64{2, 2}, d.MaxAbsDiffIndex) != "[1, 1]" {
		t.Errorf("categories %v, max at %s", r.Categories, coords([]uint64{2, 2}, d.MaxAbsDiffIndex))
	}

	// 1 + 2^-8 is a tie between BF16's 1 and 1 + 2^-7: even is 1 (0x3F80); 1 + 3·2^-9 rounds up to
	// 0x3F81; 70000 fits; -0 stays -0.
	a = stfile.File{Tensors: []stfile.Tensor{f32t("w", []uint64{4}, 1+1.0/256, 1+3.0/512, 70000, float32(math.Copysign(0, -1)))}}
	b = stfile.File{Tensors: []stfile.Tensor{rawt("w", "BF16", []uint64{4}, 0x3F80, 0x3F81, 0x4789, 0x8000)}}
	r = byValue(t, a, b, Options{})
	d = tensorChange(t, r, "w").Values
	if d.ExactRounding == nil || !*d.ExactRounding || d.Rounding.From != "F32" || d.Rounding.To != "BF16" || d.Rounding.Narrow != "b" {
		t.Errorf("RNE conversion: %+v %+v", d.ExactRounding, d.Rounding)
	}
	if !slices.Equal(r.Categories, []Category{CategoryDType}) {
		t.Errorf("an exact conversion counts as %v, want dtype only", r.Categories)
	}
	// Rounding 1 + 2^-8 up is one BF16 ulp off.
	b = stfile.File{Tensors: []stfile.Tensor{rawt("w", "BF16", []uint64{4}, 0x3F81, 0x3F81, 0x4789, 0x8000)}}
	r = byValue(t, a, b, Options{})
	d = tensorChange(t, r, "w").Values
	if *d.ExactRounding || d.Rounding.Mismatches != 1 || d.Rounding.FirstMismatch != 0 || d.Rounding.MaxULP != 1 ||
		!slices.Equal(r.Categories, []Category{CategoryDType, CategoryValues}) {
		t.Errorf("ties away from even: %+v, categories %v", d.Rounding, r.Categories)
	}
	// F32 beyond F16's range overflows to Inf: the exact conversion, and NaN/Inf appeared.
	a = stfile.File{Tensors: []stfile.Tensor{f32t("w", []uint64{2}, 70000, 1)}}
	b = stfile.File{Tensors: []stfile.Tensor{rawt("w", "F16", []uint64{2}, 0x7C00, 0x3C00)}}
	r = byValue(t, a, b, Options{})
	if d = tensorChange(t, r, "w").Values; !*d.ExactRounding || d.InfB != 1 || !slices.Equal(r.Categories, []Category{CategoryDType, CategoryNaN}) {
		t.Errorf("overflow: %+v, categories %v", d, r.Categories)
	}
	var text strings.Builder
	if err := Write(&text, r, WriteOptions{}); err != nil || !strings.Contains(text.String(), "exact F16 rounding of the F32 values, Inf 0 → 1") {
		t.Errorf("text (%v):\n%s", err, text.String())
	}
}

// categoryCases are pairs of models, each with the categories its diff must name.
func categoryCases() []struct {
	name string
	a, b stfile.File
	want []Category
} {
	base := func() stfile.File {
		return stfile.File{Metadata: []stfile.KV{{Key: "k", Value: "1"}}, Tensors: []stfile.Tensor{
			f32t("w", []uint64{2, 2}, 1, 2, 3, 4), f32t("v", []uint64{2}, 0.5, 0.25), f32t("u", []uint64{3}, 1, 1, 2)}}
	}
	edit := func(f func(*stfile.File)) stfile.File {
		m := base()
		f(&m)
		return m
	}
	return []struct {
		name string
		a, b stfile.File
		want []Category
	}{
		{"same", base(), base(), []Category{}},
		{"added", base(), edit(func(m *stfile.File) { m.Tensors = append(m.Tensors, f32t("x", []uint64{1}, 7)) }), []Category{CategoryAdded}},
		{"removed", base(), edit(func(m *stfile.File) { m.Tensors = m.Tensors[:2] }), []Category{CategoryRemoved}},
		{"renamed", base(), edit(func(m *stfile.File) { m.Tensors[1].Name = "v2" }), []Category{CategoryRenamed}},
		{"not renamed", base(), edit(func(m *stfile.File) { m.Tensors[1] = f32t("v2", []uint64{2}, 0.5, 0.5) }), []Category{CategoryAdded, CategoryRemoved}},
		{"dtype", base(), edit(func(m *stfile.File) { m.Tensors[1] = rawt("v", "BF16", []uint64{2}, 0x3F00, 0x3E80) }), []Category{CategoryDType}},
		{"shape", base(), edit(func(m *stfile.File) { m.Tensors[2].Shape = []uint64{1, 3} }), []Category{CategoryShape}},
		{"data", base(), edit(func(m *stfile.File) { m.Tensors[0] = f32t("w", []uint64{2, 2}, 1, 2, 3, 4.5) }), []Category{CategoryData, CategoryValues}},
		{"signed zero", edit(func(m *stfile.File) { m.Tensors[1] = f32t("v", []uint64{2}, 0, 1) }),
			edit(func(m *stfile.File) { m.Tensors[1] = f32t("v", []uint64{2}, float32(math.Copysign(0, -1)), 1) }), []Category{CategoryData}},
		{"values", base(), edit(func(m *stfile.File) { m.Tensors[1] = rawt("v", "BF16", []uint64{2}, 0x3F00, 0x3E81) }), []Category{CategoryDType, CategoryValues}},
		{"metadata", base(), edit(func(m *stfile.File) { m.Metadata[0].Value = "2" }), []Category{CategoryMetadata}},
		{"nan", base(), edit(func(m *stfile.File) { m.Tensors[0] = f32t("w", []uint64{2, 2}, 1, 2, 3, float32(math.NaN())) }), []Category{CategoryData, CategoryValues, CategoryNaN}},
		{"inf", base(), edit(func(m *stfile.File) { m.Tensors[2] = f32t("u", []uint64{3}, 1, float32(math.Inf(-1)), 2) }), []Category{CategoryData, CategoryValues, CategoryNaN}},
	}
}

// TestFailOnEveryCategory: each category is named when it occurs, and makes the outcome Found exactly
// when FailOn lists it (or is empty); a NUL-padded copy adds the verdict.
func TestFailOnEveryCategory(t *testing.T) {
	cases := categoryCases()
	for _, c := range cases {
		r := byValue(t, c.a, c.b, Options{})
		if !slices.Equal(r.Categories, c.want) {
			t.Errorf("%s: categories %v, want %v", c.name, r.Categories, c.want)
		}
		if (r.Outcome() == canon.Found) != (len(c.want) > 0) || r.Identical != (len(c.want) == 0) {
			t.Errorf("%s: outcome %v, identical %v", c.name, r.Outcome(), r.Identical)
		}
		for _, cat := range Categories {
			r := byValue(t, c.a, c.b, Options{FailOn: []Category{cat}})
			if got, want := r.Outcome() == canon.Found, slices.Contains(c.want, cat); got != want {
				t.Errorf("%s --fail-on %s: found %v, want %v", c.name, cat, got, want)
			}
			if !slices.Equal(r.FailOn, []Category{cat}) {
				t.Errorf("%s: fail_on %v", c.name, r.FailOn)
			}
		}
	}
	oa, ob := openPair(t, cases[0].a.Build(), cases[0].a.NulPadded(), nil)
	r, err := Models(t.Context(), oa, ob, Options{FailOn: []Category{CategoryVerdict}})
	if err != nil || !slices.Equal(r.Categories, []Category{CategoryVerdict}) || r.Outcome() != canon.Found {
		t.Errorf("verdict: %v %v", r.Categories, err)
	}
	if _, err := ParseCategories([]string{"shape", "dtpye"}); err == nil || !strings.Contains(err.Error(), `"dtpye"`) {
		t.Errorf("an unknown category: %v", err)
	}
}

// TestParseCategoriesKeepsVerdict: a gate that names categories still fails on a changed verdict
// (a model strict readers reject is never what was shipped) unless the list leaves it out with
// -verdict; -NAME leaves any category out.
func TestParseCategoriesKeepsVerdict(t *testing.T) {
	but := func(x Category) []Category {
		return slices.DeleteFunc(slices.Clone(Categories), func(c Category) bool { return c == x })
	}
	for _, c := range []struct {
		names []string
		want  []Category
	}{
		{nil, nil},
		{[]string{"shape,dtype,nan"}, []Category{CategoryDType, CategoryShape, CategoryVerdict, CategoryNaN}},
		{[]string{"values"}, []Category{CategoryValues, CategoryVerdict}},
		{[]string{"shape", "-verdict"}, []Category{CategoryShape}},
		{[]string{"shape,-verdict"}, []Category{CategoryShape}},
		{[]string{"-metadata"}, but(CategoryMetadata)},
		{[]string{"-verdict"}, but(CategoryVerdict)},
	} {
		got, err := ParseCategories(c.names)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, %v; want %v", c.names, got, err, c.want)
		}
	}
	// A NUL-padded copy fails a gate on shapes, dtypes and NaN.
	base := categoryCases()[0].a
	oa, ob := openPair(t, base.Build(), base.NulPadded(), nil)
	failOn, _ := ParseCategories([]string{"shape,dtype,nan"})
	if r, err := Models(t.Context(), oa, ob, Options{FailOn: failOn}); err != nil || r.Outcome() != canon.Found {
		t.Errorf("valid → NUL-padded, fail on shape,dtype,nan: %v", err)
	}
}

// TestTolerance: numpy.isclose's rules decide "equal within tolerance" (≤, rtol scaled by the new
// side, NaN only with EqualNaN, infinities equal only to themselves); a tensor within it is listed
// with its values but is no difference.
func TestTolerance(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	one := func(v ...float32) stfile.File {
		return stfile.File{Tensors: []stfile.Tensor{f32t("w", []uint64{uint64(len(v))}, v...)}}
	}
	for _, c := range []struct {
		name   string
		a, b   stfile.File
		tol    values.Tolerance
		within bool
	}{
		{"atol is ≤", one(1, 2), one(1, 2.5), values.Tolerance{Atol: 0.5}, true},
		{"past atol", one(1, 2), one(1, 2.5), values.Tolerance{Atol: 0.4999}, false},
		{"rtol scales |b|", one(100), one(110), values.Tolerance{Rtol: 10.0 / 110}, true},
		{"not |a|", one(110), one(100), values.Tolerance{Rtol: 10.0 / 110}, false},
		{"NaN is not NaN", one(nan, 1), one(nan, 1.5), values.Tolerance{Atol: 1}, false},
		{"with equal_nan it is", one(nan, 1), one(nan, 1.5), values.Tolerance{Atol: 1, EqualNaN: true}, true},
		{"NaN for a number", one(0, 1), one(nan, 1.5), values.Tolerance{Atol: 1, EqualNaN: true}, false},
		{"Inf is Inf", one(inf, 1), one(inf, 1.5), values.Tolerance{Atol: 1}, true},
		{"not -Inf", one(inf, 1), one(-inf, 1.5), values.Tolerance{Atol: 1e30}, false},
	} {
		r := byValue(t, c.a, c.b, Options{Tolerance: c.tol})
		d := tensorChange(t, r, "w").Values
		if d.WithinTolerance != c.within || (len(r.Categories) == 0) != c.within || (r.Outcome() == canon.Clean) != c.within {
			t.Errorf("%s: within %v, categories %v, outcome %v", c.name, d.WithinTolerance, r.Categories, r.Outcome())
		}
		if r.Tolerance == nil || *r.Tolerance != c.tol || r.Identical {
			t.Errorf("%s: tolerance %+v, identical %v", c.name, r.Tolerance, r.Identical)
		}
		if s := Summary(r, nil); c.within && s != "equal within tolerance: 1 tensors differ within it (1 tensors, 0 metadata keys compared)" {
			t.Errorf("%s: summary %q", c.name, s)
		}
	}
	// No tolerance given: a byte difference is data even where the values are equal (-0, +0).
	r := byValue(t, one(0), one(float32(math.Copysign(0, -1))), Options{})
	if d := tensorChange(t, r, "w").Values; !d.WithinTolerance || r.Tolerance != nil || !slices.Equal(r.Categories, []Category{CategoryData}) {
		t.Errorf("signed zero: %+v, categories %v", d, r.Categories)
	}
}

// TestQuick: with Quick, Models stops at the first difference that decides the outcome, reading
// less, with the same outcome; a difference the headers show needs no byte at all.
func TestQuick(t *testing.T) {
	var a, b stfile.File
	for i := range 8 {
		v := make([]float32, values.ChunkElements)
		for k := range v {
			v[k] = float32(k % 97)
		}
		a.Tensors = append(a.Tensors, f32t(string(rune('a'+i)), []uint64{uint64(len(v))}, v...))
		v[5] = 1000 // every tensor changed
		b.Tensors = append(b.Tensors, f32t(string(rune('a'+i)), []uint64{uint64(len(v))}, v...))
	}
	b.Tensors[7].DType = "I32" // a dtype change the header shows
	var n atomic.Int64
	oa, ob := openPair(t, a.Build(), b.Build(), &n)
	for _, c := range []struct {
		failOn []Category
		most   int64 // bytes read at most
	}{
		{nil, 0},
		{[]Category{CategoryData}, 4 * 4 * values.ChunkElements},
		{[]Category{CategoryNaN}, 1 << 62},
	} {
		full, err := Models(t.Context(), oa, ob, Options{FailOn: c.failOn})
		if err != nil {
			t.Fatal(err)
		}
		n.Store(0)
		quick, err := Models(t.Context(), oa, ob, Options{FailOn: c.failOn, Quick: true})
		if err != nil || quick.Outcome() != full.Outcome() || n.Load() > c.most {
			t.Errorf("fail on %v: quick %v (%d bytes read), full %v, %v", c.failOn, quick.Outcome(), n.Load(), full.Outcome(), err)
		}
		if stopped := slices.ContainsFunc(quick.Notes, func(n Note) bool { return n.Code == NoteStoppedEarly }); stopped != (quick.Outcome() == canon.Found) {
			t.Errorf("fail on %v: stopped-early note %v", c.failOn, stopped)
		}
	}
}

// TestReportDeterministic: a report by value is the same, byte for byte, whatever the number of
// cores and goroutines and the memory budget.
func TestReportDeterministic(t *testing.T) {
	dir := filepath.Join("..", "testdata")
	var first []byte
	for _, procs := range []int{1, 2, 8} {
		old := runtime.GOMAXPROCS(procs)
		for _, vopt := range []values.Options{{}, {Workers: 1}, {Workers: 3, Memory: 1}} {
			var all []byte
			for _, pair := range [][2]string{{"weights", "weights-finetuned"}, {"weights", "weights-bf16"}, {"base", "changed"}} {
				oa, err := source.Open(t.Context(), filepath.Join(dir, pair[0]+".safetensors"), source.Options{})
				if err != nil {
					t.Fatal(err)
				}
				ob, err := source.Open(t.Context(), filepath.Join(dir, pair[1]+".safetensors"), source.Options{})
				if err != nil {
					t.Fatal(err)
				}
				r, err := Models(t.Context(), oa, ob, Options{Values: vopt, Tolerance: values.Tolerance{Rtol: 1e-3}})
				oa.Close()
				ob.Close()
				if err != nil {
					t.Fatal(err)
				}
				js, _ := json.Marshal(r)
				all = append(all, js...)
			}
			if first == nil {
				first = all
			} else if string(all) != string(first) {
				t.Errorf("GOMAXPROCS %d, %+v: the report differs", procs, vopt)
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// TestValueGolden renders reports by value every way; the golden files are reviewed by eye.
func TestValueGolden(t *testing.T) {
	var n atomic.Int64
	for _, c := range []struct {
		a, b, golden string
		opt          Options
	}{
		{"weights.safetensors", "weights-finetuned.safetensors", "weights-finetuned", Options{}},
		{"weights.safetensors", "weights-finetuned.safetensors", "weights-finetuned-atol", Options{Tolerance: values.Tolerance{Atol: 0.01}}},
		{"weights.safetensors", "weights-bf16.safetensors", "weights-bf16", Options{}},
	} {
		r, err := Models(t.Context(), opened(t, c.a, &n), opened(t, c.b, &n), c.opt)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, c.golden+".txt", written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{Top: 3, Flags: testFlags}) }))
		golden(t, c.golden+"-full.txt", written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{Full: true}) }))
		golden(t, c.golden+".md", written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{Format: textfmt.Markdown}) }))
		golden(t, c.golden+".json", written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{Format: textfmt.JSON}) }))
	}
}

// TestUnreadIsNotUnchanged: a tensor whose bytes lie past the end of a truncated file is not
// compared, never unchanged, and a gate on values or data fails on it (a, b against a, b×100 cut
// short by 8 bytes).
func TestUnreadIsNotUnchanged(t *testing.T) {
	old := stfile.File{Tensors: []stfile.Tensor{f32t("a", []uint64{2}, 1, 2), f32t("b", []uint64{4}, 1, 2, 3, 4)}}
	cut := stfile.File{Tensors: []stfile.Tensor{f32t("a", []uint64{2}, 1, 2), f32t("b", []uint64{4}, 100, 200, 300, 400)}}.Build()
	cut = cut[:len(cut)-8]
	for _, failOn := range [][]Category{{CategoryValues}, {CategoryData}} {
		oa, ob := openPair(t, old.Build(), cut, nil)
		r, err := Models(t.Context(), oa, ob, Options{FailOn: failOn})
		if err != nil {
			t.Fatal(err)
		}
		want := []NotCompared{{Name: "b", Reason: NotReadBytesMissing}}
		if r.Tensors.Unchanged != 1 || !slices.Equal(r.Tensors.NotCompared, want) || len(r.Tensors.Changed) != 0 {
			t.Errorf("unchanged %d, not compared %v, changed %v", r.Tensors.Unchanged, r.Tensors.NotCompared, r.Tensors.Changed)
		}
		if r.Outcome() != canon.Found || r.Identical {
			t.Errorf("fail on %v: outcome %v, identical %v", failOn, r.Outcome(), r.Identical)
		}
		if s := Summary(r, nil); !strings.Contains(s, "tensors: 1 not compared, 1 unchanged") {
			t.Errorf("summary %q", s)
		}
	}
}

// TestLayoutNotesWhateverElseDiffers: a layout note says how the files are laid out whatever else
// differs (metadata, values, the verdict), and other differences never pass for layout: a tensor or
// key added in front is no reordering, a header grown by a metadata change no formatting.
func TestLayoutNotesWhateverElseDiffers(t *testing.T) {
	base := func() stfile.File {
		return stfile.File{Metadata: []stfile.KV{{Key: "k1", Value: "1"}, {Key: "k2", Value: "2"}},
			Tensors: []stfile.Tensor{f32t("x", []uint64{2}, 1, 2), f32t("y", []uint64{2}, 3, 4)}}
	}
	edit := func(fs ...func(*stfile.File)) stfile.File {
		m := base()
		for _, f := range fs {
			f(&m)
		}
		return m
	}
	reorder := func(m *stfile.File) { m.Tensors[0], m.Tensors[1] = m.Tensors[1], m.Tensors[0] }
	swapKeys := func(m *stfile.File) { m.Metadata[0], m.Metadata[1] = m.Metadata[1], m.Metadata[0] }
	for _, c := range []struct {
		name string
		b    stfile.File
		want []NoteCode
	}{
		{"reordered", edit(reorder), []NoteCode{NoteTensorOrder, NoteOffsets}},
		{"reordered, metadata changed", edit(reorder, func(m *stfile.File) { m.Metadata[0].Value = "one" }), []NoteCode{NoteTensorOrder, NoteOffsets}},
		{"reordered, values changed", edit(reorder, func(m *stfile.File) { m.Tensors[0] = f32t("y", []uint64{2}, 3, 5) }), []NoteCode{NoteTensorOrder, NoteOffsets}},
		{"keys swapped, tensor added", edit(swapKeys, func(m *stfile.File) { m.Tensors = append(m.Tensors, f32t("z", []uint64{1}, 0)) }), []NoteCode{NoteKeyOrder}},
		{"tensor added in front", edit(func(m *stfile.File) { m.Tensors = append([]stfile.Tensor{f32t("a", []uint64{1}, 0)}, m.Tensors...) }), nil},
		{"key added in front", edit(func(m *stfile.File) { m.Metadata = append([]stfile.KV{{Key: "k0", Value: "0"}}, m.Metadata...) }), nil},
	} {
		r := byValue(t, base(), c.b, Options{})
		if got := r.LayoutCodes(); !slices.Equal(got, c.want) {
			t.Errorf("%s: layout notes %v, want %v", c.name, got, c.want)
		}
	}
	oa, ob := openPair(t, base().Build(), edit(reorder, swapKeys).NulPadded(), nil)
	r, err := Models(t.Context(), oa, ob, Options{})
	if err != nil || !r.Verdict.Changed || !slices.Contains(r.LayoutCodes(), NoteTensorOrder) || !slices.Contains(r.LayoutCodes(), NoteKeyOrder) {
		t.Errorf("reordered and NUL-padded: %v, %v", r.LayoutCodes(), err)
	}
}

// TestEqualValuesApart: tensors whose bytes differ but whose values are equal (−0 against +0, NaN
// payloads) are changes of their own kind, apart from those whose values moved: data, not values.
func TestEqualValuesApart(t *testing.T) {
	nan := func(payload uint32) float32 { return math.Float32frombits(0x7fc00000 | payload) }
	negZero := float32(math.Copysign(0, -1))
	var a, b stfile.File
	for l := range 3 {
		a.Tensors = append(a.Tensors, f32t(fmt.Sprintf("layers.%d.moved", l), []uint64{2}, 1, 2))
		b.Tensors = append(b.Tensors, f32t(fmt.Sprintf("layers.%d.moved", l), []uint64{2}, 1, 2.5))
		a.Tensors = append(a.Tensors, f32t(fmt.Sprintf("layers.%d.zero", l), []uint64{2}, 0, 2))
		b.Tensors = append(b.Tensors, f32t(fmt.Sprintf("layers.%d.zero", l), []uint64{2}, negZero, 2))
	}
	a.Tensors = append(a.Tensors, f32t("nan", []uint64{2}, nan(0), 1))
	b.Tensors = append(b.Tensors, f32t("nan", []uint64{2}, nan(1), 1))
	r := byValue(t, a, b, Options{})
	if !slices.Equal(r.Categories, []Category{CategoryData, CategoryValues}) {
		t.Errorf("categories %v", r.Categories)
	}
	for name, want := range map[string]EqualValues{"layers.0.moved": "", "layers.1.zero": EqualSignOfZero, "nan": EqualNaNPayload} {
		if got := tensorChange(t, r, name).ValuesEqual; got != want {
			t.Errorf("%s: values_equal %q, want %q", name, got, want)
		}
	}
	groups := map[string]Group{}
	for _, g := range r.Tensors.Groups {
		groups[g.Pattern] = g
	}
	if g := groups["layers.{0..2}.zero"]; g.Count != 3 || g.ValuesEqual != EqualSignOfZero {
		t.Errorf("signs of zero: %+v (groups %v)", g, r.Tensors.Groups)
	}
	if g := groups["layers.{0..2}.moved"]; g.Count != 3 || g.ValuesEqual != "" {
		t.Errorf("moved: %+v", g)
	}
	text := string(written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{}) }))
	for _, want := range []string{"layers.{0..2}.zero   bytes differ, values equal: sign of zero  (3 tensors)\n",
		"nan                  bytes differ, values equal: NaN payload\n", "tensors: 7 changed (4 with equal values)"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// Equal values alone: a gate on values passes, one on data fails.
	a.Tensors, b.Tensors = a.Tensors[1:2], b.Tensors[1:2]
	a.Tensors, b.Tensors = append(a.Tensors, f32t("nan", []uint64{2}, nan(0), 1)), append(b.Tensors, f32t("nan", []uint64{2}, nan(1), 1))
	if r := byValue(t, a, b, Options{FailOn: []Category{CategoryValues}}); r.Outcome() != canon.Clean || !slices.Equal(r.Categories, []Category{CategoryData}) {
		t.Errorf("fail on values: %v, categories %v", r.Outcome(), r.Categories)
	}
	if r := byValue(t, a, b, Options{FailOn: []Category{CategoryData}, Quick: true}); r.Outcome() != canon.Found {
		t.Errorf("fail on data: %v", r.Outcome())
	}
	if r := byValue(t, a, b, Options{FailOn: []Category{CategoryValues}, Quick: true}); r.Outcome() != canon.Clean {
		t.Errorf("fail on values, quick: %v", r.Outcome())
	}
}
