// producers.hip: rotate-and-quantize producers of the W4A8 path. They turn
// bf16 activations x [M, K] into what the GEMM eats, for P rotation
// partitions at once: channel-scaled, Givens-rotated (8 layers inside every
// 128-group), quantized to e4m3 with scales and code-domain row sums.
//
// Entry points:
//   pq_rotq_group   decode band: per-group scales, one launch for all
//                   partitions -> codes [P,M,K], gscale [P,M,G], rsum [P,M,G]
//   pq_rot_bf16     prefill pass A: rotate -> bf16 rows xr [P,M,K] and group
//                   amax [P,M,G]
//   pq_tokq         prefill pass C: token scale = max_g amax_g/448, encode,
//                   row sums; row-major or fragment-tiled codes
//   pq_rot_bf16_lr  pass A, lanes = rows: conflict-free, no layer syncs (end of file)
//   pq_rot_bf16_sh  pass A, values in registers, layers routed by warp
//                   shuffles on a Go-built schedule (end of file)
//   pq_rotq_group_sh  the per-group producer on pq_rot_bf16_sh's layout, at
//                   any M (the PG producer; end of file)
//   pq_rotq_token   fused per-token producer: pass A + pass C in one launch,
//                   the rotated row parked in shared memory; byte-identical
//                   to pass A + pass C
//
// The arithmetic contract (what rounds where, op for op with the Go mirror)
// and the shared building blocks are in hipsrc/rot/rotq.h.
//
// Work split. Group-wise kernels (pq_rotq_group, pq_rot_bf16): a warp per
// (group, partition) walks producers.RowsPerWarp rows; each row-group's 128
// values sit in the warp's own 128-float shared slice; lane l owns pairs l
// and l+32 of each layer, their records (indices and cos/sin) held in
// registers for the warp's lifetime; layers are separated by a warp-level
// sync only. Row-wise kernels (pq_tokq, pq_rotq_token): a 256-thread block
// per (row, partition), its warps striding over the row's groups (the
// launch geometry is producers.RowWiseGrid; the stride is the WARPS
// constant, so the block must have 256 threads). pq_rot_bf16_lr: lanes are
// rows (see its own comment at the end of the file).
#include "rot/rotq.h"

// The Makefile's -ffp-contract=off already covers every source; this file's
// bytes are a contract with the Go mirror, so it also says it itself (a
// build elsewhere, without the flag, would otherwise fuse a*b+c).
#pragma clang fp contract(off)

#define WARPS 8 // warps per block in every producer

// Grid (G, P, ceil(M / (nw*rows_per_warp))) with nw = blockDim/32 <= WARPS
// warps; warp w of block z handles rows z*nw*rpw + w, + nw, ... below M.
KERNEL LAUNCH_BOUNDS(256) void pq_rotq_group(const u16 *x, const u32 *ridx, const f4 *rcs, const f4 *chs, u8 *codes,
                                             float *gscale, float *rsum, u32 M, u32 K, u32 rpw) {
  SHARED float sbuf[WARPS][GROUP];
  u32 g = bid_x(), p = bid_y(), G = K / GROUP;
  u32 lane = lane_id(), warp = tid_x() >> 5;
  float *sv = sbuf[warp];
  Records rec;
  load_records(rec, ridx, rcs, p, g, G, lane);
  f4 chs4 = chs[((u64)p * K + (u64)g * GROUP) / 4u + lane];
  // Records and channel scales are static: under a PDL launch they load while
  // the previous kernel finishes; x and the outputs wait for it.
  grid_dep_launch_dependents();
  grid_dep_wait();
  u32 nw = bdim_x() >> 5; // warps per block: WARPS, or fewer for tiny M
  u32 m0 = bid_z() * nw * rpw;
  for (u32 m = m0 + warp; m < M && m < m0 + nw * rpw; m += nw) {
    load_row_group(sv, x, chs4, (u64)m * K, g, lane);
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

// Pass A: as pq_rotq_group, but the epilogue writes the bf16-rounded rows
// and the amax of the rounded values.
KERNEL LAUNCH_BOUNDS(256) void pq_rot_bf16(const u16 *x, const u32 *ridx, const f4 *rcs, const f4 *chs, u16 *xr,
                                           float *gamax, u32 M, u32 K, u32 rpw) {
  SHARED float sbuf[WARPS][GROUP];
  u32 g = bid_x(), p = bid_y(), G = K / GROUP;
  u32 lane = lane_id(), warp = tid_x() >> 5;
  float *sv = sbuf[warp];
  Records rec;
  load_records(rec, ridx, rcs, p, g, G, lane);
  f4 chs4 = chs[((u64)p * K + (u64)g * GROUP) / 4u + lane];
  u32 nw = bdim_x() >> 5; // warps per block: WARPS, or fewer for tiny M
  u32 m0 = bid_z() * nw * rpw;
  for (u32 m = m0 + warp; m < M && m < m0 + nw * rpw; m += nw) {
    load_row_group(sv, x, chs4, (u64)m * K, g, lane);
    rotate_group(sv, rec);
    u32 w0, w1;
    f4 v = round_bf16_4(read4(sv, lane), w0, w1);
    u64 row = (u64)p * M + m;
    u32 *out = (u32 *)(xr + row * K + (u64)g * GROUP + 4u * lane);
    out[0] = w0;
    out[1] = w1;
    float a = warp_max(amax4(v));
    if (lane == 0) gamax[row * G + g] = a;
    warp_sync_all();
  }
}

// Pass C. Grid (Mrows, P), Mrows = M (row-major) or Mpad (tiled).
KERNEL LAUNCH_BOUNDS(256) void pq_tokq(const u16 *xr, const float *gamax, u8 *codes, float *tscale, float *rsum, u32 M,
                                       u32 K, u32 tiled) {
  u32 m = bid_x(), p = bid_y(), G = K / GROUP;
  u32 Mrows = tiled ? (M + 15u) & ~15u : M;
  if (m >= M) {
    zero_pad_row(codes, p, m, Mrows, K);
    return;
  }
  u32 lane = lane_id(), warp = tid_x() >> 5;
  u64 row = (u64)p * M + m;
  float As = token_scale(gamax + row * G, G, lane);
  if (tid_x() == 0) tscale[row] = As;
  for (u32 g = warp; g < G; g += WARPS) {
    const u32 *xp = (const u32 *)(xr + row * K + (u64)g * GROUP + 4u * lane);
    u32 w0 = xp[0], w1 = xp[1];
    f4 v{bf16_to_f32(w0 & 0xFFFFu), bf16_to_f32(w0 >> 16), bf16_to_f32(w1 & 0xFFFFu), bf16_to_f32(w1 >> 16)};
    encode_group(v, As, codes, rsum, p, m, g, M, Mrows, K, tiled, lane);
  }
}

// Fused per-token producer. Grid (Mrows, P); the rotated, bf16-rounded row
// waits in shared memory (K <= MAXK) between the two phases.
#define MAXK 17408
KERNEL LAUNCH_BOUNDS(256) void pq_rotq_token(const u16 *x, const u32 *ridx, const f4 *rcs, const f4 *chs, u8 *codes,
                                             float *tscale, float *rsum, u32 M, u32 K, u32 tiled) {
  SHARED float sbuf[WARPS][GROUP];
  SHARED u32 srow[MAXK / 2]; // bf16 pairs
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
    load_row_group(sv, x, chs4, (u64)m * K, g, lane);
    rotate_group(sv, rec);
    u32 w0, w1;
    f4 v = round_bf16_4(read4(sv, lane), w0, w1);
    srow[(g * GROUP) / 2 + 2 * lane] = w0;
    srow[(g * GROUP) / 2 + 2 * lane + 1] = w1;
    float a = warp_max(amax4(v));
    if (lane == 0) sam[g] = a;
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

// ---------------------------------------------------------------------------
// pq_rot_bf16_lr: pass A with lanes = rows ("lane-row" form). A warp takes
// 32 rows of one group; the group's values sit in shared memory transposed,
// value (channel c, lane l) at sv[c * 33 + l], so every access of a pair
// (the same channels in all 32 rows) hits 32 distinct banks: no bank
// conflicts, and no synchronisation between layers, since each lane only
// ever touches its own row. The 512 pair records of the group (byte offsets
// of i and j, cos, sin) are staged once per block in shared memory and read
// as broadcasts. Same arithmetic, same op order: byte-identical to pq_rot_bf16.
// Grid (G, P, ceil(M / 64)); block 64 threads (2 warps).
#define LR_WARPS 2
#define LR_STRIDE 33
typedef float v4f __attribute__((ext_vector_type(4)));
// A record is one 16-byte vector {byte offset of i, of j (as float bits), cos, sin}
// so a broadcast read is a single 128-bit shared load.
DEVICE v4f make_rec(u32 oi, u32 oj, float c, float s) { return v4f{bits_f32(oi), bits_f32(oj), c, s}; }

KERNEL LAUNCH_BOUNDS(64) void pq_rot_bf16_lr(const u16 *x, const u32 *ridx, const f4 *rcs, const float *chs, u16 *xr,
                                             float *gamax, u32 M, u32 K) {
  SHARED v4f srec[KROT * 64];
  SHARED float sbuf[LR_WARPS][GROUP * LR_STRIDE];
  SHARED float schs[GROUP];
  u32 g = bid_x(), p = bid_y(), G = K / GROUP;
  u32 lane = lane_id(), warp = tid_x() >> 5;
  // Stage the records: pair t of layer r is half (t / 32) of lane (t % 32)'s word.
  for (u32 e = tid_x(); e < KROT * 64; e += 32 * LR_WARPS) {
    u32 r = e >> 6, t = e & 63u, l = t & 31u, h = t >> 5;
    u64 o = ((u64)(p * KROT + r) * G + g) * 32u + l;
    u32 w = ridx[o] >> (16u * h);
    f4 cs = rcs[o];
    srec[e] = make_rec((w & 0xFFu) * LR_STRIDE * 4u, ((w >> 8) & 0xFFu) * LR_STRIDE * 4u, h ? cs.z : cs.x, h ? cs.w : cs.y);
  }
  for (u32 c = tid_x(); c < GROUP; c += 32 * LR_WARPS) schs[c] = chs[(u64)p * K + (u64)g * GROUP + c];
  block_sync();
  u32 m = bid_z() * (32u * LR_WARPS) + warp * 32u + lane;
  bool active = m < M;
  char *col = (char *)(sbuf[warp] + lane);
  const u16 *xrow = x + (u64)(active ? m : 0) * K + (u64)g * GROUP;
#pragma unroll 4
  for (u32 q = 0; q < GROUP / 8; q++) {
    u32x4v w = {0, 0, 0, 0};
    if (active) w = *(const u32x4v *)(xrow + 8u * q); // one 16-byte load per lane
#pragma unroll
    for (u32 j = 0; j < 8; j++) {
      u32 h = (w[j >> 1] >> (16u * (j & 1u))) & 0xFFFFu;
      *(float *)(col + (8u * q + j) * LR_STRIDE * 4u) = bf16_to_f32(h) * schs[8u * q + j];
    }
  }
  // 8 layers x 64 pairs, four pairs at a time (disjoint channels, so the
  // loads of four pairs may all go before their stores).
  for (u32 e = 0; e < KROT * 64; e += 4) {
    v4f r0 = srec[e], r1 = srec[e + 1], r2 = srec[e + 2], r3 = srec[e + 3];
    u32 i0 = f32_bits(r0.x), j0 = f32_bits(r0.y), i1 = f32_bits(r1.x), j1 = f32_bits(r1.y);
    u32 i2 = f32_bits(r2.x), j2 = f32_bits(r2.y), i3 = f32_bits(r3.x), j3 = f32_bits(r3.y);
    float a0 = *(float *)(col + i0), b0 = *(float *)(col + j0);
    float a1 = *(float *)(col + i1), b1 = *(float *)(col + j1);
    float a2 = *(float *)(col + i2), b2 = *(float *)(col + j2);
    float a3 = *(float *)(col + i3), b3 = *(float *)(col + j3);
    *(float *)(col + i0) = __builtin_fmaf(r0.z, a0, r0.w * b0);
    *(float *)(col + j0) = __builtin_fmaf(r0.z, b0, -(r0.w * a0));
    *(float *)(col + i1) = __builtin_fmaf(r1.z, a1, r1.w * b1);
    *(float *)(col + j1) = __builtin_fmaf(r1.z, b1, -(r1.w * a1));
    *(float *)(col + i2) = __builtin_fmaf(r2.z, a2, r2.w * b2);
    *(float *)(col + j2) = __builtin_fmaf(r2.z, b2, -(r2.w * a2));
    *(float *)(col + i3) = __builtin_fmaf(r3.z, a3, r3.w * b3);
    *(float *)(col + j3) = __builtin_fmaf(r3.z, b3, -(r3.w * a3));
  }
  if (!active) return;
  float amax = 0.0f;
  u16 *dst = xr + ((u64)p * M + m) * K + (u64)g * GROUP;
#pragma unroll 4
  for (u32 q = 0; q < GROUP / 8; q++) {
    u32 w[4];
#pragma unroll
    for (u32 j = 0; j < 8; j += 2) {
      u32 lo = bf16_rne(*(float *)(col + (8u * q + j) * LR_STRIDE * 4u));
      u32 hi = bf16_rne(*(float *)(col + (8u * q + j + 1u) * LR_STRIDE * 4u));
      amax = __builtin_fmaxf(amax, __builtin_fmaxf(__builtin_fabsf(bf16_to_f32(lo)), __builtin_fabsf(bf16_to_f32(hi))));
      w[j >> 1] = lo | (hi << 16);
    }
    *(u32x4v *)(dst + 8u * q) = u32x4v{w[0], w[1], w[2], w[3]}; // one 16-byte store per lane
  }
  gamax[((u64)p * M + m) * G + g] = amax;
}

// ---------------------------------------------------------------------------
// pq_rot_bf16_sh: pass A with the row-group in registers and shuffle-routed
// layers. Lane l holds 4 of the group's 128 values; before each layer four
// warp shuffles bring each lane the values of its two pairs, so a layer
// costs 4 shuffles, 10 selects and 8 float ops per lane and no shared-memory
// traffic. The schedule (which lane each round reads, which register each
// lane offers, the slot swap and the signed cos/sin) is built in Go by two
// Euler splits per layer (refimpl.BuildShuffleRecords, whose comment derives
// it) and is proved on the CPU bit-identical to refimpl.RotateF32 by a
// lane-by-lane emulator (refimpl.ShuffleRecords.RotateWarp); the op order is
// the producers' contract above, so the outputs equal pq_rot_bf16's byte for
// byte. After the last layer each lane writes its bf16 values to their
// channels in a 128-entry shared slice and reads its canonical four back.
// Grid and rows per warp as pq_rot_bf16 (producers.GroupWiseGrid).
// Records, per (partition p, group g), lane l, layer r:
//   sctrl [P][G][KROT][32]   u32: source lane of round t at bits 5t..5t+4,
//                            b1..b4 at bits 20..23, swap at bit 24
//   scs   [P][G][KROT][32]   f4: cA, sA, cB, sB
//   sfin  [P][G][32]         u32: channel of slot q at byte q after layer 7
#define SH_B1 (1u << 20)
#define SH_B2 (1u << 21)
#define SH_B3 (1u << 22)
#define SH_B4 (1u << 23)
#define SH_SWAP (1u << 24)


KERNEL LAUNCH_BOUNDS(256) void pq_rot_bf16_sh(const u16 *x, const u32 *sctrl, const f4 *scs, const u32 *sfin,
                                              const f4 *chs, u16 *xr, float *gamax, u32 M, u32 K, u32 rpw) {
  // Written as u16, read back as u32 pairs: 16-byte aligned, not u16-aligned.
  SHARED __attribute__((aligned(16))) u16 sbuf[WARPS][GROUP];
  u32 g = bid_x(), p = bid_y(), G = K / GROUP;
  u32 lane = lane_id(), warp = tid_x() >> 5;
  u16 *sv = sbuf[warp];
  u32 ctrl[KROT];
  f4 cs[KROT];
  u64 rb = ((u64)p * G + g) * KROT * 32u + lane;
#pragma unroll
  for (u32 r = 0; r < KROT; r++) {
    ctrl[r] = sctrl[rb + 32u * r];
    cs[r] = scs[rb + 32u * r];
  }
  u32 fin = sfin[((u64)p * G + g) * 32u + lane];
  f4 chs4 = chs[((u64)p * K + (u64)g * GROUP) / 4u + lane];
  u32 nw = bdim_x() >> 5;
  u32 m0 = bid_z() * nw * rpw;
  for (u32 m = m0 + warp; m < M && m < m0 + nw * rpw; m += nw) {
    const u32 *xp = (const u32 *)(x + (u64)m * K + (u64)g * GROUP + 4u * lane);
    u32 w0 = xp[0], w1 = xp[1];
    float X0 = bf16_to_f32(w0 & 0xFFFFu) * chs4.x, X1 = bf16_to_f32(w0 >> 16) * chs4.y;
    float X2 = bf16_to_f32(w1 & 0xFFFFu) * chs4.z, X3 = bf16_to_f32(w1 >> 16) * chs4.w;
#pragma unroll
    for (u32 r = 0; r < KROT; r++) {
      u32 w = ctrl[r];
      float u = (w & SH_B1) ? X1 : X0, v = (w & SH_B2) ? X3 : X2;
      float u2 = (w & SH_B1) ? X0 : X1, v2 = (w & SH_B2) ? X2 : X3;
      float Y0 = shfl_idx_f32((w & SH_B3) ? v : u, w & 31u);
      float Y1 = shfl_idx_f32((w & SH_B3) ? u : v, (w >> 5) & 31u);
      float Y2 = shfl_idx_f32((w & SH_B4) ? v2 : u2, (w >> 10) & 31u);
      float Y3 = shfl_idx_f32((w & SH_B4) ? u2 : v2, (w >> 15) & 31u);
      float Z2 = (w & SH_SWAP) ? Y3 : Y2, Z3 = (w & SH_SWAP) ? Y2 : Y3;
      f4 q = cs[r];
      float pA = q.y * Z2, qA = q.y * Y0, pB = q.w * Z3, qB = q.w * Y1;
      X0 = __builtin_fmaf(q.x, Y0, pA);
      X2 = __builtin_fmaf(q.x, Z2, -qA);
      X1 = __builtin_fmaf(q.z, Y1, pB);
      X3 = __builtin_fmaf(q.z, Z3, -qB);
    }
    u32 h0 = bf16_rne(X0), h1 = bf16_rne(X1), h2 = bf16_rne(X2), h3 = bf16_rne(X3);
    sv[fin & 0xFFu] = (u16)h0;
    sv[(fin >> 8) & 0xFFu] = (u16)h1;
    sv[(fin >> 16) & 0xFFu] = (u16)h2;
    sv[fin >> 24] = (u16)h3;
    float a = warp_max(__builtin_fmaxf(__builtin_fmaxf(__builtin_fabsf(bf16_to_f32(h0)), __builtin_fabsf(bf16_to_f32(h1))),
                                       __builtin_fmaxf(__builtin_fabsf(bf16_to_f32(h2)), __builtin_fabsf(bf16_to_f32(h3)))));
    warp_sync_all();
    const u32 *sv32 = (const u32 *)sv;
    u64 row = (u64)p * M + m;
    u32 *out = (u32 *)(xr + row * K + (u64)g * GROUP + 4u * lane);
    out[0] = sv32[2 * lane];
    out[1] = sv32[2 * lane + 1];
    if (lane == 0) gamax[row * G + g] = a;
    warp_sync_all();
  }
}

// ---------------------------------------------------------------------------
// pq_rotq_group_sh: the per-group producer (pq_rotq_group's outputs) with
// pq_rot_bf16_sh's ownership layout: the row-group in registers, the 8
// layers routed by warp shuffles on the Euler-split schedule
// (refimpl.BuildShuffleRecords), so no lane ever touches another lane's
// value through shared memory and no layer needs a sync. The rotated fp32
// values are those of rotate_group bit for bit (the schedule's emulator
// proves it against refimpl.RotateF32), the group amax is a max (exact in
// any order), each code is encoded from its own value and the row sum is
// an exact integer sum, so codes, scales and row sums equal pq_rotq_group's
// byte for byte. After the last layer each lane's four codes go to their
// channels in a 128-byte shared slice (the only exchange, one sync) and
// each lane stores its canonical word 4l..4l+3. Grid and rows per warp as
// pq_rotq_group (producers.GroupWiseGrid), at any M.
KERNEL LAUNCH_BOUNDS(256) void pq_rotq_group_sh(const u16 *x, const u32 *sctrl, const f4 *scs, const u32 *sfin,
                                                const f4 *chs, u8 *codes, float *gscale, float *rsum, u32 M, u32 K,
                                                u32 rpw) {
  SHARED __attribute__((aligned(16))) u8 sbuf[WARPS][GROUP];
  u32 g = bid_x(), p = bid_y(), G = K / GROUP;
  u32 lane = lane_id(), warp = tid_x() >> 5;
  u8 *sv = sbuf[warp];
  u32 ctrl[KROT];
  f4 cs[KROT];
  u64 rb = ((u64)p * G + g) * KROT * 32u + lane;
#pragma unroll
  for (u32 r = 0; r < KROT; r++) {
    ctrl[r] = sctrl[rb + 32u * r];
    cs[r] = scs[rb + 32u * r];
  }
  u32 fin = sfin[((u64)p * G + g) * 32u + lane];
  f4 chs4 = chs[((u64)p * K + (u64)g * GROUP) / 4u + lane];
  u32 nw = bdim_x() >> 5;
  u32 m0 = bid_z() * nw * rpw;
  for (u32 m = m0 + warp; m < M && m < m0 + nw * rpw; m += nw) {
    const u32 *xp = (const u32 *)(x + (u64)m * K + (u64)g * GROUP + 4u * lane);
    u32 w0 = xp[0], w1 = xp[1];
    float X0 = bf16_to_f32(w0 & 0xFFFFu) * chs4.x, X1 = bf16_to_f32(w0 >> 16) * chs4.y;
    float X2 = bf16_to_f32(w1 & 0xFFFFu) * chs4.z, X3 = bf16_to_f32(w1 >> 16) * chs4.w;
#pragma unroll
    for (u32 r = 0; r < KROT; r++) {
      u32 w = ctrl[r];
      float u = (w & SH_B1) ? X1 : X0, v = (w & SH_B2) ? X3 : X2;
      float u2 = (w & SH_B1) ? X0 : X1, v2 = (w & SH_B2) ? X2 : X3;
      float Y0 = shfl_idx_f32((w & SH_B3) ? v : u, w & 31u);
      float Y1 = shfl_idx_f32((w & SH_B3) ? u : v, (w >> 5) & 31u);
      float Y2 = shfl_idx_f32((w & SH_B4) ? v2 : u2, (w >> 10) & 31u);
      float Y3 = shfl_idx_f32((w & SH_B4) ? u2 : v2, (w >> 15) & 31u);
      float Z2 = (w & SH_SWAP) ? Y3 : Y2, Z3 = (w & SH_SWAP) ? Y2 : Y3;
      f4 q = cs[r];
      float pA = q.y * Z2, qA = q.y * Y0, pB = q.w * Z3, qB = q.w * Y1;
      X0 = __builtin_fmaf(q.x, Y0, pA);
      X2 = __builtin_fmaf(q.x, Z2, -qA);
      X1 = __builtin_fmaf(q.z, Y1, pB);
      X3 = __builtin_fmaf(q.z, Z3, -qB);
    }
    f4 v{X0, X1, X2, X3}; // slots 0..3: channels fin's bytes 0..3
    float scale = warp_max(amax4(v)) / 448.0f;
    u32 c = encode4(v, scale);
    i32 S = warp_sum_i32(sum4_x512(c));
    sv[fin & 0xFFu] = (u8)(c & 0xFFu);
    sv[(fin >> 8) & 0xFFu] = (u8)((c >> 8) & 0xFFu);
    sv[(fin >> 16) & 0xFFu] = (u8)((c >> 16) & 0xFFu);
    sv[fin >> 24] = (u8)(c >> 24);
    warp_sync_all();
    u64 row = (u64)p * M + m;
    *(u32 *)(codes + row * K + (u64)g * GROUP + 4u * lane) = ((const u32 *)sv)[lane];
    if (lane == 0) {
      gscale[row * G + g] = scale;
      rsum[row * G + g] = (float)S / 512.0f;
    }
    warp_sync_all();
  }
}
