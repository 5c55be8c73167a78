package values

import (
	"encoding/json"
	"math"
	"sort"
	"testing"

	"github.com/stdiff/stdiff/canon/tensor"
)

// allDTypes lists every dtype, in a fixed order for the fuzz targets to pick from.
var allDTypes = func() []tensor.DType {
	var d []tensor.DType
	for dt := range formats {
		d = append(d, dt)
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d
}()

// FuzzDecode decodes arbitrary bytes as every dtype (decoders read untrusted tensor bytes) and checks
// that each code of a float format encodes back to itself.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x7E, 0x7F, 0x80, 0xFF, 0x00, 0x01}, uint8(0))
	f.Add([]byte{0x21, 0x7F, 0x81, 0x30, 0x10, 0xFF, 0xFF, 0x7C}, uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, sel uint8) {
		dt := allDTypes[int(sel)%len(allDTypes)]
		fm := formats[dt]
		dst := make([]float64, len(data)*2)
		n, err := Decode(dt, dst, data)
		if err != nil || n > len(dst) || fm.byteLen(n) > len(data) {
			t.Fatalf("%s: %d elements from %d bytes: %v", dt, n, len(data), err)
		}
		m := fm.mini
		if m == nil || n == 0 {
			return
		}
		codes := make([]uint32, n)
		fm.codes(codes, data[:fm.byteLen(n)])
		for i, c := range codes {
			v := dst[i]
			if !same(v, m.value(c)) {
				t.Fatalf("%s: code %#x decodes to %v, value() says %v", dt, c, v, m.value(c))
			}
			e := m.encode(v)
			switch {
			case v != v:
				if !m.isNaN(e) {
					t.Fatalf("%s: NaN code %#x re-encodes to %#x", dt, c, e)
				}
			case e != c:
				t.Fatalf("%s: %v (code %#x) re-encodes to %#x", dt, v, c, e)
			}
		}
	})
}

// neighbours returns the codes next to c on the number line (one step smaller, one larger).
func neighbours(m *minifloat, c uint32) []uint32 {
	if m.flavor == e8m0 {
		return []uint32{c - 1, c + 1}
	}
	mag, sign := c&m.magMask, c&m.signBit
	out := []uint32{sign | (mag + 1)}
	if mag > 0 {
		out = append(out, sign|(mag-1))
	} else {
		out = append(out, (m.signBit^sign)|1)
	}
	return out
}

// FuzzRound checks the encoders on arbitrary float64 values: the result is a nearest value of the
// format, rounding is idempotent and monotonic.
func FuzzRound(f *testing.F) {
	f.Add(1.0, 2.0, uint8(0))
	f.Add(464.0, 480.0, uint8(3))
	f.Add(65520.0, -1e-30, uint8(9))
	f.Fuzz(func(t *testing.T, x, y float64, sel uint8) {
		var floats []tensor.DType
		for _, dt := range allDTypes {
			if formats[dt].mini != nil {
				floats = append(floats, dt)
			}
		}
		dt := floats[int(sel)%len(floats)]
		m := formats[dt].mini
		rx, _ := Round(dt, x)
		ry, _ := Round(dt, y)
		if x != x && rx == rx {
			t.Fatalf("%s: NaN rounds to %v", dt, rx)
		}
		if rx == rx {
			if again, _ := Round(dt, rx); !same(again, rx) && !(rx == 0 && again == 0) {
				t.Fatalf("%s: Round(%v) = %v, rounded again %v", dt, x, rx, again)
			}
		}
		signless := dt == "F8_E8M0" && (x < 0 || y < 0) // PyTorch's E8M0 conversion drops the sign
		if rx == rx && ry == ry && x < y && rx > ry && !signless {
			t.Fatalf("%s: %v < %v but rounds to %v > %v", dt, x, y, rx, ry)
		}
		if dt == "F8_E8M0" || math.IsInf(rx, 0) || rx != rx || math.IsInf(x, 0) {
			return // E8M0 rounds ties up, through float32; Inf and NaN are overflow rules
		}
		c, _ := Encode(dt, x)
		if math.Abs(x) > m.maxValue {
			if m.flavor == finite && math.Abs(rx) != m.maxValue {
				t.Fatalf("%s: %v beyond the range rounds to %v, not ±max", dt, x, rx)
			}
			return
		}
		for _, nc := range neighbours(m, c) {
			if nc&m.magMask > m.maxMag || m.isNaN(nc) {
				continue
			}
			if v := m.value(nc); math.Abs(v-x) < math.Abs(rx-x) {
				t.Fatalf("%s: %v rounds to %v (code %#x) but %v (code %#x) is nearer", dt, x, rx, c, v, nc)
			}
		}
	})
}

// FuzzPairStats feeds arbitrary bytes as two tensors of arbitrary dtypes and checks the invariants
// of the results.
func FuzzPairStats(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{1, 2, 3, 4, 5, 6, 7, 9}, uint8(0), uint8(0), 0.0, 0.0)
	f.Add([]byte{0, 0, 0xC0, 0x7F, 0, 0, 0x80, 0x7F}, []byte{0, 0, 0x80, 0xFF, 1, 2}, uint8(14), uint8(1), 1e-3, 1e-2)
	f.Fuzz(func(t *testing.T, a, b []byte, sa, sb uint8, atol, rtol float64) {
		dta, dtb := allDTypes[int(sa)%len(allDTypes)], allDTypes[int(sb)%len(allDTypes)]
		fa, fb := formats[dta], formats[dtb]
		n := min(len(a)/fa.groupBytes*fa.group, len(b)/fb.groupBytes*fb.group)
		n -= n % 4
		a, b = a[:fa.byteLen(n)], b[:fb.byteLen(n)]
		p, err := NewPairStats(dta, dtb, Tolerance{Atol: atol, Rtol: rtol, EqualNaN: atol > 1})
		if err != nil {
			return // a tolerance NewPairStats refuses
		}
		if err := p.Add(a, b); err != nil {
			t.Fatal(err)
		}
		d := p.Result()
		if d.Count != int64(n) || d.Differing > d.Count || d.OutsideTolerance > d.Count || d.WithinTolerance != (d.OutsideTolerance == 0) ||
			d.MaxAbsDiffIndex < -1 || d.MaxAbsDiffIndex >= d.Count || d.NaNA+d.InfA > d.Count || d.NaNB+d.InfB > d.Count ||
			d.DiffFraction < 0 || d.DiffFraction > 1 || d.MaxAbsDiff < 0 || d.Cosine < -1 || d.Cosine > 1 {
			t.Fatalf("%s/%s: %+v", dta, dtb, d)
		}
		if (d.ExactRounding != nil) != (IsFloat(dta) && IsFloat(dtb) && dta != dtb) {
			t.Fatalf("%s/%s: rounding check %v", dta, dtb, d.ExactRounding)
		}
		if r := d.Rounding; r != nil && (r.Mismatches+r.Saturated > d.Count || r.FirstMismatch >= d.Count || (r.Mismatches == 0) != (r.FirstMismatch == -1)) {
			t.Fatalf("%s/%s: %+v", dta, dtb, r)
		}
		if _, err := json.Marshal(d); err != nil {
			t.Fatal(err)
		}
		s, _ := NewSummary(dta)
		if err := s.Add(a); err != nil {
			t.Fatal(err)
		}
		st := s.Result()
		if st.Count != int64(n) || st.NaN+st.Inf > st.Count || st.Zeros > st.Count || st.Subnormal+st.Zeros > st.Count ||
			st.Min > st.Max || (st.Min == st.Min) != (st.NaN+st.Inf < st.Count) {
			t.Fatalf("%s: %+v", dta, st)
		}
		if _, err := json.Marshal(st); err != nil {
			t.Fatal(err)
		}
	})
}
