package dequant

import "encoding/binary"

// The IQ2, IQ3 and IQ1 types: each group of 8 (IQ3: 4) weights is an index into one of ggml's grids
// (codebooks.txt), whose entry's bytes are the group's magnitudes (IQ1: signed values), scaled by the
// block's scale times a small per-32 (IQ3_S: per-64) sub-scale, with a sign per weight (IQ2_XXS,
// IQ2_XS and IQ3_XXS store 7 sign bits per group, the 8th their parity: ksigns).

// gridByte is byte j (little-endian) of grid entry g.
func gridByte(g uint64, j int) float32 { return float32(uint8(g >> (8 * j))) }

// signed is v times −1 where bit j of the sign byte s is set (ggml multiplies by ±1: exact).
func signed(v float32, s uint64, j int, c *codebooks) float32 {
	if s&c.kmask[j] != 0 {
		return -v
	}
	return v
}

// subScale is d·(0.5 + s)·k, ggml's IQ2 and IQ3_XXS sub-block scale, each product rounded.
func subScale(d float32, s uint32, k float32) float32 { return mul(mul(d, 0.5+float32(s)), k) }

// group8 writes the 8 weights of a grid entry g scaled by db, signed by the sign byte s.
func group8(y []float32, db float32, g, s uint64, c *codebooks) {
	for j := range 8 {
		y[j] = signed(mul(db, gridByte(g, j)), s, j, c)
	}
}

// group4x2 writes the 8 weights of two IQ3 grid entries (4 each) scaled by db, signed by s.
func group4x2(y []float32, db float32, g1, g2, s uint64, c *codebooks) {
	for j := range 4 {
		y[j] = signed(mul(db, gridByte(g1, j)), s, j, c)
		y[j+4] = signed(mul(db, gridByte(g2, j)), s, j+4, c)
	}
}

func iq2xxs(b []byte, y []float32) {
	c, d := books(), half(b)
	for ib := range 8 {
		idx, aux := b[2+8*ib:6+8*ib], binary.LittleEndian.Uint32(b[6+8*ib:])
		db := subScale(d, aux>>28, 0.25)
		for l := range 4 {
			group8(y[32*ib+8*l:], db, c.iq2xxs[idx[l]], c.ksigns[aux>>(7*l)&127], c)
		}
	}
}

func iq2xs(b []byte, y []float32) {
	c, d, qs, scales := books(), half(b), b[2:66], b[66:74]
	for ib := range 8 {
		db := [2]float32{subScale(d, uint32(scales[ib]&0xf), 0.25), subScale(d, uint32(scales[ib]>>4), 0.25)}
		for l := range 4 {
			q := binary.LittleEndian.Uint16(qs[2*(4*ib+l):])
			group8(y[32*ib+8*l:], db[l/2], c.iq2xs[q&511], c.ksigns[q>>9], c)
		}
	}
}

func iq2s(b []byte, y []float32) {
	c, d, qs, signs, qh, scales := books(), half(b), b[2:34], b[34:66], b[66:74], b[74:82]
	for ib := range 8 {
		db := [2]float32{subScale(d, uint32(scales[ib]&0xf), 0.25), subScale(d, uint32(scales[ib]>>4), 0.25)}
		for l := range 4 {
			i := int(qs[4*ib+l]) | int(qh[ib])>>(2*l)&3<<8
			group8(y[32*ib+8*l:], db[l/2], c.iq2s[i], uint64(signs[4*ib+l]), c)
		}
	}
}

func iq3xxs(b []byte, y []float32) {
	c, d, qs, ss := books(), half(b), b[2:66], b[66:98]
	for ib := range 8 {
		aux := binary.LittleEndian.Uint32(ss[4*ib:])
		db := subScale(d, aux>>28, 0.5)
		for l := range 4 {
			q := qs[8*ib+2*l:]
			group4x2(y[32*ib+8*l:], db, c.iq3xxs[q[0]], c.iq3xxs[q[1]], c.ksigns[aux>>(7*l)&127], c)
		}
	}
}

func iq3s(b []byte, y []float32) {
	c, d, qs, qh, signs, scales := books(), half(b), b[2:66], b[66:74], b[74:106], b[106:110]
	for ib := range 8 {
		db := mul(d, float32(1+2*int(scales[ib/2]>>(4*(ib%2))&0xf)))
		for l := range 4 {
			q, h := qs[8*ib+2*l:], int(qh[ib])
			g1 := c.iq3s[int(q[0])|h>>(2*l)&1<<8]
			g2 := c.iq3s[int(q[1])|h>>(2*l+1)&1<<8]
			group4x2(y[32*ib+8*l:], db, g1, g2, uint64(signs[4*ib+l]), c)
		}
	}
}

// iq1Delta is IQ1_S's and IQ1_M's shift of a group's grid values, by ±1/8.
func iq1Delta(neg bool) float32 {
	if neg {
		return -0.125
	}
	return 0.125
}

// iq1Group writes the 8 weights of IQ1 grid entry g: dl·(value + delta), the sum exact.
func iq1Group(y []float32, dl float32, g uint64, delta float32) {
	for j := range 8 {
		y[j] = mul(dl, float32(int8(g>>(8*j)))+delta)
	}
}

func iq1s(b []byte, y []float32) {
	c, d, qs, qh := books(), half(b), b[2:34], b[34:50]
	for ib := range 8 {
		h := binary.LittleEndian.Uint16(qh[2*ib:])
		dl, delta := mul(d, float32(2*int(h>>12&7)+1)), iq1Delta(h&0x8000 != 0)
		for l := range 4 {
			iq1Group(y[32*ib+8*l:], dl, c.iq1s[int(qs[4*ib+l])|int(h>>(3*l)&7)<<8], delta)
		}
	}
}

func iq1m(b []byte, y []float32) {
	c, qs, qh, raw := books(), b[0:32], b[32:48], b[48:56]
	var sc [4]uint16
	for i := range sc {
		sc[i] = binary.LittleEndian.Uint16(raw[2*i:])
	}
	// The block scale is a half whose four nibbles are the top nibbles of the four scale words.
	d := halfBits(sc[0]>>12 | sc[1]>>8&0xf0 | sc[2]>>4&0xf00 | sc[3]&0xf000)
	for ib := range 8 {
		s := int(sc[ib/2] >> (6 * (ib % 2)))
		dl := [2]float32{mul(d, float32(2*(s&7)+1)), mul(d, float32(2*(s>>3&7)+1))}
		for l := range 4 {
			h := qh[2*ib+l/2] >> (4 * (l % 2)) // the group's 3 index bits and its delta's sign
			i := int(qs[4*ib+l]) | int(h&7)<<8
			iq1Group(y[32*ib+8*l:], dl[l/2], c.iq1s[i], iq1Delta(h&8 != 0))
		}
	}
}
