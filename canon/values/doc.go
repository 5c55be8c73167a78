// Package values reads tensor values: it decodes every dtype the reference knows into float64, encodes
// float64 values into the narrow float formats with round-to-nearest-even, and computes statistics of
// one tensor (Summary → Stats) and of two tensors of the same element count (PairStats → Diff) in one
// streaming pass. It never holds a tensor whole: bytes are read in chunks of ChunkElements elements,
// on a bounded number of goroutines (package canon/pool), and it never prints.
//
// # Decoding
//
// Bytes are little-endian. Every value of every dtype is exactly a float64, except I64 and U64 beyond
// ±2^53, which round to the nearest float64 (ties to even), and C64, which stands for its modulus
// √(re²+im²) in Decode and Summary (PairStats compares complex numbers as complex numbers).
// BOOL: a zero byte is 0 and any other byte is 1 (numpy reads the buffer the same way).
//
// The float formats, with their bit layouts:
//
//	F64, F32, F16, BF16   IEEE 754 binary64/binary32/binary16 and bfloat16 (binary32's top half)
//	F8_E5M2               S.EEEEE.MM, bias 15, IEEE-like: Inf (E=31, M=0) and NaN (E=31, M≠0)
//	F8_E4M3               S.EEEE.MMM, bias 7, E4M3FN: no Inf, NaN only S.1111.111, max 448
//	F8_E4M3FNUZ           S.EEEE.MMM, bias 8, no Inf, no −0: 0x80 is the only NaN, max 240
//	F8_E5M2FNUZ           S.EEEEE.MM, bias 16, no Inf, no −0: 0x80 is the only NaN, max 57344
//	F8_E8M0               EEEEEEEE unsigned, 2^(E−127), 0xFF is NaN, no zero (0x00 is 2^−127)
//	F6_E2M3               S.EE.MMM, bias 1, no Inf or NaN, max 7.5   (OCP MX v1.0)
//	F6_E3M2               S.EEE.MM, bias 3, no Inf or NaN, max 28    (OCP MX v1.0)
//	F4                    S.EE.M (E2M1), bias 1, no Inf or NaN, max 6 (OCP MX v1.0)
//
// Sub-byte formats are packed as a little-endian bit stream: element i occupies bits [i·w, (i+1)·w) of
// the tensor's bytes, bit j of the stream being bit j%8 (least significant first) of byte j/8. For F4
// that is PyTorch's float4_e2m1fn_x2, the layout the reference's Python bindings write F4 tensors in:
// the first element is the low nibble (torch/headeronly/util/Float4_e2m1fn_x2.h: "val1 : val0" =
// bits "7654 : 3210"). For F6 neither the reference nor any framework that writes safetensors defines
// a packing (the Rust crate only counts bits; PyTorch has no 6-bit dtype; candle and ml_dtypes keep F6
// unpacked, one per byte); the same LSB-first bit stream (the zarr "packbits" codec's order) is the
// one consistent with F4, so four F6 values v0…v3 fill three bytes as the 24-bit little-endian word
// v0 | v1<<6 | v2<<12 | v3<<18.
//
// # Encoding
//
// Encode converts a float64 to a float dtype's code as PyTorch's .to(dtype) does, round to nearest,
// ties to even: F16, BF16, F8_E5M2 overflow to ±Inf; F8_E4M3 and the FNUZ formats turn overflow and
// ±Inf into NaN (they do not saturate); F8_E8M0 follows PyTorch's float8_e8m0fnu (sign ignored, zero
// and values below 2^−127 become 0x00, ties round up); F6 and F4, which PyTorch cannot convert to,
// follow ml_dtypes and the OCP MX spec: overflow and ±Inf saturate to ±max, and NaN has no code.
// A float64 source goes to formats narrower than F32 through float32 in PyTorch (two roundings); the
// rounding check accepts both that result and the directly rounded one.
//
// # Statistics
//
// Counts (elements, NaN, Inf, zeros, subnormals, differing, outside tolerance, rounding mismatches),
// min, max, max |a−b| and its index, and the rounding check are exact. Sums (mean, std, L2 norms,
// mean |a−b|, relative L2, cosine) are float64: plain sums over blocks of 256 elements (at most about
// 256·2^-53 ≈ 3e-14 relative error each), blocks added with Neumaier's compensated summation, chunks
// merged in order; the standard deviation merges blocks' squared deviations with Chan's update, never
// E[x²]−E[x]². Summary counts the codes of a dtype of at most 16 bits (BF16, F16, the 8-, 6- and
// 4-bit formats, the 8- and 16-bit integers, BOOL) instead of decoding them: its blocks are the codes
// of one exponent (128 codes of BF16 or F16) present in a chunk, whose count, sum and squared
// deviations come exactly from integer moments of the counts (one rounding each). On the test tensors
// the results are within 1e-15 of correctly rounded sums (Python's math.fsum over numpy's values), a
// little closer than numpy's own pairwise sums. They are bit for bit the same whatever the number of
// goroutines: CompareTensors, SummarizeTensor, CompareAll and SummarizeAll always split a tensor into
// chunks of ChunkElements elements and merge the partial results in chunk order.
//
// # Many tensors
//
// CompareAll compares many pairs of tensors as `stdiff A B` does: first byte by byte (as cmp does), so
// that equal tensors cost no decoding, then those that differ by value; SummarizeAll summarises many
// tensors. Both hand chunks of every tensor to a bounded number of goroutines, fewer when their buffers
// would not fit in Options.Memory, and report each tensor as soon as it is done.
package values
