// i8/mma_i8.h: the integer matrix op of the I8 GEMMs (families/i8/i8gemm.hip)
// and the unpack of the AWQ int4 weight words (refimpl.RepackW4, the layout
// of arch/mma.h) into its unsigned byte operands.
//
// sm_90: mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32: A (16 x 32) the
// weight codes q (0..15) as UNSIGNED bytes, B (32 x 8) the activation codes
// as signed int8, D int32. Operand layout as arch/mma.h states for the
// m16n8k32 8-bit op (PTX ISA, "Matrix Fragments for mma.m16n8k32"): lane l,
// gid = l / 4, tig = l % 4: a0 row gid k 4tig..+3, a1 row gid+8, a2 row gid
// k 16+4tig..+3, a3 row gid+8; b0 column gid k 4tig..+3, b1 k 16+4tig..;
// d0, d1 row gid columns 2tig, 2tig+1; d2, d3 row gid+8.
//
// gfx1201: v_wmma_i32_16x16x16_iu8 through the clang builtin
// __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32_gfx12(signA, A, signB, B, C,
// clamp) (operand form as clang's BuiltinsAMDGPU.def declares it,
// "V8iIbV2iIbV2iV8iIb"; the same call in llama.cpp's
// ggml/src/ggml-cuda/mma.cuh RDNA4 branch): A unsigned (signA = false), B
// signed (signB = true), no clamp (the int32 sums cannot overflow: |Σ| <=
// 127·15·128 per group). Lane layout as the fp8 WMMA (arch/mma.h): A v2i
// row r = lane % 16, byte j is k 8h + j (h = lane / 16); B the same for
// column r; D v8i element i is (M = 8h + i, N = r).
//
// Weight word w (8 codes of one row or column, one k32 step): code l sits
// in nibble (l >> 1) + 4 (l & 1), local l < 4 is k 4tig + l and l >= 4 is
// k 16 + 4tig + (l - 4) (arch/mma.h); arch/mma.h's w8_bytes(w, lo, hi)
// unpacks it into the 4 unsigned bytes of l 0..3 and of l 4..7.
#pragma once
#include "arch/mma.h"

#if defined(__NVPTX__)
// d += A(16x32 u8) . B(32x8 s8), int32.
DEVICE void mma_u8s8_k32(i32 d[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
#else // __AMDGCN__
typedef int v2i_i8 __attribute__((ext_vector_type(2)));
typedef int v8i_i8 __attribute__((ext_vector_type(8)));
// D = A(16x16 u8) . B(16x16 s8) + C, int32.
DEVICE v8i_i8 wmma_u8s8(v2i_i8 a, v2i_i8 b, v8i_i8 c) {
  return __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32_gfx12(false, a, true, b, c, false);
}
#endif

// The prefill forms: activations as A (signed), weights as B (unsigned).
#if defined(__NVPTX__)
// d += A(16x32 s8) . B(32x8 u8), int32.
DEVICE void mma_s8u8_k32(i32 d[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
#else
// D = A(16x16 s8) . B(16x16 u8) + C, int32.
DEVICE v8i_i8 wmma_s8u8(v2i_i8 a, v2i_i8 b, v8i_i8 c) {
  return __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32_gfx12(true, a, false, b, c, false);
}
#endif
