// snippet.hip: a small kernel source for the mutate tests. Every operator
// of the catalogue has a site here. Comments, literals and preprocessor
// lines hold operator text that must never be mutated: a + b, i < n,
// x >> 1, m & 0xFFu, if (x == y), block_sync();
#include "format/e4m3.h"
#include "arch/mma.h"

#define TWICE(a) ((a) + (a) * 2u) /* a macro body: i < n - 1 */
#define ROWS 4

/* A block comment
   spanning lines: if (x < y) return x + 1; */

struct f4 { float x, y, z, w; };

DEVICE u32 pick(u32 a, u32 b) { return a < b ? a : b; }

// Never called: its mutants leave the object as it was.
DEVICE __attribute__((unused)) u32 unused_helper(u32 a) { return (a + 3u) >> 1; }

DEVICE float fold(const float *gscale, u32 g, float sc0, float sc1, float zs0, float zs1, float t) {
  float a = gscale[g] * sc0;
  return __builtin_fmaf(sc1, a, -zs1 * t) + zs0;
}

DEVICE u32 pack(u32 lo, u32 hi) {
  u32 w0 = lo & 0xFFu, w1 = hi >> 8;
  return w0 | (w1 << 8);
}

KERNEL LAUNCH_BOUNDS(256) void snippet_kernel(const float *x, float *y, const float *gscale, u32 *codes, u32 M, u32 N,
                                              u32 K) {
  SHARED float tile[ROWS][32];
  u32 lane = lane_id(), m = bid_x();
  if (m >= M) return;
  // A comment inside the body: y[m] = x[m] + 1.0f; i <= n
  const char *tag = "a + b < c && d"; /* a literal, and a comment */
  (void)tag;
  float acc = 0.0f;
  for (u32 k = lane; k < K; k += 32) {
    acc += x[(u64)m * K + k] * 448.0f;
  }
#pragma unroll
  for (u32 r = 0; r <= ROWS - 1u; r++) tile[r][lane] = acc - (float)r;
#define LOCAL_BOUND(n) ((n) + 1u < K)
  block_sync();
  f4 v{tile[0][lane], tile[1][lane], tile[2][lane], tile[lane & 3u][0]};
  float amax = __builtin_fmaxf(__builtin_fabsf(v.x), __builtin_fabsf(v.y));
  float s = fold(gscale, m, v.z, v.w, amax, acc, 2.5f);
  if (lane == 0 && amax > 0.0f) {
    y[(u64)m * N + 4u * lane] = s;
  }
  u32 c = e4m3_encode2_hw(s, amax);
  codes[m] = pack(c, bf16_rne(s)) + pick(c, lane) - 1u;
  if (lane != 0u || K < 2u * N) codes[M + m] = c;
#if defined(__NVPTX__)
  asm volatile("// a + b" ::: "memory");
  y[m + 1u] = -acc;
  if (ld_acquire_u32_gpu(codes) == M) y[m] = acc;
#else
  y[m + 2u] = acc * 2.0f;
#endif
}
