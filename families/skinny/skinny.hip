// skinny.hip: the skinny bf16 GEMM of the decode step's narrow linears (the
// GDN gate projections in_proj_b / in_proj_a: N = 48 per rank at TP 2, K =
// 5120), y[M, N] (bf16) = x[M, K] (bf16, row-major) · w[N, K]ᵀ (bf16,
// row-major: each output column's K weights contiguous), fp32 accumulate,
// M = 1..64.
//
// Entry points (one body, the n-tile its template argument):
//   skinny_bf16_n8    n-tile of 8 columns (2 per warp): the baseline
//   skinny_bf16_n16   n-tile of 16 columns (4 per warp): fewer, larger
//                     blocks for wide N
//   skinny_bf16_cl_n8 sm_90a only, M <= 8: the split-K reduce inside a
//                     thread-block cluster (see its comment at the end)
//
// Geometry. Split-K over S = K / 256 slices; one block of 4 warps per
// (n-tile, slice), grid (N / NT, S). The block stages its slice of x (M
// rows x 256 bf16, M x 512 bytes of dynamic shared memory) once; warp w
// owns columns n0 + wC .. n0 + wC + C - 1 of the n-tile, C = NT / 4, and
// lane l owns k = 256s + 8l .. 256s + 8l + 7 of the slice: one 16-byte
// weight vector per column, loaded before x is staged so both streams are
// in flight together, converted to fp32 once.
//
// The arithmetic contract, bit for bit (the Go mirror skinny.Mirror follows
// it op for op; no contraction: -ffp-contract=off and the pragma below):
//   lane partial   a_l = fmaf(x_7, w_7, ... fmaf(x_1, w_1, fmaf(x_0, w_0, 0)))
//                  over the lane's 8 k in k order (each bf16 product is
//                  exact in fp32, so every fmaf is one rounded add)
//   warp sum       p = tree over the 32 lanes: pairs (l, l + 16) first,
//                  then their sums at distance 8, 4, 2, 1 (a reduce-scatter
//                  butterfly over the warp's 8 rows x C columns; the same
//                  tree as an xor all-reduce, and + commutes, so the lane
//                  that ends up holding a sum does not change its bits)
//   partial        ws[s, m, n] = p (fp32)
//   reduce         y = bf16_rne(((0 + ws[0]) + ws[1]) + ... + ws[S-1]),
//                  slices in order 0..S-1 whichever block arrives last
// so the result is deterministic and identical across graph replays.
//
// Split-K handoff (the per-block protocol of gemm.hip's decode kernels):
// every thread writes its partials, fences (release) and the block
// synchronizes; thread 0 counts in counters[n-tile]; the block that brings
// the count to S fences (acquire), reduces the tile from ws (L2-coherent
// loads, up to RED_BATCH slices in flight per element) and resets the
// counter to 0, so the next launch, or a CUDA graph's replay, starts
// clean. counters must be zero before the first launch.
//
// Contracts checked by the Go launcher (families/skinny/launch.go): 1 <= M
// <= 64; K a positive multiple of 256; N a positive multiple of NT; x, w
// 16-byte aligned; ws [S, M, N] fp32; counters [N / NT] u32; dynamic
// shared memory M x 512 bytes. Rows >= M of y are never written.
#include "arch/mma.h"

#pragma clang fp contract(off)

#define SLICE 256     // k per split-K slice
#define SK_WARPS 4    // warps per block
#define SK_THREADS (32 * SK_WARPS)
#define LANE_K 8      // k per lane in a slice: one 16-byte vector
#define SK_ROWS 8     // rows per reduce-scatter round
#define RED_BATCH 32  // partial loads in flight per element in the reduce

// One halving step of the reduce-scatter (d = D): the lanes with bit d set
// keep the upper half of the n live values, the others the lower half; each
// adds its partner's copy of what it keeps. Once one value is left, the
// remaining steps are an all-reduce. idx accumulates the original index of
// v[0].
template <int V, int N, u32 D>
DEVICE void reduce_scatter(float (&v)[V], u32 lane, u32 &idx) {
  if constexpr (D > 0) {
    if constexpr (N > 1) {
      constexpr int H = N / 2;
      const bool up = (lane & D) != 0;
#pragma unroll
      for (int i = 0; i < H; i++) {
        const u32 lo = f32_bits(v[i]), hi = f32_bits(v[i + H]), mk = 0u - (u32)up;
        // Masks, not ?: on v[i] / v[i + H]: a select of two array elements
        // becomes a select of their addresses, and v then lives in scratch.
        const float send = bits_f32((lo & mk) | (hi & ~mk)), keep = bits_f32((hi & mk) | (lo & ~mk));
        v[i] = keep + shfl_xor_f32(send, D);
      }
      idx += up ? (u32)H : 0u;
      reduce_scatter<V, H, D / 2>(v, lane, idx);
    } else {
      v[0] += shfl_xor_f32(v[0], D);
      reduce_scatter<V, 1, D / 2>(v, lane, idx);
    }
  }
}

template <int C>
DEVICE void skinny_bf16(const u16 *x, const u16 *w, u16 *out, float *ws, u32 *counters, u32 M, u32 N, u32 K) {
  constexpr u32 NT = SK_WARPS * C;    // the n-tile
  constexpr int V = SK_ROWS * C;      // values per warp per round, index r * C + c
  static_assert(V <= 32 && (V & (V - 1)) == 0, "a round's values fill at most one lane each");
  constexpr u32 DUP = 32u / V;        // lanes holding each reduced value
  extern SHARED __attribute__((aligned(16))) u8 s_x[]; // [M][SLICE] bf16
  SHARED u32 s_last;

  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5;
  const u32 tile = bid_x(), split = bid_y(), S = K / SLICE;
  const u32 k0 = split * SLICE + LANE_K * lane;
  const u32 nw = tile * NT + warp * C; // the warp's first column

  // The lane's weights: C 16-byte vectors, issued before x is staged.
  u32x4 wv[C];
#pragma unroll
  for (int c = 0; c < C; c++) wv[c] = ldg_stream_v4(w + (u64)(nw + c) * K + k0);

  // Stage x[0..M-1, split*SLICE ..+SLICE] (32 16-byte vectors per row).
  for (u32 i = tid; i < M * (SLICE / 8); i += SK_THREADS) {
    const u32 m = i / (SLICE / 8), v8 = i % (SLICE / 8);
    const u32x4 t = ldg_stream_v4(x + (u64)m * K + split * SLICE + 8u * v8);
    *(u32x4v *)(s_x + m * (2 * SLICE) + 16u * v8) = u32x4v{t.x, t.y, t.z, t.w};
  }

  float wf[C][LANE_K];
#pragma unroll
  for (int c = 0; c < C; c++) {
    const u32 q[4] = {wv[c].x, wv[c].y, wv[c].z, wv[c].w};
#pragma unroll
    for (int j = 0; j < 4; j++) wf[c][2 * j] = bits_f32(q[j] << 16), wf[c][2 * j + 1] = bits_f32(q[j] & 0xFFFF0000u);
  }
  block_sync();

  float *wsp = ws + (u64)split * M * N;
  for (u32 m0 = 0; m0 < M; m0 += SK_ROWS) {
    float v[V];
#pragma unroll
    for (int r = 0; r < SK_ROWS; r++) {
      const u32 m = m0 + r;
      if (m < M) {
        const u32x4v q = *(const u32x4v *)(s_x + m * (2 * SLICE) + 16u * lane);
        float xf[LANE_K];
#pragma unroll
        for (int j = 0; j < 4; j++) xf[2 * j] = bits_f32(q[j] << 16), xf[2 * j + 1] = bits_f32(q[j] & 0xFFFF0000u);
#pragma unroll
        for (int c = 0; c < C; c++) {
          float a = 0.0f;
#pragma unroll
          for (int j = 0; j < LANE_K; j++) a = __builtin_fmaf(xf[j], wf[c][j], a);
          v[r * C + c] = a;
        }
      } else {
#pragma unroll
        for (int c = 0; c < C; c++) v[r * C + c] = 0.0f;
      }
    }
    u32 idx = 0;
    reduce_scatter<V, V, 16u>(v, lane, idx);
    const u32 m = m0 + idx / C, n = nw + idx % C;
    if ((lane & (DUP - 1u)) == 0 && m < M) wsp[(u64)m * N + n] = v[0];
  }

  // Handoff: release the partials, count; the last block acquires.
  fence_gpu();
  block_sync();
  if (tid == 0) s_last = atomic_add_u32_gpu(counters + tile, 1u) == S - 1u ? 1u : 0u;
  block_sync();
  if (!s_last) return;
  fence_gpu();
  for (u32 i = tid; i < M * NT; i += SK_THREADS) {
    const u32 m = i / NT, n = tile * NT + i % NT;
    const float *p = ws + (u64)m * N + n;
    const u64 stride = (u64)M * N;
    float sum = 0.0f;
    for (u32 s0 = 0; s0 < S; s0 += RED_BATCH) {
      float t[RED_BATCH];
#pragma unroll
      for (u32 j = 0; j < RED_BATCH; j++) t[j] = ldg_cg_f32(p + (s0 + j < S ? s0 + j : S - 1u) * stride); // unpredicated: one batch in flight
#pragma unroll
      for (u32 j = 0; j < RED_BATCH; j++)
        if (s0 + j < S) sum += t[j]; // slice order: deterministic
    }
    out[(u64)m * N + n] = (u16)bf16_rne(sum);
  }
  if (tid == 0) st_u32_gpu(counters + tile, 0u);
}

KERNEL LAUNCH_BOUNDS(SK_THREADS) void skinny_bf16_n8(const u16 *x, const u16 *w, u16 *out, float *ws, u32 *counters,
                                                    u32 M, u32 N, u32 K) {
  skinny_bf16<2>(x, w, out, ws, counters, M, N, K);
}

KERNEL LAUNCH_BOUNDS(SK_THREADS) void skinny_bf16_n16(const u16 *x, const u16 *w, u16 *out, float *ws, u32 *counters,
                                                     u32 M, u32 N, u32 K) {
  skinny_bf16<4>(x, w, out, ws, counters, M, N, K);
}

#if defined(__NVPTX__)
// ---------------------------------------------------------------------------
// skinny_bf16_cl_n8: the decode form (M <= CL_MAXM) with no second phase.
// The S splits of an 8-column n-tile are one 1 x S cluster (S <= 8,
// skinny.ClusterSplits), each CTA covering J = K / (256 S) consecutive
// 256-wide slices; a CTA is 8 warps, one column each, and lane l owns k =
// 256j + 8l .. 256j + 8l + 7 of its CTA's slices j = 0..J-1, all J weight
// vectors issued before x is staged. The lane's partial is
// ((0 + t_0) + t_1) + ... + t_{J-1}, t_j the 8-term chain of slice j from 0
// (the other kernels' lane chain, so values that cancel slice against
// slice cancel exactly here too); the warp sum is the tree of the other
// kernels (one value per row); each CTA parks its [M, 8] partial in its own shared
// memory, and after a cluster barrier rank 0 sums ranks 0..S-1 in order
// through distributed shared memory and writes bf16:
//   y = bf16_rne(((0 + p[0]) + p[1]) + ... + p[S-1])
// No workspace, no counters, no fences: the chain from the weight loads to
// the store is one DRAM round trip, one cluster barrier and S shared reads.
// The cluster's rank is its split (grid (N / 8, S), cluster dims 1 x S).
#define CL_MAXM 8
#define CL_JMAX 8
#define CL_WARPS 8 // one column per warp: 8 warps per CTA hide the chains' latency
#define CL_THREADS (32 * CL_WARPS)
#define CL_XV (CL_MAXM * CL_JMAX * (SLICE / 8) / CL_THREADS) // x vectors per thread, at most

KERNEL LAUNCH_BOUNDS(CL_THREADS) void skinny_bf16_cl_n8(const u16 *x, const u16 *w, u16 *out, float *ws, u32 *counters,
                                                       u32 M, u32 N, u32 K) {
  constexpr u32 NT = CL_WARPS;         // the n-tile: a column per warp
  constexpr int V = SK_ROWS;           // values per warp, one per row
  constexpr u32 DUP = 32u / V;         // lanes holding each reduced value
  extern SHARED __attribute__((aligned(16))) u8 s_x[]; // [M][J * SLICE] bf16
  SHARED float s_part[CL_MAXM][NT];
  (void)ws, (void)counters;

  const u32 tid = tid_x(), lane = lane_id(), warp = tid >> 5;
  const u32 tile = bid_x(), S = cluster_nctarank(), rank = cluster_ctarank();
  const u32 J = K / (SLICE * S), kb = rank * J * SLICE;
  const u32 n = tile * NT + warp; // the warp's column

  u32x4 wv[CL_JMAX];
#pragma unroll
  for (u32 j = 0; j < CL_JMAX; j++)
    if (j < J) wv[j] = ldg_stream_v4(w + (u64)n * K + kb + SLICE * j + LANE_K * lane);

  // x: every piece loaded before any is stored, so all are in flight at once.
  const u32 rowv = J * (SLICE / 8); // 16-byte vectors per staged row
  u32x4 xv[CL_XV];
#pragma unroll
  for (u32 i = 0; i < CL_XV; i++) {
    const u32 e = tid + CL_THREADS * i;
    if (e < M * rowv) xv[i] = ldg_stream_v4(x + (u64)(e / rowv) * K + kb + 8u * (e % rowv));
  }
#pragma unroll
  for (u32 i = 0; i < CL_XV; i++) {
    const u32 e = tid + CL_THREADS * i;
    if (e < M * rowv) *(u32x4v *)(s_x + 16u * e) = u32x4v{xv[i].x, xv[i].y, xv[i].z, xv[i].w};
  }
  block_sync();

  float v[V];
#pragma unroll
  for (int r = 0; r < SK_ROWS; r++) {
    float a = 0.0f;
    if ((u32)r < M) {
#pragma unroll
      for (u32 j = 0; j < CL_JMAX; j++) {
        if (j < J) {
          const u32x4v q = *(const u32x4v *)(s_x + 16u * (r * rowv + j * (SLICE / 8) + lane));
          const u32 wq[4] = {wv[j].x, wv[j].y, wv[j].z, wv[j].w};
          float t = 0.0f; // slice j's chain, from 0
#pragma unroll
          for (int e = 0; e < 4; e++) {
            t = __builtin_fmaf(bits_f32(q[e] << 16), bits_f32(wq[e] << 16), t);
            t = __builtin_fmaf(bits_f32(q[e] & 0xFFFF0000u), bits_f32(wq[e] & 0xFFFF0000u), t);
          }
          a = a + t;
        }
      }
    }
    v[r] = a;
  }
  u32 idx = 0;
  reduce_scatter<V, V, 16u>(v, lane, idx);
  if ((lane & (DUP - 1u)) == 0 && idx < M) s_part[idx][warp] = v[0];
  cluster_sync(); // every CTA's partial is in its shared memory
  if (rank == 0 && tid < M * NT) {
    const u32 mm = tid / NT, c = tid % NT;
    float sum = 0.0f;
    for (u32 r = 0; r < S; r++) sum += ld_dsmem_f32(&s_part[mm][c], r); // split order: deterministic
    out[(u64)mm * N + tile * NT + c] = (u16)bf16_rne(sum);
  }
  cluster_sync(); // keep every CTA's partial alive until rank 0 has read it
}
#endif
