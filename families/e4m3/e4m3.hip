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
//   pack_lanes         every lane of the packed converts the kernels use
#include "arch/mma.h"
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

// Every lane of every packed convert the producers and GEMMs use, per input
// word w with partner p = in[n-1-i] (so each input sits in both lanes of the
// two-input converts). LANE_WORDS output words per input; the expected
// values are lanes.go's laneWords, one case per target.
//   both: [0] e4m3_encode2_hw(p, w): w's code in the high byte, p's in the low
//         [1] pack_bf16x2(w, p): bf16(w) low, bf16(p) high
//   sm_90: [2..3] cvt.rn.f16x2.e4m3x2 of bytes (0,1) and (2,3) of w
//          [4..7] w4_word_f16x2 (the lop3 form) pairs j = 0..3 of w
//          [8..11] w4_pair_f16x2(w, j), j = 0..3
//   gfx1201: [2] w4_lut_e4m3(w), [3] w4_lut_e4m3(w >> 4)
//            [4..7] w4_wmma_step(w, p): k0 (2 words), then k16 (2 words)
//            [8..11] the bytes 0..3 of w through hw_e4m3_to_f32, as f32 bits
#define LANE_WORDS 12
KERNEL LAUNCH_BOUNDS(256) void pack_lanes(const u32 *in, u32 *out, u32 n) {
  u32 i = bid_x() * bdim_x() + tid_x();
  if (i >= n) return;
  u32 w = in[i], p = in[n - 1u - i];
  u32 *o = out + (u64)i * LANE_WORDS;
  o[0] = e4m3_encode2_hw(bits_f32(p), bits_f32(w));
  o[1] = pack_bf16x2(bits_f32(w), bits_f32(p));
#if defined(__NVPTX__)
  o[2] = e4m3x2_to_f16x2(w);
  o[3] = e4m3x2_to_f16x2(w >> 16);
  u32 h[4];
  w4_word_f16x2(w, h);
  for (u32 j = 0; j < 4; j++) o[4 + j] = h[j];
  for (u32 j = 0; j < 4; j++) o[8 + j] = w4_pair_f16x2(w, j);
#else
  o[2] = w4_lut_e4m3(w);
  o[3] = w4_lut_e4m3(w >> 4);
  const W4Step s = w4_wmma_step(w, p);
  o[4] = (u32)s.k0[0], o[5] = (u32)s.k0[1], o[6] = (u32)s.k16[0], o[7] = (u32)s.k16[1];
  for (u32 j = 0; j < 4; j++) o[8 + j] = f32_bits(hw_e4m3_to_f32((w >> (8 * j)) & 0xFFu));
#endif
}
