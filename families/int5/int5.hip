// int5.hip: the int5 fifth-bit unpack (hipsrc/format/int5.h) for its gates.
//
// Entry points:
//   int5_unpack_sweep   a range of plane words: int5_spread against the
//                       shift/select form, mismatch counts, the first
//                       mismatch, proof-of-visit sums and a digest of the
//                       outputs (the Go gate computes the same digest)
//   int5_unpack_list    a list of plane words with four weight words each:
//                       the spread and every consumer form, for the Go
//                       comparison on the host
//   int5_code_table     the 32 codes through c - 16, the e4m3 encoders and
//                       the hardware and software decoders
#include "format/int5.h"

// The plain form, bit by bit from the definition in int5.h: bit 2b (2b+1)
// of byte q selects bit 8b + 4 of even[q] (odd[q]).
DEVICE Int5Fifth int5_spread_ref(u32 p) {
  Int5Fifth f;
  for (u32 q = 0; q < 4u; q++) {
    u32 e = 0, o = 0;
    for (u32 b = 0; b < 4u; b++) {
      e |= ((p >> (8u * q + 2u * b)) & 1u) ? (1u << (8u * b + 4u)) : 0u;
      o |= ((p >> (8u * q + 2u * b + 1u)) & 1u) ? (1u << (8u * b + 4u)) : 0u;
    }
    f.even[q] = e, f.odd[q] = o;
  }
  return f;
}

// FNV-1a over p and the eight output words (Go: families/int5 digest).
DEVICE u32 int5_digest(u32 p, const Int5Fifth &f) {
  u32 h = 2166136261u;
  h = (h ^ p) * 16777619u;
  for (u32 q = 0; q < 4u; q++) {
    h = (h ^ f.even[q]) * 16777619u;
    h = (h ^ f.odd[q]) * 16777619u;
  }
  return h;
}

// counts[0], counts[1]: words where int5_spread differs from / equals the
// shift/select form (their sum is the number of words compared);
// counts[2]: the sum of the input words (proof every word of the range was
// visited once); counts[3]: the sum of int5_digest over the range.
// first[0]: the smallest mismatching word (0xFFFFFFFF when none).
// Inputs: p = base + global thread + k * threads, k < iters, consecutive
// words across lanes; the caller keeps base + iters * threads <= 2^32.
KERNEL LAUNCH_BOUNDS(256) void int5_unpack_sweep(u64 *counts, u32 *first, u32 base, u32 iters) {
  const u32 gtid = bid_x() * bdim_x() + tid_x();
  const u32 stride = gdim_x() * bdim_x();
  u32 bad = 0, ok = 0, first_bad = 0xFFFFFFFFu;
  u64 sum = 0, digest = 0;
  for (u32 k = 0; k < iters; k++) {
    const u32 p = base + gtid + k * stride;
    const Int5Fifth f = int5_spread(p), r = int5_spread_ref(p);
    u32 diff = 0;
    for (u32 q = 0; q < 4u; q++) diff |= (f.even[q] ^ r.even[q]) | (f.odd[q] ^ r.odd[q]);
    const u32 miss = diff != 0u;
    bad += miss;
    ok += 1u - miss;
    if (miss) first_bad = p < first_bad ? p : first_bad;
    sum += p;
    digest += int5_digest(p, f);
  }
  bad = warp_sum_u32(bad);
  ok = warp_sum_u32(ok);
  if (lane_id() == 0) {
    if (bad) atomic_add_u64(&counts[0], bad);
    atomic_add_u64(&counts[1], ok);
  }
  atomic_add_u64(&counts[2], sum);
  atomic_add_u64(&counts[3], digest);
  if (first_bad != 0xFFFFFFFFu) atomic_min_u32(&first[0], first_bad);
}

// Per input i: plane word p = planes[i], weight words w[q] = words[4i + q].
// INT5_LIST_WORDS output words (the Go expectation is families/int5
// ListExpect):
//   [0..3]   even[q]                 [4..7]   odd[q]
//   [8..11]  int5_codes_even(w[q])   [12..15] int5_codes_odd(w[q])
//   [16..19] int5_s8x4 of [8..11]    [20..23] int5_s8x4 of [12..15]
//   [24..27] int5_e4m3x4 of [8..11]  [28..31] int5_e4m3x4 of [12..15]
//   [32+j]   pair j of weight word j, j = 0..3: sm_90 w5_pair_f16x2;
//            gfx1201 the fifth bits int5_pair_fifth (no f16 form there)
#define INT5_LIST_WORDS 36
KERNEL LAUNCH_BOUNDS(256) void int5_unpack_list(const u32 *planes, const u32 *words, u32 *out, u32 n) {
  const u32 i = bid_x() * bdim_x() + tid_x();
  if (i >= n) return;
  const u32 p = planes[i];
  u32 w[4];
#pragma unroll
  for (u32 q = 0; q < 4u; q++) w[q] = words[4u * i + q];
  const Int5Fifth f = int5_spread(p);
  u32 *o = out + (u64)i * INT5_LIST_WORDS;
#pragma unroll
  for (u32 q = 0; q < 4u; q++) {
    const u32 ce = int5_codes_even(w[q], f.even[q]), co = int5_codes_odd(w[q], f.odd[q]);
    o[q] = f.even[q];
    o[4u + q] = f.odd[q];
    o[8u + q] = ce;
    o[12u + q] = co;
    o[16u + q] = int5_s8x4(ce);
    o[20u + q] = int5_s8x4(co);
    o[24u + q] = int5_e4m3x4(ce);
    o[28u + q] = int5_e4m3x4(co);
  }
#pragma unroll
  for (u32 j = 0; j < 4u; j++) {
    const u32 fifth = int5_pair_fifth(f.even[j], f.odd[j], j);
#if defined(__NVPTX__)
    o[32u + j] = w5_pair_f16x2(w[j], fifth, j);
#else
    o[32u + j] = fifth;
#endif
  }
}

// out[4c..4c+3] for code c = 0..31: int5_signed(c) (two's complement);
// e4m3_encode_sw | e4m3_encode2_hw << 8 of (float)(c - 16); the software
// code through hw_e4m3_to_f32 and through e4m3_decode_sw, as f32 bits.
KERNEL LAUNCH_BOUNDS(32) void int5_code_table(u32 *out) {
  const u32 c = tid_x();
  if (c >= 32u) return;
  const i32 v = int5_signed(c);
  const float x = (float)v;
  const u32 sw = e4m3_encode_sw(f32_bits(x)), hw = e4m3_encode2_hw(x, 0.0f) & 0xFFu;
  out[4u * c] = (u32)v;
  out[4u * c + 1u] = sw | (hw << 8);
  out[4u * c + 2u] = f32_bits(hw_e4m3_to_f32(sw));
  out[4u * c + 3u] = e4m3_decode_sw(sw);
}
