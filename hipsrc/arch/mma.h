// mma.h: the matrix op of the W4A8 GEMMs (families/gemm/gemm.hip), its operand
// fragments, and the memory primitives the kernels build on, behind one
// vocabulary for both targets.
//
// Index:
//   sm_90 fragments  AFrag / BFrag: one 16x32 (A) or 32x8 (B) operand of a k32 step
//                make_afrag_e4m3(a[4])      activation codes, mma.m16n8k32 A order
//                make_afrag_w4(w0, w1)      weight words of rows gid / gid+8 (swapped op)
//                w4_afrag_lop3(w0, w1)      the same operand, 9 ops per word (lop3 + f16x2 sub/fma)
//                make_bfrag_e4m3(b0, b1)    activation codes, B order (swapped op)
//                make_bfrag_w4(w)           one weight word, B order
//   both targets w8_bytes(w, lo, hi)          one weight word as unsigned bytes in k order
//   sm_90 op     mma_k32(d, A, B)           d += A(16x32) . B(32x8), fp32 accumulate
//   gfx1201 op   wmma_fp8(a, b, c)          D(16x16) = A(16x16) . B(16x16) + C, e4m3 in, fp32
//                w4_wmma_step(wa, wb)       two weight words -> the operands of a k32 step's two WMMAs
//                wmma_a_tiled(tile, lane, w) a WMMA A operand read from a tiled.h tile
//   loads        ldg_u32, ldg_f32, ldg_stream_v4 (no L1 allocate), ldg_cg_f32 (L2, coherent);
//                gfx1201: ldg_u32x2, ldg_u32x4
//   ordering     fence_gpu(), atomic_add_u32_gpu(), st_u32_gpu()
//   bf16 / f16   pack_bf16x2 (cvt on sm_90, arch.h bf16_rne on gfx1201), f16_to_f32
// sm_90 only (the staged decode body and the sm_90 prefill; gfx1201 has no
// counterpart, so nothing there calls them):
//   loads        ldg_stream_v4_if / ldg_u32_if (predicated: no branch)
//   async copy   cp_async16/8/4 (zero-fill), cp_async_commit, cp_async_wait<n>, smem_u32
//   clusters     cluster_ctarank(), cluster_nctarank(), cluster_nctaid_y(), cluster_sync(), ld_dsmem_f32(p, rank)
//
// The k32 step's operand contract is the PTX mma.m16n8k32 (.e4m3, = .s8)
// layout. Lane l, gid = l / 4, tig = l % 4:
//   A (16 x 32, row-major), 4 regs of 4 codes (byte i = column +i):
//     a0: row gid, k 4tig..+3   a1: row gid+8, k 4tig..+3
//     a2: row gid, k 16+4tig..  a3: row gid+8, k 16+4tig..
//   B (32 x 8), 2 regs: b0: column gid, k 4tig..+3; b1: column gid, k 16+4tig..
//   D (16 x 8, fp32): d0, d1: row gid, columns 2tig, 2tig+1; d2, d3: row gid+8.
// hipsrc/format/tiled.h stores activation tiles in exactly the A order.
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
// The native fp8 path on sm_90 is wgmma (pq_gemm_pre_wg, wgmma.h); the
// decode kernels stay on mma.sync.
//
// gfx1201: the native fp8 WMMA (v_wmma_f32_16x16x16_fp8_fp8, wave32), whose
// operands are 16x16x16 with their own lane order (layout and sources in the
// __AMDGCN__ section below). The GEMMs keep the memory formats above (weight
// words, tiled.h activation tiles) and read them straight into WMMA
// operands: a k32 step is two k16 WMMAs in natural k order, so weight
// words are used in pairs (tigs 2h and 2h+1 of a column cover k 8h..8h+7
// and 16+8h..16+8h+7), and the output tile is 16x16, so families/gemm/gemm.hip has
// gfx1201 kernel bodies of its own.
#pragma once
#include "arch.h"


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
// The same operand as make_afrag_w4 in 9 ops per weight word instead of 11:
// (w & 0x000F000F) | 0x64006400 is f16 (1024 + c) for nibbles j, j+4 (then
// − 1032), and (w & 0x00F000F0) | 0x64006400 is f16 (1024 + 16c) for nibbles
// j+1, j+5 (then × 1/16 − 72 in one fma: 64 + c − 72); every step is exact
// in f16, so the values are bit-identical to w4_pair_f16x2's.
DEVICE u32 lop3_and_or(u32 a, u32 mask, u32 bits) { // (a & mask) | bits
  u32 r;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(a), "r"(mask), "r"(bits));
  return r;
}
DEVICE void w4_word_f16x2(u32 w, u32 (&h)[4]) { // h[j] = w4_pair_f16x2(w, j)
  const u32 w8 = w >> 8;
  u32 x0 = lop3_and_or(w, 0x000F000Fu, 0x64006400u), x1 = lop3_and_or(w, 0x00F000F0u, 0x64006400u);
  u32 x2 = lop3_and_or(w8, 0x000F000Fu, 0x64006400u), x3 = lop3_and_or(w8, 0x00F000F0u, 0x64006400u);
  asm("sub.f16x2 %0, %1, %2;" : "=r"(h[0]) : "r"(x0), "r"(0x64086408u));
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(h[1]) : "r"(x1), "r"(0x2C002C00u), "r"(0xD480D480u));
  asm("sub.f16x2 %0, %1, %2;" : "=r"(h[2]) : "r"(x2), "r"(0x64086408u));
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(h[3]) : "r"(x3), "r"(0x2C002C00u), "r"(0xD480D480u));
}
DEVICE AFrag w4_afrag_lop3(u32 w0, u32 w1) {
  u32 p0[4], p1[4];
  w4_word_f16x2(w0, p0), w4_word_f16x2(w1, p1);
  AFrag f;
  f.h[0] = p0[0], f.h[1] = p1[0], f.h[2] = p0[1], f.h[3] = p1[1];
  f.h[4] = p0[2], f.h[5] = p1[2], f.h[6] = p0[3], f.h[7] = p1[3];
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
#else // __AMDGCN__: the native gfx12 fp8 WMMA
// v_wmma_f32_16x16x16_fp8_fp8 (wave32): D = A . B + C, A 16x16 (M x K) and
// B 16x16 (K x N) of OCP e4m3 codes, C and D 16x16 fp32, every operand
// spread over the 32 lanes. Lane L, r = L % 16, h = L / 16:
//   A  v2i  row M = r;     byte j of (dword 0, dword 1), j = 0..7, is k = 8h + j
//   B  v2i  column N = r;  byte j is k = 8h + j
//   C/D v8f element i = 0..7 is (M = 8h + i, N = r)
// So a lane holds 8 consecutive k of one row (A) or column (B), the upper
// half-wave the upper 8 k; D comes back as a column slice per lane.
// Sources (no AMD ISA table was readable from here; the two code sources
// agree, independently of each other):
//   - llama.cpp ggml/src/ggml-cuda/mma.cuh, RDNA4 branches: the 8-bit
//     (iu8) WMMA operand tile<16,4,int> loads one int64 per lane at
//     row lane%16, ints 2*(lane/16).. (k 8h..8h+7), and the 16x16 D tile
//     has get_i(l) = 8*(lane/16) + l, get_j = lane%16;
//   - Triton lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp, WMMA
//     "version 2" (gfx12): operands are kWidth registers along k, 16
//     lanes along the non-k dim, lane bit 4 OFFSETS k by kWidth (version 1,
//     gfx11, duplicates instead); D is 8 registers along M, lanes 0-15
//     rows 0-7 and lanes 16-31 rows 8-15 of the lane's column;
//   - AMD GPUOpen "Using the Matrix Cores of AMD RDNA 4 architecture GPUs"
//     (the gfx12 intrinsics and that the VGPR layout changed from gfx11;
//     its layout figures were not readable here).
// Not confirmed from a primary source:
//   - the k order inside an fp8 operand (llama.cpp states it for iu8;
//     Triton and a published single-element probe read fp8 the same way).
//     The kernels do not depend on it: A and B are built with one
//     (lane, byte) -> k map, and the sum over k is the same under any map
//     applied to both, as long as the hardware pairs the bytes of A and B
//     alike (the B layout is the A layout transposed in every gfx11/gfx12
//     description). Which lane holds which row of A, column of B and
//     element of D, which the kernels do depend on, the sources state
//     alike;
//   - how the 16-product sum is rounded into fp32 (each e4m3 x e4m3
//     product is exact in fp32; order and width of the sum are not
//     documented here);
//   - whether e4m3 subnormal inputs are honoured or flushed (the GEMM
//     gate's subnormal-code case answers it on a device).
// No gfx1201 has run this code yet.
typedef int v2i __attribute__((ext_vector_type(2)));
typedef float v8f __attribute__((ext_vector_type(8)));

DEVICE v8f wmma_fp8(v2i a, v2i b, v8f c) { return __builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w32_gfx12(a, b, c); }
DEVICE v2i make_v2i(u32 lo, u32 hi) { return v2i{(int)lo, (int)hi}; }

// e4m3 bytes of c - 8 for the four codes c (0..15) in bits 0..3 of each
// byte of x (bits 4..7 are ignored): two v_perm_b32 table lookups (codes
// 0..7 and 8..15, the table as byte immediates) and a third that takes
// each byte from the table its bit 3 names. c - 8 is an integer in -8..7,
// exact in e4m3.
DEVICE u32 w4_lut_e4m3(u32 x) {
  const u32 idx = x & 0x07070707u;
  const u32 neg = __builtin_amdgcn_perm(0xB8C0C4C8u, 0xCACCCED0u, idx); // c 0..7  -> -8..-1
  const u32 pos = __builtin_amdgcn_perm(0x4E4C4A48u, 0x44403800u, idx); // c 8..15 ->  0..7
  return __builtin_amdgcn_perm(pos, neg, ((x >> 1) & 0x04040404u) | 0x03020100u);
}
// The WMMA operands of one k32 step from two weight words of one column
// (or row): wa = tig 2h, wb = tig 2h+1 (arch comment above: word tig t
// holds k 4t..4t+3 as local l 0..3 and k 16+4t.. as l 4..7). k0 is the
// operand of the step's first k16 block (k 8h + j: l 0..3 of wa, then of
// wb), k16 of the second (k 16 + 8h + j: l 4..7 of wa, then of wb). The
// nibble order puts codes l = 0, 4, 1, 5 in the low nibbles of bytes
// 0..3 and l = 2, 6, 3, 7 in the high ones; a byte gather restores l
// order.
struct W4Step { v2i k0, k16; };
DEVICE W4Step w4_wmma_step(u32 wa, u32 wb) {
  const u32 alo = w4_lut_e4m3(wa), ahi = w4_lut_e4m3(wa >> 4); // e(l 0,4,1,5), e(l 2,6,3,7)
  const u32 blo = w4_lut_e4m3(wb), bhi = w4_lut_e4m3(wb >> 4);
  const u32 l0123 = 0x06040200u, l4567 = 0x07050301u; // bytes 0,2 of lo then of hi / bytes 1,3
  return W4Step{make_v2i(__builtin_amdgcn_perm(ahi, alo, l0123), __builtin_amdgcn_perm(bhi, blo, l0123)),
                make_v2i(__builtin_amdgcn_perm(ahi, alo, l4567), __builtin_amdgcn_perm(bhi, blo, l4567))};
}
// WMMA A operand (rows r = lane % 16 of an m16 tile, k 16w + 8h + j of a
// k32 step, w = 0, 1) read from one 512-byte tiled.h tile (the mma.m16n8k32
// A order above): k 16w + 8h + 0..3 sit in chunk (r%8)*4 + 2h, register
// r/8 + 2w, and k +4..7 in the next chunk, 16 bytes on (one ds_read2_b32
// from LDS).
DEVICE v2i wmma_a_tiled(const u32 *tile, u32 lane, u32 w) {
  const u32 r = lane & 15u, h = lane >> 4;
  const u32 i = ((r & 7u) * 4u + 2u * h) * 4u + (r >> 3) + 2u * w;
  return make_v2i(tile[i], tile[i + 4u]);
}
#endif

// One weight word as unsigned bytes in k order: lo = codes l 0..3, hi =
// l 4..7 (byte = c, 0..15). The low nibbles of the word's bytes 0..3 are
// codes l = 0, 4, 1, 5 and the high nibbles l = 2, 6, 3, 7 (the layout
// above); one byte permute each restores l order. The int8 op takes these
// bytes as u8, the sm_90 fp8 wgmma as e4m3 (byte c is c·2^-9 exactly).
#if defined(__NVPTX__)
DEVICE u32 prmt_b32(u32 a, u32 b, u32 sel) {
  u32 r;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
  return r;
}
DEVICE void w8_bytes(u32 w, u32 &lo, u32 &hi) {
  const u32 x = w & 0x0F0F0F0Fu, y = (w >> 4) & 0x0F0F0F0Fu; // bytes l(0,4,1,5), l(2,6,3,7)
  lo = prmt_b32(x, y, 0x6420u);                               // l 0, 1, 2, 3
  hi = prmt_b32(x, y, 0x7531u);                               // l 4, 5, 6, 7
}
#else
DEVICE void w8_bytes(u32 w, u32 &lo, u32 &hi) {
  const u32 x = w & 0x0F0F0F0Fu, y = (w >> 4) & 0x0F0F0F0Fu;
  lo = __builtin_amdgcn_perm(y, x, 0x06040200u); // x.b0, x.b2, y.b0, y.b2: l 0..3
  hi = __builtin_amdgcn_perm(y, x, 0x07050301u); // x.b1, x.b3, y.b1, y.b3: l 4..7
}
#endif

// ----------------------------------------------------------------- loads
struct u32x4 { u32 x, y, z, w; };
struct u32x2 { u32 x, y; };

#if defined(__NVPTX__)
DEVICE u32 ldg_u32(const void *p) { return __nvvm_ldg_ui((const unsigned int *)p); }
DEVICE float ldg_f32(const float *p) { return __nvvm_ldg_f(p); }
// Weights stream once per call: read-only path, no L1 allocation.
DEVICE u32x4 ldg_stream_v4(const void *p) {
  u32x4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}
// Predicated forms: r is loaded when p, else left as it was (no branch, so
// a refill does not split the caller's basic block).
DEVICE void ldg_stream_v4_if(u32x4 &r, const void *ptr, bool p) {
  asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %5, 0;\n\t"
               "@q ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n\t}"
               : "+r"(r.x), "+r"(r.y), "+r"(r.z), "+r"(r.w)
               : "l"(ptr), "r"((u32)p));
}
DEVICE void ldg_u32_if(u32 &r, const void *ptr, bool p) {
  asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\t@q ld.global.nc.u32 %0, [%1];\n\t}"
               : "+r"(r)
               : "l"(ptr), "r"((u32)p));
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
// Release of what this thread and (through a barrier before it) the
// barrier's threads wrote, acquire of what the releases it reads made
// visible (sm_90a only: the stream-K hand-off of the decode GEMM).
DEVICE u32 atomic_add_acq_rel_u32_gpu(u32 *p, u32 v) {
  u32 old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
DEVICE void st_u32_gpu(u32 *p, u32 v) { asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory"); }
// The count read without ordering: what mutate's order-relaxed operator
// puts in place of ld_acquire_u32_gpu (no kernel calls it).
DEVICE u32 ld_relaxed_u32_gpu(const u32 *p) {
  u32 v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// Acquire of what the releases whose value it reads made visible (sm_90a
// only: a stream-K finisher reading the tile's count).
DEVICE u32 ld_acquire_u32_gpu(const u32 *p) {
  u32 v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

DEVICE u32 smem_u32(const void *p) {
  u64 a;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return (u32)a;
}
// Thread block clusters (sm_90): the CTA's rank in its cluster and the
// cluster's size; cluster_sync() is barrier.cluster with release/acquire
// (every thread of every CTA of the cluster arrives); ld_dsmem_f32 reads
// the same shared variable in CTA `rank` of the cluster (mapa + distributed
// shared memory).
DEVICE u32 cluster_ctarank() {
  u32 r;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
DEVICE u32 cluster_nctarank() {
  u32 r;
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
DEVICE u32 cluster_nctaid_y() { // the cluster's extent along y
  u32 r;
  asm("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(r));
  return r;
}
DEVICE void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
DEVICE float ld_dsmem_f32(const float *local, u32 rank) {
  u32 remote;
  float v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_u32(local)), "r"(rank));
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
  return v;
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
DEVICE u32x4 ldg_u32x4(const void *p) { return *(const u32x4 *)p; }
DEVICE u32x4 ldg_stream_v4(const void *p) {
  u32x4v v = __builtin_nontemporal_load((const u32x4v *)p);
  return u32x4{v.x, v.y, v.z, v.w};
}
DEVICE float ldg_cg_f32(const float *p) {
  return bits_f32(__scoped_atomic_load_n((const u32 *)p, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE));
}
DEVICE void fence_gpu() { __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, "agent"); }
DEVICE u32 atomic_add_u32_gpu(u32 *p, u32 v) { return __scoped_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE); }
DEVICE void st_u32_gpu(u32 *p, u32 v) { __scoped_atomic_store_n(p, v, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE); }


DEVICE u32 pack_bf16x2(float lo, float hi) { return bf16_rne(lo) | (bf16_rne(hi) << 16); }
#endif

DEVICE float f16_to_f32(u32 h) { return (float)__builtin_bit_cast(_Float16, (u16)h); }
