// e4m3.hip: fp8 e4m3 codec kernels for the codec gates.
//
// Versions / entry points:
//   e4m3_sweep         all 2^32 float32 patterns: software encoder vs the
//                      wrapped hardware encoder (must be 0 mismatches) and
//                      vs the raw hardware (information only)
//   e4m3_encode_list   encode a list of inputs three ways (sw, wrapped hw, raw hw)
//   e4m3_encode_range  software codes of a contiguous range of bit patterns,
//                      four per u32, for the exhaustive device-vs-Go check
//   e4m3_decode_all    the 256 codes through the software and hardware decoders
#include "format/e4m3.h"

// counts[0], counts[1]: inputs where sw != wrapped hw, sw != raw hw;
// counts[2], counts[3]: inputs where they are equal (each pair must add up to
// 2^32: proof both comparisons ran on every input); counts[4]: the sum of all
// input patterns (must be 2^63 - 2^31: proof every pattern was visited once).
// first[0], first[1]: smallest mismatching input bits of each kind.
// Inputs: u = base + 2*(global thread + k*stride) + {0,1}, covering
// [base, base + 2*iters*threads) with consecutive patterns across lanes so
// branches in the software encoder stay warp-uniform.
KERNEL LAUNCH_BOUNDS(256) void e4m3_sweep(u64 *counts, u32 *first, u32 base, u32 iters) {
  u32 gtid = bid_x() * bdim_x() + tid_x();
  u32 stride = gdim_x() * bdim_x();
  u32 bad_wrap = 0, bad_raw = 0, ok_wrap = 0, ok_raw = 0;
  u64 sum = 0;
  u32 first_wrap = 0xFFFFFFFFu, first_raw = 0xFFFFFFFFu;
  for (u32 k = 0; k < iters; k++) {
    u32 u0 = base + 2u * (gtid + k * stride);
    u32 u1 = u0 + 1u;
    sum += (u64)u0 + u1;
    float x0 = bits_f32(u0), x1 = bits_f32(u1);
    u32 s0 = e4m3_encode_sw(u0), s1 = e4m3_encode_sw(u1);
    u32 w = e4m3_encode2_hw(x0, x1);
    u32 r = hw_e4m3x2_raw(x0, x1);
    u32 w0 = (w & 0xFFu) != s0, w1 = (w >> 8) != s1;
    u32 r0 = (r & 0xFFu) != s0, r1 = (r >> 8) != s1;
    bad_wrap += w0 + w1;
    ok_wrap += (1u - w0) + (1u - w1);
    bad_raw += r0 + r1;
    ok_raw += (1u - r0) + (1u - r1);
    if (w0 | w1) {
      u32 f = w0 ? u0 : u1;
      first_wrap = f < first_wrap ? f : first_wrap;
    }
    if (r0 | r1) {
      u32 f = r0 ? u0 : u1;
      first_raw = f < first_raw ? f : first_raw;
    }
  }
  bad_wrap = warp_sum_u32(bad_wrap);
  bad_raw = warp_sum_u32(bad_raw);
  ok_wrap = warp_sum_u32(ok_wrap);
  ok_raw = warp_sum_u32(ok_raw);
  if (lane_id() == 0) {
    if (bad_wrap) atomic_add_u64(&counts[0], bad_wrap);
    if (bad_raw) atomic_add_u64(&counts[1], bad_raw);
    atomic_add_u64(&counts[2], ok_wrap);
    atomic_add_u64(&counts[3], ok_raw);
  }
  atomic_add_u64(&counts[4], sum);
  if (first_wrap != 0xFFFFFFFFu) atomic_min_u32(&first[0], first_wrap);
  if (first_raw != 0xFFFFFFFFu) atomic_min_u32(&first[1], first_raw);
}

KERNEL LAUNCH_BOUNDS(256) void e4m3_encode_list(const u32 *in, u8 *sw, u8 *hw, u8 *raw, u32 n) {
  u32 i = bid_x() * bdim_x() + tid_x();
  if (i >= n) return;
  u32 u = in[i];
  float x = bits_f32(u);
  sw[i] = (u8)e4m3_encode_sw(u);
  hw[i] = (u8)(e4m3_encode2_hw(x, 0.0f) & 0xFFu);
  raw[i] = (u8)(hw_e4m3x2_raw(x, 0.0f) & 0xFFu);
}

// out[i] holds the codes of base+4i .. base+4i+3, lowest input in byte 0.
KERNEL LAUNCH_BOUNDS(256) void e4m3_encode_range(u32 *out, u32 base, u32 n4) {
  u32 i = bid_x() * bdim_x() + tid_x();
  if (i >= n4) return;
  u32 u = base + 4u * i;
  out[i] = e4m3_encode_sw(u) | (e4m3_encode_sw(u + 1u) << 8) | (e4m3_encode_sw(u + 2u) << 16) |
           (e4m3_encode_sw(u + 3u) << 24);
}

KERNEL LAUNCH_BOUNDS(256) void e4m3_decode_all(u32 *sw, u32 *hw) {
  u32 c = tid_x();
  if (c >= 256u) return;
  sw[c] = e4m3_decode_sw(c);
  hw[c] = f32_bits(hw_e4m3_to_f32(c));
}
