// i8gemm.hip: the I8 decode GEMMs. y[M, N] (bf16, row-major) from int8
// activation codes a (pq_i8_group: per-group scales sa, int32 row sums rs)
// and the AWQ int4 weights q (0..15) with zero points z and fp16 scales s:
//
//   y[m,n] = Σ_g sa[m,g] · s[g,n] · ( Σ_{k in g} a[m,k]·q[k,n]  −  z[g,n]·rs[m,g] )
//
// The inner sum is the integer matrix op (i8/mma_i8.h: sm_90
// mma.sync m16n8k32 .u8.s8 -> s32, the weights unsigned; gfx1201
// v_wmma_i32_16x16x16_iu8), accumulated in int32 over the group's 128 k
// (4 k32 steps), and the zero-point term is subtracted in int32 too, so
// D_g = Σ a·q − z·rs is exact (|D_g| <= 2·127·15·128 < 2^19, exact in
// fp32). The fold is the only floating-point arithmetic, per group:
//   t   = s · float(D_g)                       one rounding
//   acc = fmaf(sa, t, acc)                     one rounding
// then the split-K partials summed in split order and one bf16 rounding.
//
// Entry points: pq_i8_gemm_dec_m8/_m16/_m32/_m64, the decode band (M <= 8
// / 16 / 32 / 64), split-K across blocks, one launch for all partitions
// (the per-warp body, both targets); pq_i8_gemm_dec_st_m8/_m16/_m32/_m64,
// sm_90a only: the same product by a staged body (gemm_i8_dec_staged),
// split-K counted per 16-column warp tile (sema [N/16]).
// Memory formats, grid and the per-block split-K protocol are those of the
// e4m3 decode GEMM's per-warp body (families/gemm/gemm.hip): weights as
// refimpl.RepackW4 (N/16 column tiles x G groups x 1 KiB), scale words
// sz[g, n] = fp16 bits of s | (z − 8) as int16 << 16; activations
// [P, M, K] int8, sa [P, M, G] f32, rs [P, M, G] i32; block = 4 warps = 64
// columns, warp = one 16-column tile over its split's groups, grid
// (N/64, S); split s owns groups [s·ceil(G/S), (s+1)·ceil(G/S)) ∩ [0, G).
// S = 1: bf16 straight from the registers; S > 1: each block writes its
// fp32 partial tile to ws[s, m, n] and counts in sema[column block]; the
// block that completes the count sums ws[0..S-1] in split order and resets
// the counter (sema zero before the first launch, zero again after each).
// Rows >= M are never written.
#include "i8/mma_i8.h"
#include "arch/mma.h"

#pragma clang fp contract(off)

#define GROUP 128
#define DEC_WARPS 4
#define DEC_BN (16 * DEC_WARPS)
#define AR_CAP 2048 // (m, group) pairs of sa and rs staged in shared memory

DEVICE u32 i8_partition_of(u32 n0, u32 nend0, u32 nend1) { return (n0 >= nend0 ? 1u : 0u) + (n0 >= nend1 ? 1u : 0u); }

// A scale word as the fold uses it: s (exact f16 -> f32) and z (0..15).
DEVICE void i8_scale_word(u32 w, float &s, i32 &z) {
  s = f16_to_f32(w & 0xFFFFu);
  z = (i32)(short)(w >> 16) + 8;
}

// The last block's split-K sum: the block's 64 columns x M rows of
// ws[0..S-1], summed in split order (deterministic), to bf16.
DEVICE void i8_reduce_block(const float *ws, u16 *out, u32 M, u32 N, u32 S, u32 nblk, u32 tid) {
  for (u32 i = tid; i < M * DEC_BN; i += 32u * DEC_WARPS) {
    const u32 m = i / DEC_BN, n = nblk + i % DEC_BN;
    float sum = 0.0f;
    for (u32 s = 0; s < S; s++) sum += ldg_cg_f32(ws + ((u64)s * M + m) * N + n);
    out[(u64)m * N + n] = (u16)pack_bf16x2(sum, 0.0f);
  }
}

// After the block's partial tile is in ws: release it (fence, count in
// sema[bx]); the block that completes the count acquires, sums and resets.
DEVICE void i8_block_handoff(const float *ws, u16 *out, u32 *sema, u32 &s_last, u32 M, u32 N, u32 S, u32 nblk, u32 bx,
                             u32 tid) {
  fence_gpu();
  block_sync();
  if (tid == 0) s_last = atomic_add_u32_gpu(sema + bx, 1u) == S - 1u ? 1u : 0u;
  block_sync();
  if (!s_last) return;
  fence_gpu();
  i8_reduce_block(ws, out, M, N, S, nblk, tid);
  if (tid == 0) st_u32_gpu(sema + bx, 0u);
}

// The block's share: column block, the warp's 16-column tile, partition,
// split and its groups.
struct I8Range { u32 bx, split, nblk, j16, n0, p, gbeg, gend; };
DEVICE I8Range i8_range(u32 warp, u32 G, u32 S, u32 nend0, u32 nend1) {
  const u32 bx = bid_x(), split = bid_y();
  const u32 nblk = bx * DEC_BN, j16 = bx * DEC_WARPS + warp, n0 = 16u * j16;
  const u32 p = i8_partition_of(nblk, nend0, nend1);
  const u32 gps = (G + S - 1) / S, gbeg = split * gps < G ? split * gps : G, gend = gbeg + gps < G ? gbeg + gps : G;
  return I8Range{bx, split, nblk, j16, n0, p, gbeg, gend};
}

// sa and rs of the block's groups, [g - gbeg][m], in shared memory when
// they fit (returns whether they do).
DEVICE bool i8_stage_ar(float *s_sa, i32 *s_rs, const float *asp, const i32 *rsp, u32 M, u32 G, u32 gbeg, u32 ng,
                        u32 tid) {
  const bool fits = M * ng <= AR_CAP;
  if (fits) {
    for (u32 i = tid; i < M * ng; i += 32u * DEC_WARPS) {
      const u32 m = i % M, g = gbeg + i / M;
      s_sa[i] = asp[(u64)m * G + g];
      s_rs[i] = rsp[(u64)m * G + g];
    }
  }
  block_sync();
  return fits;
}

DEVICE void i8_ar(float &a, i32 &r, bool staged, const float *s_sa, const i32 *s_rs, const float *asp, const i32 *rsp,
                  u32 m, u32 g, u32 gbeg, u32 M, u32 G) {
  a = 0.0f, r = 0;
  if (m >= M) return;
  if (staged) a = s_sa[(g - gbeg) * M + m], r = s_rs[(g - gbeg) * M + m];
  else a = ldg_f32(asp + (u64)m * G + g), r = (i32)ldg_u32(rsp + (u64)m * G + g);
}

// One output's fold (header): acc + sa · (s · float(D − z·rs)).
DEVICE float i8_fold(float acc, i32 d, float sa, float s, i32 z, i32 rs) {
  return __builtin_fmaf(sa, s * (float)(d - z * rs), acc);
}

#if defined(__NVPTX__)
// sm_90 body (swapped op: weights are A, 16 columns x 32 k; activation rows
// are B, 32 k x 8 rows). MT 8-row op tiles; PF groups of weights in flight
// per warp; APF: the next group's activation codes load while this one
// computes.
template <int MT, int PF, bool APF>
DEVICE void gemm_i8_dec(const u8 *wq, const u32 *sz, const u8 *act, const float *asg, const i32 *rsum, u16 *out,
                        float *ws, u32 *sema, u32 M, u32 N, u32 K, u32 nend0, u32 nend1, u32 S) {
  SHARED float s_sa[AR_CAP];
  SHARED i32 s_rs[AR_CAP];
  SHARED u32 s_last;
  const u32 G = K / GROUP;
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, gid = lane >> 2, tig = lane & 3u;
  const I8Range dr = i8_range(warp, G, S, nend0, nend1);
  const u32 n0 = dr.n0, gbeg = dr.gbeg, gend = dr.gend;
  const u8 *ap = act + (u64)dr.p * M * K;
  const float *asp = asg + (u64)dr.p * M * G;
  const i32 *rsp = rsum + (u64)dr.p * M * G;
  const u8 *wp = wq + (u64)dr.j16 * G * 1024u + lane * 16u;
  const u32 *szp = sz + n0 + gid;

  u32x4 wb[PF][2];
  u32x2 zb[PF];
#pragma unroll
  for (int i = 0; i < PF; i++) {
    if (gbeg + i < gend) {
      const u32 g = gbeg + i;
      wb[i][0] = ldg_stream_v4(wp + (u64)g * 1024u);
      wb[i][1] = ldg_stream_v4(wp + (u64)g * 1024u + 512u);
      zb[i] = u32x2{ldg_u32(szp + (u64)g * N), ldg_u32(szp + (u64)g * N + 8u)};
    }
  }
  const bool staged = i8_stage_ar(s_sa, s_rs, asp, rsp, M, G, gbeg, gend - gbeg, tid);

  float acc[MT][4];
#pragma unroll
  for (int mt = 0; mt < MT; mt++) acc[mt][0] = acc[mt][1] = acc[mt][2] = acc[mt][3] = 0.0f;

  // Activation codes of one group for this lane: row 8mt + gid, the u32 at
  // k 32s + 4tig (index 2s) and 32s + 16 + 4tig (2s + 1); zero past M.
  auto load_act = [&](u32 g, u32 (&a)[MT][8]) {
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
      const u32 m = 8u * mt + gid;
#pragma unroll
      for (int i = 0; i < 8; i++) a[mt][i] = 0u;
      if (m < M) {
        const u8 *row = ap + (u64)m * K + g * GROUP + 4u * tig;
#pragma unroll
        for (int i = 0; i < 8; i++) a[mt][i] = ldg_u32(row + 32u * (i >> 1) + 16u * (i & 1));
      }
    }
  };
  u32 anext[MT][8];
  if (APF && gbeg < gend) load_act(gbeg, anext);

  for (u32 g0 = gbeg; g0 < gend; g0 += PF) {
#pragma unroll
    for (int i = 0; i < PF; i++) {
      const u32 g = g0 + i;
      if (g < gend) {
        const u32x4 w0 = wb[i][0], w1 = wb[i][1];
        const u32x2 z = zb[i];
        if (g + PF < gend) {
          wb[i][0] = ldg_stream_v4(wp + (u64)(g + PF) * 1024u);
          wb[i][1] = ldg_stream_v4(wp + (u64)(g + PF) * 1024u + 512u);
          zb[i] = u32x2{ldg_u32(szp + (u64)(g + PF) * N), ldg_u32(szp + (u64)(g + PF) * N + 8u)};
        }
        u32 a[MT][8];
        if (APF) {
#pragma unroll
          for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int k = 0; k < 8; k++) a[mt][k] = anext[mt][k];
          if (g + 1 < gend) load_act(g + 1, anext);
        }
        const u32 ww0[4] = {w0.x, w0.y, w0.z, w0.w}, ww1[4] = {w1.x, w1.y, w1.z, w1.w};
        i32 tmp[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) tmp[mt][0] = tmp[mt][1] = tmp[mt][2] = tmp[mt][3] = 0;
#pragma unroll
        for (int s = 0; s < 4; s++) {
          u32 lo0, hi0, lo1, hi1;
          w8_bytes(ww0[s], lo0, hi0); // column n0 + gid
          w8_bytes(ww1[s], lo1, hi1); // column n0 + gid + 8
#pragma unroll
          for (int mt = 0; mt < MT; mt++) {
            if (8u * mt < M) {
              u32 b0 = APF ? a[mt][2 * s] : 0u, b1 = APF ? a[mt][2 * s + 1] : 0u;
              if (!APF && 8u * mt + gid < M) {
                const u8 *row = ap + (u64)(8u * mt + gid) * K + g * GROUP + 32u * s + 4u * tig;
                b0 = ldg_u32(row);
                b1 = ldg_u32(row + 16);
              }
              mma_u8s8_k32(tmp[mt], lo0, lo1, hi0, hi1, b0, b1);
            }
          }
        }
        float s0, s1;
        i32 z0, z1;
        i8_scale_word(z.x, s0, z0), i8_scale_word(z.y, s1, z1);
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
          const u32 m0 = 8u * mt + 2u * tig, m1 = m0 + 1u;
          float a0, a1;
          i32 r0, r1;
          i8_ar(a0, r0, staged, s_sa, s_rs, asp, rsp, m0, g, gbeg, M, G);
          i8_ar(a1, r1, staged, s_sa, s_rs, asp, rsp, m1, g, gbeg, M, G);
          acc[mt][0] = i8_fold(acc[mt][0], tmp[mt][0], a0, s0, z0, r0);
          acc[mt][1] = i8_fold(acc[mt][1], tmp[mt][1], a1, s0, z0, r1);
          acc[mt][2] = i8_fold(acc[mt][2], tmp[mt][2], a0, s1, z1, r0);
          acc[mt][3] = i8_fold(acc[mt][3], tmp[mt][3], a1, s1, z1, r1);
        }
      }
    }
  }

  // Lane holds D[n][m] for n = n0+gid (+8), m = 8mt + 2tig (+1).
  const u32 na = n0 + gid, nb = na + 8u;
  float *dst = S == 1 ? nullptr : ws + (u64)dr.split * M * N;
#pragma unroll
  for (int mt = 0; mt < MT; mt++) {
    const u32 m0 = 8u * mt + 2u * tig, m1 = m0 + 1u;
    if (S == 1) {
      if (m0 < M) out[(u64)m0 * N + na] = (u16)pack_bf16x2(acc[mt][0], 0.0f), out[(u64)m0 * N + nb] = (u16)pack_bf16x2(acc[mt][2], 0.0f);
      if (m1 < M) out[(u64)m1 * N + na] = (u16)pack_bf16x2(acc[mt][1], 0.0f), out[(u64)m1 * N + nb] = (u16)pack_bf16x2(acc[mt][3], 0.0f);
    } else {
      if (m0 < M) dst[(u64)m0 * N + na] = acc[mt][0], dst[(u64)m0 * N + nb] = acc[mt][2];
      if (m1 < M) dst[(u64)m1 * N + na] = acc[mt][1], dst[(u64)m1 * N + nb] = acc[mt][3];
    }
  }
  if (S > 1) i8_block_handoff(ws, out, sema, s_last, M, N, S, dr.nblk, dr.bx, tid);
}

// The per-warp split-K store of the staged body: S = 1, bf16 straight from
// the registers; S > 1, the warp's fp32 partial 16-column tile to
// ws[split], lane 0 releases it (fence, count in sema[j16], one counter per
// 16-column tile); the warp that completes the count acquires, sums
// ws[0..S-1] in split order and resets the counter. No block barrier.
template <int MT>
DEVICE void i8_epilogue_warp(const float (&acc)[MT][4], u16 *out, float *ws, u32 *sema, u32 M, u32 N, u32 S, u32 j16,
                             u32 split, u32 lane, u32 gid, u32 tig) {
  const u32 n0 = 16u * j16, na = n0 + gid, nb = na + 8u;
  float *dst = S == 1 ? nullptr : ws + (u64)split * M * N;
#pragma unroll
  for (int mt = 0; mt < MT; mt++) {
    const u32 m0 = 8u * mt + 2u * tig, m1 = m0 + 1u;
    if (S == 1) {
      if (m0 < M) out[(u64)m0 * N + na] = (u16)pack_bf16x2(acc[mt][0], 0.0f), out[(u64)m0 * N + nb] = (u16)pack_bf16x2(acc[mt][2], 0.0f);
      if (m1 < M) out[(u64)m1 * N + na] = (u16)pack_bf16x2(acc[mt][1], 0.0f), out[(u64)m1 * N + nb] = (u16)pack_bf16x2(acc[mt][3], 0.0f);
    } else {
      if (m0 < M) dst[(u64)m0 * N + na] = acc[mt][0], dst[(u64)m0 * N + nb] = acc[mt][2];
      if (m1 < M) dst[(u64)m1 * N + na] = acc[mt][1], dst[(u64)m1 * N + nb] = acc[mt][3];
    }
  }
  if (S == 1) return;
  warp_sync_all(); // the lanes' partial stores are ordered before lane 0's release
  u32 last = 0;
  if (lane == 0) {
    fence_gpu();
    last = atomic_add_u32_gpu(sema + j16, 1u) == S - 1u ? 1u : 0u;
    if (last) fence_gpu();
  }
  if (!shfl_idx_u32(last, 0)) return;
  warp_sync_all(); // lane 0's acquire is ordered before the lanes' reads
  for (u32 e = lane; e < 16u * M; e += 32u) {
    const u32 m = e >> 4, n = n0 + (e & 15u);
    float sum = 0.0f;
    for (u32 s = 0; s < S; s++) sum += ldg_cg_f32(ws + ((u64)s * M + m) * N + n); // split order
    out[(u64)m * N + n] = (u16)pack_bf16x2(sum, 0.0f);
  }
  warp_sync_all();
  if (lane == 0) st_u32_gpu(sema + j16, 0u);
}

// sm_90 staged body (pq_i8_gemm_dec_st_*): the per-warp body's arithmetic
// (the same int32 group sums, so the same bits) with the block's activation
// rows, sa and rs staged through shared memory by cp.async in chunks of CH
// groups, double-buffered (rows padded by 16 B so a B fragment's 8 rows hit
// distinct banks; rows >= M zeroed once), a PF-deep weight stream with
// predicated refills, two int32 accumulators per group (chains of 2 ops),
// and the per-warp split-K store (counters per 16-column tile): the
// structure of the e4m3 staged decode body (families/gemm/gemm.hip).
template <int MT, int PF, int CH>
DEVICE void gemm_i8_dec_staged(const u8 *wq, const u32 *sz, const u8 *act, const float *asg, const i32 *rsum,
                               u16 *out, float *ws, u32 *sema, u32 M, u32 N, u32 K, u32 nend0, u32 nend1, u32 S) {
  static_assert(CH % PF == 0, "a chunk holds whole prefetch rounds");
  constexpr u32 ROWS = 8u * MT;
  constexpr u32 ROWB = CH * GROUP + 16u;
  SHARED __attribute__((aligned(16))) u8 s_act[2][ROWS][ROWB];
  SHARED __attribute__((aligned(16))) float s_sa[2][CH][ROWS];
  SHARED __attribute__((aligned(16))) i32 s_rs[2][CH][ROWS];
  const u32 G = K / GROUP;
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, gid = lane >> 2, tig = lane & 3u;
  const I8Range dr = i8_range(warp, G, S, nend0, nend1);
  const u32 n0 = dr.n0, gbeg = dr.gbeg, gend = dr.gend;
  const u8 *ap = act + (u64)dr.p * M * K;
  const float *asp = asg + (u64)dr.p * M * G;
  const i32 *rsp = rsum + (u64)dr.p * M * G;
  const u8 *wnx = wq + (u64)dr.j16 * G * 1024u + lane * 16u + (u64)gbeg * 1024u;
  const u32 *znx = sz + n0 + gid + (u64)gbeg * N;
  u32x4 wb[PF][2];
  u32x2 zb[PF];
#pragma unroll
  for (int i = 0; i < PF; i++) {
    const bool live = gbeg + i < gend;
    ldg_stream_v4_if(wb[i][0], wnx, live), ldg_stream_v4_if(wb[i][1], wnx + 512u, live);
    ldg_u32_if(zb[i].x, znx, live), ldg_u32_if(zb[i].y, znx + 8u, live);
    wnx += 1024u, znx += N;
  }
  for (u32 i = M * (ROWB / 16u) + tid; i < ROWS * (ROWB / 16u); i += 32u * DEC_WARPS) {
    ((u32x4 *)&s_act[0][0][0])[i] = u32x4{0u, 0u, 0u, 0u};
    ((u32x4 *)&s_act[1][0][0])[i] = u32x4{0u, 0u, 0u, 0u};
  }
  auto stage = [&](u32 c0, u32 buf) {
    constexpr u32 PIECES = CH * (GROUP / 16u);
    const u32 nch = gend - c0 < CH ? gend - c0 : CH;
    for (u32 i = tid; i < M * PIECES; i += 32u * DEC_WARPS) {
      const u32 m = i / PIECES, q = i % PIECES;
      const bool live = q < nch * (GROUP / 16u);
      cp_async16(&s_act[buf][m][16u * q], live ? ap + (u64)m * K + c0 * GROUP + 16u * q : ap, live ? 16u : 0u);
    }
    for (u32 i = tid; i < 2u * CH * ROWS; i += 32u * DEC_WARPS) {
      const u32 which = i / (CH * ROWS), gl = (i / ROWS) % CH, m = i % ROWS;
      const bool live = m < M && gl < nch;
      void *dst = which ? (void *)&s_rs[buf][gl][m] : (void *)&s_sa[buf][gl][m];
      const void *src = which ? (const void *)(rsp + (u64)m * G + c0 + gl) : (const void *)(asp + (u64)m * G + c0 + gl);
      cp_async4(dst, live ? src : (const void *)asp, live ? 4u : 0u);
    }
    cp_async_commit();
  };
  if (gbeg < gend) stage(gbeg, 0);

  float acc[MT][4];
#pragma unroll
  for (int mt = 0; mt < MT; mt++) acc[mt][0] = acc[mt][1] = acc[mt][2] = acc[mt][3] = 0.0f;

  auto group = [&](const int i, u32 g, u32 gl, u32 buf) {
    const u32x4 w0 = wb[i][0], w1 = wb[i][1];
    const u32x2 z = zb[i];
    const bool more = g + PF < gend;
    ldg_stream_v4_if(wb[i][0], wnx, more), ldg_stream_v4_if(wb[i][1], wnx + 512u, more);
    ldg_u32_if(zb[i].x, znx, more), ldg_u32_if(zb[i].y, znx + 8u, more);
    wnx += 1024u, znx += N;
    const u8 *sg = &s_act[buf][gid][4u * tig] + gl * GROUP;
    const u32 ww0[4] = {w0.x, w0.y, w0.z, w0.w}, ww1[4] = {w1.x, w1.y, w1.z, w1.w};
    i32 t[2][MT][4];
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
      for (int mt = 0; mt < MT; mt++) t[h][mt][0] = t[h][mt][1] = t[h][mt][2] = t[h][mt][3] = 0;
#pragma unroll
    for (int s = 0; s < 4; s++) {
      u32 lo0, hi0, lo1, hi1;
      w8_bytes(ww0[s], lo0, hi0);
      w8_bytes(ww1[s], lo1, hi1);
#pragma unroll
      for (int mt = 0; mt < MT; mt++) {
        const u8 *r = sg + 8u * mt * ROWB + 32u * s;
        mma_u8s8_k32(t[s & 1][mt], lo0, lo1, hi0, hi1, *(const u32 *)r, *(const u32 *)(r + 16));
      }
    }
    float s0, s1;
    i32 z0, z1;
    i8_scale_word(z.x, s0, z0), i8_scale_word(z.y, s1, z1);
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
      const u32 m0 = 8u * mt + 2u * tig;
      const float a0 = s_sa[buf][gl][m0], a1 = s_sa[buf][gl][m0 + 1u];
      const i32 r0 = s_rs[buf][gl][m0], r1 = s_rs[buf][gl][m0 + 1u];
      acc[mt][0] = i8_fold(acc[mt][0], t[0][mt][0] + t[1][mt][0], a0, s0, z0, r0);
      acc[mt][1] = i8_fold(acc[mt][1], t[0][mt][1] + t[1][mt][1], a1, s0, z0, r1);
      acc[mt][2] = i8_fold(acc[mt][2], t[0][mt][2] + t[1][mt][2], a0, s1, z1, r0);
      acc[mt][3] = i8_fold(acc[mt][3], t[0][mt][3] + t[1][mt][3], a1, s1, z1, r1);
    }
  };

  u32 buf = 0;
  for (u32 c0 = gbeg; c0 < gend; c0 += CH, buf ^= 1u) {
    const u32 cend = c0 + CH < gend ? c0 + CH : gend;
    if (cend < gend) {
      stage(cend, buf ^ 1u);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    block_sync();
    u32 g = c0;
    for (; g + PF <= cend; g += PF) {
#pragma unroll
      for (int i = 0; i < PF; i++) group(i, g + i, g + i - c0, buf);
    }
#pragma unroll
    for (int i = 0; i < PF; i++)
      if (g + i < cend) group(i, g + i, g + i - c0, buf);
    block_sync();
  }
  i8_epilogue_warp<MT>(acc, out, ws, sema, M, N, S, dr.j16, dr.split, lane, gid, tig);
}
#else // __AMDGCN__
// gfx1201 body: the same algorithm on the 16x16x16 integer WMMA. Still
// swapped: A = weights (the warp's 16 columns), B = activation rows (16
// rows per op tile). Lane L, r = L % 16, h = L / 16: weights column n0 + r,
// per group the memory lanes of tigs 2h, 2h+1 (32 contiguous bytes); codes
// row 16mt + r, 8 bytes at k 32s + 16w + 8h per k16 block (s, w); D row
// 16mt + r, columns n0 + 8h + i. MT counts 8-row tiles as on sm_90.
template <int MT, int PF, bool APF>
DEVICE void gemm_i8_dec(const u8 *wq, const u32 *sz, const u8 *act, const float *asg, const i32 *rsum, u16 *out,
                        float *ws, u32 *sema, u32 M, u32 N, u32 K, u32 nend0, u32 nend1, u32 S) {
  constexpr int MT16 = (MT + 1) / 2;
  SHARED float s_sa[AR_CAP];
  SHARED i32 s_rs[AR_CAP];
  SHARED u32 s_last;
  const u32 G = K / GROUP;
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, r = lane & 15u, h = lane >> 4;
  const I8Range dr = i8_range(warp, G, S, nend0, nend1);
  const u32 n0 = dr.n0, gbeg = dr.gbeg, gend = dr.gend;
  const u8 *ap = act + (u64)dr.p * M * K;
  const float *asp = asg + (u64)dr.p * M * G;
  const i32 *rsp = rsum + (u64)dr.p * M * G;
  const u8 *wp = wq + (u64)dr.j16 * G * 1024u + (r >> 3) * 512u + (4u * (r & 7u) + 2u * h) * 16u;
  const u32 *szp = sz + n0 + 8u * h;

  u32x4 wb[PF][2], zb[PF][2];
#pragma unroll
  for (int i = 0; i < PF; i++) {
    if (gbeg + i < gend) {
      const u32 g = gbeg + i;
      wb[i][0] = ldg_stream_v4(wp + (u64)g * 1024u);
      wb[i][1] = ldg_stream_v4(wp + (u64)g * 1024u + 16u);
      zb[i][0] = ldg_u32x4(szp + (u64)g * N);
      zb[i][1] = ldg_u32x4(szp + (u64)g * N + 4u);
    }
  }
  const bool staged = i8_stage_ar(s_sa, s_rs, asp, rsp, M, G, gbeg, gend - gbeg, tid);

  float acc[MT16][8];
#pragma unroll
  for (int mt = 0; mt < MT16; mt++)
#pragma unroll
    for (int i = 0; i < 8; i++) acc[mt][i] = 0.0f;

  auto load_act = [&](u32 g, u32x2 (&a)[MT16][8]) {
#pragma unroll
    for (int mt = 0; mt < MT16; mt++) {
      const u32 m = 16u * mt + r;
#pragma unroll
      for (int i = 0; i < 8; i++) a[mt][i] = u32x2{0u, 0u};
      if (m < M) {
        const u8 *row = ap + (u64)m * K + g * GROUP + 8u * h;
#pragma unroll
        for (int i = 0; i < 8; i++) a[mt][i] = ldg_u32x2(row + 16u * i);
      }
    }
  };
  u32x2 anext[MT16][8];
  if (APF && gbeg < gend) load_act(gbeg, anext);

  for (u32 g0 = gbeg; g0 < gend; g0 += PF) {
#pragma unroll
    for (int i = 0; i < PF; i++) {
      const u32 g = g0 + i;
      if (g < gend) {
        const u32x4 w0 = wb[i][0], w1 = wb[i][1], z0 = zb[i][0], z1 = zb[i][1];
        if (g + PF < gend) {
          wb[i][0] = ldg_stream_v4(wp + (u64)(g + PF) * 1024u);
          wb[i][1] = ldg_stream_v4(wp + (u64)(g + PF) * 1024u + 16u);
          zb[i][0] = ldg_u32x4(szp + (u64)(g + PF) * N);
          zb[i][1] = ldg_u32x4(szp + (u64)(g + PF) * N + 4u);
        }
        u32x2 a[MT16][8];
        if (APF) {
#pragma unroll
          for (int mt = 0; mt < MT16; mt++)
#pragma unroll
            for (int k = 0; k < 8; k++) a[mt][k] = anext[mt][k];
          if (g + 1 < gend) load_act(g + 1, anext);
        }
        const u32 wa[4] = {w0.x, w0.y, w0.z, w0.w}, wc[4] = {w1.x, w1.y, w1.z, w1.w};
        v8i_i8 tmp[MT16];
#pragma unroll
        for (int mt = 0; mt < MT16; mt++) tmp[mt] = v8i_i8{};
#pragma unroll
        for (int s = 0; s < 4; s++) {
          u32 alo, ahi, clo, chi;
          w8_bytes(wa[s], alo, ahi); // k 8h + 0..3 | 16 + 8h + 0..3
          w8_bytes(wc[s], clo, chi); // k 8h + 4..7 | 16 + 8h + 4..7
          const v2i_i8 k0 = v2i_i8{(int)alo, (int)clo}, k16 = v2i_i8{(int)ahi, (int)chi};
#pragma unroll
          for (int mt = 0; mt < MT16; mt++) {
            if (16u * mt < M) {
              u32x2 b0 = APF ? a[mt][2 * s] : u32x2{0u, 0u}, b1 = APF ? a[mt][2 * s + 1] : u32x2{0u, 0u};
              if (!APF && 16u * mt + r < M) {
                const u8 *row = ap + (u64)(16u * mt + r) * K + g * GROUP + 32u * s + 8u * h;
                b0 = ldg_u32x2(row);
                b1 = ldg_u32x2(row + 16);
              }
              tmp[mt] = wmma_u8s8(k0, v2i_i8{(int)b0.x, (int)b0.y}, tmp[mt]);
              tmp[mt] = wmma_u8s8(k16, v2i_i8{(int)b1.x, (int)b1.y}, tmp[mt]);
            }
          }
        }
        const u32 zw[8] = {z0.x, z0.y, z0.z, z0.w, z1.x, z1.y, z1.z, z1.w};
        float sc[8];
        i32 zz[8];
#pragma unroll
        for (int j = 0; j < 8; j++) i8_scale_word(zw[j], sc[j], zz[j]);
#pragma unroll
        for (int mt = 0; mt < MT16; mt++) {
          float am;
          i32 rm;
          i8_ar(am, rm, staged, s_sa, s_rs, asp, rsp, 16u * mt + r, g, gbeg, M, G);
#pragma unroll
          for (int j = 0; j < 8; j++) acc[mt][j] = i8_fold(acc[mt][j], tmp[mt][j], am, sc[j], zz[j], rm);
        }
      }
    }
  }

  const u32 nl = n0 + 8u * h;
  float *dst = S == 1 ? nullptr : ws + (u64)dr.split * M * N;
#pragma unroll
  for (int mt = 0; mt < MT16; mt++) {
    const u32 m = 16u * mt + r;
    if (m >= M) continue;
    if (S == 1) {
      const u32x4 v = {pack_bf16x2(acc[mt][0], acc[mt][1]), pack_bf16x2(acc[mt][2], acc[mt][3]),
                       pack_bf16x2(acc[mt][4], acc[mt][5]), pack_bf16x2(acc[mt][6], acc[mt][7])};
      *(u32x4 *)(out + (u64)m * N + nl) = v;
    } else {
#pragma unroll
      for (int j = 0; j < 8; j++) dst[(u64)m * N + nl + j] = acc[mt][j];
    }
  }
  if (S > 1) i8_block_handoff(ws, out, sema, s_last, M, N, S, dr.nblk, dr.bx, tid);
}
#endif

#define I8_DEC_ENTRY(NAME, MT, PF, APF)                                                                                \
  KERNEL LAUNCH_BOUNDS(32 * DEC_WARPS) void NAME(const u8 *wq, const u32 *sz, const u8 *act, const float *asg,         \
                                                 const i32 *rsum, u16 *out, float *ws, u32 *sema, u32 M, u32 N,        \
                                                 u32 K, u32 nend0, u32 nend1, u32 S) {                                 \
    gemm_i8_dec<MT, PF, APF>(wq, sz, act, asg, rsum, out, ws, sema, M, N, K, nend0, nend1, S);                        \
  }
I8_DEC_ENTRY(pq_i8_gemm_dec_m8, 1, 4, true)
I8_DEC_ENTRY(pq_i8_gemm_dec_m16, 2, 4, true)
I8_DEC_ENTRY(pq_i8_gemm_dec_m32, 4, 2, false)
I8_DEC_ENTRY(pq_i8_gemm_dec_m64, 8, 2, false)
#if defined(__NVPTX__)
#define I8_STAGED_ENTRY(NAME, MT, PF, CH)                                                                              \
  KERNEL LAUNCH_BOUNDS(32 * DEC_WARPS) void NAME(const u8 *wq, const u32 *sz, const u8 *act, const float *asg,         \
                                                 const i32 *rsum, u16 *out, float *ws, u32 *sema, u32 M, u32 N,        \
                                                 u32 K, u32 nend0, u32 nend1, u32 S) {                                 \
    gemm_i8_dec_staged<MT, PF, CH>(wq, sz, act, asg, rsum, out, ws, sema, M, N, K, nend0, nend1, S);                  \
  }
// sm_90a only: the staged body, the e4m3 staged classes' MT / PF / CH.
I8_STAGED_ENTRY(pq_i8_gemm_dec_st_m8, 1, 4, 8)
I8_STAGED_ENTRY(pq_i8_gemm_dec_st_m16, 2, 4, 8)
I8_STAGED_ENTRY(pq_i8_gemm_dec_st_m32, 4, 4, 4)
I8_STAGED_ENTRY(pq_i8_gemm_dec_st_m64, 8, 2, 2)
#endif

// ================================================================ prefill
// pq_i8_gemm_pre: the per-token prefill I8 GEMM. Activations are the
// fragment-tiled int8 codes of pq_i8_tokq / pq_i8_token [P, Mpad, K] (rows
// past M zero), token scales As [P, M], int32 row sums [P, M, G]:
//   y[m,n] = bf16( As[m] · Σ_g fl(s·float(D_g)) )     D_g as in the header,
// the group terms accumulated by one fma each (acc = fmaf(s, float(D_g),
// acc)), then one product by As and the bf16 rounding. Geometry as the e4m3
// prefill GEMM (families/gemm pq_gemm_pre): 256 threads = 8 warps as 2 (M)
// x 4 (N), block tile 128 x 128, k stage 64, grouped rasterization of 8 M
// tiles (grid = ceil(M/128) · N/128); the op is the integer one with the
// activations as A (signed) and the weights as B (unsigned).
#define PRE_BM 128
#define PRE_BN 128
#define PRE_BK 64
#define PRE_STAGES 3
#define PRE_THREADS 256
#define PRE_GM 8

struct I8PreTile { u32 m_blk, n_blk, p; };
DEVICE I8PreTile i8_pre_tile(u32 M, u32 N, u32 nend0, u32 nend1) {
  const u32 num_m = (M + PRE_BM - 1) / PRE_BM, num_n = N / PRE_BN;
  const u32 b = bid_x(), per_group = PRE_GM * num_n, grp = b / per_group;
  const u32 first_m = grp * PRE_GM, gsz = num_m - first_m < PRE_GM ? num_m - first_m : PRE_GM;
  const u32 pid_m = first_m + (b % per_group) % gsz, pid_n = (b % per_group) / gsz;
  const u32 m_blk = pid_m * PRE_BM, n_blk = pid_n * PRE_BN;
  return I8PreTile{m_blk, n_blk, i8_partition_of(n_blk, nend0, nend1)};
}

#if defined(__NVPTX__)
typedef u32 i8v2u32 __attribute__((ext_vector_type(2)));
struct __attribute__((aligned(16))) I8PreSmem {
  u32x4v a[PRE_STAGES][8][2][32]; // [stage][m16 tile][k32 step][lane]: one tiled A tile
  i8v2u32 w[PRE_STAGES][16][32];  // [stage][n8 tile][lane]: words s, s+1 of the lane's 16 B
  u32 sz[2][PRE_BN];              // [group parity][column]
  i32 rs[2][PRE_BM];              // [group parity][row]
};

// sm_90 body: cp.async 3-stage ring; warp tile 64 x 32 = 4 m16 x 4 n8 op
// tiles; the int32 group sums in tmp, folded at each group's end.
KERNEL LAUNCH_BOUNDS(PRE_THREADS) void pq_i8_gemm_pre(const u8 *wq, const u32 *sz, const u8 *act, const float *tscale,
                                                     const i32 *rsum, u16 *out, u32 M, u32 N, u32 K, u32 nend0,
                                                     u32 nend1) {
  SHARED I8PreSmem sm;
  const u32 G = K / GROUP, KS = K / PRE_BK, KT = K / 32u;
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, gid = lane >> 2, tig = lane & 3u;
  const u32 wm = warp >> 2, wn = warp & 3u;
  const u32 Mpad = (M + 15u) & ~15u, mtiles = Mpad / 16u;
  const I8PreTile tile = i8_pre_tile(M, N, nend0, nend1);
  const u32 m_blk = tile.m_blk, n_blk = tile.n_blk, p = tile.p;
  const u8 *ap = act + (u64)p * Mpad * K;
  const i32 *rsp = rsum + (u64)p * M * G;

  auto load_stage = [&](u32 ks) {
    const u32 slot = ks % PRE_STAGES, g = ks >> 1, half = ks & 1u;
#pragma unroll
    for (u32 i = 0; i < 2; i++) {
      const u32 c = tid + i * PRE_THREADS;
      const u32 mt = c >> 6, kk = (c >> 5) & 1u, ch = c & 31u;
      const u32 gmt = m_blk / 16u + mt;
      const bool ok = gmt < mtiles;
      const u8 *src = ap + (ok ? (((u64)gmt * KT + 2u * ks + kk) * 512u + ch * 16u) : 0u);
      cp_async16(&sm.a[slot][mt][kk][ch], src, ok ? 16u : 0u);
    }
#pragma unroll
    for (u32 i = 0; i < 2; i++) {
      const u32 c = tid + i * PRE_THREADS;
      const u32 jj = c >> 5, l = c & 31u, j8 = n_blk / 8u + jj;
      const u8 *src = wq + (((u64)(j8 >> 1) * G + g) * 2u + (j8 & 1u)) * 512u + l * 16u + half * 8u;
      cp_async8(&sm.w[slot][jj][l], src, 8u);
    }
    if (!half) {
      if (tid < PRE_BN / 4) cp_async16(&sm.sz[g & 1u][tid * 4u], sz + (u64)g * N + n_blk + tid * 4u, 16u);
      if (tid < PRE_BM) {
        const u32 m = m_blk + tid;
        const bool ok = m < M;
        cp_async4(&sm.rs[g & 1u][tid], rsp + (ok ? (u64)m * G + g : 0u), ok ? 4u : 0u);
      }
    }
  };

  float acc[4][4][4];
  i32 tmp[4][4][4];
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
      for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f, tmp[i][j][e] = 0;

#pragma unroll
  for (u32 st = 0; st < PRE_STAGES - 1; st++) {
    if (st < KS) load_stage(st);
    cp_async_commit();
  }
  for (u32 ks = 0; ks < KS; ks++) {
    cp_async_wait<PRE_STAGES - 2>();
    block_sync();
    if (ks + PRE_STAGES - 1 < KS) load_stage(ks + PRE_STAGES - 1);
    cp_async_commit();
    const u32 slot = ks % PRE_STAGES;
    i8v2u32 wv[4];
#pragma unroll
    for (int j = 0; j < 4; j++) wv[j] = sm.w[slot][4u * wn + j][lane];
#pragma unroll
    for (int kk = 0; kk < 2; kk++) {
      u32 blo[4], bhi[4];
#pragma unroll
      for (int j = 0; j < 4; j++) w8_bytes(kk ? wv[j].y : wv[j].x, blo[j], bhi[j]); // b0: k 4tig.., b1: k 16+4tig..
#pragma unroll
      for (int mt = 0; mt < 4; mt++) {
        const u32x4v av = sm.a[slot][4u * wm + mt][kk][lane];
#pragma unroll
        for (int j = 0; j < 4; j++) mma_s8u8_k32(tmp[mt][j], av.x, av.y, av.z, av.w, blo[j], bhi[j]);
      }
    }
    if (ks & 1u) { // end of group ks/2: fold
      const u32 gp = (ks >> 1) & 1u;
      float sc[4][2];
      i32 zz[4][2], rr[4][2];
#pragma unroll
      for (int j = 0; j < 4; j++) {
        const u32 col = 32u * wn + 8u * j + 2u * tig;
#pragma unroll
        for (int e = 0; e < 2; e++) i8_scale_word(sm.sz[gp][col + e], sc[j][e], zz[j][e]);
      }
#pragma unroll
      for (int mt = 0; mt < 4; mt++) {
        rr[mt][0] = sm.rs[gp][64u * wm + 16u * mt + gid];
        rr[mt][1] = sm.rs[gp][64u * wm + 16u * mt + gid + 8u];
      }
#pragma unroll
      for (int mt = 0; mt < 4; mt++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
          for (int e = 0; e < 4; e++) {
            acc[mt][j][e] = __builtin_fmaf(sc[j][e & 1], (float)(tmp[mt][j][e] - zz[j][e & 1] * rr[mt][e >> 1]), acc[mt][j][e]);
            tmp[mt][j][e] = 0;
          }
    }
  }
#pragma unroll
  for (int mt = 0; mt < 4; mt++) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const u32 m = m_blk + 64u * wm + 16u * mt + gid + 8u * h;
      if (m < M) {
        const float as = ldg_f32(tscale + (u64)p * M + m);
#pragma unroll
        for (int j = 0; j < 4; j++) {
          const u32 n = n_blk + 32u * wn + 8u * j + 2u * tig;
          *(u32 *)(out + (u64)m * N + n) = pack_bf16x2(as * acc[mt][j][2 * h], as * acc[mt][j][2 * h + 1]);
        }
      }
    }
  }
}
#else // __AMDGCN__
// gfx1201 body: the e4m3 gfx1201 prefill body's structure (two LDS slots,
// the next stage fetched into registers before this stage's WMMAs), the
// weights spread to unsigned byte B operands once per block as they are
// stored. Lane L, r = L % 16, h = L / 16, holds D of column 16j + r, rows
// 16mt + 8h + i.
struct __attribute__((aligned(16))) I8PreSmemW {
  u32 a[2][8][2][128]; // [slot][m16 tile][k32 step][512-byte tiled.h tile]
  u32 w[2][8][4][64];  // [slot][n16 tile][k16 block][lane]: u8 B operands, 8 bytes a lane
  u32 sz[2][PRE_BN];
  i32 rs[2][PRE_BM];
};

// WMMA A operand (rows r = lane % 16 of an m16 tile, k 16w + 8h + j of a
// k32 step) from one 512-byte tiled.h tile (arch/mma.h wmma_a_tiled).
DEVICE v2i_i8 i8_wmma_a_tiled(const u32 *tile, u32 lane, u32 w) {
  const u32 r = lane & 15u, h = lane >> 4;
  const u32 i = ((r & 7u) * 4u + 2u * h) * 4u + (r >> 3) + 2u * w;
  return v2i_i8{(int)tile[i], (int)tile[i + 4u]};
}

KERNEL LAUNCH_BOUNDS(PRE_THREADS) void pq_i8_gemm_pre(const u8 *wq, const u32 *sz, const u8 *act, const float *tscale,
                                                     const i32 *rsum, u16 *out, u32 M, u32 N, u32 K, u32 nend0,
                                                     u32 nend1) {
  SHARED I8PreSmemW sm;
  const u32 G = K / GROUP, KT = K / 32u;
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, r = lane & 15u, h = lane >> 4;
  const u32 wm = warp >> 2, wn = warp & 3u;
  const u32 Mpad = (M + 15u) & ~15u, mtiles = Mpad / 16u;
  const I8PreTile tile = i8_pre_tile(M, N, nend0, nend1);
  const u32 m_blk = tile.m_blk, n_blk = tile.n_blk, p = tile.p;
  const u8 *ap = act + (u64)p * Mpad * K;
  const i32 *rsp = rsum + (u64)p * M * G;

  const u32 jj = tid >> 4, q = (tid >> 1) & 7u, t2 = tid & 1u;
  const u32 j8 = n_blk / 8u + jj, wl = 16u * t2 + 8u * (jj & 1u) + q;
  const u32 zc = (tid & 31u) * 4u, rrow = tid & 127u;
  u32x4 ra[2], rz = {0u, 0u, 0u, 0u};
  u32x2 rw[2];
  i32 rr = 0;
  auto fetch = [&](u32 g, u32 half) {
#pragma unroll
    for (u32 i = 0; i < 2; i++) {
      const u32 c = tid + i * PRE_THREADS, gmt = m_blk / 16u + (c >> 6);
      const u32 t = gmt < mtiles ? gmt : mtiles - 1u;
      const u32x4 v = ldg_u32x4(ap + ((u64)t * KT + 4u * g + 2u * half + ((c >> 5) & 1u)) * 512u + (c & 31u) * 16u);
      ra[i] = gmt < mtiles ? v : u32x4{0u, 0u, 0u, 0u};
    }
    const u8 *wsrc = wq + (((u64)(j8 >> 1) * G + g) * 2u + (j8 & 1u)) * 512u + (4u * q + 2u * t2) * 16u + half * 8u;
    rw[0] = ldg_u32x2(wsrc);
    rw[1] = ldg_u32x2(wsrc + 16u);
    if (!half) {
      const u32 m = m_blk + rrow < M ? m_blk + rrow : M - 1u;
      rz = ldg_u32x4(sz + (u64)g * N + n_blk + zc);
      rr = m_blk + rrow < M ? (i32)ldg_u32(rsp + (u64)m * G + g) : 0;
    }
  };
  auto store = [&](u32 g, u32 half) {
#pragma unroll
    for (u32 i = 0; i < 2; i++) {
      const u32 c = tid + i * PRE_THREADS;
      *(u32x4 *)&sm.a[half][c >> 6][(c >> 5) & 1u][(c & 31u) * 4u] = ra[i];
    }
#pragma unroll
    for (u32 kk = 0; kk < 2; kk++) {
      u32 alo, ahi, blo, bhi;
      w8_bytes(kk ? rw[0].y : rw[0].x, alo, ahi); // tig 2t2: k 8t2 + 0..3 | 16 + 8t2 + 0..3
      w8_bytes(kk ? rw[1].y : rw[1].x, blo, bhi); // tig 2t2+1: k 8t2 + 4..7 | 16 + 8t2 + 4..7
      *(v2i_i8 *)&sm.w[half][jj >> 1][2u * kk][2u * wl] = v2i_i8{(int)alo, (int)blo};
      *(v2i_i8 *)&sm.w[half][jj >> 1][2u * kk + 1u][2u * wl] = v2i_i8{(int)ahi, (int)bhi};
    }
    if (!half) {
      *(u32x4 *)&sm.sz[g & 1u][zc] = rz;
      sm.rs[g & 1u][rrow] = rr;
    }
  };

  float acc[4][2][8];
  v8i_i8 tmp[4][2];
#pragma unroll
  for (int mt = 0; mt < 4; mt++)
#pragma unroll
    for (int j = 0; j < 2; j++) {
      tmp[mt][j] = v8i_i8{};
#pragma unroll
      for (int i = 0; i < 8; i++) acc[mt][j][i] = 0.0f;
    }

  fetch(0, 0);
  store(0, 0);
  for (u32 g = 0; g < G; g++) {
#pragma unroll
    for (u32 half = 0; half < 2; half++) {
      block_sync();
      const u32 gn = half ? (g + 1 < G ? g + 1 : g) : g;
      fetch(gn, 1u - half);
#pragma unroll
      for (u32 kb = 0; kb < 4; kb++) {
        v2i_i8 bw[2];
#pragma unroll
        for (int j = 0; j < 2; j++) bw[j] = *(const v2i_i8 *)&sm.w[half][2u * wn + j][kb][2u * lane];
#pragma unroll
        for (int mt = 0; mt < 4; mt++) {
          const v2i_i8 av = i8_wmma_a_tiled(sm.a[half][4u * wm + mt][kb >> 1], lane, kb & 1u);
#pragma unroll
          for (int j = 0; j < 2; j++) tmp[mt][j] = wmma_s8u8(av, bw[j], half == 0 && kb == 0 ? v8i_i8{} : tmp[mt][j]);
        }
      }
      if (half) {
        const u32 gp = g & 1u;
        float sc[2];
        i32 zz[2];
#pragma unroll
        for (int j = 0; j < 2; j++) i8_scale_word(sm.sz[gp][32u * wn + 16u * j + r], sc[j], zz[j]);
#pragma unroll
        for (int mt = 0; mt < 4; mt++) {
          i32 rs8[8];
#pragma unroll
          for (int i = 0; i < 8; i++) rs8[i] = sm.rs[gp][64u * wm + 16u * mt + 8u * h + i];
#pragma unroll
          for (int j = 0; j < 2; j++)
#pragma unroll
            for (int i = 0; i < 8; i++)
              acc[mt][j][i] = __builtin_fmaf(sc[j], (float)(tmp[mt][j][i] - zz[j] * rs8[i]), acc[mt][j][i]);
        }
      }
      store(gn, 1u - half);
    }
  }
#pragma unroll
  for (int mt = 0; mt < 4; mt++) {
#pragma unroll
    for (int i = 0; i < 8; i++) {
      const u32 m = m_blk + 64u * wm + 16u * mt + 8u * h + i;
      if (m < M) {
        const float as = ldg_f32(tscale + (u64)p * M + m);
#pragma unroll
        for (int j = 0; j < 2; j++) out[(u64)m * N + n_blk + 32u * wn + 16u * j + r] = (u16)pack_bf16x2(as * acc[mt][j][i], 0.0f);
      }
    }
  }
}
#endif
