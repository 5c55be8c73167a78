package values

import "math"

// blockLen is the number of elements summed with plain float64 additions before the block's sums
// join the compensated totals. It bounds the error of a block sum to about blockLen·2^-53 of its
// magnitude and keeps the decode buffers in L1.
const blockLen = 256

// ksum is a Neumaier compensated sum.
type ksum struct{ s, c float64 }

func (k *ksum) add(x float64) {
	t := k.s + x
	if math.Abs(k.s) >= math.Abs(x) {
		k.c += (k.s - t) + x
	} else {
		k.c += (x - t) + k.s
	}
	k.s = t
}

// merge adds another compensated sum (the one that follows in order).
func (k *ksum) merge(o ksum) {
	k.add(o.s)
	k.c += o.c
}

func (k ksum) value() float64 {
	if math.IsInf(k.s, 0) || math.IsNaN(k.s) {
		return k.s
	}
	return k.s + k.c
}

func isFinite(x float64) bool { return x-x == 0 }

// b2i is 1 for true, 0 for false; the compiler makes it branch-free.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
