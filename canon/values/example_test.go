package values_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/stdiff/stdiff/canon/values"
)

func f32s(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// Comparing a tensor with its BF16 conversion: the values differ a little, and the BF16 side is
// exactly the round-to-nearest-even conversion of the F32 side.
func ExampleCompareTensors() {
	a := f32s(1, 0.1, -2.5, 3.14159)
	b := []byte{0x80, 0x3F, 0xCD, 0x3D, 0x20, 0xC0, 0x49, 0x40} // BF16 1, 0.1, −2.5, 3.14159
	d, err := values.CompareTensors(context.Background(),
		values.Tensor{DType: "F32", R: bytes.NewReader(a), Len: int64(len(a))},
		values.Tensor{DType: "BF16", R: bytes.NewReader(b), Len: int64(len(b))},
		values.Options{Tolerance: values.Tolerance{Rtol: 1e-2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("max |a-b| %.2g at %d, %d of %d differ, within tolerance %v\n",
		d.MaxAbsDiff, d.MaxAbsDiffIndex, d.Differing, d.Count, d.WithinTolerance)
	fmt.Printf("exact %s rounding of the %s values: %v\n", d.Rounding.To, d.Rounding.From, *d.ExactRounding)
	// Output:
	// max |a-b| 0.00097 at 3, 2 of 4 differ, within tolerance true
	// exact BF16 rounding of the F32 values: true
}

// A Summary takes a tensor chunk by chunk; partial summaries of consecutive chunks merge in order.
func ExampleSummary() {
	s, _ := values.NewSummary("F32")
	s.Add(f32s(0, 0, 1, 2))
	next, _ := values.NewSummary("F32")
	next.Add(f32s(float32(math.NaN()), 5))
	s.Merge(next)
	st := s.Result()
	fmt.Printf("count %d, min %g, max %g, mean %g, nan %d, zeros %d\n", st.Count, st.Min, st.Max, st.Mean, st.NaN, st.Zeros)
	// Output:
	// count 6, min 0, max 5, mean 1.6, nan 1, zeros 2
}
