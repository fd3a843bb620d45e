// ewrot.hip: the elementwise-fed rotate-and-quantize producers. Each runs
// one elementwise op on bf16 inputs, rounds the op's result to bf16, and
// feeds it to the producer chain of hipsrc/rot/rotq.h (channel scale, the
// 8 Givens layers, e4m3 quantize), so the bytes equal those of the op
// kernel followed by the existing producer (families/producers).
//
// Ops (the mode argument; ewrot.OpModes in Go):
//   0 silu-mul      in a [M, 2K] (g = columns 0..K-1, u = K..2K-1, vLLM's
//                   SiluAndMul layout):  y = bf16(float(bf16(g * sig(g))) * u)
//   1 sigmoid-gate  in a = x [M, K], b = gate [M, K]:
//                   y = bf16(x * float(bf16(sig(gate))))
//   2 gated-norm    in a = x [M, K], b = z [M, K], w [D] (one weight per
//                   head of D channels, D a multiple of 128 dividing K):
//                   S   = the head's sum of x*x (order below)
//                   r   = 1 / sqrt(S / D + eps)
//                   y   = bf16(((x * r) * w) * (z * sig(z)))   rounded once
// where sig(v) = 1 / (1 + ew_expf(-v)) and every product, sum, quotient and
// sqrt is one correctly rounded float32 op (no contraction; the division
// and sqrt are IEEE on both targets, as encode4's v / scale already is).
// The head sum: lane l squares its channels 4l..4l+3 of each 128-group and
// adds them left to right, the warp adds the 32 partials by the xor
// butterfly (masks 16, 8, 4, 2, 1; every lane ends with the same bits),
// and the head's groups are added in order starting from 0.
//
// ew_expf is a software exp (the vendor expf is an approximation that
// differs between targets): clamp v to [-104, 89], n = rint(v * log2e),
// r = fma(-n, ln2_lo, fma(-n, ln2_hi, v)), the degree-7 Taylor polynomial
// of e^r by Horner with explicit fmas, then times 2^(n/2) and 2^(n-n/2)
// (two exact power-of-two factors, so overflow and subnormal results round
// once). The Go mirror (ewrot.ExpF32) is the same op sequence.
//
// Entry points:
//   ew_op_bf16      the unfused op: bf16 rows [M, K] (the producers' input)
//   ew_rotq_group   decode band, as pq_rotq_group: codes [P,M,K], group
//                   scales [P,M,G], row sums [P,M,G], all partitions in one launch
//   ew_rotq_token   per token, as pq_rotq_token: codes (row-major or
//                   fragment-tiled, pad rows zero), token scales [P,M],
//                   row sums [P,M,G]
#include "rot/rotq.h"

#pragma clang fp contract(off)

#define WARPS 8
#define MAXK 17408

// The coefficients and constants of ew_expf, as float32 bit patterns (the
// Go mirror reads the same bits; TestExpConstantsMatchKernel ties them).
#define EXP_LOG2E 0x1.715476p+0f
#define EXP_LN2_HI 0x1.63p-1f
#define EXP_LN2_LO -0x1.bd0106p-13f
#define EXP_C7 0x1.a01a02p-13f
#define EXP_C6 0x1.6c16c2p-10f
#define EXP_C5 0x1.111112p-7f
#define EXP_C4 0x1.555556p-5f
#define EXP_C3 0x1.555556p-3f

DEVICE float ew_expf(float v) {
  v = __builtin_fminf(__builtin_fmaxf(v, -104.0f), 89.0f);
  float n = __builtin_rintf(v * EXP_LOG2E);
  float r = __builtin_fmaf(-n, EXP_LN2_HI, v);
  r = __builtin_fmaf(-n, EXP_LN2_LO, r);
  float p = EXP_C7;
  p = __builtin_fmaf(p, r, EXP_C6);
  p = __builtin_fmaf(p, r, EXP_C5);
  p = __builtin_fmaf(p, r, EXP_C4);
  p = __builtin_fmaf(p, r, EXP_C3);
  p = __builtin_fmaf(p, r, 0.5f);
  p = __builtin_fmaf(p, r, 1.0f);
  p = __builtin_fmaf(p, r, 1.0f);
  i32 k = (i32)n, k1 = k / 2, k2 = k - k1;
  return (p * bits_f32((u32)(k1 + 127) << 23)) * bits_f32((u32)(k2 + 127) << 23);
}

DEVICE float ew_sigmoid(float v) { return 1.0f / (1.0f + ew_expf(-v)); }

DEVICE float bf16r(float v) { return bf16_to_f32(bf16_rne(v)); }

DEVICE float warp_sum_f32(float v) {
  for (u32 m = 16; m > 0; m >>= 1) v = v + shfl_xor_f32(v, m);
  return v;
}

DEVICE f4 load4(const u16 *p) {
  const u32 *q = (const u32 *)p;
  u32 w0 = q[0], w1 = q[1];
  return f4{bf16_to_f32(w0 & 0xFFFFu), bf16_to_f32(w0 >> 16), bf16_to_f32(w1 & 0xFFFFu), bf16_to_f32(w1 >> 16)};
}

// The op's inputs for one element.
DEVICE float ew_elem(u32 mode, float a, float b, float w, float r) {
  switch (mode) {
  case 0: return bf16r(bf16r(a * ew_sigmoid(a)) * b);
  case 1: return bf16r(a * bf16r(ew_sigmoid(b)));
  default: return bf16r(((a * r) * w) * (b * ew_sigmoid(b)));
  }
}

// The op's bf16 results for lane's channels 4l..4l+3 of row m, group g (as
// floats; w0, w1 the packed bf16 pairs). Modes 1 and 2 read rows of K from
// a and b; mode 0 reads g and u from a's row of 2K.
DEVICE f4 ew_group(u32 mode, const u16 *a, const u16 *b, const u16 *w, u32 m, u32 g, u32 K, u32 D, float eps,
                   u32 lane, u32 &w0, u32 &w1) {
  u64 c = (u64)g * GROUP + 4u * lane;
  f4 x, y, ww{0.0f, 0.0f, 0.0f, 0.0f};
  float r = 0.0f;
  if (mode == 0) {
    x = load4(a + (u64)m * 2u * K + c);
    y = load4(a + (u64)m * 2u * K + K + c);
  } else {
    x = load4(a + (u64)m * K + c);
    y = load4(b + (u64)m * K + c);
  }
  if (mode == 2) {
    u32 gpd = D / GROUP, h0 = (g / gpd) * gpd;
    float S = 0.0f;
    for (u32 h = h0; h < h0 + gpd; h++) {
      f4 q = h == g ? x : load4(a + (u64)m * K + (u64)h * GROUP + 4u * lane);
      float s = q.x * q.x;
      s = s + q.y * q.y;
      s = s + q.z * q.z;
      s = s + q.w * q.w;
      S = S + warp_sum_f32(s);
    }
    r = 1.0f / __builtin_sqrtf(S / (float)D + eps);
    ww = load4(w + (c % D));
  }
  f4 o{ew_elem(mode, x.x, y.x, ww.x, r), ew_elem(mode, x.y, y.y, ww.y, r), ew_elem(mode, x.z, y.z, ww.z, r),
       ew_elem(mode, x.w, y.w, ww.w, r)};
  w0 = bf16_rne(o.x) | (bf16_rne(o.y) << 16);
  w1 = bf16_rne(o.z) | (bf16_rne(o.w) << 16);
  return o;
}

// The op's results times the channel scales, into the warp's slice (what
// load_row_group does with bf16 rows).
DEVICE void ew_load_row_group(float *sv, u32 mode, const u16 *a, const u16 *b, const u16 *w, const f4 &chs4, u32 m,
                              u32 g, u32 K, u32 D, float eps, u32 lane) {
  u32 w0, w1;
  f4 o = ew_group(mode, a, b, w, m, g, K, D, eps, lane, w0, w1);
  sv[4 * lane + 0] = o.x * chs4.x;
  sv[4 * lane + 1] = o.y * chs4.y;
  sv[4 * lane + 2] = o.z * chs4.z;
  sv[4 * lane + 3] = o.w * chs4.w;
}

// The unfused op. Grid (G, ceil(M / WARPS)), block 256: warp w of block y
// writes row y*WARPS + w, group x.
KERNEL LAUNCH_BOUNDS(256) void ew_op_bf16(const u16 *a, const u16 *b, const u16 *w, u16 *out, u32 M, u32 K, u32 mode,
                                          u32 D, float eps) {
  u32 g = bid_x(), lane = lane_id(), m = bid_y() * WARPS + (tid_x() >> 5);
  if (m >= M) return;
  u32 w0, w1;
  ew_group(mode, a, b, w, m, g, K, D, eps, lane, w0, w1);
  u32 *o = (u32 *)(out + (u64)m * K + (u64)g * GROUP + 4u * lane);
  o[0] = w0;
  o[1] = w1;
}

// Decode band: pq_rotq_group with the op in front. Grid (G, P, row chunks),
// nw = blockDim/32 warps, rpw rows per warp (producers.GroupWiseGrid).
KERNEL LAUNCH_BOUNDS(256) void ew_rotq_group(const u16 *a, const u16 *b, const u16 *w, const u32 *ridx, const f4 *rcs,
                                             const f4 *chs, u8 *codes, float *gscale, float *rsum, u32 M, u32 K,
                                             u32 rpw, u32 mode, u32 D, float eps) {
  SHARED float sbuf[WARPS][GROUP];
  u32 g = bid_x(), p = bid_y(), G = K / GROUP;
  u32 lane = lane_id(), warp = tid_x() >> 5;
  float *sv = sbuf[warp];
  Records rec;
  load_records(rec, ridx, rcs, p, g, G, lane);
  f4 chs4 = chs[((u64)p * K + (u64)g * GROUP) / 4u + lane];
  u32 nw = bdim_x() >> 5;
  u32 m0 = bid_z() * nw * rpw;
  for (u32 m = m0 + warp; m < M && m < m0 + nw * rpw; m += nw) {
    ew_load_row_group(sv, mode, a, b, w, chs4, m, g, K, D, eps, lane);
    rotate_group(sv, rec);
    f4 v = read4(sv, lane);
    float scale = warp_max(amax4(v)) / 448.0f;
    u32 c = encode4(v, scale);
    u64 row = (u64)p * M + m;
    *(u32 *)(codes + row * K + (u64)g * GROUP + 4u * lane) = c;
    i32 S = warp_sum_i32(sum4_x512(c));
    if (lane == 0) {
      gscale[row * G + g] = scale;
      rsum[row * G + g] = (float)S / 512.0f;
    }
    warp_sync_all();
  }
}

// Per token: pq_rotq_token with the op in front. Grid (Mrows, P), 256
// threads (producers.RowWiseGrid); K <= MAXK.
KERNEL LAUNCH_BOUNDS(256) void ew_rotq_token(const u16 *a, const u16 *b, const u16 *w, const u32 *ridx, const f4 *rcs,
                                             const f4 *chs, u8 *codes, float *tscale, float *rsum, u32 M, u32 K,
                                             u32 tiled, u32 mode, u32 D, float eps) {
  SHARED float sbuf[WARPS][GROUP];
  SHARED u32 srow[MAXK / 2];
  SHARED float sam[MAXK / GROUP];
  u32 m = bid_x(), p = bid_y(), G = K / GROUP;
  u32 Mrows = tiled ? (M + 15u) & ~15u : M;
  if (m >= M) {
    zero_pad_row(codes, p, m, Mrows, K);
    return;
  }
  u32 lane = lane_id(), warp = tid_x() >> 5;
  float *sv = sbuf[warp];
  for (u32 g = warp; g < G; g += WARPS) {
    Records rec;
    load_records(rec, ridx, rcs, p, g, G, lane);
    f4 chs4 = chs[((u64)p * K + (u64)g * GROUP) / 4u + lane];
    ew_load_row_group(sv, mode, a, b, w, chs4, m, g, K, D, eps, lane);
    rotate_group(sv, rec);
    u32 w0, w1;
    f4 v = round_bf16_4(read4(sv, lane), w0, w1);
    srow[(g * GROUP) / 2 + 2 * lane] = w0;
    srow[(g * GROUP) / 2 + 2 * lane + 1] = w1;
    float am = warp_max(amax4(v));
    if (lane == 0) sam[g] = am;
    warp_sync_all();
  }
  block_sync();
  u64 row = (u64)p * M + m;
  float As = token_scale(sam, G, lane);
  if (tid_x() == 0) tscale[row] = As;
  for (u32 g = warp; g < G; g += WARPS) {
    u32 w0 = srow[(g * GROUP) / 2 + 2 * lane], w1 = srow[(g * GROUP) / 2 + 2 * lane + 1];
    f4 v{bf16_to_f32(w0 & 0xFFFFu), bf16_to_f32(w0 >> 16), bf16_to_f32(w1 & 0xFFFFu), bf16_to_f32(w1 >> 16)};
    encode_group(v, As, codes, rsum, p, m, g, M, Mrows, K, tiled, lane);
  }
}
