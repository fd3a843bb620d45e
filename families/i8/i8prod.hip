// i8prod.hip: the int8 activation producers of the I8 mode. They turn bf16
// activations x [M, K] into int8 codes for P rotation partitions at once:
// the producers' channel scale and 8 Givens layers (rot/rotq.h), then the
// symmetric int8 encode of i8/i8q.h (scale amax/127, round half to even,
// clamp to ±127) with int32 row sums per 128-group.
//
// Entry points:
//   pq_i8_group   decode band: per-group scales from the fp32 rotated
//                 values, one launch for all partitions -> codes [P,M,K]
//                 int8, gscale [P,M,G] f32, rsum [P,M,G] i32
//   pq_i8_tokq    prefill pass C: reads pass A's bf16 rows and group
//                 amaxes (families/producers pq_rot_bf16), token scale =
//                 max_g amax_g/127, codes row-major or fragment-tiled
//                 (format/tiled.h, rows past M zero), tscale [P,M], rsum
//                 [P,M,G] i32
//   pq_i8_token   fused per-token producer: pass A + pass C in one launch,
//                 the rotated bf16 row parked in shared memory; byte-
//                 identical to pq_rot_bf16 followed by pq_i8_tokq
//
// Work split and grids are those of the e4m3 producers
// (families/producers: GroupWiseGrid, RowWiseGrid), so the launch helpers
// there give these kernels' geometry too: pq_i8_group a warp per (group,
// partition) walking rows-per-warp rows; the row-wise kernels a 256-thread
// block per (row, partition), its warps striding over the row's groups.
#include "i8/i8q.h"

#pragma clang fp contract(off)

#define WARPS 8
#define MAXK 17408

KERNEL LAUNCH_BOUNDS(256) void pq_i8_group(const u16 *x, const u32 *ridx, const f4 *rcs, const f4 *chs, u8 *codes,
                                           float *gscale, i32 *rsum, u32 M, u32 K, u32 rpw) {
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
    load_row_group(sv, x, chs4, (u64)m * K, g, lane);
    rotate_group(sv, rec);
    f4 v = read4(sv, lane);
    float scale = warp_max(amax4(v)) / (float)I8MAX;
    i32 s;
    u32 c = i8_encode4(v, scale, s);
    u64 row = (u64)p * M + m;
    *(u32 *)(codes + row * K + (u64)g * GROUP + 4u * lane) = c;
    s = warp_sum_i32(s);
    if (lane == 0) {
      gscale[row * G + g] = scale;
      rsum[row * G + g] = s;
    }
    warp_sync_all();
  }
}

// Pass C. Grid (Mrows, P), Mrows = M (row-major) or Mpad (tiled).
KERNEL LAUNCH_BOUNDS(256) void pq_i8_tokq(const u16 *xr, const float *gamax, u8 *codes, float *tscale, i32 *rsum,
                                          u32 M, u32 K, u32 tiled) {
  u32 m = bid_x(), p = bid_y(), G = K / GROUP;
  u32 Mrows = tiled ? (M + 15u) & ~15u : M;
  if (m >= M) {
    zero_pad_row(codes, p, m, Mrows, K);
    return;
  }
  u32 lane = lane_id(), warp = tid_x() >> 5;
  u64 row = (u64)p * M + m;
  float As = i8_token_scale(gamax + row * G, G, lane);
  if (tid_x() == 0) tscale[row] = As;
  for (u32 g = warp; g < G; g += WARPS) {
    const u32 *xp = (const u32 *)(xr + row * K + (u64)g * GROUP + 4u * lane);
    u32 w0 = xp[0], w1 = xp[1];
    f4 v{bf16_to_f32(w0 & 0xFFFFu), bf16_to_f32(w0 >> 16), bf16_to_f32(w1 & 0xFFFFu), bf16_to_f32(w1 >> 16)};
    i8_encode_group(v, As, codes, rsum, p, m, g, M, Mrows, K, tiled, lane);
  }
}

// Fused per-token producer. Grid (Mrows, P); K <= MAXK.
KERNEL LAUNCH_BOUNDS(256) void pq_i8_token(const u16 *x, const u32 *ridx, const f4 *rcs, const f4 *chs, u8 *codes,
                                           float *tscale, i32 *rsum, u32 M, u32 K, u32 tiled) {
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
  float As = i8_token_scale(sam, G, lane);
  if (tid_x() == 0) tscale[row] = As;
  for (u32 g = warp; g < G; g += WARPS) {
    u32 w0 = srow[(g * GROUP) / 2 + 2 * lane], w1 = srow[(g * GROUP) / 2 + 2 * lane + 1];
    f4 v{bf16_to_f32(w0 & 0xFFFFu), bf16_to_f32(w0 >> 16), bf16_to_f32(w1 & 0xFFFFu), bf16_to_f32(w1 >> 16)};
    i8_encode_group(v, As, codes, rsum, p, m, g, M, Mrows, K, tiled, lane);
  }
}
