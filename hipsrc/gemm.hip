// gemm.hip: the W4A8 GEMMs of the ParoQuant path. y[M, N] (bf16, row-major)
// = act(fp8 e4m3 codes x scales) . dequant(int4 weights)^T, with the zero
// point folded as a row-sum correction (shared/DESIGN.md §4):
//
//   y[m,n] = Σ_g asg[m,g] · ( sc[g,n] · MMA_g[m,n]  −  sc[g,n]·d[g,n] · rs[m,g] )
//
// MMA_g is the fp32 matrix op over group g's 128 k on the activation codes
// and the weight codes c entering as the integer c − 8 (exact; on sm_90 the
// op runs as two fp16 mma.m16n8k16, see arch/mma.h); d = z − 8; rs[m,g] is the
// sum of the decoded activation codes of row m in group g (the producers'
// row sums). Per-group mode (decode) multiplies by asg per group; per-token
// mode (prefill) has asg = 1 in the loop and the token scale As[m] in the
// epilogue. Rows ≥ M are never written.
//
// Entry points:
//   pq_gemm_dec_m8/_m16/_m32/_m64   decode band (M ≤ 8/16/32/64; one template,
//                   one register budget per M class), per-group scales,
//                   split-K across blocks, one launch for all partitions
//   pq_gemm_pre     per-token prefill: fragment-tiled activation codes,
//                   weights staged through shared memory, 128x128 tiles
//
// Weight layout (refimpl.RepackW4, the loader's repack of AWQ qweight; one
// layout for both kernels): N/16 column tiles x G groups x 1 KiB, g inner:
//   byte ((j16 * G + g) * 2 + h) * 512 + lane * 16 + 4 * s   (word s = 0..3)
// holds the 8 codes of column n = 16*j16 + 8*h + lane/4, tig = lane%4, k32
// step s of group g: local index l < 4 is k = 128g + 32s + 4tig + l, l >= 4
// is k = 128g + 32s + 16 + 4tig + (l-4), code l in nibble (l>>1) + 4(l&1)
// (arch/mma.h). Word s is then a complete B operand (b0 = l 0..3, b1 = l
// 4..7) of n8 tile 2*j16+h for the row-major op, or the a0|a2 (h = 0) /
// a1|a3 (h = 1) halves of an A operand of the 16-column tile for the
// swapped op. A lane's 16 bytes are one group.
// Scales: sz[g, n] u32 = fp16 bits of sc | (d as int16) << 16; the kernel
// forms sc (exact f16 -> f32) and sc·d (exact in fp32: 11 + 4 bits).
//
// Decode kernel (swapped: Yᵀ = W · Aᵀ). Weights are the A operand (16
// columns x 32 k), activation rows the B operand (32 k x 8 rows), so M ≤ 8
// fills the op's n8 side. Block = 4 warps = 64 columns, warp = one 16-column
// tile over the block's k range; grid (N/64, S). Split s owns groups
// [s*ceil(G/S), (s+1)*ceil(G/S)) ∩ [0, G). S = 1: bf16 straight from the
// registers. S > 1: each block writes its fp32 partial tile to ws[s, m, n],
// fences, and counts itself in sema[column block]; the last of the S blocks
// sums ws[0..S-1] in that fixed order (deterministic: bits do not depend on
// which block came last), writes bf16 and resets the counter to 0 (sema
// must be zero before the first launch; it is zero again after each).
// Latency: each warp keeps PF groups of weights and scale words in flight,
// the next group's activation codes load while this one computes (M ≤ 16),
// and the block's asg and rs sit in shared memory (when M·groups ≤ 2048).
//
// Prefill kernel. 256 threads = 8 warps as 2 (M) x 4 (N), warp tile 64 x 32
// (4 m16 x 4 n8 op tiles), block tile 128 x 128, k stage 64 (two op steps),
// 3-stage cp.async ring (A 8 KiB + W 4 KiB per stage) plus the group's sz
// and rs; the group's products accumulate in a temporary, folded once per
// 128-group: acc += sc·tmp − (sc·d)·rs. Blocks are rasterized in groups of
// 8 M-tiles so the weight column block stays in L2 while the M-tiles pass.
//
// Contracts checked by the Go launcher (kernels/gemm.go): K % 128 == 0;
// partition boundaries nend0 ≤ nend1 ≤ N multiples of 64 (decode) or 128
// (prefill), the partition of column n being (n ≥ nend0) + (n ≥ nend1);
// decode activations [P, M, K] row-major, asg and rs [P, M, G]; prefill
// activations [P, Mpad, K] tiled (tiled.h, zero rows past M), token scales
// [P, M], rs [P, M, G]; S ≤ 64.
#include "arch/mma.h"

#define GROUP 128

DEVICE u32 partition_of(u32 n0, u32 nend0, u32 nend1) { return (n0 >= nend0 ? 1u : 0u) + (n0 >= nend1 ? 1u : 0u); }

// ================================================================= decode
#define DEC_WARPS 4
#define DEC_BN (16 * DEC_WARPS)
#define DEC_AR_CAP 2048 // (m, group) pairs of asg and rs staged in shared memory (16 KiB; else read from L2)

// MT: 8-row op tiles (M <= 8*MT). PF: groups of weights and scale words in
// flight per warp. APF: the next group's activation codes are loaded while
// this one computes (registers permitting).
template <int MT, int PF, bool APF>
DEVICE void gemm_dec(const u8 *wq, const u32 *sz, const u8 *act, const float *asg, const float *rsum, u16 *out,
                     float *ws, u32 *sema, u32 M, u32 N, u32 K, u32 nend0, u32 nend1, u32 S) {
  SHARED float s_ar[DEC_AR_CAP][2];
  SHARED u32 s_last;
  const u32 G = K / GROUP;
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, gid = lane >> 2, tig = lane & 3u;
  const u32 bx = bid_x(), split = bid_y();
  const u32 nblk = bx * DEC_BN, j16 = bx * DEC_WARPS + warp, n0 = 16u * j16;
  const u32 p = partition_of(nblk, nend0, nend1);
  const u32 gps = (G + S - 1) / S, gbeg = split * gps < G ? split * gps : G, gend = gbeg + gps < G ? gbeg + gps : G;
  const u32 ng = gend - gbeg;

  const u8 *ap = act + (u64)p * M * K;
  const float *asp = asg + (u64)p * M * G, *rsp = rsum + (u64)p * M * G;
  // Weight tile (j16, g): 1 KiB; this lane's 16 B of each half.
  const u8 *wp = wq + (u64)j16 * G * 1024u + lane * 16u;
  const u32 *szp = sz + n0 + gid;

  // The weight stream starts first; the scale staging overlaps it.
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
  // asg and rs of the block's groups, [g - gbeg][m], when they fit.
  const bool ar_smem = M * ng <= DEC_AR_CAP;
  if (ar_smem) {
    for (u32 i = tid; i < M * ng; i += 32u * DEC_WARPS) {
      const u32 m = i % M, g = gbeg + i / M;
      s_ar[i][0] = asp[(u64)m * G + g];
      s_ar[i][1] = rsp[(u64)m * G + g];
    }
  }
  block_sync();

  float acc[MT][4];
#pragma unroll
  for (int mt = 0; mt < MT; mt++) acc[mt][0] = acc[mt][1] = acc[mt][2] = acc[mt][3] = 0.0f;

  // Activation codes of one group for this lane: row 8mt + gid, u32 at
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
        float tmp[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) tmp[mt][0] = tmp[mt][1] = tmp[mt][2] = tmp[mt][3] = 0.0f;
#pragma unroll
        for (int s = 0; s < 4; s++) {
          u32 bb[MT][2];
#pragma unroll
          for (int mt = 0; mt < MT; mt++) {
            bb[mt][0] = APF ? a[mt][2 * s] : 0u, bb[mt][1] = APF ? a[mt][2 * s + 1] : 0u;
            if (!APF && 8u * mt + gid < M) { // this step's codes only: no registers held across the group
              const u8 *row = ap + (u64)(8u * mt + gid) * K + g * GROUP + 32u * s + 4u * tig;
              bb[mt][0] = ldg_u32(row);
              bb[mt][1] = ldg_u32(row + 16);
            }
          }
          const AFrag af = make_afrag_w4(ww0[s], ww1[s]); // rows: columns n0+gid, n0+gid+8
#pragma unroll
          for (int mt = 0; mt < MT; mt++) {
            if (8u * mt < M) mma_k32(tmp[mt], af, make_bfrag_e4m3(bb[mt][0], bb[mt][1]));
          }
        }
        // Fold. Lane holds D[n][m] for n = n0+gid (+8), m = 8mt + 2tig (+1).
        const float sc0 = f16_to_f32(z.x & 0xFFFFu), sc1 = f16_to_f32(z.y & 0xFFFFu);
        const float zs0 = sc0 * (float)(int)(short)(z.x >> 16), zs1 = sc1 * (float)(int)(short)(z.y >> 16);
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
          const u32 m0 = 8u * mt + 2u * tig, m1 = m0 + 1u;
          float a0 = 0.0f, r0 = 0.0f, a1 = 0.0f, r1 = 0.0f;
          if (ar_smem) {
            const u32 base = (g - gbeg) * M;
            if (m0 < M) a0 = s_ar[base + m0][0], r0 = s_ar[base + m0][1];
            if (m1 < M) a1 = s_ar[base + m1][0], r1 = s_ar[base + m1][1];
          } else {
            if (m0 < M) a0 = ldg_f32(asp + (u64)m0 * G + g), r0 = ldg_f32(rsp + (u64)m0 * G + g);
            if (m1 < M) a1 = ldg_f32(asp + (u64)m1 * G + g), r1 = ldg_f32(rsp + (u64)m1 * G + g);
          }
          acc[mt][0] = __builtin_fmaf(a0, __builtin_fmaf(-zs0, r0, sc0 * tmp[mt][0]), acc[mt][0]);
          acc[mt][1] = __builtin_fmaf(a1, __builtin_fmaf(-zs0, r1, sc0 * tmp[mt][1]), acc[mt][1]);
          acc[mt][2] = __builtin_fmaf(a0, __builtin_fmaf(-zs1, r0, sc1 * tmp[mt][2]), acc[mt][2]);
          acc[mt][3] = __builtin_fmaf(a1, __builtin_fmaf(-zs1, r1, sc1 * tmp[mt][3]), acc[mt][3]);
        }
      }
    }
  }

  const u32 na = n0 + gid, nb = na + 8u;
  if (S == 1) {
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
      const u32 m0 = 8u * mt + 2u * tig, m1 = m0 + 1u;
      if (m0 < M) {
        out[(u64)m0 * N + na] = (u16)pack_bf16x2(acc[mt][0], 0.0f);
        out[(u64)m0 * N + nb] = (u16)pack_bf16x2(acc[mt][2], 0.0f);
      }
      if (m1 < M) {
        out[(u64)m1 * N + na] = (u16)pack_bf16x2(acc[mt][1], 0.0f);
        out[(u64)m1 * N + nb] = (u16)pack_bf16x2(acc[mt][3], 0.0f);
      }
    }
    return;
  }
  // Split-K: partial tile to ws[split], then the last block reduces.
  float *wsp = ws + (u64)split * M * N;
#pragma unroll
  for (int mt = 0; mt < MT; mt++) {
    const u32 m0 = 8u * mt + 2u * tig, m1 = m0 + 1u;
    if (m0 < M) {
      wsp[(u64)m0 * N + na] = acc[mt][0];
      wsp[(u64)m0 * N + nb] = acc[mt][2];
    }
    if (m1 < M) {
      wsp[(u64)m1 * N + na] = acc[mt][1];
      wsp[(u64)m1 * N + nb] = acc[mt][3];
    }
  }
  fence_gpu();
  block_sync();
  if (tid == 0) s_last = atomic_add_u32_gpu(sema + bx, 1u) == S - 1u ? 1u : 0u;
  block_sync();
  if (!s_last) return;
  fence_gpu();
  for (u32 i = tid; i < M * DEC_BN; i += 32u * DEC_WARPS) {
    const u32 m = i / DEC_BN, n = nblk + i % DEC_BN;
    // Summed in split order (deterministic); loads issued four at a time.
    float sum = 0.0f;
    for (u32 s = 0; s < S; s += 4) {
      float v[4];
#pragma unroll
      for (u32 i = 0; i < 4; i++) v[i] = s + i < S ? ldg_cg_f32(ws + ((u64)(s + i) * M + m) * N + n) : 0.0f;
#pragma unroll
      for (u32 i = 0; i < 4; i++)
        if (s + i < S) sum += v[i];
    }
    out[(u64)m * N + n] = (u16)pack_bf16x2(sum, 0.0f);
  }
  if (tid == 0) st_u32_gpu(sema + bx, 0u);
}

#define DEC_ENTRY(NAME, MT, PF, APF)                                                                                   \
  KERNEL LAUNCH_BOUNDS(32 * DEC_WARPS) void NAME(const u8 *wq, const u32 *sz, const u8 *act, const float *asg,         \
                                                 const float *rsum, u16 *out, float *ws, u32 *sema, u32 M, u32 N,      \
                                                 u32 K, u32 nend0, u32 nend1, u32 S) {                                 \
    gemm_dec<MT, PF, APF>(wq, sz, act, asg, rsum, out, ws, sema, M, N, K, nend0, nend1, S);                           \
  }
DEC_ENTRY(pq_gemm_dec_m8, 1, 4, true)
DEC_ENTRY(pq_gemm_dec_m16, 2, 4, true)
DEC_ENTRY(pq_gemm_dec_m32, 4, 2, false)
#if defined(__AMDGCN__) // the emulated op's registers leave no room for a second group in flight
DEC_ENTRY(pq_gemm_dec_m64, 8, 1, false)
#else
DEC_ENTRY(pq_gemm_dec_m64, 8, 2, false)
#endif

// ================================================================ prefill
#define PRE_BM 128
#define PRE_BN 128
#define PRE_BK 64
#define PRE_STAGES 3
#define PRE_THREADS 256
#define PRE_GM 8 // M-tiles per rasterization group

typedef u32 v4u32_t __attribute__((ext_vector_type(4)));
typedef u32 v2u32_t __attribute__((ext_vector_type(2)));
struct __attribute__((aligned(16))) PreSmem {
  v4u32_t a[PRE_STAGES][8][2][32]; // [stage][m16 tile][k32 step][lane]: one tiled A tile = 32 x 16 B
  v2u32_t w[PRE_STAGES][16][32];   // [stage][n8 tile][lane]: words s, s+1 of the lane's 16 B
  u32 sz[2][PRE_BN];               // [group parity][column]
  float rs[2][PRE_BM];             // [group parity][row]
};

KERNEL LAUNCH_BOUNDS(PRE_THREADS) void pq_gemm_pre(const u8 *wq, const u32 *sz, const u8 *act, const float *tscale,
                                                    const float *rsum, u16 *out, u32 M, u32 N, u32 K, u32 nend0,
                                                    u32 nend1) {
  SHARED PreSmem sm;
  const u32 G = K / GROUP, KS = K / PRE_BK, KT = K / 32u;
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, gid = lane >> 2, tig = lane & 3u;
  const u32 wm = warp >> 2, wn = warp & 3u;
  const u32 Mpad = (M + 15u) & ~15u, mtiles = Mpad / 16u;

  // Grouped rasterization: PRE_GM M-tiles share each column block in turn.
  const u32 num_m = (M + PRE_BM - 1) / PRE_BM, num_n = N / PRE_BN;
  const u32 b = bid_x(), per_group = PRE_GM * num_n, grp = b / per_group;
  const u32 first_m = grp * PRE_GM, gsz = num_m - first_m < PRE_GM ? num_m - first_m : PRE_GM;
  const u32 pid_m = first_m + (b % per_group) % gsz, pid_n = (b % per_group) / gsz;
  const u32 m_blk = pid_m * PRE_BM, n_blk = pid_n * PRE_BN;
  const u32 p = partition_of(n_blk, nend0, nend1);

  const u8 *ap = act + (u64)p * Mpad * K;
  const float *rsp = rsum + (u64)p * M * G;

  // Stage loader: A 8 m16 tiles x 2 k32 tiles (16 B chunks), W 16 n8 tiles
  // x 32 lanes (8 B each), and on even stages the group's sz and rs.
  auto load_stage = [&](u32 ks) {
    const u32 slot = ks % PRE_STAGES, g = ks >> 1, half = ks & 1u;
#pragma unroll
    for (u32 i = 0; i < 2; i++) {
      const u32 c = tid + i * PRE_THREADS; // 0..511
      const u32 mt = c >> 6, kk = (c >> 5) & 1u, ch = c & 31u;
      const u32 gmt = m_blk / 16u + mt;
      const bool ok = gmt < mtiles;
      const u8 *src = ap + (ok ? (((u64)gmt * KT + 2u * ks + kk) * 512u + ch * 16u) : 0u);
      cp_async16(&sm.a[slot][mt][kk][ch], src, ok ? 16u : 0u);
    }
#pragma unroll
    for (u32 i = 0; i < 2; i++) {
      const u32 c = tid + i * PRE_THREADS; // 0..511
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

  float acc[4][4][4], tmp[4][4][4];
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
      for (int e = 0; e < 4; e++) acc[i][j][e] = tmp[i][j][e] = 0.0f;

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
    v2u32_t wv[4];
#pragma unroll
    for (int j = 0; j < 4; j++) wv[j] = sm.w[slot][4u * wn + j][lane];
#pragma unroll
    for (int kk = 0; kk < 2; kk++) {
      BFrag bf[4];
#pragma unroll
      for (int j = 0; j < 4; j++) bf[j] = make_bfrag_w4(kk ? wv[j].y : wv[j].x);
#pragma unroll
      for (int mt = 0; mt < 4; mt++) {
        const v4u32_t av = sm.a[slot][4u * wm + mt][kk][lane];
        const u32 ar[4] = {av.x, av.y, av.z, av.w};
        const AFrag af = make_afrag_e4m3(ar);
#pragma unroll
        for (int j = 0; j < 4; j++) mma_k32(tmp[mt][j], af, bf[j]);
      }
    }
    if (ks & 1u) { // end of group ks/2: fold
      const u32 gp = (ks >> 1) & 1u;
      float sc[4][2], zs[4][2], rr[4][2];
#pragma unroll
      for (int j = 0; j < 4; j++) {
        const u32 col = 32u * wn + 8u * j + 2u * tig;
#pragma unroll
        for (int e = 0; e < 2; e++) {
          const u32 w = sm.sz[gp][col + e];
          sc[j][e] = f16_to_f32(w & 0xFFFFu);
          zs[j][e] = sc[j][e] * (float)(int)(short)(w >> 16);
        }
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
            acc[mt][j][e] = __builtin_fmaf(-zs[j][e & 1], rr[mt][e >> 1], __builtin_fmaf(sc[j][e & 1], tmp[mt][j][e], acc[mt][j][e]));
            tmp[mt][j][e] = 0.0f;
          }
    }
  }

  // Epilogue: As[m] · acc, bf16 pairs (columns 2tig, 2tig+1), rows < M only.
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
