package canon

import (
	"math"
	"testing"

	"github.com/stdiff/stdiff/canon/tensor"
)

// TestInFile: a tensor's bytes are in the file only when its offsets are in order and end within the
// data section of a file of the size given (a truncated file, a set whose size is not the model's).
func TestInFile(t *testing.T) {
	m := &Model{Format: FormatSafetensors, HeaderLen: 92} // data from byte 100
	for _, c := range []struct {
		begin, end uint64
		size       int64
		want       bool
	}{
		{0, 16, 116, true},
		{16, 16, 116, true},             // empty, at the end
		{0, 17, 116, false},             // one byte past the end
		{8, 4, 116, false},              // reversed
		{0, 0, 99, false},               // the file ends before its data section
		{0, math.MaxUint64, 116, false}, // an end no file has
	} {
		if got := m.InFile(&tensor.Tensor{Begin: c.begin, End: c.end}, c.size); got != c.want {
			t.Errorf("[%d, %d) in %d bytes: %v, want %v", c.begin, c.end, c.size, got, c.want)
		}
	}
}
