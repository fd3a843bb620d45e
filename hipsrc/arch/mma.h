// mma.h: the matrix op of the W4A8 GEMMs (hipsrc/gemm.hip), its operand
// fragments, and the memory primitives the kernels build on, behind one
// vocabulary for both targets.
//
// Index:
//   fragments    AFrag / BFrag: one 16x32 (A) or 32x8 (B) operand of a k32 step
//                make_afrag_e4m3(a[4])      activation codes, mma.m16n8k32 A order
//                make_afrag_w4(w0, w1)      weight words of rows gid / gid+8 (swapped op)
//                make_bfrag_e4m3(b0, b1)    activation codes, B order (swapped op)
//                make_bfrag_w4(w)           one weight word, B order
//   matrix op    mma_k32(d, A, B)           d += A(16x32) . B(32x8), fp32 accumulate
//   loads        ldg_u32, ldg_stream_v4 (no L1 allocate), ldg_cg_f32 (L2, coherent)
//   async copy   cp_async16/8/4 (zero-fill), cp_async_commit, cp_async_wait<n>
//   ordering     fence_gpu(), atomic_add_u32_gpu(), st_u32_gpu()
//   bf16         pack_bf16x2
//
// The k32 step's operand contract is the PTX mma.m16n8k32 (.e4m3, = .s8)
// layout. Lane l, gid = l / 4, tig = l % 4:
//   A (16 x 32, row-major), 4 regs of 4 codes (byte i = column +i):
//     a0: row gid, k 4tig..+3   a1: row gid+8, k 4tig..+3
//     a2: row gid, k 16+4tig..  a3: row gid+8, k 16+4tig..
//   B (32 x 8), 2 regs: b0: column gid, k 4tig..+3; b1: column gid, k 16+4tig..
//   D (16 x 8, fp32): d0, d1: row gid, columns 2tig, 2tig+1; d2, d3: row gid+8.
// hipsrc/arch/tiled.h stores activation tiles in exactly the A order.
//
// Weight words (refimpl.RepackW4): a u32 holds the 8 codes c (0..15) of one
// row of A or column of B for one k32 step; local index l = 0..7 is k
// 4tig + l (l < 4) or 16 + 4tig + (l - 4), and code l sits in nibble
// (l >> 1) + 4 (l & 1): nibble pairs (j, j+4) are the k pairs (2j, 2j+1).
// Codes enter the op as the integer c - 8 (exact in e4m3 and in fp16).
//
// sm_90: Hopper has no native fp8 mma.sync (mma.m16n8k32 .e4m3 is emulated
// by ptxas through fp16, one conversion per op; NVIDIA/cutlass#1986). The
// k32 step is therefore two native mma.m16n8k16.f16 ops, each operand
// converted ONCE per fragment: activation codes with cvt.rn.f16x2.e4m3x2
// (exact: every e4m3 value is an fp16 value), weight codes with the
// 0x6400 magic number (f16 1024 + c, minus 1032: exact). Products are exact
// in the fp32 accumulator, so the algebra is that of the e4m3 op. The k
// order inside a step is permuted identically on both operands (op 1: k
// 4tig..+3, op 2: k 16+4tig..+3, pairs as above), which leaves the sum unchanged.
// The native fp8 path on sm_90 is wgmma (TODO: prefill).
//
// gfx1201: TODO(native WMMA). The k32 step is EMULATED with ds_bpermute and
// fp32 FMAs on the e4m3 contract above, so the shared kernel bodies compile
// and stay correct there; it is slow. The native path is
// __builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w32_gfx12 with its own fragment
// order.
#pragma once
#include "arch.h"

// Nibble of local index l in a weight word.
#define W4_NIB(l) (((l) >> 1) + 4 * ((l) & 1))

#if defined(__NVPTX__)
struct AFrag { u32 h[8]; }; // op 1: h[0..3] = a0..a3 (f16x2), op 2: h[4..7]
struct BFrag { u32 h[4]; }; // op 1: h[0..1] = b0, b1 (f16x2), op 2: h[2..3]

DEVICE u32 e4m3x2_to_f16x2(u32 x) {
  u32 r;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r) : "h"((u16)(x & 0xFFFFu)));
  return r;
}
// Pair j of a weight word: f16x2 (c_{2j} - 8, c_{2j+1} - 8).
DEVICE u32 w4_pair_f16x2(u32 w, u32 j) {
  u32 x = ((w >> (4 * j)) & 0x000F000Fu) | 0x64006400u, r; // 1024 + c in each half
  asm("sub.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(0x64086408u)); // - 1032
  return r;
}
DEVICE AFrag make_afrag_e4m3(const u32 a[4]) {
  AFrag f;
  f.h[0] = e4m3x2_to_f16x2(a[0]), f.h[1] = e4m3x2_to_f16x2(a[1]);
  f.h[2] = e4m3x2_to_f16x2(a[0] >> 16), f.h[3] = e4m3x2_to_f16x2(a[1] >> 16);
  f.h[4] = e4m3x2_to_f16x2(a[2]), f.h[5] = e4m3x2_to_f16x2(a[3]);
  f.h[6] = e4m3x2_to_f16x2(a[2] >> 16), f.h[7] = e4m3x2_to_f16x2(a[3] >> 16);
  return f;
}
DEVICE AFrag make_afrag_w4(u32 w0, u32 w1) {
  AFrag f;
  f.h[0] = w4_pair_f16x2(w0, 0), f.h[1] = w4_pair_f16x2(w1, 0);
  f.h[2] = w4_pair_f16x2(w0, 1), f.h[3] = w4_pair_f16x2(w1, 1);
  f.h[4] = w4_pair_f16x2(w0, 2), f.h[5] = w4_pair_f16x2(w1, 2);
  f.h[6] = w4_pair_f16x2(w0, 3), f.h[7] = w4_pair_f16x2(w1, 3);
  return f;
}
DEVICE BFrag make_bfrag_e4m3(u32 b0, u32 b1) {
  BFrag f;
  f.h[0] = e4m3x2_to_f16x2(b0), f.h[1] = e4m3x2_to_f16x2(b0 >> 16);
  f.h[2] = e4m3x2_to_f16x2(b1), f.h[3] = e4m3x2_to_f16x2(b1 >> 16);
  return f;
}
DEVICE BFrag make_bfrag_w4(u32 w) {
  BFrag f;
  f.h[0] = w4_pair_f16x2(w, 0), f.h[1] = w4_pair_f16x2(w, 1);
  f.h[2] = w4_pair_f16x2(w, 2), f.h[3] = w4_pair_f16x2(w, 3);
  return f;
}
DEVICE void mma_f16_16x8x16(float d[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
DEVICE void mma_k32(float d[4], const AFrag &a, const BFrag &b) {
  mma_f16_16x8x16(d, a.h[0], a.h[1], a.h[2], a.h[3], b.h[0], b.h[1]);
  mma_f16_16x8x16(d, a.h[4], a.h[5], a.h[6], a.h[7], b.h[2], b.h[3]);
}
#else // __AMDGCN__: e4m3 fragments and an emulated op
struct AFrag { u32 r[4]; };
struct BFrag { u32 r[2]; };

// e4m3 byte of the integer c - 8, c = 0..15.
DEVICE u32 w4_code_e4m3(u32 c) {
  const u64 neg = 0xB8C0C4C8CACCCED0ull; // c = 0..7  -> -8..-1
  const u64 pos = 0x4E4C4A4844403800ull; // c = 8..15 ->  0..7
  return (u32)(((c < 8 ? neg : pos) >> (8 * (c & 7u))) & 0xFFu);
}
// Local indices l0..l0+3 of a weight word as four e4m3 bytes.
DEVICE u32 w4_quad_e4m3(u32 w, u32 l0) {
  u32 r = 0;
#pragma unroll
  for (u32 i = 0; i < 4; i++) r |= w4_code_e4m3((w >> (4 * W4_NIB(l0 + i))) & 15u) << (8 * i);
  return r;
}
DEVICE AFrag make_afrag_e4m3(const u32 a[4]) { return AFrag{{a[0], a[1], a[2], a[3]}}; }
DEVICE AFrag make_afrag_w4(u32 w0, u32 w1) {
  return AFrag{{w4_quad_e4m3(w0, 0), w4_quad_e4m3(w1, 0), w4_quad_e4m3(w0, 4), w4_quad_e4m3(w1, 4)}};
}
DEVICE BFrag make_bfrag_e4m3(u32 b0, u32 b1) { return BFrag{{b0, b1}}; }
DEVICE BFrag make_bfrag_w4(u32 w) { return BFrag{{w4_quad_e4m3(w, 0), w4_quad_e4m3(w, 4)}}; }

struct f32x4 { float x, y, z, w; };
DEVICE u32 bperm(u32 v, u32 src) { return (u32)__builtin_amdgcn_ds_bpermute((int)(src << 2), (int)v); }
DEVICE float e4m3_byte(u32 w, u32 i) { return hw_e4m3_to_f32((w >> (8 * i)) & 0xFFu); }
// Out of line on purpose: inlined into the GEMM loops it defeats their
// unrolling (and the accumulators would go to scratch); called by value it
// keeps every operand in registers. Lane 4*gid+j holds A's k chunks 4j..
// and 16+4j.., lane 4*col+j the same chunks of B's column.
__attribute__((device, noinline)) static f32x4 mma_emul(f32x4 d, u32 a0r, u32 a1r, u32 a2r, u32 a3r, u32 b0r, u32 b1r) {
  u32 l = lane_id(), gid = l >> 2, tig = l & 3u;
#pragma unroll
  for (u32 j = 0; j < 4; j++) {
    u32 sa = 4 * gid + j, sb0 = 8 * tig + j, sb1 = 8 * tig + 4 + j;
    u32 a0 = bperm(a0r, sa), a1 = bperm(a1r, sa), a2 = bperm(a2r, sa), a3 = bperm(a3r, sa);
    u32 b00 = bperm(b0r, sb0), b01 = bperm(b1r, sb0), b10 = bperm(b0r, sb1), b11 = bperm(b1r, sb1);
#pragma unroll
    for (u32 i = 0; i < 4; i++) {
      float x0 = e4m3_byte(a0, i), x1 = e4m3_byte(a1, i), x2 = e4m3_byte(a2, i), x3 = e4m3_byte(a3, i);
      float y00 = e4m3_byte(b00, i), y01 = e4m3_byte(b01, i), y10 = e4m3_byte(b10, i), y11 = e4m3_byte(b11, i);
      d.x = __builtin_fmaf(x0, y00, __builtin_fmaf(x2, y01, d.x));
      d.y = __builtin_fmaf(x0, y10, __builtin_fmaf(x2, y11, d.y));
      d.z = __builtin_fmaf(x1, y00, __builtin_fmaf(x3, y01, d.z));
      d.w = __builtin_fmaf(x1, y10, __builtin_fmaf(x3, y11, d.w));
    }
  }
  return d;
}
DEVICE void mma_k32(float d[4], const AFrag &a, const BFrag &b) {
  f32x4 r = mma_emul(f32x4{d[0], d[1], d[2], d[3]}, a.r[0], a.r[1], a.r[2], a.r[3], b.r[0], b.r[1]);
  d[0] = r.x, d[1] = r.y, d[2] = r.z, d[3] = r.w;
}
#endif

// ----------------------------------------------------------------- loads
struct u32x4 { u32 x, y, z, w; };
struct u32x2 { u32 x, y; };

#if defined(__NVPTX__)
DEVICE u32 ldg_u32(const void *p) { return __nvvm_ldg_ui((const unsigned int *)p); }
DEVICE float ldg_f32(const float *p) { return __nvvm_ldg_f(p); }
DEVICE u32x2 ldg_u32x2(const void *p) {
  u32x2 r;
  asm("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(p));
  return r;
}
// Weights stream once per call: read-only path, no L1 allocation.
DEVICE u32x4 ldg_stream_v4(const void *p) {
  u32x4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}
// Coherent at the GPU level (L2): partial sums other blocks wrote.
DEVICE float ldg_cg_f32(const float *p) {
  float r;
  asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(r) : "l"(p));
  return r;
}
DEVICE void fence_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
DEVICE u32 atomic_add_u32_gpu(u32 *p, u32 v) {
  u32 old;
  asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
DEVICE void st_u32_gpu(u32 *p, u32 v) { asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory"); }

DEVICE u32 smem_u32(const void *p) {
  u64 a;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return (u32)a;
}
// cp.async with zero fill: bytes past src_bytes (0 or the size) are zeros,
// and nothing is read when src_bytes is 0.
DEVICE void cp_async16(void *dst, const void *src, u32 src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_u32(dst)), "l"(src), "r"(src_bytes) : "memory");
}
DEVICE void cp_async8(void *dst, const void *src, u32 src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(smem_u32(dst)), "l"(src), "r"(src_bytes) : "memory");
}
DEVICE void cp_async4(void *dst, const void *src, u32 src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem_u32(dst)), "l"(src), "r"(src_bytes) : "memory");
}
DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> DEVICE void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

// Two floats -> bf16x2 (lo in the low half), round to nearest even.
DEVICE u32 pack_bf16x2(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
#else // __AMDGCN__
DEVICE u32 ldg_u32(const void *p) { return *(const u32 *)p; }
DEVICE float ldg_f32(const float *p) { return *p; }
DEVICE u32x2 ldg_u32x2(const void *p) { return *(const u32x2 *)p; }
typedef u32 v4u32 __attribute__((ext_vector_type(4)));
DEVICE u32x4 ldg_stream_v4(const void *p) {
  v4u32 v = __builtin_nontemporal_load((const v4u32 *)p);
  return u32x4{v.x, v.y, v.z, v.w};
}
DEVICE float ldg_cg_f32(const float *p) {
  return bits_f32(__scoped_atomic_load_n((const u32 *)p, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE));
}
DEVICE void fence_gpu() { __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, "agent"); }
DEVICE u32 atomic_add_u32_gpu(u32 *p, u32 v) { return __scoped_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE); }
DEVICE void st_u32_gpu(u32 *p, u32 v) { __scoped_atomic_store_n(p, v, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE); }

// No asynchronous copy on gfx12: a synchronous copy with the same zero fill
// (correct, not fast; the native path stages through LDS with its own loop).
DEVICE void cp_async16(void *dst, const void *src, u32 src_bytes) {
  *(u32x4 *)dst = src_bytes ? *(const u32x4 *)src : u32x4{0, 0, 0, 0};
}
DEVICE void cp_async8(void *dst, const void *src, u32 src_bytes) {
  *(u32x2 *)dst = src_bytes ? *(const u32x2 *)src : u32x2{0, 0};
}
DEVICE void cp_async4(void *dst, const void *src, u32 src_bytes) { *(u32 *)dst = src_bytes ? *(const u32 *)src : 0u; }
DEVICE void cp_async_commit() {}
template <int N> DEVICE void cp_async_wait() {}

DEVICE u32 bf16_rne(float f) {
  u32 u = f32_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (u >> 16) | 0x40u;
  return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}
DEVICE u32 pack_bf16x2(float lo, float hi) { return bf16_rne(lo) | (bf16_rne(hi) << 16); }
#endif

DEVICE float f16_to_f32(u32 h) { return (float)__builtin_bit_cast(_Float16, (u16)h); }
