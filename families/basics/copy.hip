// copy.hip: device copies, the bandwidth ceiling and the bench engine's
// first subject.
//
// Entry points:
//   copy_v4        dst[i] = src[i] over n 16-byte vectors, grid-stride; the
//                  copy-bandwidth ceiling every GB/s figure is compared with
//   copy_v4_extra  copy_v4, then copies the first `extra` vectors again: a
//                  variant made deliberately slower by a known amount of
//                  traffic, to prove the A/B protocol calls it slower
//   scrub_read_v4  reads n 16-byte vectors, grid-stride, and stores one word
//                  a block: the isolated regime's cache scrub. It leaves the
//                  cache full of clean lines, so the timed kernel after it
//                  pays no write-back of the scrub's data
//   read_v4x4      scrub_read_v4's reads and store (each block reads the
//                  same vectors at the same grid), with four independent
//                  loads in flight a thread: launched as one resident wave,
//                  the read roof of a suite's own buffers
#include "arch/arch.h"

KERNEL LAUNCH_BOUNDS(256) void copy_v4(const u32x4v *__restrict__ src, u32x4v *__restrict__ dst, u64 n) {
  u64 stride = (u64)gdim_x() * bdim_x();
  for (u64 i = (u64)bid_x() * bdim_x() + tid_x(); i < n; i += stride) dst[i] = src[i];
}

KERNEL LAUNCH_BOUNDS(256) void copy_v4_extra(const u32x4v *__restrict__ src, u32x4v *__restrict__ dst, u64 n,
                                             u64 extra) {
  u64 stride = (u64)gdim_x() * bdim_x();
  u64 total = n + extra;
  for (u64 i = (u64)bid_x() * bdim_x() + tid_x(); i < total; i += stride) {
    u64 j = i < n ? i : i - n;
    dst[j] = src[j];
  }
}

// Block b stores the XOR of its 256 threads' acc in sink[b]: one store a
// block keeps the loads live and writes gdim_x() words.
DEVICE void store_block_xor(u32 acc, u32 *sink) {
  SHARED u32 red[256];
  red[tid_x()] = acc;
  block_sync();
  if (tid_x() == 0) {
    u32 a = 0;
    for (u32 t = 0; t < bdim_x(); t++) a ^= red[t];
    sink[bid_x()] = a;
  }
}

KERNEL LAUNCH_BOUNDS(256) void scrub_read_v4(const u32x4v *__restrict__ src, u32 *__restrict__ sink, u64 n) {
  u64 stride = (u64)gdim_x() * bdim_x();
  u32 acc = 0;
  for (u64 i = (u64)bid_x() * bdim_x() + tid_x(); i < n; i += stride) {
    u32x4v v = src[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  store_block_xor(acc, sink);
}

KERNEL LAUNCH_BOUNDS(256) void read_v4x4(const u32x4v *__restrict__ src, u32 *__restrict__ sink, u64 n) {
  const u64 T = (u64)gdim_x() * bdim_x();
  u64 i = (u64)bid_x() * bdim_x() + tid_x();
  u32 acc = 0;
  for (; i + 3 * T < n; i += 4 * T) {
    const u32x4v a = src[i], b = src[i + T], c = src[i + 2 * T], d = src[i + 3 * T];
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n; i += T) {
    const u32x4v v = src[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  store_block_xor(acc, sink);
}
