// wgmmaacc.hip: the fp8 wgmma accumulator probe (gate gemm-wgmma-acc,
// probe.go). sm_90a only; the gfx1201 module is empty.
//
// pq_wgmma_acc_probe(a, b, d, steps): steps (1..4) chained
// wgmma.m64n8k32.e4m3 ops into one fp32 accumulator, as the wgmma GEMMs
// accumulate one 128-group, so Go can compare D with the exact sums.
// a: [steps][64 rows][32 k] e4m3 codes, b: [steps][8 rows][32 k], d:
// [64][8] fp32, one block of 128 threads. B step s sits at k bytes
// 32s..32s+31 of its row in one 128B-swizzled 8 x 128-byte tile (the wgmma
// decode body's layout and descriptors); A is loaded into the operand
// order of arch/wgmma.h.
#include "arch/arch.h"
#if defined(__NVPTX__)
#include "arch/wgmma.h"

KERNEL LAUNCH_BOUNDS(128) void pq_wgmma_acc_probe(const u8 *a, const u8 *b, float *d, u32 steps) {
  SHARED __attribute__((aligned(1024))) u8 tile[1024];
  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5, gid = lane >> 2, tig = lane & 3u;
  steps = steps < 1u ? 1u : steps > 4u ? 4u : steps;
  const u32 tb = smem_u32(tile);
  for (u32 i = tid; i < 64u; i += 128u) { // 8 rows x 8 chunks of 16 bytes; chunk c is k step c/2
    const u32 r = i / 8u, c = i % 8u, s = c / 2u;
    u32x4 v{0u, 0u, 0u, 0u};
    if (s < steps) v = *(const u32x4 *)(b + (s * 8u + r) * 32u + 16u * (c % 2u));
    sts_v4(tb + r * 128u + ((c ^ (r & 7u)) << 4), v);
  }
  u32 af[4][4];
  const u32 row = 16u * warp + gid;
#pragma unroll
  for (u32 s = 0; s < 4u; s++) {
    const u8 *as = a + (s < steps ? s : 0u) * 64u * 32u;
    af[s][0] = *(const u32 *)(as + row * 32u + 4u * tig);
    af[s][1] = *(const u32 *)(as + (row + 8u) * 32u + 4u * tig);
    af[s][2] = *(const u32 *)(as + row * 32u + 16u + 4u * tig);
    af[s][3] = *(const u32 *)(as + (row + 8u) * 32u + 16u + 4u * tig);
  }
  fence_proxy_async(); // the tile's generic stores, visible to the op's async reads
  block_sync();
  float T[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  wg_fence();
#pragma unroll
  for (u32 s = 0; s < 4u; s++)
    if (s < steps) wg_mma_e4m3(T, af[s], sw128_desc(tb + 32u * s), s);
  wg_commit();
  wg_wait<0>();
  wg_fence_regs(T);
  // T[2v1 + v0] is D[row + 8v1][2tig + v0].
  d[row * 8u + 2u * tig] = T[0], d[row * 8u + 2u * tig + 1u] = T[1];
  d[(row + 8u) * 8u + 2u * tig] = T[2], d[(row + 8u) * 8u + 2u * tig + 1u] = T[3];
}
#endif
