package values

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/tensor"
)

// The oracle: numpy computes the same statistics from the same bytes, decoding every dtype itself
// (BF16 with integer shifts), with sums taken by Python's math.fsum (correctly rounded), so these
// tests check decoding and arithmetic against an independent implementation and the accuracy of our
// float64 sums. They skip when python3 with numpy is not installed (Debian: python3-numpy).

const oracleScript = `
import json, math, sys
import numpy as np

def fsum(x):  # correctly rounded sum of the float64 terms
    return math.fsum(x.tolist())

spec = json.load(open(sys.argv[1]))
views = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I8": "i1", "U8": "u1", "I16": "<i2", "U16": "<u2",
         "I32": "<i4", "U32": "<u4", "I64": "<i8", "U64": "<u8", "BOOL": "?", "C64": "<c8"}

def load(path, dt):
    raw = np.fromfile(path, dtype=np.uint8)
    if dt == "BF16":
        return (raw.view("<u2").astype(np.uint32) << 16).view("<f4").astype(np.float64)
    a = raw.view(views[dt])
    return a.astype(np.complex128 if dt == "C64" else np.float64)

def num(x):
    x = float(x)
    return x if np.isfinite(x) else None

out = {}
a = load(spec["a"], spec["dta"])
if spec.get("b"):
    b = load(spec["b"], spec["dtb"])
    both = np.isfinite(a) & np.isfinite(b)
    d = a[both] - b[both]
    ad = np.abs(d)
    sq = lambda z: z.real * z.real + z.imag * z.imag
    na, nb, nd = math.sqrt(fsum(sq(a[both]))), math.sqrt(fsum(sq(b[both]))), math.sqrt(fsum(sq(d)))
    ab = a[both] * np.conj(b[both])
    dot = fsum(np.real(ab))
    nanboth = np.isnan(a) & np.isnan(b)
    out = {
        "count": int(a.size),
        "differing": int(np.sum((a != b) & ~nanboth)),
        "max_abs_diff": num(ad.max()) if ad.size else None,
        "max_abs_diff_index": int(np.flatnonzero(both)[ad.argmax()]) if ad.size and ad.max() > 0 else -1,
        "mean_abs_diff": num(fsum(ad) / ad.size) if ad.size else None,
        "rel_l2": num(nd / na) if na > 0 else (0.0 if nd == 0 else None),
        "cosine": num(max(-1.0, min(1.0, dot / na / nb))) if na > 0 and nb > 0 else None,
        "nan_a": int(np.isnan(a).sum()), "nan_b": int(np.isnan(b).sum()),
        "inf_a": int(np.isinf(a).sum()), "inf_b": int(np.isinf(b).sum()),
        "outside_tolerance": int(np.sum(~np.isclose(a, b, rtol=spec["rtol"], atol=spec["atol"], equal_nan=spec["equal_nan"]))),
    }
else:
    if np.iscomplexobj(a):
        a = np.abs(a)
    f = a[np.isfinite(a)]
    mean = fsum(f) / f.size if f.size else 0.0
    out = {
        "count": int(a.size),
        "min": num(f.min()) if f.size else None, "max": num(f.max()) if f.size else None,
        "mean": num(mean) if f.size else None, "std": num(math.sqrt(fsum((f - mean) ** 2) / f.size)) if f.size else None,
        "nan": int(np.isnan(a).sum()), "inf": int(np.isinf(a).sum()), "zeros": int((a == 0).sum()),
        "subnormal": int(np.sum((np.abs(f) < spec["tiny"]) & (f != 0))), "l2": num(math.sqrt(fsum(f * f))),
    }
if "convert" in spec:  # write the conversions of a (F32 or F64) that numpy makes
    if spec["convert"] == "F16":
        a.astype(np.float32 if spec["dta"] == "F32" else np.float64).astype(np.float16).tofile(spec["out"])
    else:  # BF16: round to nearest even with integer arithmetic on the float32 bits
        u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
        r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        r[np.isnan(a)] = 0x7FC0
        r.tofile(spec["out"])
json.dump(out, sys.stdout)
`

type oracle struct {
	t       *testing.T
	py, dir string
	script  string
}

func newOracle(t *testing.T) *oracle {
	t.Helper()
	// The first python3 on PATH may be a virtualenv without numpy; Debian's has it when installed.
	py := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if p, err := exec.LookPath(p); err == nil && exec.Command(p, "-c", "import numpy").Run() == nil {
			py = p
			break
		}
	}
	if py == "" {
		t.Skip("no python3 with numpy (Debian: apt-get install python3-numpy): the numpy oracle is skipped")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "oracle.py")
	if err := os.WriteFile(script, []byte(oracleScript), 0o644); err != nil {
		t.Fatal(err)
	}
	return &oracle{t: t, py: py, dir: dir, script: script}
}

// run writes the tensors, runs numpy and decodes its JSON into out.
func (o *oracle) run(spec map[string]any, files map[string][]byte, out any) {
	o.t.Helper()
	for k, b := range files {
		p := filepath.Join(o.dir, k+".bin")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			o.t.Fatal(err)
		}
		spec[k] = p
	}
	sp := filepath.Join(o.dir, "spec.json")
	js, _ := json.Marshal(spec)
	if err := os.WriteFile(sp, js, 0o644); err != nil {
		o.t.Fatal(err)
	}
	cmd := exec.Command(o.py, o.script, sp)
	cmd.Stderr = os.Stderr
	res, err := cmd.Output()
	if err != nil {
		o.t.Fatalf("numpy oracle: %v", err)
	}
	if err := json.Unmarshal(res, out); err != nil {
		o.t.Fatalf("numpy oracle output %q: %v", res, err)
	}
}

// sample returns n values of a mix that exercises the statistics: normal weights, exact zeros,
// values far apart in magnitude, and (with specials) NaN, ±Inf and −0.
func sample(r *rand.Rand, n int, scale float64, specials bool) []float64 {
	v := make([]float64, n)
	for i := range v {
		switch k := r.IntN(1000); {
		case k < 20:
			v[i] = 0
		case k < 25:
			v[i] = r.NormFloat64() * scale * 1000
		case specials && k == 990:
			v[i] = math.NaN()
		case specials && k == 991:
			v[i] = math.Inf(1 - 2*r.IntN(2))
		case specials && k == 992:
			v[i] = math.Copysign(0, -1)
		default:
			v[i] = r.NormFloat64() * scale
		}
	}
	return v
}

// perturb returns a copy of v with about half the values changed slightly, and a few set equal.
func perturb(r *rand.Rand, v []float64, scale float64) []float64 {
	w := make([]float64, len(v))
	for i, x := range v {
		w[i] = x
		if r.IntN(2) == 0 {
			w[i] = x + r.NormFloat64()*scale
		}
	}
	return w
}

func close(a, b, rel float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) || a == b
}

// numpyDiff mirrors Diff with nullable floats, as the oracle writes it.
type numpyDiff struct {
	Count            int64    `json:"count"`
	Differing        int64    `json:"differing"`
	MaxAbsDiff       *float64 `json:"max_abs_diff"`
	MaxAbsDiffIndex  int64    `json:"max_abs_diff_index"`
	MeanAbsDiff      *float64 `json:"mean_abs_diff"`
	RelL2            *float64 `json:"rel_l2"`
	Cosine           *float64 `json:"cosine"`
	NaNA             int64    `json:"nan_a"`
	NaNB             int64    `json:"nan_b"`
	InfA             int64    `json:"inf_a"`
	InfB             int64    `json:"inf_b"`
	OutsideTolerance int64    `json:"outside_tolerance"`
}

func nullable(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func compareTensors(t *testing.T, dta tensor.DType, a []byte, dtb tensor.DType, b []byte, tol Tolerance, workers int) Diff {
	t.Helper()
	d, err := CompareTensors(context.Background(),
		Tensor{DType: dta, R: byteReader(a), Len: int64(len(a))},
		Tensor{DType: dtb, R: byteReader(b), Len: int64(len(b))},
		Options{Workers: workers, Tolerance: tol})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestPairAgainstNumpy compares CompareTensors with numpy on random tensors of each dtype family,
// same dtype and across dtypes, with and without NaN/Inf, over several chunks.
func TestPairAgainstNumpy(t *testing.T) {
	o := newOracle(t)
	r := rand.New(rand.NewPCG(11, 12))
	n := 2*ChunkElements + 12345
	for _, c := range []struct {
		a, b     tensor.DType
		scale    float64
		specials bool
		tol      Tolerance
	}{
		{"F32", "F32", 0.02, false, Tolerance{Atol: 1e-4, Rtol: 1e-3}},
		{"F32", "F32", 1, true, Tolerance{Atol: 1e-3, EqualNaN: true}},
		{"F64", "F64", 1e3, true, Tolerance{Rtol: 1e-4}},
		{"F16", "F16", 0.5, true, Tolerance{}},
		{"BF16", "BF16", 0.02, false, Tolerance{Atol: 1e-4, Rtol: 1e-2}},
		{"BF16", "BF16", 3, true, Tolerance{Atol: 0.01}},
		{"F32", "BF16", 0.02, false, Tolerance{Atol: 1e-3}},
		{"F16", "BF16", 0.1, true, Tolerance{Rtol: 0.01, EqualNaN: true}},
		{"I32", "I32", 1e6, false, Tolerance{Atol: 10}},
		{"I8", "U8", 50, false, Tolerance{}},
		{"C64", "C64", 1, false, Tolerance{Atol: 1e-3, Rtol: 1e-3}},
		{"F32", "C64", 1, false, Tolerance{}},
	} {
		t.Run(string(c.a)+"-"+string(c.b), func(t *testing.T) {
			va := sample(r, n, c.scale, c.specials)
			vb := perturb(r, va, c.scale/50)
			ab, bb := encodeAll(c.a, va), encodeAll(c.b, vb)
			var want numpyDiff
			o.run(map[string]any{"dta": c.a, "dtb": c.b, "atol": c.tol.Atol, "rtol": c.tol.Rtol, "equal_nan": c.tol.EqualNaN},
				map[string][]byte{"a": ab, "b": bb}, &want)
			got := compareTensors(t, c.a, ab, c.b, bb, c.tol, 2)
			if got.Count != want.Count || got.Differing != want.Differing || got.NaNA != want.NaNA || got.NaNB != want.NaNB ||
				got.InfA != want.InfA || got.InfB != want.InfB || got.OutsideTolerance != want.OutsideTolerance {
				t.Errorf("counts:\n got %+v\nwant %+v", got, want)
			}
			cplx := c.a == "C64" || c.b == "C64" // numpy's |z| is hypot, ours √(re²+im²): an ulp apart
			if !close(got.MaxAbsDiff, nullable(want.MaxAbsDiff), 0) && !(cplx && close(got.MaxAbsDiff, nullable(want.MaxAbsDiff), 1e-15)) {
				t.Errorf("max_abs_diff %v, numpy %v", got.MaxAbsDiff, nullable(want.MaxAbsDiff))
			}
			if got.MaxAbsDiffIndex != want.MaxAbsDiffIndex && !cplx {
				t.Errorf("max_abs_diff_index %d, numpy %d", got.MaxAbsDiffIndex, want.MaxAbsDiffIndex)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"mean_abs_diff", got.MeanAbsDiff, nullable(want.MeanAbsDiff)},
				{"rel_l2", got.RelL2, nullable(want.RelL2)},
				{"cosine", got.Cosine, nullable(want.Cosine)},
			} {
				if !close(f.got, f.want, 1e-13) {
					t.Errorf("%s %v, numpy %v (rel %.2g)", f.name, f.got, f.want, math.Abs(f.got-f.want)/math.Abs(f.want))
				}
			}
			if got.DiffFraction != float64(want.Differing)/float64(want.Count) {
				t.Errorf("diff_fraction %v", got.DiffFraction)
			}
			if got.WithinTolerance != (want.OutsideTolerance == 0) {
				t.Errorf("within_tolerance %v with %d outside", got.WithinTolerance, want.OutsideTolerance)
			}
		})
	}
}

// TestStatsAgainstNumpy compares SummarizeTensor with numpy for each dtype family.
func TestStatsAgainstNumpy(t *testing.T) {
	o := newOracle(t)
	r := rand.New(rand.NewPCG(21, 22))
	n := 2*ChunkElements + 999
	for _, c := range []struct {
		dt       tensor.DType
		scale    float64
		offset   float64
		specials bool
	}{
		{"F32", 0.02, 0, true}, {"F32", 1e-3, 1, false}, {"F64", 1e10, -3e10, true}, {"F16", 1e-5, 0, true},
		{"BF16", 0.02, 0, true}, {"I16", 1000, 0, false}, {"U64", 1e15, 1e16, false}, {"BOOL", 1, 0, false},
		{"C64", 2, 0, false},
	} {
		t.Run(string(c.dt), func(t *testing.T) {
			v := sample(r, n, c.scale, c.specials)
			for i := range v {
				v[i] += c.offset
			}
			b := encodeAll(c.dt, v)
			var want statsJSON // what the oracle writes: nullable floats
			o.run(map[string]any{"dta": c.dt, "tiny": formats[c.dt].minNormal}, map[string][]byte{"a": b}, &want)
			got, err := SummarizeTensor(context.Background(), Tensor{DType: c.dt, R: byteReader(b), Len: int64(len(b))}, Options{Workers: 3})
			if err != nil {
				t.Fatal(err)
			}
			if got.Count != want.Count || got.NaN != want.NaN || got.Inf != want.Inf || got.Zeros != want.Zeros || got.Subnormal != want.Subnormal {
				t.Errorf("counts:\n got %+v\nwant %+v", got, want)
			}
			if got.Min != nullable(want.Min) || got.Max != nullable(want.Max) {
				t.Errorf("min/max %v %v, numpy %v %v", got.Min, got.Max, nullable(want.Min), nullable(want.Max))
			}
			// The mean is compared relative to the spread: when it is near zero, numpy's own rounding
			// is relative to the magnitudes summed, not to the mean.
			if m, w := got.Mean, nullable(want.Mean); math.Abs(m-w) > 1e-13*math.Max(math.Abs(w), nullable(want.Std)) {
				t.Errorf("mean %v, numpy %v", m, w)
			}
			if !close(got.Std, nullable(want.Std), 1e-13) || !close(got.L2, nullable(want.L2), 1e-13) {
				t.Errorf("std %v l2 %v, numpy %v %v", got.Std, got.L2, nullable(want.Std), nullable(want.L2))
			}
		})
	}
}

// TestRoundingAgainstNumpy: tensors numpy converted (F32→BF16 with integer RNE, F32→F16 and
// F64→F16 with astype) are recognised as exact conversions; a truncated one is not.
func TestRoundingAgainstNumpy(t *testing.T) {
	o := newOracle(t)
	r := rand.New(rand.NewPCG(31, 32))
	n := ChunkElements + 777
	for _, c := range []struct{ from, to tensor.DType }{{"F32", "BF16"}, {"F32", "F16"}, {"F64", "F16"}} {
		t.Run(string(c.from)+"-"+string(c.to), func(t *testing.T) {
			v := sample(r, n, 0.05, true)
			for i := range v {
				if r.IntN(100) == 0 { // values at float16's edges: subnormals and overflow
					v[i] = math.Ldexp(r.Float64(), -14-r.IntN(12)) * float64(1-2*r.IntN(2))
				}
				if r.IntN(5000) == 0 {
					v[i] = 70000 * float64(1-2*r.IntN(2))
				}
			}
			wide := encodeAll(c.from, v)
			var ignore map[string]any
			o.run(map[string]any{"dta": c.from, "tiny": 0, "convert": c.to, "out": filepath.Join(o.dir, "conv.bin")},
				map[string][]byte{"a": wide}, &ignore)
			narrow, err := os.ReadFile(filepath.Join(o.dir, "conv.bin"))
			if err != nil {
				t.Fatal(err)
			}
			d := compareTensors(t, c.from, wide, c.to, narrow, Tolerance{}, 2)
			if d.ExactRounding == nil || !*d.ExactRounding {
				t.Fatalf("numpy's conversion is not recognised: %+v", d.Rounding)
			}
			// Both orders name the narrow side.
			d = compareTensors(t, c.to, narrow, c.from, wide, Tolerance{}, 2)
			if !*d.ExactRounding || d.Rounding.Narrow != "a" || d.Rounding.From != c.from {
				t.Fatalf("reversed: %+v", d.Rounding)
			}
			// Truncating instead of rounding: every element whose dropped bits are over half an ulp
			// is one ulp off.
			if c.from == "F32" && c.to == "BF16" {
				trunc := make([]byte, len(narrow))
				for i := range narrow {
					trunc[i] = wide[4*(i/2)+2+i%2]
				}
				d = compareTensors(t, c.from, wide, c.to, trunc, Tolerance{}, 2)
				if *d.ExactRounding || d.Rounding.Mismatches < int64(n)/4 || d.Rounding.MaxULP != 1 {
					t.Fatalf("truncation: %+v", d.Rounding)
				}
			}
		})
	}
}
