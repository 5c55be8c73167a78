package values

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"

	"github.com/stdiff/stdiff/canon/tensor"
)

func byteReader(b []byte) io.ReaderAt { return bytes.NewReader(b) }

// encodeAll stores values as dt: floats rounded with Encode, integers converted (saturating),
// C64 as (v, −v/2).
func encodeAll(dt tensor.DType, v []float64) []byte {
	f := formats[dt]
	var out []byte
	switch f.kind {
	case kF4, kF6:
		codes := make([]uint32, len(v))
		for i, x := range v {
			codes[i] = f.mini.encode(x)
		}
		return pack(f.bits, codes)
	case kF64:
		for _, x := range v {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(x))
		}
	case kC64:
		for _, x := range v {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(x)))
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(-x/2)))
		}
	case kI16, kU16, kI32, kU32, kI64, kU64:
		for _, x := range v {
			switch f.kind {
			case kI16:
				out = binary.LittleEndian.AppendUint16(out, uint16(int16(max(-32768, min(32767, x)))))
			case kU16:
				out = binary.LittleEndian.AppendUint16(out, uint16(max(0, min(65535, x))))
			case kI32:
				out = binary.LittleEndian.AppendUint32(out, uint32(int32(max(-1<<31, min(1<<31-1, x)))))
			case kU32:
				out = binary.LittleEndian.AppendUint32(out, uint32(max(0, min(1<<32-1, x))))
			case kI64:
				out = binary.LittleEndian.AppendUint64(out, uint64(int64(x)))
			case kU64:
				out = binary.LittleEndian.AppendUint64(out, uint64(max(0, x)))
			}
		}
	default:
		if f.mini == nil { // U8, I8, BOOL
			for _, x := range v {
				switch dt {
				case "U8":
					out = append(out, uint8(max(0, min(255, x))))
				case "I8":
					out = append(out, uint8(int8(max(-128, min(127, x)))))
				default:
					out = append(out, uint8(b2i(x != 0)))
				}
			}
			return out
		}
		for _, x := range v {
			c := f.mini.encode(x)
			switch f.bits {
			case 8:
				out = append(out, uint8(c))
			case 16:
				out = binary.LittleEndian.AppendUint16(out, uint16(c))
			case 32:
				out = binary.LittleEndian.AppendUint32(out, c)
			}
		}
	}
	return out
}

// pack writes w-bit codes as a little-endian bit stream, written here bit by bit, independently of
// the decoder's word arithmetic.
func pack(w int, codes []uint32) []byte {
	out := make([]byte, (len(codes)*w+7)/8)
	for i, c := range codes {
		for j := range w {
			if c>>j&1 != 0 {
				bit := i*w + j
				out[bit/8] |= 1 << (bit % 8)
			}
		}
	}
	return out
}
