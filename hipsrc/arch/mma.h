// mma.h: the fp8 matrix op, the int4 -> e4m3 weight expansion and the memory
// primitives the W4A8 GEMMs (hipsrc/gemm.hip) build on, behind one
// vocabulary for both targets.
//
// Index:
//   matrix op    mma_e4m3_16x8x32(d, a, b)      d += A(16x32) . B(32x8), fp32
//   weights      w4_to_e4m3x8(w, lo, hi)        8 int4 codes c -> e4m3(c - 8)
//   loads        ldg_u32, ldg_stream_v4 (no L1 allocate), ldg_cg_f32 (L2, coherent)
//   async copy   cp_async16/8/4 (zero-fill), cp_async_commit, cp_async_wait<n>
//   ordering     fence_gpu(), atomic_add_u32_gpu()
//   bf16         f32_to_bf16_rne, pack_bf16x2
//
// Fragment contract of the matrix op (PTX ISA, mma.m16n8k32 with .e4m3; the
// same as the .s8 m16n8k32 layout). Lane l, gid = l / 4, tig = l % 4:
//   A (16 x 32, row-major), 4 regs of 4 codes (byte i = column +i):
//     a0: row gid,   columns 4*tig .. +3      a1: row gid+8, columns 4*tig .. +3
//     a2: row gid,   columns 16+4*tig .. +3   a3: row gid+8, columns 16+4*tig .. +3
//   B (32 x 8, "col"), 2 regs of 4 codes (byte i = row +i):
//     b0: column gid, rows 4*tig .. +3        b1: column gid, rows 16+4*tig .. +3
//   C/D (16 x 8, fp32): d0, d1: row gid, columns 2*tig, 2*tig+1;
//                       d2, d3: row gid+8, columns 2*tig, 2*tig+1.
// hipsrc/arch/tiled.h stores activation tiles in exactly the A order.
//
// sm_90: mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 (inline asm).
// gfx1201: TODO(native WMMA). The op is EMULATED with ds_bpermute and fp32
// FMAs on the same fragment contract, so the shared kernel bodies compile,
// run and stay correct there; it is slow. The native path is
// __builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w32_gfx12 with its own fragment
// order, which changes the tile loops, not this contract's callers' algebra.
#pragma once
#include "arch.h"

// ---------------------------------------------------------------- weights
// An int4 weight code c (0..15) enters the matrix op as the e4m3 value of
// the integer c - 8 (exact: every integer in -8..7 is an e4m3 value).
// w4_to_e4m3x8 expands one packed word: nibble i (bits 4i..4i+3) of w is
// byte i of lo for i < 4, byte i-4 of hi for i >= 4.
//
// Table, e4m3(c - 8): c = 0..7 -> -8..-1 = D0 CE CC CA C8 C4 C0 B8,
//                      c = 8..15 -> 0..7 = 00 38 40 44 48 4A 4C 4E.
#define W4_NEG_LO 0xCACCCED0u // c = 0..3
#define W4_NEG_HI 0xB8C0C4C8u // c = 4..7
#define W4_POS_LO 0x44403800u // c = 8..11
#define W4_POS_HI 0x4E4C4A48u // c = 12..15

#if defined(__NVPTX__)
// Four codes in the low 16 bits of x -> four e4m3 bytes. prmt selects bytes
// of {b, a} by the low 3 bits of each selector nibble (bit 3 would ask for
// sign replication, hence the & 0x7777): one lookup in each half of the
// table, then a third prmt picks per byte by bit 3 of the code.
DEVICE u32 w4x4_to_e4m3(u32 x) {
  u32 idx = x & 0x7777u;
  u32 neg = __nvvm_prmt(W4_NEG_LO, W4_NEG_HI, idx);
  u32 pos = __nvvm_prmt(W4_POS_LO, W4_POS_HI, idx);
  u32 sel = ((x >> 1) & 0x4444u) | 0x3210u; // byte i from neg (i) or pos (4+i)
  return __nvvm_prmt(neg, pos, sel);
}
#else
DEVICE u32 w4x4_to_e4m3(u32 x) {
  const u64 lo = (u64)W4_NEG_LO | ((u64)W4_NEG_HI << 32), hi = (u64)W4_POS_LO | ((u64)W4_POS_HI << 32);
  u32 r = 0;
#pragma unroll
  for (u32 i = 0; i < 4; i++) {
    u32 c = (x >> (4 * i)) & 15u;
    u64 t = c < 8 ? lo : hi;
    r |= (u32)((t >> (8 * (c & 7u))) & 0xFFu) << (8 * i);
  }
  return r;
}
#endif

DEVICE void w4_to_e4m3x8(u32 w, u32 &lo, u32 &hi) {
  lo = w4x4_to_e4m3(w);
  hi = w4x4_to_e4m3(w >> 16);
}

// ------------------------------------------------------------- matrix op
#if defined(__NVPTX__)
DEVICE void mma_e4m3_16x8x32(float d[4], const u32 a[4], const u32 b[2]) {
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#else
// Emulation on the same contract. Lane (gid, tig) needs rows gid, gid+8 of A
// and columns 2tig, 2tig+1 of B over all 32 k: lane 4*gid+j holds A's k
// chunks 4j.. and 16+4j.., lane 4*col+j the same chunks of B's column.
DEVICE u32 bperm(u32 v, u32 src) { return (u32)__builtin_amdgcn_ds_bpermute((int)(src << 2), (int)v); }
DEVICE float e4m3_byte(u32 w, u32 i) { return hw_e4m3_to_f32((w >> (8 * i)) & 0xFFu); }
struct f32x4 { float x, y, z, w; };
// Out of line on purpose: inlined into the GEMM loops it defeats their
// unrolling (and the accumulators would go to scratch); called by value it
// keeps every operand in registers.
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
DEVICE void mma_e4m3_16x8x32(float d[4], const u32 a[4], const u32 b[2]) {
  f32x4 r = mma_emul(f32x4{d[0], d[1], d[2], d[3]}, a[0], a[1], a[2], a[3], b[0], b[1]);
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
  asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(r) : "l"(p) : "memory");
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
