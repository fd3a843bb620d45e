// e4m3.h: the fp8 e4m3fn codec every producer uses (contract in
// docs/formats.md): NaN -> 0x00; |x| >= 448 and Inf -> sign|0x7E;
// round to nearest even; a zero result is 0x00, never 0x80.
//
//   e4m3_encode_sw(u)   software encoder on float32 bits; the same integer
//                       algorithm as refimpl.EncodeE4M3Bits, line for line.
//   e4m3_encode2_hw(lo, hi)  hardware convert behind the contract wrapper
//                       (NaN and negative-zero fixed up); bytes lo | hi<<8.
//   e4m3_decode_sw(c)   float32 bits of a code; NaN codes -> quiet NaN.
#pragma once
#include "arch/arch.h"

DEVICE u32 e4m3_encode_sw(u32 u) {
  u32 sign = (u >> 24) & 0x80u;
  u32 a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0;            // NaN
  if (a >= 0x43E00000u) return sign | 0x7Eu; // >= 448 and Inf saturate
  if (a <= 0x3A800000u) return 0;            // <= 2^-10 rounds to zero
  u32 exp = a >> 23;
  if (exp < 121u) { // e4m3 subnormal: value / 2^-9 rounded to an integer 1..8
    u32 mant = (a & 0x7FFFFFu) | 0x800000u;
    u32 shift = 141u - exp;
    u32 q = mant >> shift;
    u32 rem = mant & ((1u << shift) - 1u);
    u32 half = 1u << (shift - 1u);
    q += (rem > half || (rem == half && (q & 1u))) ? 1u : 0u;
    return sign | q;
  }
  u32 r = (a + 0x7FFFFu + ((a >> 20) & 1u)) >> 20;
  return sign | (r - (120u << 3));
}

// The contract wrapper around the hardware convert. It tests the value
// before the convert (x), not what reached the hardware: on sm_90 a NaN
// converts to 0x7F; on gfx1201 hw_e4m3x2_sat's clamp has already turned it
// into -448 (fmaxf returns the non-NaN operand), which converts to 0xFE.
DEVICE u32 e4m3_fix(float x, u32 c) {
  if (x != x) c = 0;     // NaN -> 0x00, whatever the hardware gave
  if (c == 0x80u) c = 0; // negative zero result -> 0x00
  return c;
}

DEVICE u32 e4m3_encode2_hw(float lo, float hi) {
  u32 r = hw_e4m3x2_sat(lo, hi);
  return e4m3_fix(lo, r & 0xFFu) | (e4m3_fix(hi, r >> 8) << 8);
}

DEVICE u32 e4m3_decode_sw(u32 c) {
  u32 sign = (c & 0x80u) << 24;
  u32 e = (c >> 3) & 0xFu, m = c & 7u;
  if (e == 0xFu && m == 7u) return sign | 0x7FC00000u;
  if (e == 0u) return sign | f32_bits((float)m * (1.0f / 512.0f));
  return sign | ((e + 120u) << 23) | (m << 20);
}
