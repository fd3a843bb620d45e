// rot/rotq.h: the rotate-and-quantize building blocks every producer
// shares (families/producers and the stream producers): loading a lane's
// rotation records and a row-group, the 8 Givens layers on a warp's
// 128-float shared slice, the bf16 rounding, and the e4m3 encode with its
// code-domain row sums.
//
// The arithmetic contract (the Go mirror refimpl.RotateF32 and
// refimpl.QuantizeAct* follow it op for op; no contraction: the Makefile
// builds with -ffp-contract=off, and the file says so itself, so every fma
// is an explicit __builtin_fmaf on both targets):
//   v[c]  = float(x[c]) * chs[c]                      one rounded product
//   per layer r = 0..7, per pair (i, j, cos, sin):
//     v[i] = fmaf(cos, v[i], sin * v[j])             sin*v[j] rounded first
//     v[j] = fmaf(cos, v[j], -(sin * v[i_old]))
//   per-group: scale = amax/448; code = scale == 0 ? 0 : e4m3(v / scale)
//   per-token: xr = bf16(v); amax over float(xr); As = max_g (amax_g / 448);
//              code = As == 0 ? 0 : e4m3(float(xr) / As)
//   rsum = float(S) / 512, S = the exact integer sum of 512 * decoded code
// e4m3 is the contract-wrapped hardware convert (gate e4m3-device-sweep
// proves it equals the software encoder on all 2^32 inputs).
//
// Layout of a warp's work on one row-group: lane l owns channels 4l..4l+3
// of the group's 128 and pairs l and l+32 of each layer.
#pragma once
#include "format/e4m3.h"
#include "format/tiled.h"

#pragma clang fp contract(off)

#define KROT 8
#define GROUP 128

struct f4 { float x, y, z, w; };


DEVICE float warp_max(float v) {
  for (u32 m = 16; m > 0; m >>= 1) v = __builtin_fmaxf(v, shfl_xor_f32(v, m));
  return v;
}
DEVICE i32 warp_sum_i32(i32 v) {
  for (u32 m = 16; m > 0; m >>= 1) v += shfl_xor_i32(v, m);
  return v;
}


// 512 * the decoded value of a code, exactly, as an integer (NaN codes are
// never produced by the encoder).
DEVICE i32 e4m3_x512(u32 c) {
  u32 e = (c >> 3) & 15u, m = c & 7u;
  i32 v = e ? (i32)((8u + m) << (e - 1u)) : (i32)m;
  return (c & 0x80u) ? -v : v;
}

// Four codes of v / scale (0 when scale == 0), packed low byte first.
DEVICE u32 encode4(f4 v, float scale) {
  if (scale == 0.0f) return 0;
  u32 lo = e4m3_encode2_hw(v.x / scale, v.y / scale);
  u32 hi = e4m3_encode2_hw(v.z / scale, v.w / scale);
  return lo | (hi << 16);
}
DEVICE i32 sum4_x512(u32 c) {
  return e4m3_x512(c & 0xFFu) + e4m3_x512((c >> 8) & 0xFFu) + e4m3_x512((c >> 16) & 0xFFu) + e4m3_x512(c >> 24);
}

// A lane's rotation records for one (partition, group): layer r's pairs l
// and l+32 as indices i0 | j0<<8 | i1<<16 | j1<<24 and (cos0, sin0, cos1, sin1).
struct Records {
  u32 idx[KROT];
  f4 cs[KROT];
};

DEVICE void load_records(Records &rec, const u32 *ridx, const f4 *rcs, u32 p, u32 g, u32 G, u32 lane) {
#pragma unroll
  for (u32 r = 0; r < KROT; r++) {
    u64 o = ((u64)(p * KROT + r) * G + g) * 32u + lane;
    rec.idx[r] = ridx[o];
    rec.cs[r] = rcs[o];
  }
}

// Loads the lane's 4 channels 4l..4l+3 of row m, group g, times the channel
// scales, into the warp's slice.
DEVICE void load_row_group(float *sv, const u16 *x, const f4 &chs4, u64 rowoff, u32 g, u32 lane) {
  const u32 *xp = (const u32 *)(x + rowoff + (u64)g * GROUP + 4u * lane);
  u32 w0 = xp[0], w1 = xp[1];
  sv[4 * lane + 0] = bf16_to_f32(w0 & 0xFFFFu) * chs4.x;
  sv[4 * lane + 1] = bf16_to_f32(w0 >> 16) * chs4.y;
  sv[4 * lane + 2] = bf16_to_f32(w1 & 0xFFFFu) * chs4.z;
  sv[4 * lane + 3] = bf16_to_f32(w1 >> 16) * chs4.w;
}

// The 8 layers on the warp's slice. A layer's two pairs per lane are
// disjoint, so all four loads go before the four stores (one shared-memory
// latency per layer, not two); layers are separated by a warp-level sync.
DEVICE void rotate_group(float *sv, const Records &rec) {
  warp_sync_all();
#pragma unroll
  for (u32 r = 0; r < KROT; r++) {
    u32 w = rec.idx[r];
    u32 i0 = w & 0xFFu, j0 = (w >> 8) & 0xFFu, i1 = (w >> 16) & 0xFFu, j1 = w >> 24;
    float a0 = sv[i0], b0 = sv[j0], a1 = sv[i1], b1 = sv[j1];
    f4 cs = rec.cs[r];
    sv[i0] = __builtin_fmaf(cs.x, a0, cs.y * b0);
    sv[j0] = __builtin_fmaf(cs.x, b0, -(cs.y * a0));
    sv[i1] = __builtin_fmaf(cs.z, a1, cs.w * b1);
    sv[j1] = __builtin_fmaf(cs.z, b1, -(cs.w * a1));
    warp_sync_all();
  }
}

DEVICE f4 read4(const float *sv, u32 lane) {
  return f4{sv[4 * lane], sv[4 * lane + 1], sv[4 * lane + 2], sv[4 * lane + 3]};
}
DEVICE float amax4(f4 v) {
  return __builtin_fmaxf(__builtin_fmaxf(__builtin_fabsf(v.x), __builtin_fabsf(v.y)),
                         __builtin_fmaxf(__builtin_fabsf(v.z), __builtin_fabsf(v.w)));
}
DEVICE f4 round_bf16_4(f4 v, u32 &w0, u32 &w1) {
  u32 a = bf16_rne(v.x), b = bf16_rne(v.y), c = bf16_rne(v.z), d = bf16_rne(v.w);
  w0 = a | (b << 16);
  w1 = c | (d << 16);
  return f4{bf16_to_f32(a), bf16_to_f32(b), bf16_to_f32(c), bf16_to_f32(d)};
}

// Stores 4 codes of (row m, columns k..k+3) of partition p.
DEVICE void store_codes(u8 *codes, u32 c, u32 p, u32 m, u32 k, u32 Mrows, u32 K, u32 tiled) {
  if (tiled) {
    u64 base = (u64)p * Mrows * K; // Mrows = Mpad (a multiple of 16) in tiled mode
    *(u32 *)(codes + base + tiled_off(m, k, K)) = c;
  } else {
    *(u32 *)(codes + ((u64)p * Mrows + m) * K + k) = c;
  }
}

// The token scale of a row from its group amaxes: every warp computes it
// itself (max is exact, so the order does not matter).
DEVICE float token_scale(const float *gam, u32 G, u32 lane) {
  float a = 0.0f;
  for (u32 g = lane; g < G; g += 32) a = __builtin_fmaxf(a, gam[g] / 448.0f);
  return warp_max(a);
}

// Encodes one group of a row from its 4 rounded values per lane, writes
// codes and the group's row sum.
DEVICE void encode_group(f4 v, float As, u8 *codes, float *rsum, u32 p, u32 m, u32 g, u32 M, u32 Mrows, u32 K,
                         u32 tiled, u32 lane) {
  u32 c = encode4(v, As);
  store_codes(codes, c, p, m, g * GROUP + 4u * lane, Mrows, K, tiled);
  i32 S = warp_sum_i32(sum4_x512(c));
  if (lane == 0) rsum[((u64)p * M + m) * (K / GROUP) + g] = (float)S / 512.0f;
}

// Rows m in [M, Mpad) of a tiled output are written as zero codes.
DEVICE void zero_pad_row(u8 *codes, u32 p, u32 m, u32 Mpad, u32 K) {
  for (u32 k = tid_x() * 4u; k < K; k += bdim_x() * 4u) store_codes(codes, 0, p, m, k, Mpad, K, 1);
}
