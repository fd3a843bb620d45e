// int5.h: the fifth-bit plane of int5 weights (docs/formats.md, "int5";
// Go: refimpl/int5.go, which mirrors every function here).
//
// A 4-bit weight word w holds 8 codes, nibble i at bits 4i..4i+3, in the
// AWQ order (checkpoint words: column 8c + AWQOrder[i]; GEMM words: local
// index l = AWQOrder[i], arch/mma.h). Its companion is one plane byte: bit i
// is the fifth bit (value 16) of nibble i's code. A 32-bit plane word holds
// the bytes of four weight words: byte q (bits 8q..8q+7) belongs to w[q]
// (in the checkpoint: AWQ words 4c..4c+3 of a row).
//
//   int5_spread(p)      the unpack of one plane word, per byte q:
//                         even[q]: bit 8b+4 = bit 2b of byte q   (nibble 2b)
//                         odd[q]:  bit 8b+4 = bit 2b+1 of byte q (nibble 2b+1)
//                       b = 0..3, every other bit zero
//   int5_codes_even(w, even)  byte b = the 5-bit code of nibble 2b of w
//   int5_codes_odd(w, odd)    byte b = the 5-bit code of nibble 2b+1
//   int5_pair_fifth(even, odd, j)  the fifth bits of nibbles j and j+4 at
//                       bits 4 and 20: what pair j of the sm_90 f16 form
//                       ((w >> 4j) & 0x000F000F) needs ORed in
//   int5_signed(c)      a code (bits 0..4) as the integer c - 16
//   int5_s8x4(y)        four codes, one per byte, as int8 c - 16
//   int5_e4m3x4(y)      four codes, one per byte, as e4m3 bytes of c - 16
//                       (the wrapped hardware encoder; every c - 16 in
//                       -16..15 is exact in e4m3)
//   w5_pair_f16x2(w, fifth, j)   sm_90: f16x2 (c_2j - 16, c_2j+1 - 16) of
//                       the local pair j (nibbles j, j+4), the 4-bit
//                       magic-number form of mma.h widened by bit 4
//
// Why even/odd: nibble 2b is the low nibble of byte b and 2b+1 the high
// one, so one mask per word puts the fifth bit at bit 4 of each byte, right
// above its low nibble (codes_even) or above the nibble shifted down by 4
// (codes_odd): the byte codes gfx1201's weight LUT (w4_lut_e4m3 reads bits
// 0..3 of each byte of w and of w >> 4) and an int8 operand take. The sm_90
// f16 pairs take the same words shifted by 0 or 8 (int5_pair_fifth).
#pragma once
#include "arch/arch.h"
#include "format/e4m3.h"

struct Int5Fifth { u32 even[4], odd[4]; };

// Bits 0, 2, 4, 6 of x (the rest ignored) to bits 4, 12, 20, 28. The
// multiply moves bit 2b to 2b + 4 + 6b = 8b + 4; the other partial products
// land on bits 6, 8, 10..26 (and carry into 11, 17, 23 where two meet),
// never on a bit 8b + 4. Both factors are below 2^24: one 24-bit multiply.
DEVICE u32 int5_spread4(u32 x) { return ((x & 0x55u) * 0x00410410u) & 0x10101010u; }

DEVICE Int5Fifth int5_spread(u32 p) {
  Int5Fifth f;
#pragma unroll
  for (u32 q = 0; q < 4u; q++) {
    f.even[q] = int5_spread4(p >> (8u * q));
    f.odd[q] = int5_spread4(p >> (8u * q + 1u));
  }
  return f;
}

DEVICE u32 int5_codes_even(u32 w, u32 even) { return (w & 0x0F0F0F0Fu) | even; }
DEVICE u32 int5_codes_odd(u32 w, u32 odd) { return ((w >> 4) & 0x0F0F0F0Fu) | odd; }

// Pair j = nibbles j and j+4: j even takes even's bytes j/2 and j/2 + 2,
// j odd odd's, moved down to bits 4 and 20.
DEVICE u32 int5_pair_fifth(u32 even, u32 odd, u32 j) {
  return (((j & 1u) ? odd : even) >> (8u * (j >> 1))) & 0x00100010u;
}

// c ^ 16 is c - 16 in 5-bit two's complement; the shift pair sign-extends.
DEVICE i32 int5_signed(u32 c) { return (i32)((c ^ 16u) << 27) >> 27; }

// Per byte: t = (c ^ 16) in bits 0..4, bit 4 the sign of c - 16; 14 * s
// (= (s << 4) - (s << 1), no borrow: 16s >= 2s per byte) sets bits 5..7
// where the sign is set.
DEVICE u32 int5_s8x4(u32 y) {
  const u32 t = (y & 0x1F1F1F1Fu) ^ 0x10101010u;
  const u32 s = t & 0x10101010u;
  return t | ((s << 4) - (s << 1));
}

DEVICE u32 int5_e4m3x4(u32 y) {
  const float v0 = (float)int5_signed(y), v1 = (float)int5_signed(y >> 8);
  const float v2 = (float)int5_signed(y >> 16), v3 = (float)int5_signed(y >> 24);
  return e4m3_encode2_hw(v0, v1) | (e4m3_encode2_hw(v2, v3) << 16);
}

#if defined(__NVPTX__)
// f16 (1024 + c) is 0x6400 | c for c < 1024; minus f16 1040 (0x6410) gives
// c - 16 exactly.
DEVICE u32 w5_pair_f16x2(u32 w, u32 fifth, u32 j) {
  u32 x = ((w >> (4u * j)) & 0x000F000Fu) | fifth | 0x64006400u, r;
  asm("sub.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(0x64106410u));
  return r;
}
#endif
