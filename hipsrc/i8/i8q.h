// i8/i8q.h: the int8 activation encode of the I8 producers
// (families/i8/i8prod.hip), on top of the shared rotate blocks of
// rot/rotq.h. The arithmetic contract (the Go mirror refimpl.QuantizeInt8
// and refimpl.QuantizeAct*Int8 follow it op for op):
//   scale = amax / 127                        one correctly rounded division
//   q     = v / scale                         one correctly rounded division
//   code  = clamp(rne(q), -127, 127)          rintf: round half to even
//   code  = 0 when scale == 0 or q is NaN     (an all-zero group or row)
//   rsum  = Σ codes of the group, int32       exact (|rsum| <= 16256)
// The clamp is explicit on both sides: -128 is never produced.
#pragma once
#include "rot/rotq.h"

#pragma clang fp contract(off)

#define I8MAX 127

// One int8 code of v / scale (scale != 0), as the byte the GEMM reads.
DEVICE i32 i8_code(float v, float scale) {
  const float q = v / scale;
  const float r = __builtin_fminf(__builtin_fmaxf(__builtin_rintf(q), -(float)I8MAX), (float)I8MAX);
  return q == q ? (i32)r : 0;
}

// Four codes of v / scale, packed low byte first, and their sum.
DEVICE u32 i8_encode4(f4 v, float scale, i32 &sum) {
  if (scale == 0.0f) {
    sum = 0;
    return 0;
  }
  const i32 a = i8_code(v.x, scale), b = i8_code(v.y, scale), c = i8_code(v.z, scale), d = i8_code(v.w, scale);
  sum = a + b + c + d;
  return (u32)(a & 0xFF) | ((u32)(b & 0xFF) << 8) | ((u32)(c & 0xFF) << 16) | ((u32)(d & 0xFF) << 24);
}

// The int8 token scale of a row from its group amaxes (max is exact, so the
// order does not matter): max_g (amax_g / 127).
DEVICE float i8_token_scale(const float *gam, u32 G, u32 lane) {
  float a = 0.0f;
  for (u32 g = lane; g < G; g += 32) a = __builtin_fmaxf(a, gam[g] / (float)I8MAX);
  return warp_max(a);
}

// Encodes one group of a row from its 4 values per lane with the token
// scale As; writes codes (row-major or tiled) and the group's int32 row sum.
DEVICE void i8_encode_group(f4 v, float As, u8 *codes, i32 *rsum, u32 p, u32 m, u32 g, u32 M, u32 Mrows, u32 K,
                            u32 tiled, u32 lane) {
  i32 s;
  const u32 c = i8_encode4(v, As, s);
  store_codes(codes, c, p, m, g * GROUP + 4u * lane, Mrows, K, tiled);
  s = warp_sum_i32(s);
  if (lane == 0) rsum[((u64)p * M + m) * (K / GROUP) + g] = s;
}
