// normrot.hip: the norm-fed rotate-and-quantize producers. For one token
// row they do the decoder layer's residual add and Gemma RMSNorm, then the
// producers' chain (channel scale, 8 Givens layers per 128-group, e4m3
// quantization) on the normed row, in one launch:
//
//   residual' = bf16(x + residual)
//   hs        = bf16((float(residual') * rs) * (1 + float(w)))
//   rs        = 1 / sqrt(sum(float(residual')^2) / K + eps)
//   A, scales, row sums = the producers' chain on hs (hipsrc/rot/rotq.h)
//
// The op order and rounding points are vLLM's GemmaRMSNorm with a residual
// (github.com/vllm-project/vllm, vllm/model_executor/layers/layernorm.py,
// GemmaRMSNorm.forward_static at commit 00cba797, read for this file;
// forward_cuda runs it under torch.compile): for bf16 x the add
// is `x + residual` in bf16 (PyTorch computes it in fp32 and rounds once to
// bf16; a sum of two bf16 values is exact enough in fp32 that this equals
// the correctly rounded bf16 sum), `residual = x` is that bf16 tensor,
// then `x.float()`, `variance = x.pow(2).mean(-1)` in fp32,
// `x * rsqrt(variance + eps)` in fp32, `x * (1.0 + weight.float())` in fp32
// ((1 + w) rounded to fp32 first), and one rounding `.to(bf16)` at the end.
//
// What is ours (PyTorch leaves it unspecified or approximate):
//   - the sum of squares has a fixed order, independent of the block size,
//     so every kernel here and the Go mirror give the same bits: per
//     128-group, lane l (channels 4l..4l+3) forms s = c0*c0, then
//     s = fma(c1, c1, s), fma(c2, c2, s), fma(c3, c3, s); the 32 lane sums
//     are combined by the xor butterfly (s += shfl_xor(s, m) for
//     m = 16, 8, 4, 2, 1: every lane ends with the same value, since fp32
//     addition commutes); the group sums are added in group order
//     0, 1, ..., G-1 starting from 0;
//   - the mean is a division by K (torch's reference decomposition of
//     mean, which torch.compile lowers, divides the sum by the count;
//     eager CUDA multiplies by fp32(1/K): the two can differ by an fp32 ulp
//     of the variance);
//   - rsqrt is 1 / sqrt(v) with the correctly rounded sqrt and division
//     (two roundings; CUDA's rsqrt is approximate and differs by target).
// Everything else is one IEEE fp32 rounding per op, no contraction
// (-ffp-contract=off and the pragma below; every fma is explicit).
//
// Entry points (the launch geometry is normrot.*Grid in launch.go):
//   pq_addnorm                 residual add + GemmaRMSNorm alone -> hs, residual
//                              (the unfused chain's first launch). Grid (M),
//                              256 threads.
//   pq_addnorm_rotq_group      decode band (M <= 128) -> hs, residual, codes
//                              [P,M,K], group scales [P,M,G], row sums [P,M,G],
//                              all partitions in one launch.
//   pq_addnorm_rotq_token_wN   prefill per token, N = 8, 16, 32 warps per
//                              block -> hs, residual, codes (row-major or
//                              tiled, pad rows zero), token scales [P,M],
//                              row sums [P,M,G].
//
// Design of the decode kernel. The norm needs the whole row before any
// group can be rotated, and the decode band has few rows, so a block per
// row would leave most of the GPU idle. Grid (ceil(P*G / 8), M), 8 warps:
// block b of row m owns the (partition, group) items t = 8b .. 8b+7
// (p = t / G, g = t % G), one per warp. Every block first loads its warp's
// rotation records (static: they overlap the row's loads), then computes
// residual' and the rms of the whole row itself (phase 1: the row's x and
// residual, 4K bytes, mostly from L2 after the first block), then rotates
// and quantizes its items from the residual' row parked in shared memory.
// Block 0 of a row writes residual'; the p == 0 items write hs. DRAM bytes
// per call: x, residual in (4MK), w and channel scales (2K + 4PK), records
// (40PK: 8 layers x 32 lanes x 20 bytes per (partition, group)), hs and
// residual' out (4MK), codes (PMK), scales and sums (8PMG). The inputs x
// and residual must not alias the outputs (every block reads the whole
// row), unlike vLLM's in-place fused_add_rms_norm.
//
// Design of the per-token kernel. Grid (Mrows, P), N warps: phase 1 as
// above; phase 2 computes hs per group, rotates it and parks the
// bf16-rounded rotated group back in the same shared slots (a group is one
// warp's), with its amax; phase 3 is pq_rotq_token's encode. Partition 0's
// blocks write hs and residual'. Shared memory: the row (2K bytes, 24 KiB
// at NR_MAXK), N 512-byte rotation slices and 2G floats: 41 KiB at 32 warps,
// under CUDA's 48 KiB of static shared memory and gfx1201's 64 KiB. On
// sm_90 a 1024-thread block (32 warps) leaves 64 registers per thread, and
// a group's records alone take 40: resources-device on the H200 says
// whether ptxas kept them in registers.
#include "rot/rotq.h"

#pragma clang fp contract(off)

#define NR_MAXK 12288 // largest K whose row the kernels park in shared memory
#define NR_DECODE_WARPS 8
#define NR_BATCH 6 // groups whose loads phase 1 issues together (K = 5120 at 8 warps: all 5 of a warp's)

// The lane's 4 channels of group g of row rowoff of x and res (two bf16
// pairs each), as raw words.
struct RowWords {
  u32 x0, x1, r0, r1;
};
DEVICE RowWords load_words(const u16 *x, const u16 *res, u64 rowoff, u32 g, u32 lane) {
  const u32 *xp = (const u32 *)(x + rowoff + (u64)g * GROUP + 4u * lane);
  const u32 *rp = (const u32 *)(res + rowoff + (u64)g * GROUP + 4u * lane);
  return RowWords{xp[0], xp[1], rp[0], rp[1]};
}

// residual' words (channel 4l, 4l+1 | 4l+2, 4l+3) from the raw words.
DEVICE void add_words(RowWords q, u32 &w0, u32 &w1) {
  u32 a = bf16_rne(bf16_to_f32(q.x0 & 0xFFFFu) + bf16_to_f32(q.r0 & 0xFFFFu));
  u32 b = bf16_rne(bf16_to_f32(q.x0 >> 16) + bf16_to_f32(q.r0 >> 16));
  u32 c = bf16_rne(bf16_to_f32(q.x1 & 0xFFFFu) + bf16_to_f32(q.r1 & 0xFFFFu));
  u32 d = bf16_rne(bf16_to_f32(q.x1 >> 16) + bf16_to_f32(q.r1 >> 16));
  w0 = a | (b << 16);
  w1 = c | (d << 16);
}

// The group's sum of squares in the fixed order (file comment), in every lane.
DEVICE float group_sumsq(u32 w0, u32 w1) {
  float c0 = bf16_to_f32(w0 & 0xFFFFu), c1 = bf16_to_f32(w0 >> 16);
  float c2 = bf16_to_f32(w1 & 0xFFFFu), c3 = bf16_to_f32(w1 >> 16);
  float s = c0 * c0;
  s = __builtin_fmaf(c1, c1, s);
  s = __builtin_fmaf(c2, c2, s);
  s = __builtin_fmaf(c3, c3, s);
  for (u32 m = 16; m > 0; m >>= 1) s = s + shfl_xor_f32(s, m);
  return s;
}

// Phase 1: residual' of the row into srow (bf16 pairs; and into res_out
// when write_res), the group sums of squares into spart, then rs. Every
// thread of the block must call it (it syncs the block).
DEVICE float addnorm_phase(const u16 *x, const u16 *res, u16 *res_out, u32 *srow, float *spart, u64 rowoff, u32 K,
                           float eps, bool write_res) {
  u32 G = K / GROUP, lane = lane_id(), warp = tid_x() >> 5, nw = bdim_x() >> 5;
  // NR_BATCH groups' loads are issued before any of them is used: the
  // stores below may alias x and res as far as the compiler knows, so it
  // would not hoist the next group's loads above them itself.
  for (u32 g0 = warp; g0 < G; g0 += NR_BATCH * nw) {
    RowWords q[NR_BATCH];
#pragma unroll
    for (u32 i = 0; i < NR_BATCH; i++) {
      u32 g = g0 + i * nw;
      if (g < G) q[i] = load_words(x, res, rowoff, g, lane);
    }
#pragma unroll
    for (u32 i = 0; i < NR_BATCH; i++) {
      u32 g = g0 + i * nw;
      if (g >= G) break;
      u32 w0, w1;
      add_words(q[i], w0, w1);
      srow[g * (GROUP / 2) + 2u * lane] = w0;
      srow[g * (GROUP / 2) + 2u * lane + 1u] = w1;
      if (write_res) {
        u32 *o = (u32 *)(res_out + rowoff + (u64)g * GROUP + 4u * lane);
        o[0] = w0;
        o[1] = w1;
      }
      float s = group_sumsq(w0, w1);
      if (lane == 0) spart[g] = s;
    }
  }
  block_sync();
  float tot = 0.0f;
  for (u32 g = 0; g < G; g++) tot = tot + spart[g];
  float var = tot / (float)K;
  return 1.0f / __builtin_sqrtf(var + eps);
}

DEVICE u32 norm_one(u32 r, float rs, u32 wb) { return bf16_rne((bf16_to_f32(r) * rs) * (1.0f + bf16_to_f32(wb))); }

// hs of the lane's 4 channels of group g from residual' in srow and the
// weight words q0, q1 (load_weight), as bf16 words (low channel first).
DEVICE void load_weight(const u16 *w, u32 g, u32 lane, u32 &q0, u32 &q1) {
  const u32 *wp = (const u32 *)(w + (u64)g * GROUP + 4u * lane);
  q0 = wp[0];
  q1 = wp[1];
}
DEVICE void norm_group(const u32 *srow, u32 q0, u32 q1, float rs, u32 g, u32 lane, u32 &h0, u32 &h1) {
  u32 r0 = srow[g * (GROUP / 2) + 2u * lane], r1 = srow[g * (GROUP / 2) + 2u * lane + 1u];
  h0 = norm_one(r0 & 0xFFFFu, rs, q0 & 0xFFFFu) | (norm_one(r0 >> 16, rs, q0 >> 16) << 16);
  h1 = norm_one(r1 & 0xFFFFu, rs, q1 & 0xFFFFu) | (norm_one(r1 >> 16, rs, q1 >> 16) << 16);
}

// The lane's 4 hs values times the channel scales into the warp's slice
// (rotq.h load_row_group, from registers).
DEVICE void scale_into(float *sv, u32 h0, u32 h1, const f4 &chs4, u32 lane) {
  sv[4 * lane + 0] = bf16_to_f32(h0 & 0xFFFFu) * chs4.x;
  sv[4 * lane + 1] = bf16_to_f32(h0 >> 16) * chs4.y;
  sv[4 * lane + 2] = bf16_to_f32(h1 & 0xFFFFu) * chs4.z;
  sv[4 * lane + 3] = bf16_to_f32(h1 >> 16) * chs4.w;
}

DEVICE void store_pair(u16 *dst, u64 off, u32 h0, u32 h1) {
  u32 *o = (u32 *)(dst + off);
  o[0] = h0;
  o[1] = h1;
}

// Residual add + GemmaRMSNorm alone. Grid (M), 256 threads.
KERNEL LAUNCH_BOUNDS(256) void pq_addnorm(const u16 *x, const u16 *res, const u16 *w, u16 *hs, u16 *res_out, u32 M,
                                          u32 K, float eps) {
  SHARED u32 srow[NR_MAXK / 2];
  SHARED float spart[NR_MAXK / GROUP];
  u32 m = bid_x(), G = K / GROUP, lane = lane_id(), warp = tid_x() >> 5, nw = bdim_x() >> 5;
  if (m >= M) return;
  u64 rowoff = (u64)m * K;
  float rs = addnorm_phase(x, res, res_out, srow, spart, rowoff, K, eps, true);
  for (u32 g = warp; g < G; g += nw) {
    u32 q0, q1, h0, h1;
    load_weight(w, g, lane, q0, q1);
    norm_group(srow, q0, q1, rs, g, lane, h0, h1);
    store_pair(hs, rowoff + (u64)g * GROUP + 4u * lane, h0, h1);
  }
}

// Decode band. Grid (ceil(P*G / 8), M), 256 threads (file comment).
KERNEL LAUNCH_BOUNDS(256) void pq_addnorm_rotq_group(const u16 *x, const u16 *res, const u16 *w, const u32 *ridx,
                                                     const f4 *rcs, const f4 *chs, u16 *hs, u16 *res_out, u8 *codes,
                                                     float *gscale, float *rsum, u32 M, u32 K, u32 P, float eps) {
  SHARED u32 srow[NR_MAXK / 2];
  SHARED float spart[NR_MAXK / GROUP];
  SHARED float sbuf[NR_DECODE_WARPS][GROUP];
  u32 m = bid_y(), G = K / GROUP, lane = lane_id(), warp = tid_x() >> 5;
  u32 t = bid_x() * NR_DECODE_WARPS + warp;
  bool active = t < P * G;
  u32 p = active ? t / G : 0, g = active ? t % G : 0;
  // The item's records, channel scales and weights are static: their
  // loads overlap phase 1's.
  Records rec;
  f4 chs4{0.0f, 0.0f, 0.0f, 0.0f};
  u32 q0 = 0, q1 = 0;
  if (active) {
    load_records(rec, ridx, rcs, p, g, G, lane);
    chs4 = chs[((u64)p * K + (u64)g * GROUP) / 4u + lane];
    load_weight(w, g, lane, q0, q1);
  }
  u64 rowoff = (u64)m * K;
  float rs = addnorm_phase(x, res, res_out, srow, spart, rowoff, K, eps, bid_x() == 0);
  if (!active) return;
  float *sv = sbuf[warp];
  u32 h0, h1;
  norm_group(srow, q0, q1, rs, g, lane, h0, h1);
  if (p == 0) store_pair(hs, rowoff + (u64)g * GROUP + 4u * lane, h0, h1);
  scale_into(sv, h0, h1, chs4, lane);
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
}

// Prefill per token. Grid (Mrows, P), NW warps (file comment).
template <u32 NW>
DEVICE void addnorm_rotq_token(const u16 *x, const u16 *res, const u16 *w, const u32 *ridx, const f4 *rcs,
                               const f4 *chs, u16 *hs, u16 *res_out, u8 *codes, float *tscale, float *rsum, u32 M,
                               u32 K, u32 tiled, float eps) {
  SHARED u32 srow[NR_MAXK / 2];
  SHARED float spart[NR_MAXK / GROUP];
  SHARED float sam[NR_MAXK / GROUP];
  SHARED float sbuf[NW][GROUP];
  u32 m = bid_x(), p = bid_y(), G = K / GROUP;
  u32 Mrows = tiled ? (M + 15u) & ~15u : M;
  if (m >= M) {
    zero_pad_row(codes, p, m, Mrows, K);
    return;
  }
  u32 lane = lane_id(), warp = tid_x() >> 5;
  u64 rowoff = (u64)m * K;
  float rs = addnorm_phase(x, res, res_out, srow, spart, rowoff, K, eps, p == 0);
  float *sv = sbuf[warp];
  for (u32 g = warp; g < G; g += NW) {
    Records rec;
    load_records(rec, ridx, rcs, p, g, G, lane);
    f4 chs4 = chs[((u64)p * K + (u64)g * GROUP) / 4u + lane];
    u32 q0, q1, h0, h1;
    load_weight(w, g, lane, q0, q1);
    norm_group(srow, q0, q1, rs, g, lane, h0, h1);
    if (p == 0) store_pair(hs, rowoff + (u64)g * GROUP + 4u * lane, h0, h1);
    scale_into(sv, h0, h1, chs4, lane);
    rotate_group(sv, rec);
    u32 w0, w1;
    f4 v = round_bf16_4(read4(sv, lane), w0, w1);
    // The group's residual' slots are this warp's alone from here on.
    srow[g * (GROUP / 2) + 2u * lane] = w0;
    srow[g * (GROUP / 2) + 2u * lane + 1u] = w1;
    float a = warp_max(amax4(v));
    if (lane == 0) sam[g] = a;
    warp_sync_all();
  }
  block_sync();
  u64 row = (u64)p * M + m;
  float As = token_scale(sam, G, lane);
  if (tid_x() == 0) tscale[row] = As;
  for (u32 g = warp; g < G; g += NW) {
    u32 w0 = srow[g * (GROUP / 2) + 2u * lane], w1 = srow[g * (GROUP / 2) + 2u * lane + 1u];
    f4 v{bf16_to_f32(w0 & 0xFFFFu), bf16_to_f32(w0 >> 16), bf16_to_f32(w1 & 0xFFFFu), bf16_to_f32(w1 >> 16)};
    encode_group(v, As, codes, rsum, p, m, g, M, Mrows, K, tiled, lane);
  }
}

#define NR_TOKEN_KERNEL(NW)                                                                                           \
  KERNEL LAUNCH_BOUNDS(NW * 32) void pq_addnorm_rotq_token_w##NW(                                                     \
      const u16 *x, const u16 *res, const u16 *w, const u32 *ridx, const f4 *rcs, const f4 *chs, u16 *hs,             \
      u16 *res_out, u8 *codes, float *tscale, float *rsum, u32 M, u32 K, u32 tiled, float eps) {                      \
    addnorm_rotq_token<NW>(x, res, w, ridx, rcs, chs, hs, res_out, codes, tscale, rsum, M, K, tiled, eps);           \
  }
NR_TOKEN_KERNEL(8)  // pq_addnorm_rotq_token_w8
NR_TOKEN_KERNEL(16) // pq_addnorm_rotq_token_w16
#if !defined(__NVPTX__)
// gfx1201 only: on sm_90a a 1024-thread block leaves 64 registers a thread
// and this form spilled 136 bytes (normrot.MaxWaves).
NR_TOKEN_KERNEL(32) // pq_addnorm_rotq_token_w32
#endif
