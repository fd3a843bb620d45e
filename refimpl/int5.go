package refimpl

import "fmt"

// The int5 weight format (docs/formats.md, "int5"). A 5-bit code c (0..31)
// is stored as two parts:
//   - its low nibble c & 15 in the AWQ words exactly as a 4-bit code
//     (qweight / qzeros), so the 4-bit unpack reads it unchanged;
//   - its fifth bit c >> 4 in a bit plane of int32 words [rows, n/32]
//     (qweight_hi / qzeros_hi), read as unsigned.
//
// Plane order: plane word c of a row holds the fifth bits of the four AWQ
// words 4c..4c+3 of that row, one byte each, in their nibble order: bit
// 8q + i (value 1 << (8q+i)) is the fifth bit of nibble i of AWQ word 4c+q,
// that is of column 32c + 8q + AWQOrder[i]. Every 4-bit word thus has one
// companion byte whose bit i belongs to nibble i, and the device unpack
// (Int5Spread, hipsrc/format/int5.h) needs no bit permutation: the GEMMs'
// weight words keep their codes in the same nibble order (code l in nibble
// (l>>1) + 4(l&1), the AWQ order), so one unpack serves the checkpoint
// words and the GEMM words alike. In plain column order (bit j = column
// 32c+j) bit j would belong to nibble awqSlot[j], and every byte would need
// a bit shuffle before the spread.
//
// Dequant is w = (q - z) * s with q, z in 0..31, as for int4.

// int5Bit is the plane bit (0..31) of column n within its plane word n/32.
func int5Bit(n int) uint { return uint(8*((n%32)/8)) + awqSlot[n%8] }

// PackInt5 packs 5-bit codes [rows, n] into the low-nibble AWQ words
// [rows, n/8] and the fifth-bit plane [rows, n/32]. It panics if n is not
// a multiple of 32 or a code is not 5-bit.
func PackInt5(codes []uint8, rows, n int) (low, high []int32) {
	checkPack(len(codes), rows, n, 32)
	lo := make([]uint8, len(codes))
	high = make([]int32, rows*n/32)
	for idx, c := range codes {
		if c > 31 {
			panic(fmt.Sprintf("refimpl: PackInt5: code %d at %d is not 5-bit", c, idx))
		}
		lo[idx] = c & 15
		r, col := idx/n, idx%n
		high[r*(n/32)+col/32] |= int32(uint32(c>>4) << int5Bit(col))
	}
	return PackAWQ(lo, rows, n), high
}

// UnpackInt5 is the inverse of PackInt5.
func UnpackInt5(low, high []int32, rows, n int) []uint8 {
	checkPack(len(high)*32, rows, n, 32)
	codes := UnpackAWQ(low, rows, n)
	for r := 0; r < rows; r++ {
		for col := 0; col < n; col++ {
			codes[r*n+col] |= PlaneBit(high[r*(n/32):], col) << 4
		}
	}
	return codes
}

// PlaneBit returns column n's fifth bit from a row of plane words.
func PlaneBit(row []int32, n int) uint8 { return uint8(uint32(row[n/32]) >> int5Bit(n) & 1) }

// The fifth-bit unpack. A plane word p is the companion of four 4-bit
// weight words w[0..3] (byte q of p belongs to w[q]). Int5Spread places
// each byte's bits beside the nibbles they extend:
//
//	even[q]: bit 8b + 4 = bit 2b   of byte q (nibble 2b's fifth bit),   b = 0..3
//	odd[q]:  bit 8b + 4 = bit 2b+1 of byte q (nibble 2b+1's fifth bit), b = 0..3
//
// every other bit zero. Nibble 2b is the low nibble of byte b of w and
// nibble 2b+1 the high one, so
//
//	(w & 0x0F0F0F0F) | even[q]         byte b = the 5-bit code of nibble 2b
//	((w >> 4) & 0x0F0F0F0F) | odd[q]   byte b = the 5-bit code of nibble 2b+1
//
// (the bytes gfx1201's weight LUT and an int8 operand read), and pair j of
// the sm_90 f16 form (nibbles j and j+4 at bits 0..3 and 16..19 of w >> 4j)
// finds its fifth bits at bits 4 and 20 of (j even ? even : odd) >> 8(j>>1).

// Int5SpreadMul and Int5SpreadMask are the spread's constants: the multiply
// moves bit 2b of (x & 0x55) to bit 8b + 4 (2b + 4 + 6b); the other
// partial products land on bits 6, 8, 10..26 and 11, 17, 23 (the carries
// where two of them coincide), none of them on a bit 8b + 4, so masking
// keeps exactly the four wanted bits. x & 0x55 and the constant are both
// below 2^24: one 24-bit multiply (v_mul_u32_u24 on gfx1201).
const (
	Int5SpreadMul  = 0x00410410
	Int5SpreadMask = 0x10101010
)

// Int5Spread4 is int5_spread4: bits 0, 2, 4, 6 of x (the rest ignored) to
// bits 4, 12, 20, 28.
func Int5Spread4(x uint32) uint32 { return (x & 0x55) * Int5SpreadMul & Int5SpreadMask }

// Int5SpreadWord is word k of the device unpack (int5_spread in
// hipsrc/format/int5.h), operation for operation: k = q is even[q] =
// Int5Spread4(p >> 8q), k = 4 + q is odd[q] = Int5Spread4(p >> (8q+1)).
// One word per call keeps the exhaustive gate's loop in registers.
func Int5SpreadWord(p uint32, k int) uint32 { return Int5Spread4(p >> (8*uint(k&3) + uint(k>>2))) }

// Int5Spread is the device unpack of plane word p: the eight words of
// Int5SpreadWord.
func Int5Spread(p uint32) (even, odd [4]uint32) {
	for q := 0; q < 4; q++ {
		even[q], odd[q] = Int5SpreadWord(p, q), Int5SpreadWord(p, 4+q)
	}
	return
}

// Int5SpreadRef is the plain form of the spread, bit by bit from the
// definition: a reference for Int5Spread and the device unpack.
func Int5SpreadRef(p uint32) (even, odd [4]uint32) {
	for q := 0; q < 4; q++ {
		for b := 0; b < 4; b++ {
			if p&(1<<(8*q+2*b)) != 0 {
				even[q] |= 1 << (8*b + 4)
			}
			if p&(1<<(8*q+2*b+1)) != 0 {
				odd[q] |= 1 << (8*b + 4)
			}
		}
	}
	return
}

// Int5Signed is the 5-bit code c (bits 0..4; the rest ignored) as the
// integer c - 16 in -16..15 that enters the matrix op: c ^ 16 is c - 16 in
// 5-bit two's complement, and a shift pair sign-extends it
// (int5_signed in int5.h).
func Int5Signed(c uint32) int32 { return int32((c^16)<<27) >> 27 }
