// gemm.hip: the W4A8 GEMMs of the ParoQuant path. y[M, N] (bf16, row-major)
// = act(fp8 e4m3 codes x scales) . dequant(int4 weights)^T, with the zero
// point folded as a row-sum correction (docs/formats.md):
//
//   y[m,n] = Σ_g asg[m,g] · ( sc[g,n] · MMA_g[m,n]  −  sc[g,n]·d[g,n] · rs[m,g] )
//
// MMA_g is the fp32 matrix op over group g's 128 k on the activation codes
// and the weight codes c entering as the integer c − 8 (exact; on sm_90 the
// op runs as two fp16 mma.m16n8k16, on gfx1201 as the fp8 WMMA
// v_wmma_f32_16x16x16_fp8_fp8, see arch/mma.h); d = z − 8; rs[m,g] is the
// sum of the decoded activation codes of row m in group g (the producers'
// row sums). pq_gemm_pre_wg takes the codes as c − z instead (exact in
// e4m3), the same sum without the rs term: Σ_k a_k·(c_k − z) = MMA_g −
// d·rs. Per-group mode (decode) multiplies by asg per group; per-token mode
// (prefill) has asg = 1 in the loop and the token scale As[m] in the
// epilogue. Rows ≥ M are never written.
//
// Entry points:
//   pq_gemm_dec_m8/_m16/_m32/_m64   decode band (M ≤ 8/16/32/64, one
//                   register budget per M class), per-group scales, split-K
//                   across blocks, one launch for all partitions. sm_90:
//                   gemm_dec_staged (activations staged, PDL, cluster reduce
//                   at S = 2); gfx1201: gemm_dec (per-warp reads).
//   pq_gemm_dec_v1_m8/_m16/_m32/_m64   sm_90a only: the per-warp body
//                   gemm_dec (on gfx1201 it is the pq_gemm_dec_m* body),
//                   gated and timed against the staged body in bench2 dec
//   pq_gemm_dec_wg_m8/_m16/_m32/_m64   sm_90a only: the decode band on
//                   the fp8 wgmma (gemm_dec_wg: codes as c − z, no rs
//                   term), at its own split law (DecSplitKFootprint)
//   pq_gemm_dec_memonly_m8   sm_90a only: attribution, gemm_dec_staged's
//                   loads and stores without the op (not a GEMM, never
//                   gated)
//   pq_gemm_pre     per-token prefill: fragment-tiled activation codes,
//                   weights staged through shared memory, 128x128 tiles
//   pq_gemm_pre_wg  sm_90a only: per-token prefill on wgmma, row-major
//                   activation codes, weights as e4m3 c − z in registers
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
// registers. S > 1, three protocols, one result (the partials are summed in
// split order 0..S-1 by every protocol, so the bits are the same and do not
// depend on which block came last):
//   - staged sm_90 body (gemm_dec_staged, every pq_gemm_dec_m*) launched as
//     1 x S clusters (S = 2, DecLaunchOpts): rank 0 sums the CTAs'
//     partial tiles through distributed shared memory; ws and sema unused;
//   - staged body, plain launch: each warp writes its partial 16-column tile
//     to ws[s, m, n], lane 0 fences and counts in sema[16-column tile]; the
//     warp that completes the count sums ws and resets the counter;
//   - per-warp body (pq_gemm_dec_v1_*, and gfx1201): the same per 64-column
//     block, counting in sema[column block].
// sema must be zero before the first launch; it is zero again after each.
// Latency: see gemm_dec_staged (activation chunks by cp.async, a PF-deep
// weight stream, PDL: only weights and scale words are read before
// grid_dep_wait).
//
// Prefill kernel. 256 threads = 8 warps as 2 (M) x 4 (N), warp tile 64 x 32
// (4 m16 x 4 n8 op tiles), block tile 128 x 128, k stage 64 (two op steps),
// 3-stage cp.async ring (A 8 KiB + W 4 KiB per stage) plus the group's sz
// and rs; the group's products accumulate in a temporary, folded once per
// 128-group: acc += sc·tmp − (sc·d)·rs. Blocks are rasterized in groups of
// 8 M-tiles so the weight column block stays in L2 while the M-tiles pass.
//
// gfx1201: both kernels have bodies of their own after the sm_90 ones, with
// the same geometry, memory formats and arguments and 16x16x16 WMMA operands
// instead of the m16n8k32 fragments. The gfx1201 decode body is the per-warp
// algorithm of the sm_90 v1 body (no activation staging, PDL or cluster
// reduce); the prefill bodies share one algorithm.
//
// Contracts checked by the Go launcher (families/gemm/launch.go): K % 128 == 0;
// partition boundaries nend0 ≤ nend1 ≤ N multiples of 64 (decode) or 128
// (prefill), the partition of column n being (n ≥ nend0) + (n ≥ nend1);
// decode activations [P, M, K] row-major, asg and rs [P, M, G]; prefill
// activations [P, Mpad, K] tiled (tiled.h, zero rows past M) for
// pq_gemm_pre, [P, M, K] row-major for pq_gemm_pre_wg (which takes the
// codes as c − z and reads no rs), token scales [P, M], rs [P, M, G];
// S ≤ 64.
#include "arch/mma.h"
#include "format/int5.h"
#include "gemm/rowlayout.h"
#if defined(__NVPTX__)
#include "arch/wgmma.h"
#endif

#define GROUP 128

DEVICE u32 partition_of(u32 n0, u32 nend0, u32 nend1) { return (n0 >= nend0 ? 1u : 0u) + (n0 >= nend1 ? 1u : 0u); }

// ------------------------------------------------------- 5-bit weight operands
// The W5 kernels read the 4-bit words above plus their plane bytes: plane
// word i/4, byte i%4 holds the fifth bits of weight word i (bit l' = the
// fifth bit of nibble l', int5.h), so a lane's 16 bytes of a group (words
// s = 0..3) have one plane word whose byte s belongs to word s
// (refimpl.RepackW5). The codes enter the op as c − 16 (exact in fp16 and
// e4m3); the fold is the 4-bit one with d = z − 16 in the scale word.
#if defined(__NVPTX__)
// The sm_90 f16 operand of a 5-bit word w (nibble l' of w, fifth bit l'
// of its plane byte q; bits of q above 7 ignored) in 16 ops (the 4-bit
// w4_word_f16x2: 9), the same f16 values c − 16 as w5_pair_f16x2, so every
// output bit is unchanged:
//   e = (q & 0x55) · 0x410410: bit 8b + 4 = q_2b (int5_spread4 without
//       its final mask: the other bits are never read)
//   o:oh = (q & 0xAA) · 0x2082080, 32x32 -> 64: the same spread of the odd
//       bits moved up by 4, so bit 8b + 8 = q_2b+1 (b = 0..2) and oh bit 0
//       = q7
//   X  = w at 0x0F0F0F0F, e elsewhere: byte b = code of nibble 2b (bits 0..4)
//   Y  = w at 0xF0F0F0F0, o elsewhere: codes 1, 3, 5 at bits 4..8, 12..16,
//        20..24; nibble 7 at 28..31, its fifth bit past the word
//   Y3 = the funnel {oh:Y} >> 8: codes 3 and 7 at bits 4..8 and 20..24
//   pairs 0, 2 (nibbles 0|4, 2|6): (X, X >> 8) & 0x001F001F | 0x6400:
//       f16 1024 + c, minus 1040
//   pairs 1, 3 (nibbles 1|5, 3|7): (Y, Y3) & 0x01F001F0 | 0x6400:
//       f16 1024 + 16c (c ≤ 31: exact), × 1/16 − 80 in one fma (64 + c − 80)
// Every step is exact in f16, as in w4_word_f16x2; the masks drop every
// bit of e, o and oh but those named. Go mirror and exhaustive proof:
// families/gemm/w5op_test.go.
DEVICE u32 lop3_select(u32 a, u32 b, u32 mask) { // (a & mask) | (b & ~mask)
  u32 r;
  asm("lop3.b32 %0, %1, %2, %3, 0xE4;" : "=r"(r) : "r"(a), "r"(b), "r"(mask));
  return r;
}
DEVICE void w5_word_f16x2(u32 w, u32 q, u32 (&h)[4]) { // h[j] = w5_pair_f16x2 of pair j
  const u32 e = (q & 0x55u) * 0x00410410u;
  u32 o, oh;
  asm("{\n\t.reg .b64 t;\n\tmul.wide.u32 t, %2, 0x2082080;\n\tmov.b64 {%0, %1}, t;\n\t}" : "=r"(o), "=r"(oh) : "r"(q & 0xAAu));
  const u32 x = lop3_select(w, e, 0x0F0F0F0Fu), y = lop3_select(w, o, 0xF0F0F0F0u);
  u32 y3;
  asm("shf.r.clamp.b32 %0, %1, %2, 8;" : "=r"(y3) : "r"(y), "r"(oh));
  const u32 x0 = lop3_and_or(x, 0x001F001Fu, 0x64006400u), x2 = lop3_and_or(x >> 8, 0x001F001Fu, 0x64006400u);
  const u32 x1 = lop3_and_or(y, 0x01F001F0u, 0x64006400u), x3 = lop3_and_or(y3, 0x01F001F0u, 0x64006400u);
  asm("sub.f16x2 %0, %1, %2;" : "=r"(h[0]) : "r"(x0), "r"(0x64106410u));
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(h[1]) : "r"(x1), "r"(0x2C002C00u), "r"(0xD500D500u));
  asm("sub.f16x2 %0, %1, %2;" : "=r"(h[2]) : "r"(x2), "r"(0x64106410u));
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(h[3]) : "r"(x3), "r"(0x2C002C00u), "r"(0xD500D500u));
}
// make_afrag_w4's operand for 5-bit codes: rows gid (w0, plane byte q0)
// and gid+8 (w1, q1).
DEVICE AFrag make_afrag_w5(u32 w0, u32 w1, u32 q0, u32 q1) {
  u32 p0[4], p1[4];
  w5_word_f16x2(w0, q0, p0), w5_word_f16x2(w1, q1, p1);
  AFrag f;
  f.h[0] = p0[0], f.h[1] = p1[0], f.h[2] = p0[1], f.h[3] = p1[1];
  f.h[4] = p0[2], f.h[5] = p1[2], f.h[6] = p0[3], f.h[7] = p1[3];
  return f;
}
// make_bfrag_w4's operand for 5-bit codes (plane byte q of w).
DEVICE BFrag make_bfrag_w5(u32 w, u32 q) {
  BFrag f;
  w5_word_f16x2(w, q, f.h);
  return f;
}
#else
// w4_wmma_step for 5-bit codes: wa, wb as there, qa, qb their plane bytes.
// The byte codes of nibbles 2b (codes_even) and 2b+1 (codes_odd) are the
// e(l 0,4,1,5) / e(l 2,6,3,7) bytes w4_lut_e4m3 gives for 4-bit codes.
DEVICE W4Step w5_wmma_step(u32 wa, u32 wb, u32 qa, u32 qb) {
  const u32 alo = int5_e4m3x4(int5_codes_even(wa, int5_spread4(qa))), ahi = int5_e4m3x4(int5_codes_odd(wa, int5_spread4(qa >> 1)));
  const u32 blo = int5_e4m3x4(int5_codes_even(wb, int5_spread4(qb))), bhi = int5_e4m3x4(int5_codes_odd(wb, int5_spread4(qb >> 1)));
  const u32 l0123 = 0x06040200u, l4567 = 0x07050301u;
  return W4Step{make_v2i(__builtin_amdgcn_perm(ahi, alo, l0123), __builtin_amdgcn_perm(bhi, blo, l0123)),
                make_v2i(__builtin_amdgcn_perm(ahi, alo, l4567), __builtin_amdgcn_perm(bhi, blo, l4567))};
}
#endif

// ================================================================= decode
#define DEC_WARPS 4
#define DEC_BN (16 * DEC_WARPS)
#define DEC_AR_CAP 2048 // (m, group) pairs of asg and rs staged in shared memory (16 KiB; else read from L2)

// DecRange is a decode block's share: its column block (bx, nblk), the
// warp's 16-column tile (j16, n0), the partition p, and its split's groups
// [gbeg, gend).
struct DecRange { u32 bx, split, nblk, j16, n0, p, gbeg, gend; };
DEVICE DecRange dec_range(u32 warp, u32 G, u32 S, u32 nend0, u32 nend1) {
  const u32 bx = bid_x(), split = bid_y();
  const u32 nblk = bx * DEC_BN, j16 = bx * DEC_WARPS + warp, n0 = 16u * j16;
  const u32 p = partition_of(nblk, nend0, nend1);
  const u32 gps = (G + S - 1) / S, gbeg = split * gps < G ? split * gps : G, gend = gbeg + gps < G ? gbeg + gps : G;
  return DecRange{bx, split, nblk, j16, n0, p, gbeg, gend};
}

// A scale word (header: fp16 bits of sc | d as int16 << 16) as the folds
// use it: sc (exact f16 -> f32) and sc·d (exact in fp32: 11 + 4 bits).
DEVICE void scale_word(u32 z, float &sc, float &zs) {
  sc = f16_to_f32(z & 0xFFFFu);
  zs = sc * (float)(int)(short)(z >> 16);
}

// The last block's split-K sum (per-block protocol): 64 columns x M rows
// of ws[0..S-1] summed in split order (deterministic) to bf16, in batches
// of 8 elements per thread (i = tid + 128j) whose loads (8 x 4 splits) are
// all issued before the adds: one L2 round trip per batch, not per element.
DEVICE void dec_reduce_block(const float *ws, u16 *out, u32 M, u32 N, u32 S, u32 nblk, u32 tid) {
  // Batches of 8 elements per thread (i = tid + 128j), each batch's loads
  // (8 x 4 splits) issued before its adds; summed in split order.
  for (u32 i0 = 0; i0 < M * DEC_BN; i0 += 8u * 32u * DEC_WARPS) {
    float sum[8];
#pragma unroll
    for (int j = 0; j < 8; j++) sum[j] = 0.0f;
    for (u32 s = 0; s < S; s += 4) {
      float v[8][4];
#pragma unroll
      for (int j = 0; j < 8; j++) {
        const u32 i = i0 + tid + 32u * DEC_WARPS * j, m = i / DEC_BN, n = nblk + i % DEC_BN;
#pragma unroll
        for (u32 k = 0; k < 4; k++) v[j][k] = s + k < S && m < M ? ldg_cg_f32(ws + ((u64)(s + k) * M + m) * N + n) : 0.0f;
      }
#pragma unroll
      for (int j = 0; j < 8; j++)
#pragma unroll
        for (u32 k = 0; k < 4; k++)
          if (s + k < S) sum[j] += v[j][k];
    }
#pragma unroll
    for (int j = 0; j < 8; j++) {
      const u32 i = i0 + tid + 32u * DEC_WARPS * j, m = i / DEC_BN, n = nblk + i % DEC_BN;
      if (m < M) out[(u64)m * N + n] = (u16)pack_bf16x2(sum[j], 0.0f);
    }
  }
}

// The per-block split-K handoff, after the block's partial tile is in ws:
// release it (fence, then count in sema[column block]); the block that
// completes the count acquires, sums ws in split order and resets the
// counter. s_last is the block's shared broadcast word.
DEVICE void dec_block_handoff(const float *ws, u16 *out, u32 *sema, u32 &s_last, u32 M, u32 N, u32 S, u32 nblk, u32 bx,
                              u32 tid) {
  fence_gpu();
  block_sync();
  if (tid == 0) s_last = atomic_add_u32_gpu(sema + bx, 1u) == S - 1u ? 1u : 0u;
  block_sync();
  if (!s_last) return;
  fence_gpu();
  dec_reduce_block(ws, out, M, N, S, nblk, tid);
  if (tid == 0) st_u32_gpu(sema + bx, 0u);
}


#if defined(__NVPTX__)
// Folds one group's op result into the accumulator (header: sc·MMA_g −
// sc·d·rs, times asg): the scale word z of columns n0+gid and n0+gid+8;
// asg and rs from shared memory ([g - gbeg][m]) when staged, else from L2.
template <int MT>
DEVICE void dec_fold(float (&acc)[MT][4], const float (&tmp)[MT][4], u32x2 z, bool ar_smem, const float (*s_ar)[2],
                     const float *asp, const float *rsp, u32 g, u32 gbeg, u32 M, u32 G, u32 tig) {
  float sc0, zs0, sc1, zs1;
  scale_word(z.x, sc0, zs0), scale_word(z.y, sc1, zs1);
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

// One 8-row op tile's outputs as bf16, straight from the accumulator: the
// lane's D[na|nb][m0|m0+1] (rows past M skipped).
DEVICE void store_bf16_tile(const float (&a)[4], u16 *out, u32 M, u32 N, u32 m0, u32 na, u32 nb) {
  const u32 m1 = m0 + 1u;
  if (m0 < M) {
    out[(u64)m0 * N + na] = (u16)pack_bf16x2(a[0], 0.0f);
    out[(u64)m0 * N + nb] = (u16)pack_bf16x2(a[2], 0.0f);
  }
  if (m1 < M) {
    out[(u64)m1 * N + na] = (u16)pack_bf16x2(a[1], 0.0f);
    out[(u64)m1 * N + nb] = (u16)pack_bf16x2(a[3], 0.0f);
  }
}

// Stores the block's result: bf16 straight from the registers when S = 1,
// else the split-K protocol of the header (fp32 partial tile to ws[split],
// the last of the S blocks sums them in split order and resets the counter).
// Lane holds D[n][m] for n = n0+gid (+8), m = 8mt + 2tig (+1).
template <int MT>
DEVICE void dec_epilogue(const float (&acc)[MT][4], u16 *out, float *ws, u32 *sema, u32 &s_last, u32 M, u32 N, u32 S,
                         u32 n0, u32 nblk, u32 split, u32 bx, u32 tid, u32 gid, u32 tig) {
  const u32 na = n0 + gid, nb = na + 8u;
  if (S == 1) {
#pragma unroll
    for (int mt = 0; mt < MT; mt++) store_bf16_tile(acc[mt], out, M, N, 8u * mt + 2u * tig, na, nb);
    return;
  }
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
  dec_block_handoff(ws, out, sema, s_last, M, N, S, nblk, bx, tid);
}

// The staged body's store: per warp, not per block. S = 1: bf16 straight
// from the registers. S > 1: the warp's fp32 partial 16-column tile goes to
// ws[split]; lane 0 releases it (fence, then a relaxed count on sema[j16],
// one counter per 16-column tile); the warp that brings the count to S
// acquires (fence), sums ws[0..S-1] in split order (deterministic) and
// writes bf16, then resets the counter. No block barrier: a warp never
// waits for the block's other warps. With the per-block protocol the staged
// body spent 27% of its warp time in the epilogue, in membar and barrier
// stalls (H200, 2026-11-29, scripts/ncu.sh source-level stall sampling).
template <int MT>
DEVICE void dec_epilogue_warp(const float (&acc)[MT][4], u16 *out, float *ws, u32 *sema, u32 M, u32 N, u32 S, u32 j16,
                              u32 split, u32 lane, u32 gid, u32 tig) {
  const u32 n0 = 16u * j16, na = n0 + gid, nb = na + 8u;
  float *dst = S == 1 ? nullptr : ws + (u64)split * M * N;
#pragma unroll
  for (int mt = 0; mt < MT; mt++) {
    const u32 m0 = 8u * mt + 2u * tig, m1 = m0 + 1u;
    if (S == 1) {
      store_bf16_tile(acc[mt], out, M, N, m0, na, nb);
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
  // Element e = lane + 32j (row e/16, column n0 + e%16), 4MT per lane, in
  // batches of up to 8; each round issues a batch's loads for 4 splits
  // before the first add (one L2 round trip per round, not per element: the
  // tail of the kernel).
  constexpr int JB = 4 * MT < 8 ? 4 * MT : 8;
  for (u32 j0 = 0; j0 < 4u * MT; j0 += JB) {
    float sum[JB];
#pragma unroll
    for (int j = 0; j < JB; j++) sum[j] = 0.0f;
    for (u32 s = 0; s < S; s += 4) {
      float v[JB][4];
#pragma unroll
      for (int j = 0; j < JB; j++) {
        const u32 e = lane + 32u * (j0 + j), m = e >> 4, n = n0 + (e & 15u);
#pragma unroll
        for (u32 k = 0; k < 4; k++) v[j][k] = s + k < S && m < M ? ldg_cg_f32(ws + ((u64)(s + k) * M + m) * N + n) : 0.0f;
      }
#pragma unroll
      for (int j = 0; j < JB; j++)
#pragma unroll
        for (u32 k = 0; k < 4; k++)
          if (s + k < S) sum[j] += v[j][k]; // split order: deterministic
    }
#pragma unroll
    for (int j = 0; j < JB; j++) {
      const u32 e = lane + 32u * (j0 + j), m = e >> 4;
      if (m < M) out[(u64)m * N + n0 + (e & 15u)] = (u16)pack_bf16x2(sum[j], 0.0f);
    }
  }
  if (lane == 0) st_u32_gpu(sema + j16, 0u);
}

// The split-K store through a 1 x S cluster (launched with cluster dims
// 1 x S, DecLaunchOpts; rank = split): each CTA parks its partial tile in
// its own shared memory (s_red: DEC_WARPS x 4MT x 32 floats, free by now),
// and rank 0 sums ranks 0..S-1 in order through distributed shared memory:
// the same additions, in the same order, as the ws path, with no global
// round trip, fence or counter. The second cluster_sync keeps every CTA's
// shared memory alive until rank 0 has read it. Returns false (nothing
// done) for a plain launch or S = 1.
template <int MT>
DEVICE bool dec_cluster_epilogue(const float (&acc)[MT][4], float *s_red, u16 *out, float *ws, u32 *sema, u32 M, u32 N,
                                 u32 S, u32 j16, u32 warp, u32 lane, u32 gid, u32 tig) {
  if (S <= 1 || cluster_nctarank() != S || cluster_nctaid_y() != S) return false;
  block_sync(); // the body's last shared accesses are done
#pragma unroll
  for (int mt = 0; mt < MT; mt++)
#pragma unroll
    for (int j = 0; j < 4; j++) s_red[(warp * 4u * MT + 4u * mt + j) * 32u + lane] = acc[mt][j];
  cluster_sync();
  if (cluster_ctarank() == 0) {
    float sum[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; mt++) sum[mt][0] = sum[mt][1] = sum[mt][2] = sum[mt][3] = 0.0f;
    for (u32 r = 0; r < S; r++) {
      float v[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int j = 0; j < 4; j++) v[mt][j] = ld_dsmem_f32(&s_red[(warp * 4u * MT + 4u * mt + j) * 32u + lane], r);
#pragma unroll
      for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int j = 0; j < 4; j++) sum[mt][j] += v[mt][j];
    }
    dec_epilogue_warp<MT>(sum, out, ws, sema, M, N, 1u, j16, 0u, lane, gid, tig);
  }
  cluster_sync();
  return true;
}

// Decode body with the activation codes staged through shared memory (every
// sm_90 decode class). The per-warp body below re-reads every activation byte
// from L2 once per warp (4x per block; at M = 16 that is 2 KiB of codes per
// 1 KiB of weights), spends ~360 issued instructions per KiB of weights and
// runs its 8 op steps per group as one dependent chain, group after group
// (H200, 2026-11-29, scripts/ncu.sh on the per-warp body inside bench2 dec
// --m 1, qkv M = 1: issue slots 51% used, DRAM 22% busy): latency- and
// issue-bound, not DRAM-bound. Here:
//   - the block's activation rows, asg and rs arrive by cp.async in chunks
//     of CH groups, double-buffered (chunk c+1 in flight while chunk c
//     computes); rows padded by 16 B so a B fragment's 8 rows hit 32
//     distinct banks; rows >= M are zeroed once, never staged;
//   - weights stay a PF-deep register stream (ldg, no L1 allocate), the
//     refills predicated instead of branched, so a round of PF groups is one
//     basic block and the scheduler interleaves the groups' op chains;
//   - each group's 4 k32 steps alternate between two accumulators (chains
//     of 4 ops instead of 8), summed at the fold;
//   - the int4 -> f16 conversion is 9 ops per 8 codes (w4_afrag_lop3).
// Same grid as the per-warp body; the fold sums the two accumulators first
// (so its bits differ from v1's within the gate's bound); split-K through a cluster's
// distributed shared memory when launched as clusters of the S splits, else
// per warp through ws (dec_epilogue_warp: counters per 16-column tile).
template <int MT, int PF, int CH, bool MEMONLY = false, int BITS = 4, bool ROWL = false>
DEVICE void gemm_dec_staged(const u8 *wq, const u8 *wpl, const u32 *sz, const u8 *act, const float *asg, const float *rsum, u16 *out,
                            float *ws, u32 *sema, u32 M, u32 N, u32 K, u32 nend0, u32 nend1, u32 S) {
  static_assert(CH % PF == 0, "a chunk holds whole prefetch rounds (static ring slots)");
  constexpr u32 ROWS = 8u * MT;
  constexpr u32 ROWB = CH * GROUP + 16u; // staged row stride in bytes
  SHARED __attribute__((aligned(16))) u8 s_act[2][ROWS][ROWB];
  SHARED __attribute__((aligned(16))) float s_ar[2][2][CH][ROWS]; // [buf][asg, rs][group in chunk][row]
  const u32 G = K / GROUP;
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, gid = lane >> 2, tig = lane & 3u;
  const DecRange dr = dec_range(warp, G, S, nend0, nend1);
  const u32 split = dr.split, j16 = dr.j16, n0 = dr.n0, p = dr.p, gbeg = dr.gbeg, gend = dr.gend;

  const u8 *ap = act + (u64)p * M * K;
  const float *asp = asg + (u64)p * M * G, *rsp = rsum + (u64)p * M * G;
  // The weight stream: wnx / znx point at the next group to prefetch.
  // Fragment order: the lane's 16 B of each half of the 1 KiB tile (g).
  // Row layout (ROWL, 4-bit): k32 step tig of columns n0+gid and
  // n0+gid+8 (WHALF = 8 columns on), rebuilt by rl_quad_frag.
  static_assert(!ROWL || BITS == 4, "the row layout is 4-bit only");
  const u32 WHALF = ROWL ? 4u * K : 512u, WSTEP = ROWL ? 64u : 1024u;
  const u8 *wnx = ROWL ? wq + (u64)(n0 + gid) * (K / 2u) + tig * 16u + (u64)gbeg * 64u
                       : wq + (u64)j16 * G * 1024u + lane * 16u + (u64)gbeg * 1024u;
  const u32 *znx = sz + n0 + gid + (u64)gbeg * N;
  // 5-bit: the lane's plane words of both halves (h = 0, 1) of each group.
  const u8 *pnx = BITS == 5 ? wpl + (u64)j16 * G * 256u + lane * 4u + (u64)gbeg * 256u : nullptr;
  u32x4 wb[PF][2];
  u32x2 zb[PF], pb[PF];
#pragma unroll
  for (int i = 0; i < PF; i++) {
    const bool live = gbeg + i < gend;
    ldg_stream_v4_if(wb[i][0], wnx, live), ldg_stream_v4_if(wb[i][1], wnx + WHALF, live);
    ldg_u32_if(zb[i].x, znx, live), ldg_u32_if(zb[i].y, znx + 8u, live);
    if (BITS == 5) ldg_u32_if(pb[i].x, pnx, live), ldg_u32_if(pb[i].y, pnx + 128u, live), pnx += 256u;
    wnx += WSTEP, znx += N;
  }
  // Everything above reads only weights and scale words (static); what
  // follows reads activations, asg and rs, and writes ws, sema and out, which
  // the previous kernel in the stream may produce or use: under a PDL launch
  // the weight stream starts while that kernel finishes.
  grid_dep_launch_dependents();
  grid_dep_wait();
  // Rows M..8MT-1 of both activation buffers are zeros for the kernel's
  // lifetime (stored once here; staging never touches them).
  for (u32 i = M * (ROWB / 16u) + tid; i < ROWS * (ROWB / 16u); i += 32u * DEC_WARPS) {
    ((u32x4 *)&s_act[0][0][0])[i] = u32x4{0u, 0u, 0u, 0u};
    ((u32x4 *)&s_act[1][0][0])[i] = u32x4{0u, 0u, 0u, 0u};
  }
  // Chunk [c0, c0 + CH) -> buffer buf: rows < M in 16-byte pieces (zeros
  // for groups past gend), then asg and rs of each (group, row), zeros past
  // M and gend.
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
      const float *src = (which ? rsp : asp) + (u64)m * G + c0 + gl;
      cp_async4(&s_ar[buf][which][gl][m], live ? src : asp, live ? 4u : 0u);
    }
    cp_async_commit();
  };
  if (gbeg < gend) stage(gbeg, 0);

  float acc[MT][4];
#pragma unroll
  for (int mt = 0; mt < MT; mt++) acc[mt][0] = acc[mt][1] = acc[mt][2] = acc[mt][3] = 0.0f;

  // One group: consume ring slot i, refill it (predicated), the op steps
  // from the staged rows, then the fold. Lane holds D[n][m] for
  // n = n0+gid (+8), m = 8mt + 2tig (+1).
  auto group = [&](const int i, u32 g, u32 gl, u32 buf) __attribute__((always_inline)) {
    const u32x4 w0 = wb[i][0], w1 = wb[i][1];
    const u32x2 z = zb[i], pl = BITS == 5 ? pb[i] : u32x2{0u, 0u};
    const bool more = g + PF < gend;
    ldg_stream_v4_if(wb[i][0], wnx, more), ldg_stream_v4_if(wb[i][1], wnx + WHALF, more);
    ldg_u32_if(zb[i].x, znx, more), ldg_u32_if(zb[i].y, znx + 8u, more);
    if (BITS == 5) ldg_u32_if(pb[i].x, pnx, more), ldg_u32_if(pb[i].y, pnx + 128u, more), pnx += 256u;
    wnx += WSTEP, znx += N;
    if (MEMONLY) { // attribution: the same loads, no conversion, op or fold
      acc[0][0] += bits_f32(w0.x ^ w0.y ^ w0.z ^ w0.w ^ w1.x ^ w1.y ^ w1.z ^ w1.w ^ z.x ^ z.y);
      return;
    }
    const u8 *sg = &s_act[buf][gid][4u * tig] + gl * GROUP;
    const RlWords r0 = ROWL ? rl_quad_frag(w0, tig) : RlWords{{w0.x, w0.y, w0.z, w0.w}};
    const RlWords r1 = ROWL ? rl_quad_frag(w1, tig) : RlWords{{w1.x, w1.y, w1.z, w1.w}};
    const u32 ww0[4] = {r0.w[0], r0.w[1], r0.w[2], r0.w[3]}, ww1[4] = {r1.w[0], r1.w[1], r1.w[2], r1.w[3]};
    float t[2][MT][4];
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
      for (int mt = 0; mt < MT; mt++) t[h][mt][0] = t[h][mt][1] = t[h][mt][2] = t[h][mt][3] = 0.0f;
#pragma unroll
    for (int s = 0; s < 4; s++) {
      const AFrag af = BITS == 5 ? make_afrag_w5(ww0[s], ww1[s], pl.x >> (8 * s), pl.y >> (8 * s)) : w4_afrag_lop3(ww0[s], ww1[s]);
#pragma unroll
      for (int mt = 0; mt < MT; mt++) {
        const u8 *r = sg + 8u * mt * ROWB + 32u * s;
        mma_k32(t[s & 1][mt], af, make_bfrag_e4m3(*(const u32 *)r, *(const u32 *)(r + 16)));
      }
    }
    float sc0, zs0, sc1, zs1;
    scale_word(z.x, sc0, zs0), scale_word(z.y, sc1, zs1);
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
      const u32 m0 = 8u * mt + 2u * tig;
      const float a0 = s_ar[buf][0][gl][m0], a1 = s_ar[buf][0][gl][m0 + 1u];
      const float r0 = s_ar[buf][1][gl][m0], r1 = s_ar[buf][1][gl][m0 + 1u];
      acc[mt][0] = __builtin_fmaf(a0, __builtin_fmaf(-zs0, r0, sc0 * (t[0][mt][0] + t[1][mt][0])), acc[mt][0]);
      acc[mt][1] = __builtin_fmaf(a1, __builtin_fmaf(-zs0, r1, sc0 * (t[0][mt][1] + t[1][mt][1])), acc[mt][1]);
      acc[mt][2] = __builtin_fmaf(a0, __builtin_fmaf(-zs1, r0, sc1 * (t[0][mt][2] + t[1][mt][2])), acc[mt][2]);
      acc[mt][3] = __builtin_fmaf(a1, __builtin_fmaf(-zs1, r1, sc1 * (t[0][mt][3] + t[1][mt][3])), acc[mt][3]);
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
    block_sync(); // chunk c0 visible to every warp
    u32 g = c0;
    for (; g + PF <= cend; g += PF) { // whole rounds: one basic block
#pragma unroll
      for (int i = 0; i < PF; i++) group(i, g + i, g + i - c0, buf);
    }
#pragma unroll
    for (int i = 0; i < PF; i++) // the last chunk's partial round
      if (g + i < cend) group(i, g + i, g + i - c0, buf);
    block_sync(); // every warp is done with buffer buf before it is restaged
  }
  static_assert(sizeof(s_act) >= DEC_WARPS * 4 * MT * 32 * sizeof(float), "partials fit the activation buffers");
  if (dec_cluster_epilogue<MT>(acc, (float *)&s_act[0][0][0], out, ws, sema, M, N, S, j16, warp, lane, gid, tig)) return;
  dec_epilogue_warp<MT>(acc, out, ws, sema, M, N, S, j16, split, lane, gid, tig);
}

// MT: 8-row op tiles (M <= 8*MT). PF: groups of weights and scale words in
// flight per warp. APF: the next group's activation codes are loaded while
// this one computes (registers permitting).
template <int MT, int PF, bool APF, int BITS = 4>
DEVICE void gemm_dec(const u8 *wq, const u8 *wpl, const u32 *sz, const u8 *act, const float *asg, const float *rsum, u16 *out,
                     float *ws, u32 *sema, u32 M, u32 N, u32 K, u32 nend0, u32 nend1, u32 S) {
  static_assert(BITS == 4, "the sm_90 per-warp body is 4-bit only (the W5 decode runs the staged body)");
  (void)wpl;
  SHARED float s_ar[DEC_AR_CAP][2];
  SHARED u32 s_last;
  const u32 G = K / GROUP;
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, gid = lane >> 2, tig = lane & 3u;
  const DecRange dr = dec_range(warp, G, S, nend0, nend1);
  const u32 bx = dr.bx, split = dr.split, nblk = dr.nblk, j16 = dr.j16, n0 = dr.n0, p = dr.p, gbeg = dr.gbeg, gend = dr.gend;
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
        dec_fold<MT>(acc, tmp, z, ar_smem, s_ar, asp, rsp, g, gbeg, M, G, tig);
      }
    }
  }

  dec_epilogue<MT>(acc, out, ws, sema, s_last, M, N, S, n0, nblk, split, bx, tid, gid, tig);
}

// ------------------------------------------------------ wgmma decode body
// gemm_dec_wg: the decode band on Hopper's warpgroup op at its fp8 rate,
// for every M class. The block (4 warps = one warpgroup, 64 columns, grid
// (N/64, S), the split ranges and the epilogue protocols) is the staged
// body's; the op is wgmma.m64nNBk32.e4m3 with
//   A = the weights in registers, their unsigned codes c as e4m3 bytes
//       (w4_e4m3u_frag: byte c is c·2^-9 exactly, 5 ops a word), warp w
//       the 16-column tile j16, word s of the lane's group the k32 step s
//       (the fragment order is the op's A order);
//   B = the activation codes as they are (e4m3, no conversion), NB rows of
//       one group = 128 bytes each, 128B-swizzled, M on the op's N side.
// So a group is 4 ops for any M in the class, and the fold takes the zero
// point with the row sums: y += asg · (2^9·sc · T − sc·z · rs), T = the
// op's 2^-9·Σ_k a_k c_k, sc·z exact in fp32 (11 + 4 bits). With UNS false
// the codes enter as c − z instead (w4_e4m3_frag, exact: −15..15, 14 ops
// a word) and the fold has no row-sum term: y += asg · sc · T. UNS per M
// class (DEC_WG_ENTRY; gemm.DecWGUnsigned): on the H200 the unsigned codes
// were 5-14% faster at M = 8, 3-8% at M = 16 and 2-7% slower at M = 64
// (best split per cell, bench2 dec, 2026-12-02), where the fold's
// extra FMA and rs loads per element outweigh the conversion's savings
// (results/h200-2026-12-02g).
//
// Weights and scale words arrive by bulk copy (cp.async.bulk), per warp:
// each warp owns a ring of R slots of DWG_CW groups (its 1 KiB weight
// tiles, contiguous in memory, and the groups' 16 scale words), one
// mbarrier per slot; lane 0 issues a slot's copies (before grid_dep_wait:
// weights and scales are static) and reissues it once the warp has read
// it. Activations: chunks of CH groups by cp.async straight into the
// swizzled tiles, three buffers: chunk c + 2 is issued when chunk c starts
// (chunk c − 1's ops on that buffer are retired), rows >= M are zeros
// stored once.
// Per group: read the weights and scale words from the ring, convert them
// into the A operand, issue 4 ops into T, commit, wait for them, fold. A
// warpgroup keeps no op in flight past its group (see the wait below); the
// tensor pipe is kept busy by the SM's other blocks (3-5 per SM).
//
// Shared memory (dynamic, 1024-aligned; DWG_SMEM_<NB> bytes, DecWgSmem):
//   at   [3][CH][NB rows][128 B]: activation tiles (1024-aligned atoms)
//   asg  [3][CH][NB]: their asg (zeros past M and gend)
//   rs   [3][CH][NB]: their row sums (zeros past M and gend)
//   wr   [4 warps][R][DWG_CW x 1 KiB weights, DWG_CW x 64 B scale words]
//   bar  [4 warps][R] mbarriers
#define DWG_TILE(NB) ((NB) * 128)
#define DWG_CW 2 // groups per weight copy (one ring slot)
#define DWG_NBUF 3 // activation chunk buffers
template <int NB, int CH, int R> struct DecWgSmem {
  static constexpr u32 SLOT = DWG_CW * (1024u + 64u), CHUNK = CH * DWG_TILE(NB);
  static constexpr u32 AT = 0, ASG = AT + DWG_NBUF * CHUNK, RS = ASG + DWG_NBUF * CH * NB * 4u;
  static constexpr u32 WR = RS + DWG_NBUF * CH * NB * 4u;
  static constexpr u32 BAR = WR + DEC_WARPS * R * SLOT;
  static constexpr u32 BYTES = BAR + DEC_WARPS * R * 8u + 1024u; // + alignment slack
};
#define DWG_SMEM_8 40288
#define DWG_SMEM_16 53344
#define DWG_SMEM_32 53344
#define DWG_SMEM_64 70720

template <int NB, int CH, int R, bool UNS>
DEVICE void gemm_dec_wg(const u8 *wq, const u32 *sz, const u8 *act, const float *asg, const float *rsum, u16 *out,
                        float *ws, u32 *sema, u32 M, u32 N, u32 K, u32 nend0, u32 nend1, u32 S) {
  constexpr int MT = NB / 8, ND = NB / 2;
  using L = DecWgSmem<NB, CH, R>;
  extern SHARED __attribute__((aligned(1024))) u8 dwg_smem[];
  const u32 sbase = (smem_u32(dwg_smem) + 1023u) & ~1023u;
  u8 *const gbase = dwg_smem + (sbase - smem_u32(dwg_smem)); // the same bytes, generic address
  float *const sasg = (float *)(gbase + L::ASG), *const srs = (float *)(gbase + L::RS);

  const u32 G = K / GROUP;
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, gid = lane >> 2, tig = lane & 3u;
  const DecRange dr = dec_range(warp, G, S, nend0, nend1);
  const u32 split = dr.split, j16 = dr.j16, n0 = dr.n0, p = dr.p, gbeg = dr.gbeg, gend = dr.gend;
  const u8 *ap = act + (u64)p * M * K;
  const float *asp = asg + (u64)p * M * G, *rsp = rsum + (u64)p * M * G;

  // The warp's weight ring: stage st (groups gbeg + DWG_CW st ..) in slot st % R.
  const u32 wr = sbase + L::WR + warp * R * L::SLOT, bars = sbase + L::BAR + warp * R * 8u;
  const u32 nst = (gend - gbeg + DWG_CW - 1u) / DWG_CW;
  auto issue = [&](u32 st) { // lane 0
    const u32 slot = wr + (st % R) * L::SLOT, bar = bars + 8u * (st % R);
    const u32 g0 = gbeg + DWG_CW * st, n = gend - g0 < DWG_CW ? gend - g0 : DWG_CW;
    fence_proxy_async(); // the warp's reads of the slot come before the copy's writes
    mbar_arrive_expect_tx(bar, n * (1024u + 64u));
    bulk_g2s(slot, wq + ((u64)j16 * G + g0) * 1024u, n * 1024u, bar);
    for (u32 j = 0; j < n; j++) bulk_g2s(slot + DWG_CW * 1024u + 64u * j, sz + (u64)(g0 + j) * N + n0, 64u, bar);
  };
  if (lane == 0) {
    for (u32 k = 0; k < (u32)R; k++) mbar_init(bars + 8u * k, 1u);
    fence_mbar_init();
    for (u32 st = 0; st < nst && st < (u32)R; st++) issue(st);
  }
  warp_sync_all();
  // Only weights and scale words (static) are read above: under a PDL
  // launch the stream starts while the previous kernel finishes.
  grid_dep_launch_dependents();
  grid_dep_wait();

  // Rows M..NB-1 of every activation tile: zeros, stored once (staging
  // writes rows < M only; a row's swizzle stays within the row).
  for (u32 i = tid; i < DWG_NBUF * CH * (NB - M) * 8u; i += 32u * DEC_WARPS) {
    const u32 t = i / ((NB - M) * 8u), r = M + (i / 8u) % (NB - M), c = i % 8u;
    sts_v4(sbase + L::AT + t * DWG_TILE(NB) + r * 128u + 16u * c, u32x4{0u, 0u, 0u, 0u});
  }
  // Chunk [c0, c0 + CH) -> buffer b: row m's 16-byte piece c of group gl at
  // piece c ^ (m % 8) of its 128-byte row (zeros for groups past gend), and
  // asg and rs of each (group, row), zeros past M and gend.
  auto stage = [&](u32 c0, u32 b) {
    const u32 nch = gend - c0 < CH ? gend - c0 : CH;
    for (u32 i = tid; i < M * CH * 8u; i += 32u * DEC_WARPS) {
      const u32 m = i / (CH * 8u), gl = (i / 8u) % CH, c = i % 8u;
      const bool live = gl < nch;
      const u32 dst = sbase + L::AT + b * L::CHUNK + gl * DWG_TILE(NB) + m * 128u + ((c ^ (m & 7u)) << 4);
      cp_async16_s(dst, live ? ap + (u64)m * K + (c0 + gl) * GROUP + 16u * c : ap, live ? 16u : 0u);
    }
    for (u32 i = tid; i < (UNS ? 2u : 1u) * CH * NB; i += 32u * DEC_WARPS) {
      const u32 which = i / (CH * NB), j = i % (CH * NB), gl = j / NB, m = j % NB;
      const bool live = m < M && gl < nch;
      const float *src = (which ? rsp : asp) + (u64)m * G + c0 + gl;
      cp_async4((which ? srs : sasg) + b * CH * NB + j, live ? src : asp, live ? 4u : 0u);
    }
    cp_async_commit();
  };
  // Prologue: chunks 0 and 1 in flight, chunk 0 landed and visible to the op.
  if (gbeg < gend) {
    stage(gbeg, 0);
    const bool second = gbeg + CH < gend;
    if (second) stage(gbeg + CH, 1);
    if (second) cp_async_wait<1>();
    else cp_async_wait<0>();
    fence_proxy_async();
    block_sync();
  }

  float acc[MT][4];
#pragma unroll
  for (int mt = 0; mt < MT; mt++) acc[mt][0] = acc[mt][1] = acc[mt][2] = acc[mt][3] = 0.0f;
  float T[ND]; // the op's accumulators (one group)
#pragma unroll
  for (int j = 0; j < ND; j++) T[j] = 0.0f;
  // Fold one group's op result: T[4j + 2v1 + v0] is D[n0 + gid + 8v1][8j + 2tig + v0].
  // sc9 = 2^9·sc undoes the codes' 2^-9 (exact); zq = sc·z, z = d + 8.
  // Without UNS the codes entered as c − z: no row-sum term.
  auto fold = [&](u32x2 z, const float *ar, const float *rr) __attribute__((always_inline)) {
    const float sc0 = f16_to_f32(z.x & 0xFFFFu), sc1 = f16_to_f32(z.y & 0xFFFFu);
    if constexpr (!UNS) {
#pragma unroll
      for (int mt = 0; mt < MT; mt++) {
        const u32 m0 = 8u * mt + 2u * tig;
        const float a0 = ar[m0], a1 = ar[m0 + 1u];
        acc[mt][0] = __builtin_fmaf(a0, sc0 * T[4 * mt + 0], acc[mt][0]);
        acc[mt][1] = __builtin_fmaf(a1, sc0 * T[4 * mt + 1], acc[mt][1]);
        acc[mt][2] = __builtin_fmaf(a0, sc1 * T[4 * mt + 2], acc[mt][2]);
        acc[mt][3] = __builtin_fmaf(a1, sc1 * T[4 * mt + 3], acc[mt][3]);
      }
      return;
    }
    const float sc90 = 512.0f * sc0, sc91 = 512.0f * sc1;
    const float zq0 = sc0 * (float)((int)(short)(z.x >> 16) + 8), zq1 = sc1 * (float)((int)(short)(z.y >> 16) + 8);
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
      const u32 m0 = 8u * mt + 2u * tig;
      const float a0 = ar[m0], a1 = ar[m0 + 1u], r0 = rr[m0], r1 = rr[m0 + 1u];
      acc[mt][0] = __builtin_fmaf(a0, __builtin_fmaf(-zq0, r0, sc90 * T[4 * mt + 0]), acc[mt][0]);
      acc[mt][1] = __builtin_fmaf(a1, __builtin_fmaf(-zq0, r1, sc90 * T[4 * mt + 1]), acc[mt][1]);
      acc[mt][2] = __builtin_fmaf(a0, __builtin_fmaf(-zq1, r0, sc91 * T[4 * mt + 2]), acc[mt][2]);
      acc[mt][3] = __builtin_fmaf(a1, __builtin_fmaf(-zq1, r1, sc91 * T[4 * mt + 3]), acc[mt][3]);
    }
  };
  u32 ci = 0;
  for (u32 c0 = gbeg; c0 < gend; c0 += CH, ci++) {
    const u32 cend = c0 + CH < gend ? c0 + CH : gend, b = ci % DWG_NBUF;
    const bool next = cend < gend, ahead = c0 + 2u * CH < gend;
    if (ahead) stage(c0 + 2u * CH, (ci + 2u) % DWG_NBUF); // chunk ci - 1's ops on it are retired
    for (u32 g = c0; g < cend; g++) {
      const u32 k = g - gbeg, st = k / DWG_CW, j = k % DWG_CW, slot = wr + (st % R) * L::SLOT;
      // The warp reconverges after each lane's wait loop and after lane 0's
      // refill: every wgmma instruction is .aligned (the whole warp must
      // execute it together, else the behaviour is undefined).
      if (j == 0) {
        mbar_wait(bars + 8u * (st % R), (st / R) & 1u);
        warp_sync_all();
      }
      const u32x4 w0 = lds_v4(slot + 1024u * j + 16u * lane), w1 = lds_v4(slot + 1024u * j + 512u + 16u * lane);
      const u32x2 z{lds_u32(slot + DWG_CW * 1024u + 64u * j + 4u * gid), lds_u32(slot + DWG_CW * 1024u + 64u * j + 4u * gid + 32u)};
      if (j == DWG_CW - 1u || g + 1u == gend) { // the warp is done with the slot: refill it
        warp_sync_all();
        if (lane == 0 && st + R < nst) issue(st + R);
        warp_sync_all();
      }
      const u32 ww0[4] = {w0.x, w0.y, w0.z, w0.w}, ww1[4] = {w1.x, w1.y, w1.z, w1.w};
      u32 af[4][4];
#pragma unroll
      for (int s = 0; s < 4; s++) {
        if constexpr (UNS) {
          w4_e4m3u_frag(ww0[s], ww1[s], af[s]);
        } else {
          w4_e4m3_frag(ww0[s], ww1[s], w4_zero_const(z.x), w4_zero_const(z.y), af[s]);
        }
      }
      wg_fence();
      const u32 tb = sbase + L::AT + b * L::CHUNK + (g - c0) * DWG_TILE(NB);
#pragma unroll
      for (int s = 0; s < 4; s++) wg_mma_e4m3(T, af[s], sw128_desc(tb + 32u * s), (u32)s);
      wg_commit();
      // Retired before anything else is written: ptxas gives registers
      // defined between a wgmma and its wait_group the physical registers
      // of that wgmma's A operand (it sees them dead after the issue), which
      // the op may still be reading. The SASS gate (sass-wgmma-hazards)
      // walks the compiled code for exactly that.
      wg_wait<0>();
      wg_fence_regs(T);
      fold(z, sasg + (b * CH + (g - c0)) * NB, srs + (b * CH + (g - c0)) * NB);
    }
    if (next) {
      // Chunk ci + 1 landed (ci + 2 may still be in flight behind it).
      if (ahead) cp_async_wait<1>();
      else cp_async_wait<0>();
      fence_proxy_async();
      block_sync();
    }
  }
  static_assert(DWG_NBUF * L::CHUNK >= DEC_WARPS * 4 * MT * 32 * sizeof(float), "partials fit the activation tiles");
  if (dec_cluster_epilogue<MT>(acc, (float *)(gbase + L::AT), out, ws, sema, M, N, S, j16, warp, lane, gid, tig)) return;
  dec_epilogue_warp<MT>(acc, out, ws, sema, M, N, S, j16, split, lane, gid, tig);
}

// ---------------------------------------------- in-block split-K decode body
// gemm_dec_ks: the staged body's operands and fold (mma.sync, weights the A
// operand by w4_afrag_lop3, activation codes the B operand), with the split
// over K inside the block instead of across blocks: block bx holds the NT
// 16-column tiles j16 = NT·bx.., its S warps (block 32·S, S <= DKS_MAXS)
// take ceil(G/S) groups each, and the S partial tiles are summed in shared
// memory in warp order (deterministic) by warp 0, which stores bf16. No ws,
// no counters, no fence: the global split-K tail of the other bodies cost
// 1.2-1.55 µs per launch on the H200 against 0.1-0.5 µs for a reduce inside
// the block (results/h200-2026-12-02e/tailcost.txt). Grid N/(16·NT) x 1.
//
// Each warp streams its groups through a ring of DKS_R slots, one group a
// slot: the NT 1 KiB weight tiles and their 64·NT bytes of scale words by
// bulk copy from lane 0 on the slot's mbarrier (issued before
// grid_dep_wait: weights and scale words are static), the M activation
// rows of the group (128 B each, at a 144-byte stride so a B fragment's 8
// rows hit 32 distinct banks) and its asg and rs by cp.async from every
// lane, one commit group a slot (empty past the warp's last group, so
// wait_group<DKS_R-1> always means "this slot's group landed"). Rows >= M
// are never staged: their operand words are zeros by select. Each B
// fragment is converted once and used for the NT tiles. A slot is refilled
// after a warp barrier that follows the warp's shared reads of it.
//
// Shared memory (dynamic, DecShared): per warp DKS_R slots of
// dks_slot(NT, MT, M) bytes, then DKS_R mbarriers:
//   slot: NT x 1024 weights, NT x 64 scale words (columns n0..), asg[8MT]
//         then rs[8MT], then M rows x 144 B
// The partial tiles of the reduce go to each warp's slot 0 (every copy into
// it has landed by then).
#define DKS_R 4
#define DKS_MAXS 16
#define DKS_ROW 144 // staged activation row stride (bytes)
#ifndef DKS_U
#define DKS_U 1 // groups per unrolled round (2 and 4 spilled or ran no faster: results/h200-2026-12-02f)
#endif
#ifndef DKS_MINB
#define DKS_MINB 1 // launch-bounds minimum of 512-thread blocks per SM (register cap 64K / (512 DKS_MINB))
#endif
DEVICE constexpr u32 dks_slot(u32 NT, u32 MT, u32 M) { return 1088u * NT + 64u * MT + DKS_ROW * M; }
template <int NT, int MT>
DEVICE void gemm_dec_ks(const u8 *wq, const u32 *sz, const u8 *act, const float *asg, const float *rsum, u16 *out,
                        u32 M, u32 N, u32 K, u32 nend0, u32 nend1, u32 S) {
  constexpr u32 R = DKS_R, WB = 1024u * NT, ZB = 64u * NT; // a slot's weight and scale-word bytes
  extern SHARED __attribute__((aligned(16))) u8 dks_smem[];
  const u32 G = K / GROUP;
  const u32 lane = lane_id(), warp = tid_x() >> 5, gid = lane >> 2, tig = lane & 3u;
  const u32 j16 = NT * bid_x(), n0 = 16u * j16, p = partition_of(n0, nend0, nend1);
  const u32 gps = (G + S - 1u) / S, gbeg = warp * gps < G ? warp * gps : G, gend = gbeg + gps < G ? gbeg + gps : G;
  const u32 ng = gend - gbeg;
  const u32 SLOT = dks_slot(NT, MT, M), WARPB = R * SLOT + 8u * R;
  u8 *const gw = dks_smem + warp * WARPB; // this warp's ring, generic address
  const u32 sw = smem_u32(gw), bars = sw + R * SLOT;
  const u8 *ap = act + (u64)p * M * K;
  const float *asp = asg + (u64)p * M * G, *rsp = rsum + (u64)p * M * G;

  auto issue_w = [&](u32 k) { // lane 0: weights and scale words of group gbeg + k -> slot k % R
    const u32 slot = sw + (k % R) * SLOT, bar = bars + 8u * (k % R), g = gbeg + k;
    fence_proxy_async(); // the warp's generic reads of the slot come before the copy's writes
    mbar_arrive_expect_tx(bar, WB + ZB);
#pragma unroll
    for (u32 t = 0; t < NT; t++) bulk_g2s(slot + 1024u * t, wq + ((u64)(j16 + t) * G + g) * 1024u, 1024u, bar);
    bulk_g2s(slot + WB, sz + (u64)g * N + n0, ZB, bar);
  };
  auto issue_a = [&](u32 k) { // every lane: activations, asg and rs of group gbeg + k -> slot k % R
    if (k < ng) {
      u8 *slot = gw + (k % R) * SLOT;
      const u32 g = gbeg + k;
      for (u32 i = lane; i < 8u * M; i += 32u) {
        const u32 m = i >> 3, c = i & 7u;
        cp_async16(slot + WB + ZB + 64u * MT + DKS_ROW * m + 16u * c, ap + (u64)m * K + g * GROUP + 16u * c, 16u);
      }
      if (lane < 2u * M) {
        const bool rs = lane >= M;
        const u32 m = rs ? lane - M : lane;
        cp_async4(slot + WB + ZB + (rs ? 32u * MT : 0u) + 4u * m, (rs ? rsp : asp) + (u64)m * G + g, 4u);
      }
    }
    cp_async_commit();
  };
  if (lane == 0) {
    for (u32 k = 0; k < R; k++) mbar_init(bars + 8u * k, 1u);
    fence_mbar_init();
    for (u32 k = 0; k < R && k < ng; k++) issue_w(k);
  }
  warp_sync_all();
  grid_dep_launch_dependents();
  grid_dep_wait();
  for (u32 k = 0; k < R; k++) issue_a(k);

  float acc[NT][MT][4];
#pragma unroll
  for (int t = 0; t < NT; t++)
#pragma unroll
    for (int mt = 0; mt < MT; mt++) acc[t][mt][0] = acc[t][mt][1] = acc[t][mt][2] = acc[t][mt][3] = 0.0f;
  // Group k from slot k % R: wait for its copies, the op steps (each B
  // fragment converted once for the NT tiles) and the folds, then the
  // slot's refill with group k + R.
  auto group = [&](u32 k) __attribute__((always_inline)) {
    const u32 slot = sw + (k % R) * SLOT, ar = slot + WB + ZB, arow = ar + 64u * MT;
    cp_async_wait<R - 1>(); // this lane's copies of group k landed
    mbar_wait(bars + 8u * (k % R), (k / R) & 1u);
    warp_sync_all(); // and every lane's
    u32 ww[NT][2][4];
#pragma unroll
    for (u32 t = 0; t < NT; t++) {
      const u32x4 w0 = lds_v4(slot + 1024u * t + 16u * lane), w1 = lds_v4(slot + 1024u * t + 512u + 16u * lane);
      ww[t][0][0] = w0.x, ww[t][0][1] = w0.y, ww[t][0][2] = w0.z, ww[t][0][3] = w0.w;
      ww[t][1][0] = w1.x, ww[t][1][1] = w1.y, ww[t][1][2] = w1.z, ww[t][1][3] = w1.w;
    }
    float tt[NT][2][MT][4];
#pragma unroll
    for (int t = 0; t < NT; t++)
#pragma unroll
      for (int h = 0; h < 2; h++)
#pragma unroll
        for (int mt = 0; mt < MT; mt++) tt[t][h][mt][0] = tt[t][h][mt][1] = tt[t][h][mt][2] = tt[t][h][mt][3] = 0.0f;
#pragma unroll
    for (int s = 0; s < 4; s++) {
      BFrag bf[MT];
#pragma unroll
      for (int mt = 0; mt < MT; mt++) {
        const u32 m = 8u * mt + gid, r = arow + DKS_ROW * m + 32u * s + 4u * tig;
        const bool live = m < M;
        bf[mt] = make_bfrag_e4m3(live ? lds_u32(r) : 0u, live ? lds_u32(r + 16u) : 0u);
      }
#pragma unroll
      for (int t = 0; t < NT; t++) {
        const AFrag af = w4_afrag_lop3(ww[t][0][s], ww[t][1][s]);
#pragma unroll
        for (int mt = 0; mt < MT; mt++) mma_k32(tt[t][s & 1][mt], af, bf[mt]);
      }
    }
    float a[MT][2], r[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
      for (u32 v = 0; v < 2; v++) {
        const u32 m = 8u * mt + 2u * tig + v;
        a[mt][v] = m < M ? bits_f32(lds_u32(ar + 4u * m)) : 0.0f;
        r[mt][v] = m < M ? bits_f32(lds_u32(ar + 32u * MT + 4u * m)) : 0.0f;
      }
#pragma unroll
    for (int t = 0; t < NT; t++) {
      float sc0, zs0, sc1, zs1;
      scale_word(lds_u32(slot + WB + 64u * t + 4u * gid), sc0, zs0), scale_word(lds_u32(slot + WB + 64u * t + 4u * gid + 32u), sc1, zs1);
#pragma unroll
      for (int mt = 0; mt < MT; mt++) {
        const float(&x0)[4] = tt[t][0][mt], (&x1)[4] = tt[t][1][mt];
        acc[t][mt][0] = __builtin_fmaf(a[mt][0], __builtin_fmaf(-zs0, r[mt][0], sc0 * (x0[0] + x1[0])), acc[t][mt][0]);
        acc[t][mt][1] = __builtin_fmaf(a[mt][1], __builtin_fmaf(-zs0, r[mt][1], sc0 * (x0[1] + x1[1])), acc[t][mt][1]);
        acc[t][mt][2] = __builtin_fmaf(a[mt][0], __builtin_fmaf(-zs1, r[mt][0], sc1 * (x0[2] + x1[2])), acc[t][mt][2]);
        acc[t][mt][3] = __builtin_fmaf(a[mt][1], __builtin_fmaf(-zs1, r[mt][1], sc1 * (x0[3] + x1[3])), acc[t][mt][3]);
      }
    }
    warp_sync_all(); // every lane's reads of the slot are done (their values were used above)
    if (lane == 0 && k + R < ng) issue_w(k + R);
    issue_a(k + R);
  };
  // DKS_U groups a round in one basic block (the scheduler interleaves
  // their op chains), the rest one by one.
  u32 k = 0;
  for (; k + DKS_U <= ng; k += DKS_U) {
#pragma unroll
    for (u32 i = 0; i < DKS_U; i++) group(k + i);
  }
  for (; k < ng; k++) group(k);
  // The reduce: partial tiles of warp w at its slot 0, [(t MT + mt) 4 + j][lane];
  // warp 0 sums warps 0..S-1 in order and stores bf16.
  static_assert(NT * MT * 4 * 32 * 4 <= 1088 * NT, "the partial tiles fit a slot");
  float *red = (float *)gw;
#pragma unroll
  for (int t = 0; t < NT; t++)
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
      for (int j = 0; j < 4; j++) red[((t * MT + mt) * 4 + j) * 32 + lane] = acc[t][mt][j];
  block_sync();
  if (warp != 0) return;
  float sum[NT][MT][4];
#pragma unroll
  for (int t = 0; t < NT; t++)
#pragma unroll
    for (int mt = 0; mt < MT; mt++) sum[t][mt][0] = sum[t][mt][1] = sum[t][mt][2] = sum[t][mt][3] = 0.0f;
  for (u32 w = 0; w < S; w++) {
    const float *rw = (const float *)(dks_smem + w * WARPB);
#pragma unroll
    for (int t = 0; t < NT; t++)
#pragma unroll
      for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int j = 0; j < 4; j++) sum[t][mt][j] += rw[((t * MT + mt) * 4 + j) * 32 + lane];
  }
#pragma unroll
  for (int t = 0; t < NT; t++)
#pragma unroll
    for (int mt = 0; mt < MT; mt++) store_bf16_tile(sum[t][mt], out, M, N, 8u * mt + 2u * tig, n0 + 16u * t + gid, n0 + 16u * t + gid + 8u);
}

// --------------------------------------- wgmma in-block split-K decode body
// gemm_dec_wk: the wgmma body's operands (A = the weights' unsigned codes
// in registers by w4_e4m3u_frag, B = the activation codes from 128B-swizzled
// shared tiles, M on the op's N side, the fold y += asg·(2^9·sc·T −
// sc·z·rs)) with the split over K inside the block, one warpgroup a split:
// block bx holds the 64 columns 64·bx.. (warp w of a warpgroup the 16-column
// tile 4·bx + w), its S warpgroups (block 128·S, S <= DWK_MAXS) take
// ceil(G/S) groups each, and the S partial tiles are summed in shared
// memory in warpgroup order (deterministic) by warpgroup 0, which stores
// bf16: no ws, no counters, no fence (the cross-block tail cost the other
// bodies 1.2-1.55 µs a launch on the H200, results/h200-2026-12-02e).
// Grid N/64 x 1. SK (stream-K) instead gives each warpgroup a part of the
// (tile, group) units that may end in the next tile (two segments, the
// first one's partial set aside in shared memory) and reduces through
// dec_sk_reduce.
//
// A warpgroup walks its groups in rounds of U. Weights: each warp a ring
// of R slots of U groups (its tile's U KiB, contiguous) by one bulk copy
// from lane 0 on the slot's mbarrier, the first R issued before
// grid_dep_wait (static data), a slot reissued once the warp has read it
// into registers. Activations, asg, rs and the block's scale words: the
// warpgroup's ring of RA slots of U groups by cp.async, one commit group a
// round (empty past the warpgroup's last round); the activation pieces
// over the warpgroup's 128 threads, asg and rs by warp 2, the scale words
// (the block's 64 columns, 256 B a group) by warp 3, so each warp takes
// one branch. Only live items are copied: rows >= M of the tiles and of
// asg/rs are zeros stored once, and a group past the split's end is left
// as it was (the fold skips it).
// Round r: wait for this thread's copies of round r, fence, the warpgroup's
// named barrier (so every thread's copies of round r landed, and every warp
// retired round r − 1's ops), then stage round r + RA − 1 into the
// slot round r − 1 used; the warp's weight slot (mbarrier), its words into
// registers, the slot's refill; U groups converted, 4·U ops into
// U accumulators, one commit, one wait, U folds. Nothing is defined
// between the ops and their wait (see gemm_dec_wg: ptxas may reuse an
// in-flight A operand's registers).
//
// Ring depth: at S = 4 and M <= 16 on qkv, in_proj and down, three weight
// slots a warp ran 3-8% slower than two, five 13% slower than three on
// qkv M = 1, and one slot (wk1) was 3-5% faster than two (H200,
// 2026-12-03, bench2 dec, results/h200-2026-12-03b): the bytes a warp's
// neighbours request up front delay the first round it can start.
// Moving the scale words off the bulk copies (two a round fewer, each in
// an elect loop) cut the instructions 7% (ncu, qkv M = 1, S = 4).
//
// Shared memory (dynamic, 1024-aligned; DecShared: S x the four regions'
// bytes of one warpgroup, RA·U·(NB·128 + 8·NB + 256) + 4·R·(U·1024 + 8), +
// 1024):
//   at  [S][RA][U][NB rows][128 B]              activation tiles
//   ar  [S][RA][U][asg NB, rs NB, 64 words]     asg, rs (zeros past M), scale words
//   wr  [4S warps][R][U x 1 KiB]                weights
//   bar [4S warps][R]                           mbarriers
// The reduce's partial tiles go to the activation tiles (every op retired).
#define DWK_MAXS 4 // warpgroups per block (block 128·S threads; the launch bound, so 128 registers a thread)
DEVICE void wg_bar_sync(u32 id) { asm volatile("bar.sync %0, 128;" ::"r"(id) : "memory"); }
// Stream-K unit maps: a 64-bit product divided by a 32-bit count.
DEVICE u32 sk_div(u64 p, u32 d) { return (u32)(p / d); }
// The block of B holding unit u of T (block b holds [bT/B, (b+1)T/B)).
DEVICE u32 sk_block(u32 u, u32 T, u32 B) { return sk_div((u64)(u + 1u) * B - 1u, T); }
// The hand-off of a shared stream-K tile is a release by the counter
// itself: the warpgroup's stores, its barrier, then thread 0's acq_rel
// atomic (cumulative over the stores the barrier ordered before it; the
// acquire of the other blocks' partials for the last arriver), the
// barrier again, the gather's loads. No thread fences: in the PTX memory
// model the barrier plus thread 0's release covers the other threads'
// stores, and it is 2-5% faster on wps, 1-5% on wks than a fence per
// thread (H100, 2026-12-06, bench2 dec: results/2026-12-06g/README.md).
// The gather of a shared stream-K tile t: the ws slots of its blocks
// bf..bl summed in block order into sum (own, where given, stands in for
// block b's slot: the value it would hold, so the same bits), then its
// counter reset for the next launch.
template <int MT>
DEVICE void dec_sk_gather(float (&sum)[MT][4], const float *ws, u32 *sema, u32 t, u32 bf, u32 bl, u32 G, u32 T, u32 B,
                          u32 t128, const float (*own)[4] = nullptr, u32 b = 0u) {
  constexpr u32 PART = MT * 4u * 128u;
#pragma unroll
  for (int mt = 0; mt < MT; mt++) sum[mt][0] = sum[mt][1] = sum[mt][2] = sum[mt][3] = 0.0f;
  for (u32 c = bf; c <= bl; c++) {
    const float *src = ws + (u64)(2u * c + (t == sk_div((u64)c * T, B) / G ? 0u : 1u)) * PART;
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
      for (int j = 0; j < 4; j++) sum[mt][j] += own != nullptr && c == b ? own[mt][j] : ldg_cg_f32(src + (mt * 4 + j) * 128u + t128);
  }
  if (t128 == 0) st_u32_gpu(sema + t, 0u);
}
// A stream-K tile t shared by blocks bf..bl (the blocks of its first
// and last units), from a 128-thread warpgroup of block b holding the
// block's in-block sum of t in sum ([MT][4], the accumulator order):
// it goes to the block's ws slot (2b for its first tile t0, 2b + 1 for
// its last), released by a count in sema[t]; the warpgroup that
// completes the count sums the slots of the tile's blocks in block order
// into sum (the bits do not depend on which block is last), resets the
// counter for the next launch and returns true: it stores the tile. The
// others return false. barid names a barrier of the warpgroup alone.
// tail: the part is its block's last segment, most often the last of its
// tile to arrive (the tile's other blocks hold it as their first
// segment), so thread 0 first reads the count (acquire). If every other
// block of the tile has arrived, the warpgroup sums their slots with its
// own sum in its place (the same order, so the same bits) and skips its
// own slot, the release and the atomic: the release's wait for the slot
// stores and one L2 round trip fewer before the tile's store (wpspdl
// qkv, in_proj 2-3% faster, H100, 2026-12-06, bench2 dec A/B:
// results/2026-12-06j/README.md). Otherwise the hand-off, one read later.
template <int MT>
DEVICE bool dec_sk_publish(float (&sum)[MT][4], float *ws, u32 *sema, u32 *s_last, u32 t, u32 t0, u32 G, u32 T, u32 B,
                           u32 b, u32 barid, u32 t128, bool tail = false) {
  constexpr u32 PART = MT * 4u * 128u;
  if (tail) {
    const u32 bf = sk_block(t * G, T, B), bl = sk_block((t + 1u) * G - 1u, T, B);
    if (t128 == 0) *s_last = ld_acquire_u32_gpu(sema + t) == bl - bf ? 1u : 0u;
    wg_bar_sync(barid); // orders the gather's loads after the acquire
    if (*s_last) {
      float own[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int j = 0; j < 4; j++) own[mt][j] = sum[mt][j];
      dec_sk_gather<MT>(sum, ws, sema, t, bf, bl, G, T, B, t128, own, b);
      return true;
    }
    // thread 0 rewrites *s_last only after the next barrier, which every
    // thread reaches after reading it here
  }
  float *slot = ws + (u64)(2u * b + (t == t0 ? 0u : 1u)) * PART;
#pragma unroll
  for (int mt = 0; mt < MT; mt++)
#pragma unroll
    for (int j = 0; j < 4; j++) slot[(mt * 4 + j) * 128u + t128] = sum[mt][j];
  const u32 bf = sk_block(t * G, T, B), bl = sk_block((t + 1u) * G - 1u, T, B);
  wg_bar_sync(barid);
  if (t128 == 0) *s_last = atomic_add_acq_rel_u32_gpu(sema + t, 1u) == bl - bf ? 1u : 0u;
  wg_bar_sync(barid); // orders the gather's loads after the acquire
  if (!*s_last) return false;
  dec_sk_gather<MT>(sum, ws, sema, t, bf, bl, G, T, B, t128);
  return true;
}
// The stream-K epilogue of gemm_dec_wk (SK). Every warpgroup's last
// partial tile is in red + w·rstride, and a part that crossed into a
// second tile left its first tile's partial in flush + w·PART (each in
// the accumulator's order, [MT·4][128 threads]). Block b's tiles t0 =
// u0/G .. t1 = (u1 − 1)/G go to its warpgroups in turn (tile t0 + i to
// warpgroup i mod S); a tile's in-block sum adds its warpgroups' partials
// in warpgroup order. A tile wholly inside the block's units is stored;
// one shared with other blocks goes through dec_sk_publish.
template <int MT>
DEVICE void dec_sk_reduce(const float *red, u32 rstride, const float *flush, u32 *s_last, float *ws, u32 *sema, u16 *out,
                          u32 M, u32 N, u32 G, u32 T, u32 B, u32 u0, u32 u1, u32 S, u32 wg, u32 t128, u32 warp, u32 gid,
                          u32 tig) {
  constexpr u32 PART = MT * 4u * 128u;
  const u32 L = u1 - u0, t0 = u0 / G, t1 = (u1 - 1u) / G, b = bid_x();
  for (u32 t = t0 + wg; t <= t1; t += S) {
    float sum[MT][4] = {};
    for (u32 w = 0; w < S; w++) {
      const u32 qa = u0 + w * L / S, qb = u0 + (w + 1u) * L / S, ta = qa / G;
      if (qa == qb) continue;
      const bool cross = qb > (ta + 1u) * G;
      const float *src = ta == t ? (cross ? flush + w * PART : red + w * rstride) : (cross && ta + 1u == t ? red + w * rstride : nullptr);
      if (src == nullptr) continue;
#pragma unroll
      for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int j = 0; j < 4; j++) sum[mt][j] += src[(mt * 4 + j) * 128u + t128];
    }
    const u32 n0 = 16u * (DEC_WARPS * t + warp);
    // shared with other blocks: only the last of them stores
    if ((t * G < u0 || (t + 1u) * G > u1) && !dec_sk_publish<MT>(sum, ws, sema, &s_last[wg], t, t0, G, T, B, b, 1u + wg, t128)) continue;
#pragma unroll
    for (int mt = 0; mt < MT; mt++) store_bf16_tile(sum[mt], out, M, N, 8u * mt + 2u * tig, n0 + gid, n0 + gid + 8u);
  }
}
// FP (fixed pieces): thread t of the warpgroup stages the 16-byte piece
// t % 8 of group (t / 8) % U of the rows t / (8U) + (16/U)·j, so only
// the row moves between its copies (one pointer step each), asg and rs
// are staged over all 128 threads, and each row pair's asg and rs sit
// together ([pair][asg even, asg odd, rs even, rs odd]) so the fold reads
// them with one 16-byte load. Without FP: items by index over the
// warpgroup, asg and rs by warp 2 in [asg NB][rs NB].
// DWK_FENCE, an attribution trial only (e.g. -DDWK_FENCE=0): which of
// the body's two proxy fences are built, bit 0 the one before a round's
// bulk copy, bit 1 the one after a round's cp.async lands. Both are needed
// by the memory model; the trial measures what they cost while the
// thread still has later cp.async groups in flight.
#ifndef DWK_FENCE
#define DWK_FENCE 3
#endif
template <int NB, int R, int U, int RA, bool FP = false, bool SK = false>
DEVICE void gemm_dec_wk(const u8 *wq, const u32 *sz, const u8 *act, const float *asg, const float *rsum, u16 *out,
                        float *ws, u32 *sema, u32 M, u32 N, u32 K, u32 nend0, u32 nend1, u32 S) {
  constexpr int MT = NB / 8, ND = NB / 2;
  static_assert(RA >= 2 && R >= 1 && U >= 1, "a round's activations are staged RA - 1 rounds ahead");
  static_assert(U == 1 || U == 2 || U == 4, "the staging splits its items by shifts");
  // Float index of row m's asg (which 0) or rs (which 1) in a group's block.
  auto arx = [](u32 m, u32 which) -> u32 { return FP ? (m >> 1) * 4u + which * 2u + (m & 1u) : which * NB + m; };
  constexpr u32 TILE = NB * 128u, SLOT = U * 1024u, ARS = 2u * NB + 64u; // ARS: floats of one group's asg, rs, scale words
  extern SHARED __attribute__((aligned(1024))) u8 dwk_smem[];
  const u32 sbase = (smem_u32(dwk_smem) + 1023u) & ~1023u;
  u8 *const gbase = dwk_smem + (sbase - smem_u32(dwk_smem));
  const u32 G = K / GROUP;
  const u32 tid = tid_x(), lane = lane_id(), wg = tid >> 7, t128 = tid & 127u, warp = (tid >> 5) & 3u;
  const u32 gid = lane >> 2, tig = lane & 3u;
  // The warpgroup's work, in units of (64-column tile, group): segment 0
  // is the groups [ga, ga + len0) of tile tw, segment 1 (stream-K only)
  // the groups [0, len1) of tile tw + 1. In-block split: tile bx, groups
  // [gbeg, gend) of split wg. Stream-K (SK): the T = (N/64)·G units in
  // tile-major order, block b the units [bT/B, (b+1)T/B) (B = the grid),
  // its warpgroup w the w-th of S equal parts of them; the launch keeps a
  // part at most G units (DecSKBlocks), so it spans at most two tiles.
  const u32 T = (N / 64u) * G, B = SK ? gdim_x() : 1u;
  const u32 u0 = SK ? sk_div((u64)bid_x() * T, B) : 0u, u1 = SK ? sk_div((u64)(bid_x() + 1u) * T, B) : 0u;
  u32 tw, ga, len0, len1 = 0u;
  if constexpr (SK) {
    const u32 L = u1 - u0, qa = u0 + wg * L / S, qb = u0 + (wg + 1u) * L / S;
    tw = qa / G, ga = qa - tw * G;
    const u32 e0 = qb < (tw + 1u) * G ? qb : (tw + 1u) * G;
    len0 = e0 - qa, len1 = qb - e0;
    if (len1 > G) __builtin_trap(); // a part over three tiles: the launch broke DecSKBlocks' bound
  } else {
    const u32 gps = (G + S - 1u) / S, gbeg = wg * gps < G ? wg * gps : G, gend = gbeg + gps < G ? gbeg + gps : G;
    tw = bid_x(), ga = gbeg, len0 = gend - gbeg;
  }
  const u32 nr0 = (len0 + U - 1u) / U, nr = nr0 + (len1 + U - 1u) / U; // rounds: segment 0's, all
  // Round r's tile, first group and live groups (n <= U).
  struct Round { u32 tile, g0, n; };
  auto round_of = [&](u32 r) -> Round {
    const bool s1 = SK && r >= nr0;
    const u32 g0 = s1 ? U * (r - nr0) : ga + U * r, ge = s1 ? len1 : ga + len0;
    return Round{tw + (s1 ? 1u : 0u), g0, ge - g0 < U ? ge - g0 : U};
  };
  // Regions: activation tiles, asg/rs/scale words, weight rings, mbarriers;
  // SK: segment 0's partial tiles [S][MT·4][128] and S broadcast words.
  const u32 at = sbase + wg * RA * U * TILE;
  float *const ar = (float *)(gbase + S * RA * U * TILE) + wg * RA * U * ARS;
  const u32 wbase = sbase + S * RA * U * (TILE + 4u * ARS);
  const u32 wr = wbase + (4u * wg + warp) * R * SLOT;
  const u32 bars = wbase + 4u * S * R * SLOT + (4u * wg + warp) * R * 8u;
  constexpr u32 PART = MT * 4u * 128u; // floats of a warpgroup's partial tile
  float *const flush = (float *)(gbase + (wbase - sbase) + 4u * S * R * (SLOT + 8u));
  u32 *const s_last = (u32 *)(flush + S * PART);

  auto issue = [&](u32 r) { // lane 0: round r's weights -> slot r % R
    const u32 slot = wr + (r % R) * SLOT, bar = bars + 8u * (r % R);
    const Round q = round_of(r);
    if (DWK_FENCE & 1) fence_proxy_async(); // the warp's reads of the slot come before the copy's writes
    mbar_arrive_expect_tx(bar, q.n * 1024u);
    bulk_g2s(slot, wq + ((u64)(DEC_WARPS * q.tile + warp) * G + q.g0) * 1024u, q.n * 1024u, bar);
  };
  if (lane == 0) {
    for (u32 k = 0; k < (u32)R; k++) mbar_init(bars + 8u * k, 1u);
    fence_mbar_init();
    for (u32 r = 0; r < nr && r < (u32)R; r++) issue(r);
  }
  warp_sync_all();
  // Only weights (static) are read above.
  grid_dep_launch_dependents();
  grid_dep_wait();

  // Rows M..NB-1 of the warpgroup's tiles and of its asg and rs: zeros,
  // stored once (staging writes rows < M only; a row's swizzle stays
  // within the row).
  for (u32 i = t128; i < RA * U * (NB - M) * 8u; i += 128u) {
    const u32 t = i / ((NB - M) * 8u), row = M + (i / 8u) % (NB - M), c = i % 8u;
    sts_v4(at + t * TILE + row * 128u + 16u * c, u32x4{0u, 0u, 0u, 0u});
  }
  for (u32 i = t128; i < RA * U * 2u * (NB - M); i += 128u)
    ar[(i / (2u * (NB - M))) * ARS + arx(M + i % (NB - M), (i / (NB - M)) & 1u)] = 0.0f;
  // Round r -> activation slot r % RA: row m's 16-byte piece c of group
  // u at piece c ^ (m % 8) of its row, asg and rs of rows < M, the scale
  // words, of the live groups u < n. One commit group whether or not the
  // round exists.
  constexpr u32 RSTEP = 16u / U; // FP: rows between a thread's pieces
  const u32 pc = t128 & 7u, pu = (t128 >> 3) & (U - 1u), pm = t128 / (8u * U);
  // FP: a round's asg and rs are 2·U·M <= 128 floats, so thread t128 owns at
  // most one of them (item t128 of the index order: row am, asg or rs by aw,
  // group au of the round) and warp 3's lane < 16·U one 16-byte piece of the
  // scale words (group wu, piece wc). Their addresses are fixed here; a
  // round only adds its groups.
  static_assert(!FP || 2 * U * NB <= 128, "FP stages at most one asg/rs float a thread and round");
  static_assert(!FP || 16 * U <= 32, "FP stages at most one scale-word piece a lane and round");
  const u32 am = t128 / (2u * U), aw = t128 & 1u, au = (t128 >> 1) % U, wu = lane / 16u, wc = lane % 16u;
  const bool alive = am < M, wlive = warp == 3u && lane < 16u * U;
  // Segment 0's partition p0 and the moves to segment 1's (tile tw + 1):
  // activation bytes dx, asg/rs floats da (0 without SK).
  const u32 p0 = partition_of(64u * tw, nend0, nend1), p1 = SK ? partition_of(64u * (tw + 1u), nend0, nend1) : p0;
  const u32 dx = (p1 - p0) * M * K, da = (p1 - p0) * M * G;
  const u8 *const ap = act + (u64)p0 * M * K;
  const u32 aoff = (p0 * M + am) * G + au, woff = wu * N + 4u * wc + 64u * tw; // 32-bit: fewer live registers
  const float *const abase = aw ? rsum : asg;
  const u32 adst = smem_u32(ar) + 4u * (au * ARS + arx(am, aw)), wdst = smem_u32(ar) + 4u * (wu * ARS + 2u * NB + 4u * wc);
  auto stage = [&](u32 r) {
    if (r < nr) {
      const Round q = round_of(r);
      const bool s1 = q.tile != tw;
      const u32 g0 = q.g0, n = q.n, sl = r % RA, sx = s1 ? dx : 0u, sa = s1 ? da : 0u, sw = s1 ? 64u : 0u;
      if constexpr (FP) {
        if (pu < n) {
          const u8 *src = ap + sx + (u64)pm * K + (g0 + pu) * GROUP + 16u * pc;
          const u32 dst = at + (sl * U + pu) * TILE;
          // The row step, opaque each round: kept constant, its multiples
          // are hoisted out of the round loop as 64-bit values, and at
          // NB = 32 (U = 2) those spill.
          u32 kstep = RSTEP * K;
          asm volatile("" : "+r"(kstep));
#pragma unroll
          for (u32 j = 0; j < ((u32)NB + RSTEP - 1u) / RSTEP; j++) {
            const u32 m = pm + RSTEP * j; // at U <= 2, m % 8 is pm % 8: one swizzle a thread
            if (m < M) cp_async16_s(dst + m * 128u + ((pc ^ (m & 7u)) << 4), src, 16u);
            src += kstep;
          }
        }
        if (alive && au < n) cp_async4_s(adst + 4u * sl * U * ARS, abase + (aoff + sa + g0), 4u);
        if (wlive && wu < n) cp_async16_s(wdst + 4u * sl * U * ARS, sz + (woff + sw + g0 * N), 16u);
      } else {
        const float *asp = asg + (u64)p0 * M * G + sa, *rsp = rsum + (u64)p0 * M * G + sa;
        const u32 *szb = sz + 64u * q.tile; // the tile's scale words of group 0
        for (u32 i = t128; i < M * U * 8u; i += 128u) {
          const u32 m = i / (U * 8u), u = (i / 8u) % U, c = i % 8u;
          if (u < n)
            cp_async16_s(at + (sl * U + u) * TILE + m * 128u + ((c ^ (m & 7u)) << 4), ap + sx + (u64)m * K + (g0 + u) * GROUP + 16u * c, 16u);
        }
        if (warp == 2u) { // asg and rs of rows < M, one float an item
          for (u32 j = lane; j < 2u * U * M; j += 32u) {
            const u32 m = j / (2u * U), which = j & 1u, u = (j >> 1) % U;
            if (u < n) cp_async4(ar + (sl * U + u) * ARS + arx(m, which), (which ? rsp : asp) + (u64)m * G + g0 + u, 4u);
          }
        } else if (warp == 3u) { // the block's scale words, 16 bytes an item
          for (u32 j = lane; j < 16u * U; j += 32u) {
            const u32 u = j / 16u, c = j % 16u;
            if (u < n) cp_async16(ar + (sl * U + u) * ARS + 2u * NB + 4u * c, szb + (u64)(g0 + u) * N + 4u * c, 16u);
          }
        }
      }
    }
    cp_async_commit();
  };
  for (u32 r = 0; r + 1u < RA; r++) stage(r);

  float acc[MT][4];
#pragma unroll
  for (int mt = 0; mt < MT; mt++) acc[mt][0] = acc[mt][1] = acc[mt][2] = acc[mt][3] = 0.0f;
  for (u32 r = 0; r < nr; r++) {
    cp_async_wait<RA - 2>(); // this thread's copies of round r landed
    if (DWK_FENCE & 2) fence_proxy_async(); // visible to the op (async proxy)
    wg_bar_sync(1u + wg);        // every thread's, and round r - 1's ops retired
    stage(r + RA - 1u);      // into round r - 1's slot
    const u32 slot = wr + (r % R) * SLOT, sl = r % RA;
    const u32 n = round_of(r).n;
    mbar_wait(bars + 8u * (r % R), (r / R) & 1u);
    warp_sync_all(); // every wgmma is .aligned: the warp reconverges after the wait loop
    u32x4 w[U][2];
    u32x2 z[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      w[u][0] = lds_v4(slot + 1024u * u + 16u * lane), w[u][1] = lds_v4(slot + 1024u * u + 512u + 16u * lane);
      const u32 *zw = (const u32 *)(ar + (sl * U + u) * ARS + 2u * NB) + 16u * warp + gid; // columns n0 + gid, + 8
      z[u] = u32x2{zw[0], zw[8]};
    }
    warp_sync_all(); // every lane's reads of the slot are done
    if (lane == 0 && r + R < nr) issue(r + R);
    warp_sync_all();
    u32 af[U][4][4];
#pragma unroll
    for (int u = 0; u < U; u++) {
      const u32 ww0[4] = {w[u][0].x, w[u][0].y, w[u][0].z, w[u][0].w}, ww1[4] = {w[u][1].x, w[u][1].y, w[u][1].z, w[u][1].w};
#pragma unroll
      for (int s = 0; s < 4; s++) w4_e4m3u_frag(ww0[s], ww1[s], af[u][s]);
    }
    float T[U][ND];
    wg_fence();
#pragma unroll
    for (int u = 0; u < U; u++) {
      const u32 tb = at + (sl * U + u) * TILE;
#pragma unroll
      for (int s = 0; s < 4; s++) wg_mma_e4m3(T[u], af[u][s], sw128_desc(tb + 32u * s), (u32)s);
    }
    wg_commit();
    wg_wait<0>();
#pragma unroll
    for (int u = 0; u < U; u++) wg_fence_regs(T[u]);
    // Fold: T[u][4mt + 2v1 + v0] is D[n0 + gid + 8v1][8mt + 2tig + v0];
    // a group past gend (n < U) has zero activations, asg and rs: skipped.
#pragma unroll
    for (int u = 0; u < U; u++) {
      if ((u32)u >= n) continue;
      const float sc0 = f16_to_f32(z[u].x & 0xFFFFu), sc1 = f16_to_f32(z[u].y & 0xFFFFu);
      const float sc90 = 512.0f * sc0, sc91 = 512.0f * sc1;
      const float zq0 = sc0 * (float)((int)(short)(z[u].x >> 16) + 8), zq1 = sc1 * (float)((int)(short)(z[u].y >> 16) + 8);
      const float *aa = ar + (sl * U + u) * ARS;
#pragma unroll
      for (int mt = 0; mt < MT; mt++) {
        const u32 m0 = 8u * mt + 2u * tig;
        float a0, a1, r0, r1;
        if constexpr (FP) { // the row pair's asg and rs in one load
          const u32x4 v = lds_v4(smem_u32(aa + arx(m0, 0u)));
          a0 = __builtin_bit_cast(float, v.x), a1 = __builtin_bit_cast(float, v.y);
          r0 = __builtin_bit_cast(float, v.z), r1 = __builtin_bit_cast(float, v.w);
      } else {
          a0 = aa[arx(m0, 0u)], a1 = aa[arx(m0 + 1u, 0u)], r0 = aa[arx(m0, 1u)], r1 = aa[arx(m0 + 1u, 1u)];
        }
        acc[mt][0] = __builtin_fmaf(a0, __builtin_fmaf(-zq0, r0, sc90 * T[u][4 * mt + 0]), acc[mt][0]);
        acc[mt][1] = __builtin_fmaf(a1, __builtin_fmaf(-zq0, r1, sc90 * T[u][4 * mt + 1]), acc[mt][1]);
        acc[mt][2] = __builtin_fmaf(a0, __builtin_fmaf(-zq1, r0, sc91 * T[u][4 * mt + 2]), acc[mt][2]);
        acc[mt][3] = __builtin_fmaf(a1, __builtin_fmaf(-zq1, r1, sc91 * T[u][4 * mt + 3]), acc[mt][3]);
      }
    }
    if constexpr (SK) {
      if (r + 1u == nr0 && nr0 < nr) { // segment 0 done: its partial tile aside, a fresh one for tile tw + 1
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
          for (int j = 0; j < 4; j++) flush[wg * PART + (mt * 4 + j) * 128u + t128] = acc[mt][j], acc[mt][j] = 0.0f;
      }
    }
  }
  cp_async_wait<0>(); // the empty tail groups
  // The reduce: warpgroup w's partial tile at [w][(mt 4 + j)][t128] over the
  // activation tiles; warpgroup 0 sums w = 0..S-1 in order and stores bf16.
  static_assert(RA * U * NB * 128 >= MT * 4 * 128 * 4, "a warpgroup's partial tile fits its activation tiles");
  block_sync(); // every op and every read of the tiles is done
  float *red = (float *)gbase;
#pragma unroll
  for (int mt = 0; mt < MT; mt++)
#pragma unroll
    for (int j = 0; j < 4; j++) red[wg * (RA * U * TILE / 4u) + (mt * 4 + j) * 128u + t128] = acc[mt][j];
  block_sync();
  if constexpr (SK) {
    dec_sk_reduce<MT>(red, RA * U * TILE / 4u, flush, s_last, ws, sema, out, M, N, G, T, B, u0, u1, S, wg, t128, warp,
                      gid, tig);
    return;
  }
  if (wg != 0) return;
  float sum[MT][4];
#pragma unroll
  for (int mt = 0; mt < MT; mt++) sum[mt][0] = sum[mt][1] = sum[mt][2] = sum[mt][3] = 0.0f;
  for (u32 w = 0; w < S; w++) {
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
      for (int j = 0; j < 4; j++) sum[mt][j] += red[w * (RA * U * TILE / 4u) + (mt * 4 + j) * 128u + t128];
  }
  const u32 n0 = 16u * (DEC_WARPS * bid_x() + warp);
#pragma unroll
  for (int mt = 0; mt < MT; mt++) store_bf16_tile(sum[mt], out, M, N, 8u * mt + 2u * tig, n0 + gid, n0 + gid + 8u);
}


// gemm_dec_wp: the decode body warp-specialized. Block = C + 1
// warpgroups, 64 columns (grid N/64): warpgroup C is the producer (every
// copy, 56 registers), warpgroups 0..C-1 consume (setmaxnreg: 224
// registers at C = 2, 152 at C = 3) and take the tile's rounds of U
// groups in turn (the split S = C, summed in shared memory in consumer
// order: deterministic, no ws, no counters).
// The operands and the fold are gemm_dec_wk's: A = the weights' unsigned
// codes in registers (w4_e4m3u_frag), B = the activation codes from
// 128B-swizzled shared tiles with M on the op's N side (NB rows), y +=
// asg·(2^9·sc·T − sc·z·rs).
// Stages (a ring of D, one round each; mbarriers full = the round landed:
// the producer's bulk copies by transaction count, its bulk issuer's
// arrival and its 96 copier threads' cp.async arrivals; empty = the
// consuming warpgroup's four warps are done with it):
//   [U][NB rows][128 B]            activation tiles (swizzled; rows >= M zero)
//   [4 warps][U][1 KiB]            weight words (one bulk copy a warp tile)
//   [U][asg/rs pairs 2·NB, 64 words] fp32 asg and rs by row pair (the FP
//                                  order of gemm_dec_wk), the block's scale words
// The producer's first warp (lane 0) issues the bulk copies: the first D
// rounds' weights and scale words before the grid dependence (static
// data), later rounds' once their stage is empty. Its other three warps
// stage each round's activations, asg and rs by cp.async.
// A consumer round (DWP_PIPE, two consumers): wait for the stage, read
// and convert the weights, issue the 4U ops into a temporary, commit; then
// wait for the previous round's ops only (wait_group 1), fold that round's
// temporary and release its stage. So a round's ops run while the previous
// round folds and the next converts: two temporaries and two fragment sets
// a thread. Three consumers (and DWP_PIPE off) wait for each round's own
// ops before folding; the consumers still overlap each other (at 152
// registers the pipelined loop's second temporary spills at m56/m64 and
// makes ptxas serialize the ops at m16..m32).
// The block's work is a list of segments, each the groups [ga, gb) of one
// 64-column tile; the rounds number on across segments (the ring does not
// drain between them), and a segment's rounds go to the consumers in turn
// by their global number. Plain (SK false): one segment, tile bid_x(),
// every group. Stream-K (SK): the T = (N/64)·G (tile, group) units in
// tile-major order, block b the units [bT/B, (b+1)T/B) of B = the grid
// (one block an SM: every SM streams whatever N/64 is), any number of
// tiles; a tile shared with other blocks goes through dec_sk_publish.
#ifndef DWP_PIPE
#define DWP_PIPE 1
#endif
// Block: C consumer warpgroups and the producer. Registers a thread after
// setmaxnreg (the block's 65536 split; C = 2 is pq_gemm_pre_wg's split):
// C = 2: 256 x 224 + 128 x 56; C = 3: 384 x 152 + 128 x 56.
#define DWP_THREADS(C) (128 * ((C) + 1))
#define DWP_PRODUCER_REGS 56
template <int C> constexpr int dwp_consumer_regs() { return C == 2 ? 224 : 152; }
#define DWP_COPIERS 96u // the producer's cp.async threads (its warps 1..3)
// Marks fragment registers as read here, after the wait that retires
// their op. It emits no instruction, so ptxas (which allocates registers
// after this point) may still reuse an in-flight op's A registers: the
// SASS gate (sass-wgmma-hazards) is what proves it did not.
template <int U> DEVICE void wp_keep(u32 (&a)[U][4][4]) {
#pragma unroll
  for (int u = 0; u < U; u++)
#pragma unroll
    for (int s = 0; s < 4; s++)
#pragma unroll
      for (int i = 0; i < 4; i++) asm volatile("" : "+r"(a[u][s][i])::"memory");
}
// Stream-K segment i of a block holding the units [u0, u1) of G groups a
// tile: tile t0 = u0 / G first, then t1 = (u1 - 1) / G, then t0 + 1 ..
// t1 - 1, so that a block of three or more tiles ends on a whole one (a
// shared tile's hand-off then does not follow the block's last round);
// its groups [ga, gb).
struct WpSeg {
  u32 t, ga, gb;
};
DEVICE WpSeg wp_seg(u32 i, u32 u0, u32 u1, u32 G) {
  const u32 t0 = u0 / G, t1 = (u1 - 1u) / G, t = i == 0u ? t0 : i == 1u ? t1 : t0 + i - 1u;
  return WpSeg{t, u0 > t * G ? u0 - t * G : 0u, u1 < (t + 1u) * G ? u1 - t * G : G};
}
// One copier's copies of one round (gemm_dec_wp's producer): the row
// pieces of groups g0 .. g0 + n - 1 from asrc (row pm, piece pc, group 0)
// to the stage at st, its asg/rs items from sa and sb, then its arrival
// on the stage's full barrier. mrow is M (the stream-K loop passes it
// opaque so that the row predicates are not held across rounds).
template <int NB, int U>
DEVICE void wp_copy_round(u32 st, u32 full, const u8 *asrc, const float *sa, const float *sb, u32 g0, u32 n, u32 K,
                          u32 mrow, u32 pm, u32 dp0, u32 dp1, bool la, bool lb, u32 ua, u32 ub, u32 da, u32 db) {
  constexpr u32 TILE = NB * 128u, RSTEP = DWP_COPIERS / 8u, NJ = (NB + RSTEP - 1u) / RSTEP;
#pragma unroll
  for (u32 u = 0; u < (u32)U; u++) {
    if (u < n) {
      const u8 *src = asrc + (g0 + u) * GROUP;
      // The row step, opaque: kept in one register instead of NJ
      // hoisted 64-bit multiples (the producer has 56 registers).
      u32 kstep = RSTEP * K;
      asm volatile("" : "+r"(kstep));
#pragma unroll
      for (u32 j = 0; j < NJ; j++) {
        if (pm + RSTEP * j < mrow) cp_async16_s(st + u * TILE + RSTEP * 128u * j + ((j & 1u) ? dp1 : dp0), src, 16u);
        src += kstep;
      }
    }
  }
  if (la && ua < n) cp_async4_s(st + da, sa + g0, 4u);
  if (lb && ub < n) cp_async4_s(st + db, sb + g0, 4u);
  cp_async_mbar_arrive(full);
}
template <int NB, int U, int D, int C, bool SK = false>
DEVICE void gemm_dec_wp(const u8 *wq, const u32 *sz, const u8 *act, const float *asg, const float *rsum, u16 *out,
                        float *ws, u32 *sema, u32 M, u32 N, u32 K, u32 nend0, u32 nend1) {
  constexpr int MT = NB / 8, ND = NB / 2;
  constexpr u32 TILE = NB * 128u, ARS = 2u * NB + 64u; // ARS: floats of one group's asg/rs pairs and scale words
  constexpr u32 ST_W = U * TILE, ST_R = ST_W + 4u * U * 1024u;
  constexpr u32 STAGE = (ST_R + 4u * U * ARS + 1023u) / 1024u * 1024u;
  constexpr u32 PART = MT * 4u * 128u; // floats of one consumer's partial tile
  static_assert(C == 2 || C == 3, "two or three consumer warpgroups");
  static_assert(!SK || C == 3, "the stream-K split takes the three-consumer loop");
  static_assert(DWP_PRODUCER_REGS * 128 + dwp_consumer_regs<C>() * 128 * C <= 65536, "the block's registers after setmaxnreg");
  static_assert(U == 1 || U == 2, "a round is one or two groups");
  static_assert(D > C, "a consumer holds round r while it waits for round r + C's stage");
  // A full-barrier wait names its phase by parity only, so it must never
  // find the barrier two phases behind: round r - D, the stage's previous
  // phase, has to be one this consumer waited for itself. With D not a
  // multiple of C it is another consumer's round, maybe still in flight,
  // and the wait for round r would pass on round r - 2D's completed phase.
  static_assert(D % C == 0, "each consumer's rounds must reuse only the stages of its own earlier rounds");
  extern SHARED __attribute__((aligned(1024))) u8 dwp_smem[];
  SHARED __attribute__((aligned(8))) u64 dwp_bars[2 * D];
  // Stream-K: the block's units [u0, u1) (the loops reload them at each
  // segment rather than hold them in registers) and dec_sk_publish's word.
  SHARED u32 dwp_rng[2], dwp_last;
  const u32 base = (smem_u32(dwp_smem) + 1023u) & ~1023u;
  u8 *const gbase = dwp_smem + (base - smem_u32(dwp_smem));
  float *const red = (float *)(gbase + D * STAGE);
  const u32 G = K / GROUP, nr = (G + U - 1u) / U, tile = bid_x();
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, wg = warp >> 2, wi = warp & 3u;
  const u32 full0 = smem_u32(&dwp_bars[0]), empty0 = smem_u32(&dwp_bars[D]);
  // Stream-K: NU = (N/64)·G units in tile-major order, block b of B the
  // units [bNU/B, (b+1)NU/B) in nseg segments (wp_seg).
  const u32 NU = SK ? (N / 64u) * G : 0u, B = SK ? gdim_x() : 1u;
  u32 nseg = 1u;
  if constexpr (SK) {
    const u32 u0 = sk_div((u64)bid_x() * NU, B), u1 = sk_div((u64)(bid_x() + 1u) * NU, B);
    if (u1 <= u0) return; // no units (the launch keeps B <= NU): the whole block leaves
    nseg = (u1 - 1u) / G - u0 / G + 1u;
    if (tid == 0) dwp_rng[0] = u0, dwp_rng[1] = u1;
  }
  (void)nseg;
  // Float index of row m's asg (which 0) or rs (which 1) in a group's block.
  auto arx = [](u32 m, u32 which) -> u32 { return (m >> 1) * 4u + which * 2u + (m & 1u); };
  if (tid == 0) {
#pragma unroll
    for (u32 s = 0; s < (u32)D; s++) {
      mbar_init(full0 + 8u * s, 1u + DWP_COPIERS); // the expect_tx arrival + the copier threads' cp.async arrivals
      mbar_init(empty0 + 8u * s, 4u);  // lane 0 of each warp of the consuming warpgroup
    }
    fence_mbar_init();
  }
  // Rows M..NB-1 of the stages' tiles, asg and rs are never written: the
  // producer copies rows < M only. Activation row m feeds only output row
  // m (the op's N index, the fold's row), rows >= M are never stored, and
  // a stream-K partial's rows >= M are only summed into rows >= M. So
  // whatever a row >= M holds never reaches the output, and the first
  // copies go out with no zero stores (and their run-time divisions by
  // NB - M) ahead of them.
  block_sync(); // the barriers' initialization, visible to every thread

  if (wg == (u32)C) { // producer warpgroup: every copy, nothing else
    setmaxnreg_dec<DWP_PRODUCER_REGS>();
    // Its first warp issues the bulk copies (lane 0), the other three the
    // cp.async copies. The bulk issuer must have no cp.async of its own in
    // flight: its proxy fence would wait for them, one L2 round trip a
    // round, and the ring would fill at that rate.
    if (wi == 0) {
      if (lane != 0) return;
      // Round r (tile t, groups g0 .. g0 + n - 1): its weights and scale
      // words, counted on the stage's full barrier.
      auto bulk_at = [&](u32 r, u32 t, u32 g0, u32 n) {
        const u32 s = r % D, st = base + s * STAGE, bar = full0 + 8u * s;
        fence_proxy_async(); // the consumers' reads of the stage come before the copies' writes
        mbar_arrive_expect_tx(bar, n * (4u * 1024u + 256u));
#pragma unroll
        for (u32 w = 0; w < 4u; w++)
          bulk_g2s(st + ST_W + w * U * 1024u, wq + ((u64)(DEC_WARPS * t + w) * G + g0) * 1024u, n * 1024u, bar);
        for (u32 u = 0; u < n; u++) bulk_g2s(st + ST_R + 4u * (u * ARS + 2u * NB), sz + (u64)(g0 + u) * N + 64u * t, 256u, bar);
      };
      // The first D rounds go before the grid dependence (static data),
      // later ones once their stage is empty.
      if constexpr (SK) {
        u32 r = 0;
        for (u32 i = 0; i < nseg; i++) {
          const WpSeg sg = wp_seg(i, dwp_rng[0], dwp_rng[1], G);
          for (u32 g0 = sg.ga; g0 < sg.gb; g0 += U, r++) {
            if (r >= (u32)D) mbar_wait(empty0 + 8u * (r % D), ((r / D) - 1u) & 1u);
            bulk_at(r, sg.t, g0, sg.gb - g0 < U ? sg.gb - g0 : U);
            if (r + 1u == (u32)D) grid_dep_launch_dependents();
          }
        }
        if (r < (u32)D) grid_dep_launch_dependents();
      } else {
        auto bulk = [&](u32 r) {
          const u32 s = r % D, st = base + s * STAGE, g0 = r * U, n = G - g0 < U ? G - g0 : U, bar = full0 + 8u * s;
          fence_proxy_async(); // the consumers' reads of the stage come before the copies' writes
          mbar_arrive_expect_tx(bar, n * (4u * 1024u + 256u));
#pragma unroll
          for (u32 w = 0; w < 4u; w++)
            bulk_g2s(st + ST_W + w * U * 1024u, wq + ((u64)(DEC_WARPS * tile + w) * G + g0) * 1024u, n * 1024u, bar);
          for (u32 u = 0; u < n; u++) bulk_g2s(st + ST_R + 4u * (u * ARS + 2u * NB), sz + (u64)(g0 + u) * N + 64u * tile, 256u, bar);
        };
        for (u32 r = 0; r < nr && r < (u32)D; r++) bulk(r);
        grid_dep_launch_dependents();
        for (u32 r = D; r < nr; r++) {
          mbar_wait(empty0 + 8u * (r % D), ((r / D) - 1u) & 1u);
          bulk(r);
        }
      }
      return;
    }
    grid_dep_launch_dependents();
    grid_dep_wait();
    const u32 pt = tid - 128u * C - 32u; // copier index, 0 .. DWP_COPIERS - 1
    // Fixed pieces: copier pt stages the 16-byte piece column pc = pt % 8
    // of rows pm + RSTEP·j (pm = pt / 8), and the asg/rs items pt and pt +
    // DWP_COPIERS of a round's 2·U·M (the index order below). Row m's piece
    // c lands at piece c ^ (m % 8) of its row (the 128B swizzle). Every
    // address is set here (a segment's, stream-K); a round adds only its
    // first group, so the copy loop issues little more than its copies and
    // the copiers keep up with the consumers at large M.
    constexpr u32 RSTEP = DWP_COPIERS / 8u, NJ = (NB + RSTEP - 1u) / RSTEP;
    static_assert(RSTEP % 8u == 4u, "a copier's rows alternate between two swizzle phases");
    static_assert(2u * U * NB <= 2u * DWP_COPIERS, "at most two asg/rs items a copier and round");
    const u32 pc = pt & 7u, pm = pt >> 3;
    const u32 dp0 = pm * 128u + ((pc ^ (pm & 7u)) << 4), dp1 = pm * 128u + ((pc ^ ((pm + 4u) & 7u)) << 4);
    // asg/rs item i: row i / (2U), asg or rs by i & 1, group (i >> 1) % U
    // (an item past 2·U·M is never copied; its address is item 0's).
    const bool la = pt < 2u * U * M, lb = pt + DWP_COPIERS < 2u * U * M;
    const u32 ia = la ? pt : 0u, ib = lb ? pt + DWP_COPIERS : 0u, ua = (ia >> 1) % U, ub = (ib >> 1) % U;
    const u32 da = ST_R + 4u * (ua * ARS + arx(ia / (2u * U), ia & 1u)), db = ST_R + 4u * (ub * ARS + arx(ib / (2u * U), ib & 1u));
    // Tile t's sources: row pm's piece pc of group 0, and the asg/rs items.
    auto srcs = [&](u32 t, const u8 *&asrc, const float *&sa, const float *&sb) __attribute__((always_inline)) {
      const u32 p = partition_of(64u * t, nend0, nend1);
      const float *const asp = asg + (u64)p * M * G, *const rsp = rsum + (u64)p * M * G;
      asrc = act + (u64)p * M * K + (u64)pm * K + 16u * pc;
      sa = ((ia & 1u) ? rsp : asp) + (u64)(ia / (2u * U)) * G + ua;
      sb = ((ib & 1u) ? rsp : asp) + (u64)(ib / (2u * U)) * G + ub;
    };
    u32 s = 0u, ph = 1u; // round r's stage; from r = D, the parity of the stage's phase r / D - 1 (flips at each wrap)
    if constexpr (SK) {
      u32 r = 0u;
      for (u32 i = 0; i < nseg; i++) {
        const WpSeg sg = wp_seg(i, dwp_rng[0], dwp_rng[1], G);
        const u8 *asrc;
        const float *sa, *sb;
        srcs(sg.t, asrc, sa, sb);
        for (u32 g0 = sg.ga; g0 < sg.gb; g0 += U, r++) {
          if (r >= (u32)D) mbar_wait(empty0 + 8u * s, ph);
          u32 mrow = M;
          asm volatile("" : "+r"(mrow));
          wp_copy_round<NB, U>(base + s * STAGE, full0 + 8u * s, asrc, sa, sb, g0, sg.gb - g0 < U ? sg.gb - g0 : U, K, mrow, pm, dp0,
                               dp1, la, lb, ua, ub, da, db);
          if (++s == (u32)D) s = 0u, ph ^= 1u;
        }
      }
    } else {
      const u32 p = partition_of(64u * tile, nend0, nend1);
      const u8 *const ap = act + (u64)p * M * K;
      const float *const asp = asg + (u64)p * M * G, *const rsp = rsum + (u64)p * M * G;
      const u8 *const asrc = ap + (u64)pm * K + 16u * pc; // row pm, piece pc, group 0
      const float *const sa = ((ia & 1u) ? rsp : asp) + (u64)(ia / (2u * U)) * G + ua;
      const float *const sb = ((ib & 1u) ? rsp : asp) + (u64)(ib / (2u * U)) * G + ub;
      for (u32 r = 0; r < nr; r++) {
        const u32 st = base + s * STAGE, g0 = r * U, n = G - g0 < U ? G - g0 : U;
        if (r >= (u32)D) mbar_wait(empty0 + 8u * s, ph);
#pragma unroll
        for (u32 u = 0; u < (u32)U; u++) {
          if (u < n) {
            const u8 *src = asrc + (g0 + u) * GROUP;
            u32 kstep = RSTEP * K; // opaque, as in wp_copy_round
            asm volatile("" : "+r"(kstep));
#pragma unroll
            for (u32 j = 0; j < NJ; j++) {
              if (pm + RSTEP * j < M) cp_async16_s(st + u * TILE + RSTEP * 128u * j + ((j & 1u) ? dp1 : dp0), src, 16u);
              src += kstep;
            }
          }
        }
        if (la && ua < n) cp_async4_s(st + da, sa + g0, 4u);
        if (lb && ub < n) cp_async4_s(st + db, sb + g0, 4u);
        cp_async_mbar_arrive(full0 + 8u * s);
        if (++s == (u32)D) s = 0u, ph ^= 1u;
      }
    }
    // Exit only once this thread's copies have landed (the PTX ISA does not
    // promise a thread may exit with cp.async writes in flight).
    asm volatile("cp.async.wait_all;" ::: "memory");
    return;
  }
  setmaxnreg_inc<dwp_consumer_regs<C>()>();
  grid_dep_launch_dependents();
  grid_dep_wait(); // the output is written below
  const u32 gid = lane >> 2, tig = lane & 3u, t128 = tid & 127u;
  float acc[MT][4];
#pragma unroll
  for (int mt = 0; mt < MT; mt++) acc[mt][0] = acc[mt][1] = acc[mt][2] = acc[mt][3] = 0.0f;
  // Round r: wait for its stage, convert its weights into af, issue its
  // ops into T, commit (z: the two columns' scale words of each group).
  auto start = [&](u32 r, u32(&af)[U][4][4], float(&T)[U][ND], u32x2(&z)[U]) __attribute__((always_inline)) {
    const u32 s = r % D, st = base + s * STAGE;
    mbar_wait(full0 + 8u * s, (r / D) & 1u);
    warp_sync_all();     // every wgmma is .aligned: the warp reconverges after the wait loop
    fence_proxy_async(); // the producer's cp.async writes, visible to the ops (async proxy)
#pragma unroll
    for (int u = 0; u < U; u++) {
      const u32 wt = st + ST_W + (wi * U + u) * 1024u + 16u * lane;
      const u32x4 w0 = lds_v4(wt), w1 = lds_v4(wt + 512u);
      const u32 zw = st + ST_R + 4u * (u * ARS + 2u * NB + 16u * wi + gid); // columns 16wi + gid, + 8
      z[u] = u32x2{lds_u32(zw), lds_u32(zw + 32u)};
      w4_e4m3u_frag(w0.x, w1.x, af[u][0]), w4_e4m3u_frag(w0.y, w1.y, af[u][1]);
      w4_e4m3u_frag(w0.z, w1.z, af[u][2]), w4_e4m3u_frag(w0.w, w1.w, af[u][3]);
    }
    wg_fence();
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int k = 0; k < 4; k++) wg_mma_e4m3(T[u], af[u][k], sw128_desc(st + u * TILE + 32u * k), (u32)k);
    wg_commit();
  };
  // Round r (n groups) after its ops retired: the fold, then its stage released.
  auto finish = [&](u32 r, u32 n, u32(&af)[U][4][4], float(&T)[U][ND], const u32x2(&z)[U]) __attribute__((always_inline)) {
    wp_keep<U>(af);
#pragma unroll
    for (int u = 0; u < U; u++) wg_fence_regs(T[u]);
    const u32 s = r % D, st = base + s * STAGE;
#pragma unroll
    for (int u = 0; u < U; u++) {
      if ((u32)u >= n) continue; // past G or the segment: the stage holds no such group
      const float sc0 = f16_to_f32(z[u].x & 0xFFFFu), sc1 = f16_to_f32(z[u].y & 0xFFFFu);
      const float sc90 = 512.0f * sc0, sc91 = 512.0f * sc1;
      const float zq0 = sc0 * (float)((int)(short)(z[u].x >> 16) + 8), zq1 = sc1 * (float)((int)(short)(z[u].y >> 16) + 8);
      const u32 aa = st + ST_R + 4u * u * ARS;
#pragma unroll
      for (int mt = 0; mt < MT; mt++) {
        const u32x4 v = lds_v4(aa + 4u * arx(8u * mt + 2u * tig, 0u)); // the row pair's asg and rs
        const float a0 = __builtin_bit_cast(float, v.x), a1 = __builtin_bit_cast(float, v.y);
        const float r0 = __builtin_bit_cast(float, v.z), r1 = __builtin_bit_cast(float, v.w);
        acc[mt][0] = __builtin_fmaf(a0, __builtin_fmaf(-zq0, r0, sc90 * T[u][4 * mt + 0]), acc[mt][0]);
        acc[mt][1] = __builtin_fmaf(a1, __builtin_fmaf(-zq0, r1, sc90 * T[u][4 * mt + 1]), acc[mt][1]);
        acc[mt][2] = __builtin_fmaf(a0, __builtin_fmaf(-zq1, r0, sc91 * T[u][4 * mt + 2]), acc[mt][2]);
        acc[mt][3] = __builtin_fmaf(a1, __builtin_fmaf(-zq1, r1, sc91 * T[u][4 * mt + 3]), acc[mt][3]);
      }
    }
    warp_sync_all(); // every lane's reads of the stage are done
    if (lane == 0) mbar_arrive(empty0 + 8u * s);
  };
  // Tile t's epilogue: consumers 1..C-1 leave their partial tiles in
  // shared memory; consumer 0 adds them to its own in consumer order
  // (whatever finishes first) and stores bf16, or for a tile shared with
  // other blocks (stream-K, !whole) hands it to dec_sk_publish. Before a
  // next segment (more) a second barrier frees red.
  auto epilogue = [&](u32 t, bool whole, bool more) __attribute__((always_inline)) {
    // At NB = 64 under stream-K the bases and the thread's indices are made
    // opaque here, so the epilogue's addresses are computed at each
    // segment's end. Otherwise they are loop-invariant and hoisted out of
    // the segment loop; at NB = 64 that is about 50 64-bit addresses (the
    // red and ws words of each (mt, j), the output rows) held across every
    // round, which spills. Below NB = 64 they fit, and holding them is the
    // faster form.
    float *rb = red, *wb = ws;
    u16 *ob = out;
    u32 tt = t128, tg = tig, mm = M, nn = N;
    if constexpr (SK && NB == 64) asm volatile("" : "+l"(rb), "+l"(wb), "+l"(ob), "+r"(tt), "+r"(tg), "+r"(mm), "+r"(nn));
    if (wg != 0) {
#pragma unroll
      for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int j = 0; j < 4; j++) rb[(C == 2 ? 0u : (wg - 1u) * PART) + (mt * 4 + j) * 128u + tt] = acc[mt][j];
    }
    asm volatile("bar.sync 1, %0;" ::"n"(128 * C) : "memory"); // the consumer warpgroups
    if (wg != 0) {
      if (more) asm volatile("bar.sync 1, %0;" ::"n"(128 * C) : "memory"); // red read
      return;
    }
    float sum[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
      for (int j = 0; j < 4; j++) {
        sum[mt][j] = acc[mt][j];
#pragma unroll
        for (int w = 0; w < C - 1; w++) sum[mt][j] += rb[w * PART + (mt * 4 + j) * 128u + tt];
      }
    if (more) asm volatile("bar.sync 1, %0;" ::"n"(128 * C) : "memory"); // red read
    if (!whole && !dec_sk_publish<MT>(sum, wb, sema, &dwp_last, t, dwp_rng[0] / G, G, NU, B, bid_x(), 2u, tt, !more))
      return;
    const u32 n0 = 64u * t + 16u * wi;
#pragma unroll
    for (int mt = 0; mt < MT; mt++) store_bf16_tile(sum[mt], ob, mm, nn, 8u * mt + 2u * tg, n0 + gid, n0 + gid + 8u);
  };
  u32 fa[U][4][4], fb[U][4][4];
  float Ta[U][ND], Tb[U][ND];
  u32x2 za[U], zb[U];
  if constexpr (SK) {
    // A segment's rounds by their number in the block: this consumer's
    // are r ≡ wg (mod C), as in the plain loop.
    u32 rbeg = 0;
    for (u32 i = 0; i < nseg; i++) {
      const WpSeg sg = wp_seg(i, dwp_rng[0], dwp_rng[1], G);
      const u32 nrs = (sg.gb - sg.ga + U - 1u) / U;
      for (u32 r = rbeg + (wg + C - rbeg % C) % C; r < rbeg + nrs; r += C) {
        const u32 g0 = sg.ga + (r - rbeg) * U;
        start(r, fa, Ta, za);
        wg_wait<0>();
        finish(r, U == 1 ? 1u : sg.gb - g0 < U ? sg.gb - g0 : U, fa, Ta, za);
      }
      rbeg += nrs;
      const WpSeg se = wp_seg(i, dwp_rng[0], dwp_rng[1], G); // reloaded: nothing of sg held across the rounds
      epilogue(se.t, se.ga == 0u && se.gb == G, i + 1u < nseg);
#pragma unroll
      for (int mt = 0; mt < MT; mt++) acc[mt][0] = acc[mt][1] = acc[mt][2] = acc[mt][3] = 0.0f;
    }
    (void)fb, (void)Tb, (void)zb;
    return;
  }
  auto n_of = [&](u32 r) -> u32 { return G - r * U < U ? G - r * U : U; };
  u32 r = wg; // this consumer's rounds: wg, wg + C, ...
  // Three consumers run the unpipelined loop: one temporary and one
  // fragment set fit their 152 registers.
  if constexpr (DWP_PIPE && C == 2) {
    // A steady state of two rounds an iteration, then a peeled tail: with
    // the waits inside data-dependent branches ptxas serializes every wgmma
    // (C7518, the H100's ptxas 13.0), with this shape it keeps wait_group 1.
    if (r < nr) {
      start(r, fa, Ta, za);
      for (; r + 2u * C < nr; r += 2u * C) {
        start(r + C, fb, Tb, zb);
        wg_wait<1>();
        finish(r, n_of(r), fa, Ta, za);
        start(r + 2u * C, fa, Ta, za);
        wg_wait<1>();
        finish(r + C, n_of(r + C), fb, Tb, zb);
      }
      if (r + C < nr) {
        start(r + C, fb, Tb, zb);
        wg_wait<1>();
        finish(r, n_of(r), fa, Ta, za);
        wg_wait<0>();
        finish(r + C, n_of(r + C), fb, Tb, zb);
      } else {
        wg_wait<0>();
        finish(r, n_of(r), fa, Ta, za);
      }
    }
  } else {
    for (; r < nr; r += C) {
      start(r, fa, Ta, za);
      wg_wait<0>();
      finish(r, n_of(r), fa, Ta, za);
    }
    (void)fb, (void)Tb, (void)zb;
  }
  epilogue(tile, true, false);
}
#else // __AMDGCN__
// gfx1201 decode body: the sm_90 per-warp (v1) algorithm, block geometry, split-K protocol
// and prefetch depth as above, on the 16x16x16 WMMA (arch/mma.h). Still
// swapped: A = weights (M = the warp's 16 columns), B = activation rows
// (N = 16 rows, so M <= 8 fills half the op). Lane L, r = L % 16,
// h = L / 16:
//   weights  column n0 + r; per group the two 16-byte memory lanes of tigs
//            2h, 2h+1 (4(r%8) + 2h, +1 in half r/8): 32 contiguous bytes,
//            every byte of the 1 KiB tile read once per warp;
//   codes    row 16mt + r, 8 bytes at k 32s + 16w + 8h per k16 block (s, w);
//   D        row 16mt + r, columns n0 + 8h + i (i = 0..7): the fold needs
//            one asg/rs pair per row tile and the 8 columns' scale words,
//            and the lane writes 8 adjacent outputs.
// MT counts 8-row tiles as in the sm_90 body; the op tile is 16 rows.
template <int MT, int PF, bool APF, int BITS = 4, bool ROWL = false>
DEVICE void gemm_dec(const u8 *wq, const u8 *wpl, const u32 *sz, const u8 *act, const float *asg, const float *rsum, u16 *out,
                     float *ws, u32 *sema, u32 M, u32 N, u32 K, u32 nend0, u32 nend1, u32 S) {
  constexpr int MT16 = (MT + 1) / 2;
  SHARED float s_ar[DEC_AR_CAP][2];
  SHARED u32 s_last;
  const u32 G = K / GROUP;
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, r = lane & 15u, h = lane >> 4;
  const DecRange dr = dec_range(warp, G, S, nend0, nend1);
  const u32 bx = dr.bx, split = dr.split, nblk = dr.nblk, j16 = dr.j16, n0 = dr.n0, p = dr.p, gbeg = dr.gbeg, gend = dr.gend;
  const u32 ng = gend - gbeg;

  const u8 *ap = act + (u64)p * M * K;
  const float *asp = asg + (u64)p * M * G, *rsp = rsum + (u64)p * M * G;
  // Fragment order: memory lanes 2h, 2h+1 of the column's half (group g at
  // +1 KiB g). Row layout (ROWL, 4-bit): k32 steps 2h, 2h+1 of column
  // n0 + r (group g at +64 B g), rebuilt by rl_pair_frag.
  static_assert(!ROWL || BITS == 4, "the row layout is 4-bit only");
  const u32 WSTEP = ROWL ? 64u : 1024u;
  const u8 *wp = ROWL ? wq + (u64)(n0 + r) * (K / 2u) + 32u * h
                      : wq + (u64)j16 * G * 1024u + (r >> 3) * 512u + (4u * (r & 7u) + 2u * h) * 16u;
  const u32 *szp = sz + n0 + 8u * h; // scale words of this lane's D columns
  // 5-bit: the plane words of the lane's two memory lanes (tigs 2h, 2h+1).
  const u8 *pp = BITS == 5 ? wpl + (u64)j16 * G * 256u + (r >> 3) * 128u + (4u * (r & 7u) + 2u * h) * 4u : nullptr;

  u32x4 wb[PF][2], zb[PF][2]; // [group][tig 2h, 2h+1] / [columns 0..3, 4..7]
  u32x2 pb[PF];               // [group]: plane words of tigs 2h, 2h+1
#pragma unroll
  for (int i = 0; i < PF; i++) {
    if (gbeg + i < gend) {
      const u32 g = gbeg + i;
      wb[i][0] = ldg_stream_v4(wp + (u64)g * WSTEP);
      wb[i][1] = ldg_stream_v4(wp + (u64)g * WSTEP + 16u);
      zb[i][0] = ldg_u32x4(szp + (u64)g * N);
      zb[i][1] = ldg_u32x4(szp + (u64)g * N + 4u);
      if (BITS == 5) pb[i] = ldg_u32x2(pp + (u64)g * 256u);
    }
  }
  const bool ar_smem = M * ng <= DEC_AR_CAP;
  if (ar_smem) {
    for (u32 i = tid; i < M * ng; i += 32u * DEC_WARPS) {
      const u32 m = i % M, g = gbeg + i / M;
      s_ar[i][0] = asp[(u64)m * G + g];
      s_ar[i][1] = rsp[(u64)m * G + g];
    }
  }
  block_sync();

  v8f acc[MT16];
#pragma unroll
  for (int mt = 0; mt < MT16; mt++) acc[mt] = v8f{};

  // B operands of one group: row 16mt + r, k16 block i = 2s + w at byte
  // 16i + 8h of the row's group; zero past M.
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
        const u32x2 pl = BITS == 5 ? pb[i] : u32x2{0u, 0u};
        if (g + PF < gend) {
          wb[i][0] = ldg_stream_v4(wp + (u64)(g + PF) * WSTEP);
          wb[i][1] = ldg_stream_v4(wp + (u64)(g + PF) * WSTEP + 16u);
          zb[i][0] = ldg_u32x4(szp + (u64)(g + PF) * N);
          zb[i][1] = ldg_u32x4(szp + (u64)(g + PF) * N + 4u);
          if (BITS == 5) pb[i] = ldg_u32x2(pp + (u64)(g + PF) * 256u);
        }
        u32x2 a[MT16][8];
        if (APF) {
#pragma unroll
          for (int mt = 0; mt < MT16; mt++)
#pragma unroll
            for (int k = 0; k < 8; k++) a[mt][k] = anext[mt][k];
          if (g + 1 < gend) load_act(g + 1, anext);
        }
        const RlPair rp = ROWL ? rl_pair_frag(w0, w1, h) : RlPair{{w0.x, w0.y, w0.z, w0.w}, {w1.x, w1.y, w1.z, w1.w}};
        const u32 wa[4] = {rp.a[0], rp.a[1], rp.a[2], rp.a[3]}, wc[4] = {rp.c[0], rp.c[1], rp.c[2], rp.c[3]};
        v8f tmp[MT16];
#pragma unroll
        for (int mt = 0; mt < MT16; mt++) tmp[mt] = v8f{};
#pragma unroll
        for (int s = 0; s < 4; s++) {
          const W4Step wk = BITS == 5 ? w5_wmma_step(wa[s], wc[s], pl.x >> (8 * s), pl.y >> (8 * s)) : w4_wmma_step(wa[s], wc[s]); // columns n0 + r
#pragma unroll
          for (int mt = 0; mt < MT16; mt++) {
            if (16u * mt < M) {
              u32x2 b0 = APF ? a[mt][2 * s] : u32x2{0u, 0u}, b1 = APF ? a[mt][2 * s + 1] : u32x2{0u, 0u};
              if (!APF && 16u * mt + r < M) { // this step's codes only: no registers held across the group
                const u8 *row = ap + (u64)(16u * mt + r) * K + g * GROUP + 32u * s + 8u * h;
                b0 = ldg_u32x2(row);
                b1 = ldg_u32x2(row + 16);
              }
              tmp[mt] = wmma_fp8(wk.k0, make_v2i(b0.x, b0.y), tmp[mt]);
              tmp[mt] = wmma_fp8(wk.k16, make_v2i(b1.x, b1.y), tmp[mt]);
            }
          }
        }
        // Fold. Lane holds D[n][m] for m = 16mt + r, n = n0 + 8h + i.
        const u32 zw[8] = {z0.x, z0.y, z0.z, z0.w, z1.x, z1.y, z1.z, z1.w};
        float sc[8], zs[8];
#pragma unroll
        for (int i = 0; i < 8; i++) {
          scale_word(zw[i], sc[i], zs[i]);
        }
#pragma unroll
        for (int mt = 0; mt < MT16; mt++) {
          const u32 m = 16u * mt + r;
          float am = 0.0f, rm = 0.0f;
          if (m < M) {
            if (ar_smem) am = s_ar[(g - gbeg) * M + m][0], rm = s_ar[(g - gbeg) * M + m][1];
            else am = ldg_f32(asp + (u64)m * G + g), rm = ldg_f32(rsp + (u64)m * G + g);
          }
#pragma unroll
          for (int i = 0; i < 8; i++) acc[mt][i] = __builtin_fmaf(am, __builtin_fmaf(-zs[i], rm, sc[i] * tmp[mt][i]), acc[mt][i]);
        }
      }
    }
  }

  const u32 nl = n0 + 8u * h; // the lane's first column
  if (S == 1) {
#pragma unroll
    for (int mt = 0; mt < MT16; mt++) {
      const u32 m = 16u * mt + r;
      if (m < M) {
        const u32x4 v = {pack_bf16x2(acc[mt][0], acc[mt][1]), pack_bf16x2(acc[mt][2], acc[mt][3]),
                         pack_bf16x2(acc[mt][4], acc[mt][5]), pack_bf16x2(acc[mt][6], acc[mt][7])};
        *(u32x4 *)(out + (u64)m * N + nl) = v;
      }
    }
    return;
  }
  // Split-K: partial tile to ws[split], then the last block reduces (as above).
  float *wsp = ws + (u64)split * M * N;
#pragma unroll
  for (int mt = 0; mt < MT16; mt++) {
    const u32 m = 16u * mt + r;
    if (m < M) {
#pragma unroll
      for (int i = 0; i < 8; i++) wsp[(u64)m * N + nl + i] = acc[mt][i];
    }
  }
  dec_block_handoff(ws, out, sema, s_last, M, N, S, nblk, bx, tid);
}
#endif

// Row-layout decode (bench2 wp): pq_gemm_dec_m*'s bodies, classes and
// arguments on refimpl.RepackRow's weights (wq = column n's K codes in k
// order, byte n*K/2 + k/2), the fragment words rebuilt in registers
// (gemm/rowlayout.h): the same operands, so the same output bits.
#define DEC_RL_ENTRY(NAME, BODY)                                                                                       \
  KERNEL LAUNCH_BOUNDS(32 * DEC_WARPS) void NAME(const u8 *wq, const u32 *sz, const u8 *act, const float *asg,         \
                                                 const float *rsum, u16 *out, float *ws, u32 *sema, u32 M, u32 N,      \
                                                 u32 K, u32 nend0, u32 nend1, u32 S) {                                 \
    BODY(wq, nullptr, sz, act, asg, rsum, out, ws, sema, M, N, K, nend0, nend1, S);                                   \
  }
#if defined(__NVPTX__)
DEC_RL_ENTRY(pq_gemm_dec_rl_m8, (gemm_dec_staged<1, 4, 8, false, 4, true>))
DEC_RL_ENTRY(pq_gemm_dec_rl_m16, (gemm_dec_staged<2, 4, 8, false, 4, true>))
DEC_RL_ENTRY(pq_gemm_dec_rl_m32, (gemm_dec_staged<4, 4, 4, false, 4, true>))
DEC_RL_ENTRY(pq_gemm_dec_rl_m64, (gemm_dec_staged<8, 2, 2, false, 4, true>))
#else
DEC_RL_ENTRY(pq_gemm_dec_rl_m8, (gemm_dec<1, 4, true, 4, true>))
DEC_RL_ENTRY(pq_gemm_dec_rl_m16, (gemm_dec<2, 4, true, 4, true>))
DEC_RL_ENTRY(pq_gemm_dec_rl_m32, (gemm_dec<4, 2, false, 4, true>))
DEC_RL_ENTRY(pq_gemm_dec_rl_m64, (gemm_dec<8, 2, false, 4, true>))
#endif

#define DEC_ENTRY(NAME, MT, PF, APF)                                                                                   \
  KERNEL LAUNCH_BOUNDS(32 * DEC_WARPS) void NAME(const u8 *wq, const u32 *sz, const u8 *act, const float *asg,         \
                                                 const float *rsum, u16 *out, float *ws, u32 *sema, u32 M, u32 N,      \
                                                 u32 K, u32 nend0, u32 nend1, u32 S) {                                 \
    gemm_dec<MT, PF, APF>(wq, nullptr, sz, act, asg, rsum, out, ws, sema, M, N, K, nend0, nend1, S);                  \
  }
// The 5-bit entries take the plane stream wpl after the weight words.
#define DEC5_ENTRY(NAME, BODY)                                                                                         \
  KERNEL LAUNCH_BOUNDS(32 * DEC_WARPS) void NAME(const u8 *wq, const u8 *wpl, const u32 *sz, const u8 *act,           \
                                                 const float *asg, const float *rsum, u16 *out, float *ws, u32 *sema,  \
                                                 u32 M, u32 N, u32 K, u32 nend0, u32 nend1, u32 S) {                  \
    BODY(wq, wpl, sz, act, asg, rsum, out, ws, sema, M, N, K, nend0, nend1, S);                                       \
  }
#if defined(__NVPTX__)
#define DEC_STAGED_ENTRY(NAME, MT, PF, CH)                                                                      \
  KERNEL LAUNCH_BOUNDS(32 * DEC_WARPS) void NAME(const u8 *wq, const u32 *sz, const u8 *act, const float *asg,         \
                                                 const float *rsum, u16 *out, float *ws, u32 *sema, u32 M, u32 N,      \
                                                 u32 K, u32 nend0, u32 nend1, u32 S) {                                 \
    gemm_dec_staged<MT, PF, CH>(wq, nullptr, sz, act, asg, rsum, out, ws, sema, M, N, K, nend0, nend1, S);     \
  }
// No register cap for residency (H200, 2026-11-29, `parharness bench2 dec
// --m 1,8,16` with the caps): registers capped for 6 blocks/SM (PF = 4)
// +17..+145%; PF = 2 capped for 8 blocks/SM -12..+5% at M <= 8 and
// +37..+133% at M = 16.
DEC_STAGED_ENTRY(pq_gemm_dec_m8, 1, 4, 8)
DEC_STAGED_ENTRY(pq_gemm_dec_m16, 2, 4, 8)
// Attribution (bench2 dec variant "memonly"; its output is not a GEMM and no
// gate runs it): the staged kernel's loads, staging and epilogue without the
// conversion, the op and the fold: the memory-side floor of this grid.
KERNEL LAUNCH_BOUNDS(32 * DEC_WARPS) void pq_gemm_dec_memonly_m8(const u8 *wq, const u32 *sz, const u8 *act,
                                                                const float *asg, const float *rsum, u16 *out,
                                                                float *ws, u32 *sema, u32 M, u32 N, u32 K, u32 nend0,
                                                                u32 nend1, u32 S) {
  gemm_dec_staged<1, 4, 8, true>(wq, nullptr, sz, act, asg, rsum, out, ws, sema, M, N, K, nend0, nend1, S);
}
// The wgmma body (gemm_dec_wg) per M class: NB rows on the op's N side,
// CH groups per activation chunk, R weight slots per warp; dynamic shared
// memory DWG_SMEM_<NB> (DecShared in launch.go).
#define DEC_WG_ENTRY(NAME, NB, CH, R, UNS)                                                                                 \
  KERNEL LAUNCH_BOUNDS(32 * DEC_WARPS) void NAME(const u8 *wq, const u32 *sz, const u8 *act, const float *asg,         \
                                                 const float *rsum, u16 *out, float *ws, u32 *sema, u32 M, u32 N,      \
                                                 u32 K, u32 nend0, u32 nend1, u32 S) {                                 \
    static_assert(DecWgSmem<NB, CH, R>::BYTES == DWG_SMEM_##NB, "DWG_SMEM_" #NB " (the registry row's Shared) is this layout's size"); \
    gemm_dec_wg<NB, CH, R, UNS>(wq, sz, act, asg, rsum, out, ws, sema, M, N, K, nend0, nend1, S);                          \
  }
DEC_WG_ENTRY(pq_gemm_dec_wg_m8, 8, 4, 3, true)
DEC_WG_ENTRY(pq_gemm_dec_wg_m16, 16, 4, 3, true)
DEC_WG_ENTRY(pq_gemm_dec_wg_m32, 32, 2, 3, false)
DEC_WG_ENTRY(pq_gemm_dec_wg_m64, 64, 2, 2, false)
// The in-block split-K body (gemm_dec_ks) per tiles-per-warp NT and M
// class: block 32·S, grid N/(16·NT); dynamic shared memory
// S·DKS_R·(dks_slot(NT, MT, M) + 8) (DecShared).
#define DEC_KS_ENTRY(NAME, NT, MT)                                                                                         \
  KERNEL __attribute__((launch_bounds(32 * DKS_MAXS, DKS_MINB))) void NAME(const u8 *wq, const u32 *sz, const u8 *act, const float *asg,          \
                                                const float *rsum, u16 *out, float *ws, u32 *sema, u32 M, u32 N,       \
                                                u32 K, u32 nend0, u32 nend1, u32 S) {                                  \
    (void)ws, (void)sema; /* the reduce stays in the block */                                                        \
    gemm_dec_ks<NT, MT>(wq, sz, act, asg, rsum, out, M, N, K, nend0, nend1, S);                                           \
  }
DEC_KS_ENTRY(pq_gemm_dec_ks_m8, 1, 1)
DEC_KS_ENTRY(pq_gemm_dec_ks_m16, 1, 2)
DEC_KS_ENTRY(pq_gemm_dec_ks2_m8, 2, 1)
DEC_KS_ENTRY(pq_gemm_dec_ks2_m16, 2, 2)
// The wgmma in-block split-K body (gemm_dec_wk) per M class: NB rows on
// the op's N side, R weight slots per warp of U groups, RA activation
// slots per warpgroup (gemm.decWKGeom holds the same numbers, DecShared
// the bytes); block 128·S, S <= DWK_MAXS, grid N/64. m64 takes one group
// a round: two would need 64 accumulator registers more than the bound
// leaves. wk1: one weight slot a warp (the refill overlaps only the
// round's own conversion and ops), timed against wk's two, with a class
// every 8 rows: the time grows with the op width NB, not with M (qkv,
// S = 4, M = 40 on the H200: at NB = 64 18.39 µs, results/h200-2026-12-03b;
// at NB = 40 15.53, results/h200-2026-12-04). m48 takes one group a
// round: at two, ptxas spills 68 bytes. wk1 stages fixed pieces (FP)
// from m16 up: 1.5-12% faster at S = 4 and 6-19% at S = 1 for M = 16..64,
// but at M = 1 2-7% slower, so m8 keeps the index staging (all four
// shapes, results/h200-2026-12-04b). m40 under FP takes one group a
// round: at two, ptxas spills 56 bytes. wks (SK): the wk1 bodies split
// stream-K, grid DecSKBlocks (one block a slot of the device, whatever
// N/64 is); on the H100 faster than wk1's law only on gate_up at M = 64
// (-6%), slower elsewhere (results/h100-2026-12-06, call 5).
#define DEC_WK_ENTRY(NAME, NB, R, U, RA, FP, SK)                                                                       \
  KERNEL LAUNCH_BOUNDS(128 * DWK_MAXS) void NAME(const u8 *wq, const u32 *sz, const u8 *act, const float *asg,           \
                                             const float *rsum, u16 *out, float *ws, u32 *sema, u32 M, u32 N, u32 K,   \
                                             u32 nend0, u32 nend1, u32 S) {                                            \
    gemm_dec_wk<NB, R, U, RA, FP, SK>(wq, sz, act, asg, rsum, out, ws, sema, M, N, K, nend0, nend1, S);                 \
  }
DEC_WK_ENTRY(pq_gemm_dec_wk_m8, 8, 2, 2, 3, false, false)
DEC_WK_ENTRY(pq_gemm_dec_wk_m16, 16, 2, 2, 3, false, false)
DEC_WK_ENTRY(pq_gemm_dec_wk_m32, 32, 2, 2, 3, false, false)
DEC_WK_ENTRY(pq_gemm_dec_wk_m64, 64, 2, 1, 3, false, false)
DEC_WK_ENTRY(pq_gemm_dec_wk1_m8, 8, 1, 2, 3, false, false)
DEC_WK_ENTRY(pq_gemm_dec_wks_m8, 8, 1, 2, 3, false, true)
DEC_WK_ENTRY(pq_gemm_dec_wk1_m16, 16, 1, 2, 3, true, false)
DEC_WK_ENTRY(pq_gemm_dec_wks_m16, 16, 1, 2, 3, true, true)
DEC_WK_ENTRY(pq_gemm_dec_wk1_m24, 24, 1, 2, 3, true, false)
DEC_WK_ENTRY(pq_gemm_dec_wks_m24, 24, 1, 2, 3, true, true)
DEC_WK_ENTRY(pq_gemm_dec_wk1_m32, 32, 1, 2, 3, true, false)
DEC_WK_ENTRY(pq_gemm_dec_wks_m32, 32, 1, 2, 3, true, true)
DEC_WK_ENTRY(pq_gemm_dec_wk1_m40, 40, 1, 1, 3, true, false)
DEC_WK_ENTRY(pq_gemm_dec_wks_m40, 40, 1, 1, 3, true, true)
DEC_WK_ENTRY(pq_gemm_dec_wk1_m48, 48, 1, 1, 3, true, false)
DEC_WK_ENTRY(pq_gemm_dec_wks_m48, 48, 1, 1, 3, true, true)
DEC_WK_ENTRY(pq_gemm_dec_wk1_m56, 56, 1, 1, 3, true, false)
DEC_WK_ENTRY(pq_gemm_dec_wks_m56, 56, 1, 1, 3, true, true)
DEC_WK_ENTRY(pq_gemm_dec_wk1_m64, 64, 1, 1, 3, true, false)
DEC_WK_ENTRY(pq_gemm_dec_wks_m64, 64, 1, 1, 3, true, true)
// The warp-specialized body (gemm_dec_wp) per M class: NB rows on the
// op's N side, U groups a round, D stages, C consumer warpgroups
// (gemm.decWPGeom holds the same numbers, DecShared the bytes); block
// DWP_THREADS(C), grid N/64, S = C. wp (C = 2): U = 1 from m40 up, as two
// temporaries and two fragment sets of two groups would pass the
// consumers' 224 registers. wp3 (C = 3): three consumers at 152 registers
// and the unpipelined loop; D a multiple of 3. wps (SK): wp3's entries split
// stream-K, grid DecSKBlocks (one block an SM, whatever N/64 is); which of
// wp3 and wps a call takes is gemm.DecBody's choice.
// DWP_STAGES (a build-time trial, e.g. -DDWP_STAGES=4) overrides the D of
// every two-consumer entry; the launch still sizes shared memory for the
// entry's D, so the override may not exceed it.
#ifdef DWP_STAGES
#define DWP_D(D, C) ((C) == 2 ? DWP_STAGES : (D))
#else
#define DWP_D(D, C) (D)
#endif
#define DEC_WP_ENTRY(NAME, NB, U, D, C, SK)                                                                            \
  KERNEL __attribute__((launch_bounds(DWP_THREADS(C), 1))) void NAME(const u8 *wq, const u32 *sz, const u8 *act,       \
                                                                     const float *asg, const float *rsum, u16 *out,   \
                                                                     float *ws, u32 *sema, u32 M, u32 N, u32 K,       \
                                                                     u32 nend0, u32 nend1, u32 S) {                   \
    (void)S;                                                                                                           \
    static_assert(DWP_D(D, C) <= (D), "DWP_STAGES beyond the entry's D overruns the shared memory the launch sizes");   \
    gemm_dec_wp<NB, U, DWP_D(D, C), C, SK>(wq, sz, act, asg, rsum, out, ws, sema, M, N, K, nend0, nend1);              \
  }
DEC_WP_ENTRY(pq_gemm_dec_wp_m8, 8, 2, 8, 2, false)
DEC_WP_ENTRY(pq_gemm_dec_wp_m16, 16, 2, 8, 2, false)
DEC_WP_ENTRY(pq_gemm_dec_wp_m24, 24, 2, 8, 2, false)
DEC_WP_ENTRY(pq_gemm_dec_wp_m32, 32, 2, 6, 2, false)
DEC_WP_ENTRY(pq_gemm_dec_wp_m40, 40, 1, 8, 2, false)
DEC_WP_ENTRY(pq_gemm_dec_wp_m48, 48, 1, 8, 2, false)
DEC_WP_ENTRY(pq_gemm_dec_wp_m56, 56, 1, 8, 2, false)
DEC_WP_ENTRY(pq_gemm_dec_wp_m64, 64, 1, 8, 2, false)
DEC_WP_ENTRY(pq_gemm_dec_wp3_m8, 8, 2, 9, 3, false)
DEC_WP_ENTRY(pq_gemm_dec_wps_m8, 8, 2, 9, 3, true)
DEC_WP_ENTRY(pq_gemm_dec_wp3_m16, 16, 2, 9, 3, false)
DEC_WP_ENTRY(pq_gemm_dec_wps_m16, 16, 2, 9, 3, true)
DEC_WP_ENTRY(pq_gemm_dec_wp3_m24, 24, 2, 9, 3, false)
DEC_WP_ENTRY(pq_gemm_dec_wps_m24, 24, 2, 9, 3, true)
DEC_WP_ENTRY(pq_gemm_dec_wp3_m32, 32, 2, 9, 3, false)
DEC_WP_ENTRY(pq_gemm_dec_wps_m32, 32, 2, 9, 3, true)
DEC_WP_ENTRY(pq_gemm_dec_wp3_m40, 40, 1, 12, 3, false)
DEC_WP_ENTRY(pq_gemm_dec_wps_m40, 40, 1, 12, 3, true)
DEC_WP_ENTRY(pq_gemm_dec_wp3_m48, 48, 1, 12, 3, false)
DEC_WP_ENTRY(pq_gemm_dec_wps_m48, 48, 1, 12, 3, true)
DEC_WP_ENTRY(pq_gemm_dec_wp3_m56, 56, 1, 12, 3, false)
DEC_WP_ENTRY(pq_gemm_dec_wps_m56, 56, 1, 12, 3, true)
DEC_WP_ENTRY(pq_gemm_dec_wp3_m64, 64, 1, 12, 3, false)
DEC_WP_ENTRY(pq_gemm_dec_wps_m64, 64, 1, 12, 3, true)
DEC_STAGED_ENTRY(pq_gemm_dec_m32, 4, 4, 4)
DEC_STAGED_ENTRY(pq_gemm_dec_m64, 8, 2, 2)
// The per-warp body on sm_90, gated and timed against the staged body
// (bench2 dec variant "v1"); on gfx1201 it is the only body, so these
// names exist on sm_90a only.
DEC_ENTRY(pq_gemm_dec_v1_m8, 1, 4, true)
DEC_ENTRY(pq_gemm_dec_v1_m16, 2, 4, true)
DEC_ENTRY(pq_gemm_dec_v1_m32, 4, 2, false)
DEC_ENTRY(pq_gemm_dec_v1_m64, 8, 2, false)
// W5A8 decode band: the staged body's 5-bit instance, the 4-bit one's
// classes and prefetch depths.
DEC5_ENTRY(pq_gemm_dec5_m8, (gemm_dec_staged<1, 4, 8, false, 5>))
DEC5_ENTRY(pq_gemm_dec5_m16, (gemm_dec_staged<2, 4, 8, false, 5>))
DEC5_ENTRY(pq_gemm_dec5_m32, (gemm_dec_staged<4, 4, 4, false, 5>))
DEC5_ENTRY(pq_gemm_dec5_m64, (gemm_dec_staged<8, 2, 2, false, 5>))
#else
DEC_ENTRY(pq_gemm_dec_m8, 1, 4, true)
DEC_ENTRY(pq_gemm_dec_m16, 2, 4, true)
DEC_ENTRY(pq_gemm_dec_m32, 4, 2, false)
DEC_ENTRY(pq_gemm_dec_m64, 8, 2, false)
DEC5_ENTRY(pq_gemm_dec5_m8, (gemm_dec<1, 4, true, 5>))
DEC5_ENTRY(pq_gemm_dec5_m16, (gemm_dec<2, 4, true, 5>))
DEC5_ENTRY(pq_gemm_dec5_m32, (gemm_dec<4, 2, false, 5>))
DEC5_ENTRY(pq_gemm_dec5_m64, (gemm_dec<8, 2, false, 5>))
#endif


// ================================================================ prefill
// The zero-scale −sc·d of scale word z as an fp16 pair hi + lo with hi +
// lo = −sc·d exactly (pq_gemm_pre_zpe's epilogue B operands): sc·d is exact
// in fp32 with at most 11 + 5 significant bits and a multiple of 2^-24 (sc
// is fp16); hi is it rounded to fp16, lo = v − hi is exact in fp32 (v and
// hi agree to within half an fp16 ulp of hi) and in fp16 (at most 5
// significant bits, a multiple of 2^-24). Scales must be below 4096 so hi
// does not overflow (checkpoint scales are below 1).
DEVICE void zpe_split(u32 z, u32 &hi, u32 &lo) {
  float sc, zs;
  scale_word(z, sc, zs);
  const float v = -zs;
  const _Float16 h = (_Float16)v;
  hi = __builtin_bit_cast(u16, h);
  lo = __builtin_bit_cast(u16, (_Float16)(v - (float)h));
}

#define PRE_BM 128
#define PRE_BN 128
#define PRE_BK 64
#define PRE_STAGES 3
#define PRE_THREADS 256
#define PRE_GM 8 // M-tiles per rasterization group

// PreTile is a prefill block's tile under grouped rasterization: PRE_GM
// M-tiles share each column block in turn.
struct PreTile { u32 m_blk, n_blk, p; };
DEVICE PreTile pre_tile(u32 M, u32 N, u32 nend0, u32 nend1) {
  const u32 num_m = (M + PRE_BM - 1) / PRE_BM, num_n = N / PRE_BN;
  const u32 b = bid_x(), per_group = PRE_GM * num_n, grp = b / per_group;
  const u32 first_m = grp * PRE_GM, gsz = num_m - first_m < PRE_GM ? num_m - first_m : PRE_GM;
  const u32 pid_m = first_m + (b % per_group) % gsz, pid_n = (b % per_group) / gsz;
  const u32 m_blk = pid_m * PRE_BM, n_blk = pid_n * PRE_BN;
  return PreTile{m_blk, n_blk, partition_of(n_blk, nend0, nend1)};
}

#if defined(__NVPTX__)
typedef u32 v2u32_t __attribute__((ext_vector_type(2)));
template <int BITS> struct __attribute__((aligned(16))) PreSmem {
  u32x4v a[PRE_STAGES][8][2][32]; // [stage][m16 tile][k32 step][lane]: one tiled A tile = 32 x 16 B
  v2u32_t w[PRE_STAGES][16][32];   // [stage][n8 tile][lane]: words s, s+1 of the lane's 16 B
  u32 sz[2][PRE_BN];               // [group parity][column]
  float rs[2][PRE_BM];             // [group parity][row]
  u32 pl[BITS == 5 ? 2 : 1][16][BITS == 5 ? 32 : 1]; // 5-bit: [group parity][n8 tile][lane] plane words
};

// The prefill body: BITS 4 or 5 (5: plane words wpl beside wq); ZPE: the
// zero-point term as an epilogue product (zpe_epilogue) on fp16 row sums
// rs16 instead of the in-loop fold on rsum.
template <int BITS, bool ZPE>
DEVICE void gemm_pre(const u8 *wq, const u8 *wpl, const u32 *sz, const u8 *act, const float *tscale,
                     const float *rsum, const u16 *rs16, u16 *out, u32 M, u32 N, u32 K, u32 nend0, u32 nend1) {
  SHARED PreSmem<BITS> sm;
  const u32 G = K / GROUP, KS = K / PRE_BK, KT = K / 32u;
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, gid = lane >> 2, tig = lane & 3u;
  const u32 wm = warp >> 2, wn = warp & 3u;
  const u32 Mpad = (M + 15u) & ~15u, mtiles = Mpad / 16u;

  const PreTile tile = pre_tile(M, N, nend0, nend1);
  const u32 m_blk = tile.m_blk, n_blk = tile.n_blk, p = tile.p;

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
      if (BITS == 5 && !half)
        cp_async4(&sm.pl[g & 1u][jj][l], wpl + (((u64)(j8 >> 1) * G + g) * 2u + (j8 & 1u)) * 128u + l * 4u, 4u);
    }
    if (!half) {
      if (tid < PRE_BN / 4) cp_async16(&sm.sz[g & 1u][tid * 4u], sz + (u64)g * N + n_blk + tid * 4u, 16u);
      if (!ZPE && tid < PRE_BM) {
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
    u32 pv[4] = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int j = 0; j < 4; j++) wv[j] = sm.w[slot][4u * wn + j][lane];
    if (BITS == 5) {
#pragma unroll
      for (int j = 0; j < 4; j++) pv[j] = sm.pl[(ks >> 1) & 1u][4u * wn + j][lane] >> (16u * (ks & 1u)); // bytes of words 2half, 2half+1
    }
#pragma unroll
    for (int kk = 0; kk < 2; kk++) {
      BFrag bf[4];
#pragma unroll
      for (int j = 0; j < 4; j++) bf[j] = BITS == 5 ? make_bfrag_w5(kk ? wv[j].y : wv[j].x, pv[j] >> (8 * kk)) : make_bfrag_w4(kk ? wv[j].y : wv[j].x);
#pragma unroll
      for (int mt = 0; mt < 4; mt++) {
        const u32x4v av = sm.a[slot][4u * wm + mt][kk][lane];
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
          scale_word(sm.sz[gp][col + e], sc[j][e], zs[j][e]);
        }
      }
#pragma unroll
      for (int mt = 0; mt < 4; mt++) {
        rr[mt][0] = ZPE ? 0.0f : sm.rs[gp][64u * wm + 16u * mt + gid];
        rr[mt][1] = ZPE ? 0.0f : sm.rs[gp][64u * wm + 16u * mt + gid + 8u];
      }
#pragma unroll
      for (int mt = 0; mt < 4; mt++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
          for (int e = 0; e < 4; e++) {
            if (ZPE) acc[mt][j][e] = __builtin_fmaf(sc[j][e & 1], tmp[mt][j][e], acc[mt][j][e]);
            else acc[mt][j][e] = __builtin_fmaf(-zs[j][e & 1], rr[mt][e >> 1], __builtin_fmaf(sc[j][e & 1], tmp[mt][j][e], acc[mt][j][e]));
            tmp[mt][j][e] = 0.0f;
          }
    }
  }
  if (ZPE) {
    // The zero-point term, acc += Σ_g rs16[m,g] · (−sc·d)[g,n], 16 groups a
    // chunk: the block's 128 columns of −sc·d as exact fp16 hi + lo pairs
    // (zpe_stage) in the free A ring, [column][group pair] with a 12-word
    // row stride (the 8 gid rows x 4 tig words of a B fragment hit 32
    // banks); the row sums straight from L2 as A fragments (rs16 is
    // row-major [P, Mpad, Gp], so a0..a3 are single words); two f16
    // mma.m16n8k16 per op tile and chunk (hi, lo) into acc.
    cp_async_wait<0>();
    block_sync();
    u32(*zt)[2][12] = (u32(*)[2][12]) & sm.a[0][0][0][0]; // [column][hi, lo][group pair]
    static_assert(sizeof(sm.a) >= PRE_BN * 2 * 12 * 4, "the zero-scale chunk fits the A ring");
    const u32 Gp = (G + 15u) & ~15u;
    const u16 *rp = rs16 + (u64)p * Mpad * Gp;
    for (u32 c0 = 0; c0 < G; c0 += 16u) {
      {
        const u32 n = tid & 127u, q0 = 4u * (tid >> 7); // group pairs q0..q0+3 of the chunk
#pragma unroll
        for (u32 e = 0; e < 4; e++) {
          u32 hl[2][2];
#pragma unroll
          for (u32 v = 0; v < 2; v++) {
            const u32 g = c0 + 2u * (q0 + e) + v;
            zpe_split(g < G ? ldg_u32(sz + (u64)g * N + n_blk + n) : 0u, hl[0][v], hl[1][v]);
          }
          zt[n][0][q0 + e] = hl[0][0] | (hl[0][1] << 16);
          zt[n][1][q0 + e] = hl[1][0] | (hl[1][1] << 16);
        }
      }
      block_sync();
      u32 bh[4][2], bl[4][2];
#pragma unroll
      for (int j = 0; j < 4; j++) {
        const u32 n = 32u * wn + 8u * j + gid;
        bh[j][0] = zt[n][0][tig], bh[j][1] = zt[n][0][4u + tig];
        bl[j][0] = zt[n][1][tig], bl[j][1] = zt[n][1][4u + tig];
      }
#pragma unroll
      for (int mt = 0; mt < 4; mt++) {
        const u32 m0 = m_blk + 64u * wm + 16u * mt + gid, m1 = m0 + 8u;
        const u32 *r0 = (const u32 *)(rp + (u64)(m0 < Mpad ? m0 : 0u) * Gp + c0 + 2u * tig);
        const u32 *r1 = (const u32 *)(rp + (u64)(m1 < Mpad ? m1 : 0u) * Gp + c0 + 2u * tig);
        const u32 a0 = m0 < Mpad ? ldg_u32(r0) : 0u, a2 = m0 < Mpad ? ldg_u32(r0 + 4) : 0u;
        const u32 a1 = m1 < Mpad ? ldg_u32(r1) : 0u, a3 = m1 < Mpad ? ldg_u32(r1 + 4) : 0u;
#pragma unroll
        for (int j = 0; j < 4; j++) {
          mma_f16_16x8x16(acc[mt][j], a0, a1, a2, a3, bh[j][0], bh[j][1]);
          mma_f16_16x8x16(acc[mt][j], a0, a1, a2, a3, bl[j][0], bl[j][1]);
        }
      }
      block_sync(); // every warp has its B fragments before the next chunk is staged
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
// ------------------------------------------------- prefill, wgmma (sm_90a)
// pq_gemm_pre_wg: the per-token prefill on Hopper's warpgroup op, fp8 in,
// fp32 out, at the op's native rate (mma.sync has no native fp8 on sm_90,
// mma.h). Swapped like the decode body: Yᵀ = W · Aᵀ. The weights are the
// register A operand (64 columns x 32 k per warpgroup), converted in
// registers to e4m3 codes minus their zero point, c − z (exact, −15..15;
// wgmma.h), so a group's sum needs no row-sum term and the fold is
// acc += sc · tmp. The activation rows are the shared-memory B operand (128
// tokens x 32 k, e4m3, K-major). The two agree with the algebra above: Σ
// a·(c − z) = Σ a·(c − 8) − d·rs.
// Block = 3 warpgroups, 128 weight columns x 128 tokens (the prefill raster
// and grid of pq_gemm_pre): warpgroup 2 is the producer (every copy, 56
// registers); consumer warpgroup wg = 0, 1 owns columns 64wg..64wg+63, warp
// wi of it the 16-column tile 4wg + wi, whose repacked words are exactly
// that warp's A fragments (224 registers: setmaxnreg). Per group a
// consumer runs its chain of four k32 steps into a temporary (the first
// with D's old value ignored), converts the next group's weights while the
// chain runs, then folds the temporary; the consumers drift apart, so one
// folds while the other's chain runs. The fold stays out of the chain's
// flight: ptxas serializes every wgmma of a warpgroup if an accumulator is
// read while one is in flight (C7514).
// Activations are row-major [P, M, K] (the producers' pass C row-major
// output; no row padding: rows ≥ M are zero-filled, never read); rsum is
// not read. Stages (cp.async, PW_STAGES deep; mbarriers: full = the
// producer's copies landed, empty = both consumers done): the group's 128 x
// 128-byte activation tile in the 128B-swizzled layout wgmma reads, the
// block's 8 KiB of weight words and the group's 128 scale words. Dynamic
// shared memory (PW_SMEM bytes; PreLaunch in families/gemm/launch.go passes it).
// Measured (H200, 2026-11-29, bench2 pre, results/h200-2026-11-29/pre.json):
// 0.62-0.67x cuBLASLt fp8. ncu (H200, 2026-11-29, `scripts/ncu.sh
// pq_gemm_pre_wg bench2 pre --m 2048 --reps 4`; qkv M = 2048, clocks locked
// at 1.34 GHz):
// tensor pipe 42% active, issue slots 48%, 292 warp-instructions (all
// warps) per consumer warp and group against its op's 256 cycles; stalls mostly
// long scoreboard (mbarrier / shared) and wgmma wait.
#define PW_STAGES 4
#define PW_THREADS 384 // 2 consumer warpgroups + 1 producer warpgroup
#define PW_CONSUMERS 256
#define PW_PRODUCERS 128
#define PW_CONSUMER_REGS 224 // setmaxnreg: 256 x 224 + 128 x 56 <= 65536 (a 232/40 split spilled 8 bytes in the producer: ptxas -arch=sm_90a -v on the H200, 2026-11-29, gates/testdata/ptxas/producer-spill.txt)
#define PW_PRODUCER_REGS 56
#define PW_A_OFF 0u      // 128 rows x 128 B, swizzled
#define PW_W_OFF 16384u  // 8 tiles x 1 KiB of weight words
#define PW_SZ_OFF 24576u // 128 scale words
#define PW_STAGE_BYTES ((PW_SZ_OFF + 512u + 1023u) / 1024u * 1024u) // the scale words' end, 1024-aligned (the swizzle atom)
#define PW_SMEM (PW_STAGES * PW_STAGE_BYTES + 1024u)


KERNEL __attribute__((launch_bounds(PW_THREADS, 1))) void pq_gemm_pre_wg(const u8 *wq, const u32 *sz, const u8 *act,
                                                                        const float *tscale, const float *rsum,
                                                                        u16 *out, u32 M, u32 N, u32 K, u32 nend0,
                                                                        u32 nend1) {
  extern SHARED __attribute__((aligned(1024))) u8 pw_smem[];
  SHARED __attribute__((aligned(8))) u64 bars[2 * PW_STAGES];
  const u32 base = (smem_u32(pw_smem) + 1023u) & ~1023u;
  const u32 G = K / GROUP;
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, wg = warp >> 2, wi = warp & 3u;
  const u32 gid = lane >> 2, tig = lane & 3u;

  const PreTile tile = pre_tile(M, N, nend0, nend1);
  const u32 m_blk = tile.m_blk, n_blk = tile.n_blk, p = tile.p;

  // full[s]: the producer warpgroup's copies of the stage landed (128
  // cp.async.mbarrier arrivals); empty[s]: both consumer warpgroups are
  // done with it (256 arrivals).
  const u32 full0 = smem_u32(&bars[0]), empty0 = smem_u32(&bars[PW_STAGES]);
  if (tid == 0) {
#pragma unroll
    for (u32 s = 0; s < PW_STAGES; s++) {
      mbar_init(full0 + 8u * s, PW_PRODUCERS);
      mbar_init(empty0 + 8u * s, PW_CONSUMERS);
    }
  }
  block_sync();

  if (wg == 2) { // producer warpgroup: all copies, nothing else
    setmaxnreg_dec<PW_PRODUCER_REGS>();
    const u32 pt = tid - PW_CONSUMERS;
    const u8 *ap = act + (u64)p * M * K;
    for (u32 g = 0; g < G; g++) {
      const u32 s = g % PW_STAGES, st = base + s * PW_STAGE_BYTES;
      if (g >= PW_STAGES) mbar_wait(empty0 + 8u * s, ((g / PW_STAGES) - 1u) & 1u);
#pragma unroll
      for (u32 i = 0; i < 8; i++) { // 128 rows x 8 chunks of 16 B
        const u32 c = pt + i * PW_PRODUCERS, r = c >> 3, ch = c & 7u, m = m_blk + r;
        const bool ok = m < M;
        cp_async16_s(st + PW_A_OFF + r * 128u + ((ch ^ (r & 7u)) << 4),
                     ap + (u64)(ok ? m : 0u) * K + g * GROUP + ch * 16u, ok ? 16u : 0u);
      }
#pragma unroll
      for (u32 i = 0; i < 4; i++) { // 8 column tiles x 1 KiB
        const u32 c = pt + i * PW_PRODUCERS, jj = c >> 6, off = (c & 63u) << 4;
        cp_async16_s(st + PW_W_OFF + jj * 1024u + off, wq + ((u64)(n_blk / 16u + jj) * G + g) * 1024u + off, 16u);
      }
      if (pt < 32) cp_async16_s(st + PW_SZ_OFF + pt * 16u, sz + (u64)g * N + n_blk + 4u * pt, 16u);
      cp_async_mbar_arrive(full0 + 8u * s);
    }
    // Exit only once this thread's copies have landed: the consumers'
    // full-barrier waits already order them before any read, but the PTX
    // ISA does not promise that a thread may exit with cp.async writes in
    // flight. Costs nothing on the critical path (the producer is idle now).
    asm volatile("cp.async.wait_all;" ::: "memory");
    return;
  }
  setmaxnreg_inc<PW_CONSUMER_REGS>();

  // Consumers. ptxas serializes every wgmma of a warpgroup if an
  // accumulator is read while one of its wgmmas is in flight (C7514), so a
  // warpgroup runs its group's chain, converts the next group's weights
  // while the chain runs (a second fragment set), then folds; the two
  // consumer warpgroups drift apart, so one's chain runs while the other
  // folds.
  float acc[64], tmp[64];
#pragma unroll
  for (int i = 0; i < 64; i++) acc[i] = tmp[i] = 0.0f;
  const u32 wtile = PW_W_OFF + (4u * wg + wi) * 1024u + lane * 16u;
  const u32 zrow = PW_SZ_OFF + (64u * wg + 16u * wi + gid) * 4u;
  // Weight fragments of group g into a (waits for its stage).
  auto fragments = [&](u32 g, u32(&a)[4][4]) __attribute__((always_inline)) {
    const u32 s = g % PW_STAGES, st = base + s * PW_STAGE_BYTES;
    mbar_wait(full0 + 8u * s, (g / PW_STAGES) & 1u);
    fence_proxy_async();
    const u32x4 w0 = lds_v4(st + wtile), w1 = lds_v4(st + wtile + 512u);
    const W4ZeroConst z0 = w4_zero_const(lds_u32(st + zrow)), z1 = w4_zero_const(lds_u32(st + zrow + 32u));
    w4_e4m3_frag(w0.x, w1.x, z0, z1, a[0]), w4_e4m3_frag(w0.y, w1.y, z0, z1, a[1]);
    w4_e4m3_frag(w0.z, w1.z, z0, z1, a[2]), w4_e4m3_frag(w0.w, w1.w, z0, z1, a[3]);
  };
  // Group g, fragments in a: the chain; group g+1's fragments into an
  // while it runs; the fold; the stage released.
  auto group = [&](u32 g, u32(&a)[4][4], u32(&an)[4][4]) __attribute__((always_inline)) {
    const u32 s = g % PW_STAGES, st = base + s * PW_STAGE_BYTES;
    wg_fence();
#pragma unroll
    for (u32 k = 0; k < 4; k++) wg_mma_e4m3(tmp, a[k], sw128_desc(st + PW_A_OFF + 32u * k), k);
    wg_commit();
    if (g + 1 < G) fragments(g + 1, an);
    wg_wait<0>();
    wg_fence_regs(tmp);
    // The zero point is in the codes (c − z), so the fold is acc += sc·tmp.
    const float sc0 = f16_to_f32(lds_u32(st + zrow) & 0xFFFFu), sc1 = f16_to_f32(lds_u32(st + zrow + 32u) & 0xFFFFu);
#pragma unroll
    for (int j = 0; j < 16; j++) {
      acc[4 * j + 0] = __builtin_fmaf(sc0, tmp[4 * j + 0], acc[4 * j + 0]);
      acc[4 * j + 1] = __builtin_fmaf(sc0, tmp[4 * j + 1], acc[4 * j + 1]);
      acc[4 * j + 2] = __builtin_fmaf(sc1, tmp[4 * j + 2], acc[4 * j + 2]);
      acc[4 * j + 3] = __builtin_fmaf(sc1, tmp[4 * j + 3], acc[4 * j + 3]);
    }
    mbar_arrive(empty0 + 8u * s);
  };
  u32 fa[4][4], fb[4][4];
  fragments(0u, fa);
  u32 g = 0;
  for (; g + 1 < G; g += 2) { // unrolled by 2: the two fragment sets stay registers
    group(g, fa, fb);
    group(g + 1, fb, fa);
  }
  if (g < G) group(g, fa, fb);

  // Epilogue: As[m] · acc to bf16; the thread holds columns n (rows gid,
  // gid+8 of its warp's tile) of tokens 8j + 2tig + v0.
  const u32 n0 = n_blk + 64u * wg + 16u * wi + gid;
#pragma unroll
  for (int j = 0; j < 16; j++) {
#pragma unroll
    for (int v0 = 0; v0 < 2; v0++) {
      const u32 m = m_blk + 8u * j + 2u * tig + v0;
      if (m < M) {
        const float as = ldg_f32(tscale + (u64)p * M + m);
        const u32 hb = pack_bf16x2(as * acc[4 * j + v0], as * acc[4 * j + 2 + v0]);
        out[(u64)m * N + n0] = (u16)(hb & 0xFFFFu);
        out[(u64)m * N + n0 + 8u] = (u16)(hb >> 16);
      }
    }
  }
}

#else // __AMDGCN__
// gfx1201 prefill body: the same block tile (128 x 128, 8 waves as 2 (M) x
// 4 (N), wave tile 64 x 32), k stage 64 and once-per-group fold as above,
// on the 16x16x16 WMMA (arch/mma.h): A = activation rows (M), B = weight
// columns (N), a wave's tile is 4 x 2 op tiles and a stage 4 k16 blocks.
// gfx12 has no asynchronous global->LDS copy, so the next stage is loaded
// into registers before this stage's WMMAs and stored after them (two LDS
// slots, one barrier a stage). The activation tiles are stored as they are
// (tiled.h order) and read as WMMA A operands with wmma_a_tiled; the
// weights are turned into e4m3 B operands once per block as they are
// stored, so the 2 waves sharing a column do not both convert it. Lane L,
// r = L % 16, h = L / 16, holds D of column 16j + r, rows 16mt + 8h + i.
struct __attribute__((aligned(16))) PreSmemW {
  u32 a[2][8][2][128]; // [slot][m16 tile][k32 step][512-byte tiled.h tile]
  u32 w[2][8][4][64];  // [slot][n16 tile][k16 block][lane]: e4m3 B operands, 8 bytes a lane
  u32 sz[2][PRE_BN];   // [group parity][column]
  float rs[2][PRE_BM]; // [group parity][row]
};
typedef _Float16 v8h __attribute__((ext_vector_type(8)));
// D(16x16) = A . B + C on fp16 operands, the fp8 WMMA's lane layout with 8
// halves a lane (k = 8h + j); used by the ZPE epilogue only.
DEVICE v8f wmma_f16(v8h a, v8h b, v8f c) { return __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a, b, c); }

template <int BITS, bool ZPE>
DEVICE void gemm_pre(const u8 *wq, const u8 *wpl, const u32 *sz, const u8 *act, const float *tscale,
                     const float *rsum, const u16 *rs16, u16 *out, u32 M, u32 N, u32 K, u32 nend0, u32 nend1) {
  SHARED PreSmemW sm;
  const u32 G = K / GROUP, KT = K / 32u;
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, r = lane & 15u, h = lane >> 4;
  const u32 wm = warp >> 2, wn = warp & 3u;
  const u32 Mpad = (M + 15u) & ~15u, mtiles = Mpad / 16u;

  const PreTile tile = pre_tile(M, N, nend0, nend1);
  const u32 m_blk = tile.m_blk, n_blk = tile.n_blk, p = tile.p;

  const u8 *ap = act + (u64)p * Mpad * K;
  const float *rsp = rsum + (u64)p * M * G;

  // This thread's share of a stage (k32 steps 2 half, 2 half + 1 of group
  // g). A: two 16-byte chunks (m16 tile c>>6, step (c>>5)&1, chunk c&31;
  // zeros past the padded rows). W: the 8 bytes (words of both steps) of
  // memory lanes 4q + 2t2 and +1 (tigs 2t2, 2t2+1) of n8 tile jj, column
  // 8jj + q: B lane 16 t2 + 8(jj&1) + q of n16 tile jj/2. First half of a
  // group also: 4 scale words (tid % 32) and one row sum (tid % 128); the
  // threads that share them store the same values. No branches: loads past
  // the tiles are clamped and zeroed.
  const u32 jj = tid >> 4, q = (tid >> 1) & 7u, t2 = tid & 1u;
  const u32 j8 = n_blk / 8u + jj, wl = 16u * t2 + 8u * (jj & 1u) + q;
  const u32 zc = (tid & 31u) * 4u, rrow = tid & 127u;
  u32x4 ra[2], rz = {0u, 0u, 0u, 0u};
  u32x2 rw[2], rp = {0u, 0u}; // rp: 5-bit, the plane words of memory lanes 4q + 2t2, +1 (both halves)
  float rr = 0.0f;
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
      if (!ZPE) rr = m_blk + rrow < M ? ldg_f32(rsp + (u64)m * G + g) : 0.0f;
      if (BITS == 5) rp = ldg_u32x2(wpl + (((u64)(j8 >> 1) * G + g) * 2u + (j8 & 1u)) * 128u + (4u * q + 2u * t2) * 4u);
    }
  };
  auto store = [&](u32 g, u32 half) { // into slot half (stage 2g + half)
#pragma unroll
    for (u32 i = 0; i < 2; i++) {
      const u32 c = tid + i * PRE_THREADS;
      *(u32x4 *)&sm.a[half][c >> 6][(c >> 5) & 1u][(c & 31u) * 4u] = ra[i];
    }
#pragma unroll
    for (u32 kk = 0; kk < 2; kk++) {
      const u32 s8 = 8u * (2u * half + kk); // plane byte of word 2half + kk
      const W4Step wk = BITS == 5 ? w5_wmma_step(kk ? rw[0].y : rw[0].x, kk ? rw[1].y : rw[1].x, rp.x >> s8, rp.y >> s8)
                                  : w4_wmma_step(kk ? rw[0].y : rw[0].x, kk ? rw[1].y : rw[1].x);
      *(v2i *)&sm.w[half][jj >> 1][2u * kk][2u * wl] = wk.k0;
      *(v2i *)&sm.w[half][jj >> 1][2u * kk + 1u][2u * wl] = wk.k16;
    }
    if (!half) {
      *(u32x4 *)&sm.sz[g & 1u][zc] = rz;
      sm.rs[g & 1u][rrow] = rr;
    }
  };

  v8f acc[4][2], tmp[4][2];
#pragma unroll
  for (int mt = 0; mt < 4; mt++)
#pragma unroll
    for (int j = 0; j < 2; j++) acc[mt][j] = tmp[mt][j] = v8f{};

  // Stage 2g + half lives in LDS slot half. The last stage's store
  // re-stages group G-1 into slot 0, which nobody reads any more.
  fetch(0, 0);
  store(0, 0);
  for (u32 g = 0; g < G; g++) {
#pragma unroll
    for (u32 half = 0; half < 2; half++) {
      block_sync(); // this stage is in slot half; nobody reads the other slot any more
      const u32 gn = half ? (g + 1 < G ? g + 1 : g) : g;
      fetch(gn, 1u - half);
#pragma unroll
      for (u32 kb = 0; kb < 4; kb++) { // k16 blocks: k32 step kb/2, half kb%2
        v2i bw[2];
#pragma unroll
        for (int j = 0; j < 2; j++) bw[j] = *(const v2i *)&sm.w[half][2u * wn + j][kb][2u * lane];
#pragma unroll
        for (int mt = 0; mt < 4; mt++) {
          const v2i av = wmma_a_tiled(sm.a[half][4u * wm + mt][kb >> 1], lane, kb & 1u);
#pragma unroll
          for (int j = 0; j < 2; j++) tmp[mt][j] = wmma_fp8(av, bw[j], half == 0 && kb == 0 ? v8f{} : tmp[mt][j]);
        }
      }
      if (half) { // end of group g: fold
        const u32 gp = g & 1u;
        float sc[2], zs[2];
#pragma unroll
        for (int j = 0; j < 2; j++) {
          scale_word(sm.sz[gp][32u * wn + 16u * j + r], sc[j], zs[j]);
        }
#pragma unroll
        for (int mt = 0; mt < 4; mt++) {
          float rs8[8];
#pragma unroll
          for (int i = 0; i < 8; i++) rs8[i] = sm.rs[gp][64u * wm + 16u * mt + 8u * h + i];
#pragma unroll
          for (int j = 0; j < 2; j++)
#pragma unroll
            for (int i = 0; i < 8; i++) {
              if (ZPE) acc[mt][j][i] = __builtin_fmaf(sc[j], tmp[mt][j][i], acc[mt][j][i]);
              else acc[mt][j][i] = __builtin_fmaf(-zs[j], rs8[i], __builtin_fmaf(sc[j], tmp[mt][j][i], acc[mt][j][i]));
            }
        }
      }
      store(gn, 1u - half);
    }
  }
  if (ZPE) {
    // The zero-point term as on sm_90 (hi + lo fp16 zero-scales of 16
    // groups a chunk in the free A slots, [column][hi, lo][4 words of 8
    // groups x 2 halves], rows of 20 words), on the fp16 WMMA: A = rs16 rows
    // 16mt + r, groups c0 + 8h..+7 (16 bytes of the row-major rs16); B =
    // columns 16j + r, the same groups.
    block_sync();
    u32(*zt)[2][2][5] = (u32(*)[2][2][5]) & sm.a[0][0][0][0]; // [column][hi, lo][h][4 words + pad]
    static_assert(sizeof(sm.a) >= PRE_BN * 2 * 2 * 5 * 4, "the zero-scale chunk fits the A slots");
    const u32 Gp = (G + 15u) & ~15u;
    const u16 *rpz = rs16 + (u64)p * Mpad * Gp;
    for (u32 c0 = 0; c0 < G; c0 += 16u) {
      {
        const u32 n = tid & 127u, q0 = 4u * (tid >> 7); // group pairs q0..q0+3 of the chunk
#pragma unroll
        for (u32 e = 0; e < 4; e++) {
          u32 hl[2][2];
#pragma unroll
          for (u32 v = 0; v < 2; v++) {
            const u32 g = c0 + 2u * (q0 + e) + v;
            zpe_split(g < G ? ldg_u32(sz + (u64)g * N + n_blk + n) : 0u, hl[0][v], hl[1][v]);
          }
          zt[n][0][(q0 + e) >> 2][(q0 + e) & 3u] = hl[0][0] | (hl[0][1] << 16);
          zt[n][1][(q0 + e) >> 2][(q0 + e) & 3u] = hl[1][0] | (hl[1][1] << 16);
        }
      }
      block_sync();
      v8h bh[2], bl[2];
#pragma unroll
      for (int j = 0; j < 2; j++) {
        const u32 n = 32u * wn + 16u * j + r;
        const u32x4 vh = {zt[n][0][h][0], zt[n][0][h][1], zt[n][0][h][2], zt[n][0][h][3]};
        const u32x4 vl = {zt[n][1][h][0], zt[n][1][h][1], zt[n][1][h][2], zt[n][1][h][3]};
        bh[j] = __builtin_bit_cast(v8h, vh), bl[j] = __builtin_bit_cast(v8h, vl);
      }
#pragma unroll
      for (int mt = 0; mt < 4; mt++) {
        const u32 m = m_blk + 64u * wm + 16u * mt + r;
        const u32x4 av = m < Mpad ? ldg_u32x4(rpz + (u64)m * Gp + c0 + 8u * h) : u32x4{0u, 0u, 0u, 0u};
        const v8h a = __builtin_bit_cast(v8h, av);
#pragma unroll
        for (int j = 0; j < 2; j++) acc[mt][j] = wmma_f16(a, bl[j], wmma_f16(a, bh[j], acc[mt][j]));
      }
      block_sync(); // every wave has its B operands before the next chunk is staged
    }
  }

  // Epilogue: As[m] · acc, rows < M only; lanes 0-15 (16-31) write 16
  // adjacent columns of one row.
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

// Prefill entries (both targets): 4-bit, 5-bit (plane words wpl after the
// weight words) and the 4-bit ZPE form (fp16 row sums rs16 [P, Mpad, Gp],
// Gp = G rounded up to 16, in place of the fp32 row sums).
KERNEL LAUNCH_BOUNDS(PRE_THREADS) void pq_gemm_pre(const u8 *wq, const u32 *sz, const u8 *act, const float *tscale,
                                                    const float *rsum, u16 *out, u32 M, u32 N, u32 K, u32 nend0,
                                                    u32 nend1) {
  gemm_pre<4, false>(wq, nullptr, sz, act, tscale, rsum, nullptr, out, M, N, K, nend0, nend1);
}
KERNEL LAUNCH_BOUNDS(PRE_THREADS) void pq_gemm_pre5(const u8 *wq, const u8 *wpl, const u32 *sz, const u8 *act,
                                                     const float *tscale, const float *rsum, u16 *out, u32 M, u32 N,
                                                     u32 K, u32 nend0, u32 nend1) {
  gemm_pre<5, false>(wq, wpl, sz, act, tscale, rsum, nullptr, out, M, N, K, nend0, nend1);
}
KERNEL LAUNCH_BOUNDS(PRE_THREADS) void pq_gemm_pre_zpe(const u8 *wq, const u32 *sz, const u8 *act,
                                                        const float *tscale, const u16 *rs16, u16 *out, u32 M, u32 N,
                                                        u32 K, u32 nend0, u32 nend1) {
  gemm_pre<4, true>(wq, nullptr, sz, act, tscale, nullptr, rs16, out, M, N, K, nend0, nend1);
}
