// rowlayout.h: the decode GEMMs' fragment words rebuilt from row-layout
// weights (refimpl.RepackRow: column n's K codes in k order, two a byte,
// low nibble = even k, byte n*K/2 + k/2), for the pq_gemm_dec_rl_* kernels
// (families/gemm/gemm.hip). The rebuilt words are the ones
// refimpl.RepackW4 stores, so the op sees identical operands and the
// output bits equal the fragment-order kernel's.
//
// Fragment word s of memory lane (column c, tig t) holds the codes of
// k = 32s + 4t + l (l < 4) and 32s + 16 + 4t + (l - 4) (l >= 4) of its
// group, code l in nibble (l>>1) + 4(l&1). In the row layout those codes
// are the u16 at byte 16s + 2t and the u16 at byte 16s + 8 + 2t of the
// column's 64-byte group slice: the "row word" (first u16 | second << 16)
// has code l in nibble l, and rl_unshuffle moves it to the fragment's
// nibble. Each lane loads as many bytes as the fragment-order kernel (16 B
// per column and group on sm_90, 32 B on gfx1201, one k32 step per 16 B)
// and the lanes that share a column trade the rest with shuffles.
// families/gemm/wp_test.go runs a Go mirror of both exchanges against
// refimpl.W4Offset.
#pragma once
#include "arch/mma.h"

// Row word (code l in nibble l) -> fragment word (code l in nibble
// (l>>1) + 4(l&1)): swap nibbles 1,2 and 5,6, then bytes 1,2.
DEVICE u32 rl_unshuffle(u32 x) {
  u32 t = (x ^ (x >> 4)) & 0x00F000F0u;
  x ^= t ^ (t << 4);
  t = (x ^ (x >> 8)) & 0x0000FF00u;
  return x ^ t ^ (t << 8);
}

// The row word of target tig t from a 16-byte k32 step x of the column:
// the u16 at byte 2t (word t>>1, half t&1) and the u16 at byte 8 + 2t
// (word 2 + (t>>1)).
DEVICE u32 rl_row_word(u32x4 x, u32 t) {
  const u32 a = (t & 2u) ? x.y : x.x, b = (t & 2u) ? x.w : x.z, sh = 16u * (t & 1u);
  return ((a >> sh) & 0xFFFFu) | ((b >> sh) << 16);
}

// sm_90 lane geometry (4 lanes, tig 0..3, share a column): lane tig holds
// k32 step tig of the column's group (x, the 16 bytes at 16·tig of the
// slice) and gets back the fragment words of steps 0..3 for itself. Round r
// sends the row word of lane tig^r to lane tig^r (xor shuffle), so lane t
// receives step t^r's word in round r: a 4x4 transpose in three shuffles.
struct RlWords { u32 w[4]; };
DEVICE RlWords rl_quad_frag(u32x4 x, u32 tig) {
  u32 rcv[4];
#pragma unroll
  for (u32 r = 0; r < 4; r++) {
    const u32 v = rl_row_word(x, tig ^ r);
    rcv[r] = r == 0 ? v : (u32)shfl_xor_i32((i32)v, r);
  }
  RlWords f;
#pragma unroll
  for (u32 s = 0; s < 4; s++) { // step s arrived in round s ^ tig (selects, no indexed registers)
    const u32 q = s ^ tig;
    const u32 v = (q & 2u) ? ((q & 1u) ? rcv[3] : rcv[2]) : ((q & 1u) ? rcv[1] : rcv[0]);
    f.w[s] = rl_unshuffle(v);
  }
  return f;
}

// gfx1201 lane geometry (lanes L and L^16 share column r = L%16, h = L/16):
// lane h holds k32 steps 2h (x0) and 2h+1 (x1) and needs the fragment words
// of tigs 2h (a) and 2h+1 (c) for steps 0..3. For tigs 2h, 2h+1 both u16 of
// step s's row words are in its words h and 2+h; the lane keeps those of
// its own steps and trades the other two words of each of its steps with
// lane L^16 (four shuffles).
struct RlPair { u32 a[4], c[4]; };
DEVICE RlPair rl_pair_frag(u32x4 x0, u32x4 x1, u32 h) {
  // Own steps 2h + j: words h and 2 + h. Sent: words 1 - h and 3 - h.
  const u32 op0 = h ? x0.y : x0.x, oq0 = h ? x0.w : x0.z, op1 = h ? x1.y : x1.x, oq1 = h ? x1.w : x1.z;
  const u32 sp0 = h ? x0.x : x0.y, sq0 = h ? x0.z : x0.w, sp1 = h ? x1.x : x1.y, sq1 = h ? x1.z : x1.w;
  const u32 rp0 = (u32)shfl_xor_i32((i32)sp0, 16u), rq0 = (u32)shfl_xor_i32((i32)sq0, 16u);
  const u32 rp1 = (u32)shfl_xor_i32((i32)sp1, 16u), rq1 = (u32)shfl_xor_i32((i32)sq1, 16u);
  // Steps 0, 1 are own when h = 0, received when h = 1; steps 2, 3 the other way.
  const u32 P[4] = {h ? rp0 : op0, h ? rp1 : op1, h ? op0 : rp0, h ? op1 : rp1};
  const u32 Q[4] = {h ? rq0 : oq0, h ? rq1 : oq1, h ? oq0 : rq0, h ? oq1 : rq1};
  RlPair f;
#pragma unroll
  for (int s = 0; s < 4; s++) {
    f.a[s] = rl_unshuffle((P[s] & 0xFFFFu) | (Q[s] << 16));
    f.c[s] = rl_unshuffle((P[s] >> 16) | (Q[s] & 0xFFFF0000u));
  }
  return f;
}
