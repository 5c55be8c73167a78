package values

import (
	"encoding/json"
	"math"
	"testing"
)

// TestStatsJSONRoundTrip: Stats read back from their JSON are the same, undefined floats (null) as NaN.
func TestStatsJSONRoundTrip(t *testing.T) {
	for _, s := range []Stats{
		{Count: 3, Min: -1.5, Max: 2, Mean: 1.0 / 3, Std: 0.1, NaN: 1, Inf: 2, Zeros: 1, Subnormal: 1, L2: 3.1},
		{Count: 0, Min: math.NaN(), Max: math.NaN(), Mean: math.NaN(), Std: math.NaN(), L2: 0},
	} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var got Stats
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(got)
		if string(again) != string(b) || math.IsNaN(s.Mean) != math.IsNaN(got.Mean) {
			t.Errorf("%s read back as %s", b, again)
		}
	}
}
